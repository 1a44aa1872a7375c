"""``fastmoments features INPUT --out OUTPUT``: end to end, resuming, and clean errors."""

from __future__ import annotations

import numpy as np
import pytest

from fastmoments import features
from fastmoments.cli.cmd_features import parse_device
from fastmoments.cli.main import main
from fastmoments.collections import read_features


@pytest.fixture
def stack(tmp_path):
    rng = np.random.default_rng(3)
    imgs = (rng.random((20, 32, 32)) * 255).astype(np.uint8)
    np.save(tmp_path / "s.npy", imgs)
    return tmp_path / "s.npy", imgs


def test_features_to_zarr_then_nothing_to_do(stack, tmp_path, capsys):
    path, imgs = stack
    args = ["features", str(path), "--out", str(tmp_path / "f.zarr"), "--family",
            "pseudo-zernike", "--orders", "0-6", "--kind", "complex", "--batch", "6"]
    assert main(args) == 0
    assert "20 images x" in capsys.readouterr().out
    got, names = read_features(tmp_path / "f.zarr")
    ref = features(imgs, family="pseudo-zernike", orders=6, kind="complex")
    assert names == ref.names
    np.testing.assert_allclose(got, ref.matrix, rtol=0, atol=1e-5 * np.abs(ref.matrix).max())
    assert main(args) == 0
    assert "already complete" in capsys.readouterr().out


def test_features_to_parquet_with_orders_list(stack, tmp_path):
    import pandas as pd

    path, imgs = stack
    assert main(["features", str(path), "--out", str(tmp_path / "f.parquet"), "--orders", "2,4",
                 "--kind", "real", "--dtype", "float64", "--no-progress"]) == 0
    table = pd.read_parquet(tmp_path / "f.parquet")
    ref = features(imgs, family="zernike", orders=[2, 4], kind="real", dtype="float64")
    assert list(table.columns) == ["index", *ref.names]
    np.testing.assert_allclose(table[ref.names].to_numpy(), ref.matrix, rtol=1e-12, atol=1e-9)


def test_other_options_refuse_naming_the_option(stack, tmp_path, capsys):
    path, _ = stack
    out = str(tmp_path / "f.zarr")
    assert main(["features", str(path), "--out", out, "--orders", "4"]) == 0
    capsys.readouterr()
    assert main(["features", str(path), "--out", out, "--orders", "4", "--family", "pcet"]) == 2
    err = capsys.readouterr().err
    assert "--family was 'zernike', now 'pcet'" in err and "--overwrite" in err
    assert main(["features", str(path), "--out", out, "--orders", "4", "--family", "pcet",
                 "--overwrite"]) == 0


def test_device_lists_are_passed_through():
    assert parse_device(None) is None
    assert parse_device("cuda:1") == "cuda:1"
    assert parse_device("cuda:all") == "cuda:all"
    assert parse_device("cuda:0, cuda:1") == ["cuda:0", "cuda:1"]


def _png(path, shape, value=0):
    from PIL import Image

    Image.fromarray(np.full(shape, value, dtype=np.uint8)).save(path)


def _bad_inputs(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "mixed").mkdir()
    for name, shape in (("a.png", (32, 32)), ("b.png", (32, 32)), ("c.png", (24, 24)),
                        ("d.png", (16, 16))):
        _png(tmp_path / "mixed" / name, shape)
    (tmp_path / "oblong").mkdir()
    _png(tmp_path / "oblong" / "a.png", (32, 40))
    np.save(tmp_path / "oblong.npy", np.zeros((3, 32, 40)))
    np.save(tmp_path / "ok.npy", np.zeros((3, 32, 32)))


@pytest.mark.parametrize(("args", "message"), [
    (["missing.npy"], "INPUT 'missing.npy' does not exist"),
    (["{tmp}/empty"], "holds no image files"),
    (["{tmp}/mixed"], "'c.png' is 24x24 but 'a.png' (the first image) is 32x32"),
    (["{tmp}/oblong"], "'a.png' is 40x32, not square"),
    (["{tmp}/oblong.npy"], "must hold square images"),
    (["{tmp}/ok.npy", "--family", "legendre"], "--family must be one of"),
    (["{tmp}/ok.npy", "--orders", "4-2"], "--orders range '4-2' runs backwards"),
    (["{tmp}/ok.npy", "--orders", "two"], "--orders must be"),
    (["{tmp}/ok.npy", "--kind", "phase"], "--kind must be one of"),
    (["{tmp}/ok.npy", "--size", "16"], "--size resamples the images of a folder"),
    (["{tmp}/ok.npy", "--workers", "2"], "--workers needs --scheduler"),
])
def test_bad_inputs_exit_2_with_one_line(args, message, tmp_path, capsys):
    _bad_inputs(tmp_path)
    argv = ["features", *[a.format(tmp=tmp_path) for a in args], "--out",
            str(tmp_path / "o.zarr")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "o.zarr").exists()  # nothing created


def test_mixed_sizes_resampled_with_size(tmp_path):
    _bad_inputs(tmp_path)
    assert main(["features", str(tmp_path / "mixed"), "--out", str(tmp_path / "m.parquet"),
                 "--size", "20", "--orders", "3", "--no-progress"]) == 0
    mat, _ = read_features(tmp_path / "m.parquet")
    assert mat.shape[0] == 4 and np.isfinite(mat).all()
