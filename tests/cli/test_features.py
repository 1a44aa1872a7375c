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
    (tmp_path / "zero.npy").write_bytes(b"")
    (tmp_path / "afile").write_text("")


@pytest.mark.parametrize(("args", "message"), [
    (["missing.npy"], "INPUT 'missing.npy' does not exist"),
    (["{tmp}/empty"], "holds no image files"),
    (["{tmp}/mixed"], "'c.png' is 24x24 but 'a.png' (the first image) is 32x32"),
    (["{tmp}/oblong"], "'a.png' is 40x32, not square"),
    (["{tmp}/oblong.npy"], "must hold square images"),
    (["{tmp}/ok.npy", "--size", "16"], "--size resamples the images of a folder"),
    (["{tmp}/ok.npy", "--workers", "2"], "--workers needs --scheduler"),
    (["{tmp}/zero.npy"], "INPUT '{tmp}/zero.npy' is an empty file (0 bytes)"),
    (["{tmp}/ok.npy", "--grey"], "--grey converts the colour images of a folder"),
])
def test_bad_inputs_exit_2_with_one_line(args, message, tmp_path, capsys):
    _bad_inputs(tmp_path)
    argv = ["features", *[a.format(tmp=tmp_path) for a in args], "--out",
            str(tmp_path / "o.zarr")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message.format(tmp=tmp_path) in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "o.zarr").exists()  # nothing created


@pytest.mark.parametrize(("args", "message"), [
    (["--family", "legendre"], "argument --family: invalid choice: 'legendre'"),
    (["--orders", "4-2"], "argument --orders: range '4-2' runs backwards"),
    (["--orders", "two"], "argument --orders: must be"),
    (["--kind", "phase"], "argument --kind: invalid choice: 'phase'"),
    (["--device", "gpu"], "argument --device: must be auto, cpu"),
])
def test_bad_options_are_refused_by_the_parser(args, message, tmp_path, capsys):
    """argparse's own report: the command's usage, then one error line naming the option."""
    _bad_inputs(tmp_path)
    assert main(["features", str(tmp_path / "ok.npy"), *args, "--out",
                 str(tmp_path / "o.zarr")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: fastmoments features")
    assert err.strip().splitlines()[-1].startswith(f"fastmoments features: error: {message}")
    assert not (tmp_path / "o.zarr").exists()


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "bug" not in err, err
    return err


def test_damaged_zarr_chunk_exits_2_naming_store_and_chunk(tmp_path, capsys):
    import zarr

    imgs = np.random.default_rng(1).random((12, 16, 16)).astype(np.float32)
    zarr.create_array(str(tmp_path / "s.zarr"), shape=imgs.shape, chunks=(4, 16, 16),
                      dtype="float32")[:] = imgs
    chunk = tmp_path / "s.zarr" / "c" / "1" / "0" / "0"
    chunk.write_bytes(chunk.read_bytes()[:-7])
    assert main(["features", str(tmp_path / "s.zarr"), "--out", str(tmp_path / "o.zarr"),
                 "--orders", "2", "--batch", "4", "--no-progress"]) == 2
    err = _one_line(capsys)
    assert "s.zarr" in err and "Zarr chunk 'c/1/0/0' (images 4:8)" in err


def test_unwritable_outputs_exit_2(stack, tmp_path, capsys, monkeypatch):
    path, _ = stack
    (tmp_path / "afile").write_text("")
    assert main(["features", str(path), "--out", str(tmp_path / "afile" / "o.zarr"),
                 "--orders", "2"]) == 2
    assert "afile' is a file, not a folder" in _one_line(capsys)
    import os

    from fastmoments import _collection_outputs

    (tmp_path / "ro").mkdir()
    real = os.access
    monkeypatch.setattr(_collection_outputs.os, "access",
                        lambda p, mode: False if str(p).endswith("ro") else real(p, mode))
    assert main(["features", str(path), "--out", str(tmp_path / "ro" / "o.parquet"),
                 "--orders", "2"]) == 2
    assert "ro' is not writable" in _one_line(capsys)


def test_not_a_scheduler_names_the_option(stack, tmp_path, capsys):
    pytest.importorskip("distributed")
    path, _ = stack
    assert main(["features", str(path), "--out", str(tmp_path / "o.zarr"), "--scheduler",
                 "notascheduler"]) == 2
    assert "--scheduler 'notascheduler': cannot reach a Dask scheduler" in _one_line(capsys)


def test_colour_folder_needs_grey_and_says_so(tmp_path, capsys):
    from PIL import Image

    (tmp_path / "c").mkdir()
    Image.fromarray(np.full((16, 16, 3), 80, np.uint8)).save(tmp_path / "c" / "x.png")
    args = ["features", str(tmp_path / "c"), "--out", str(tmp_path / "o.zarr"), "--orders", "2",
            "--no-progress"]
    assert main(args) == 2
    assert "'x.png'" in _one_line(capsys)
    assert main([*args, "--grey"]) == 0
    out = capsys.readouterr().out
    assert "uint8 pixels, read exactly into float64; colour converted to grey" in out


def test_mixed_sizes_resampled_with_size(tmp_path):
    _bad_inputs(tmp_path)
    assert main(["features", str(tmp_path / "mixed"), "--out", str(tmp_path / "m.parquet"),
                 "--size", "20", "--orders", "3", "--no-progress"]) == 0
    mat, _ = read_features(tmp_path / "m.parquet")
    assert mat.shape[0] == 4 and np.isfinite(mat).all()


@pytest.mark.slow
def test_ctrl_c_under_a_local_cluster_prints_one_line(tmp_path):
    """Ctrl-C reaches the whole process group (the LocalCluster's workers too): one line, the
    resume hint, and status 130."""
    pytest.importorskip("distributed")
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    np.save(tmp_path / "big.npy", np.zeros((2000, 48, 48), np.uint8))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src"),
           "OMP_NUM_THREADS": "1"}
    out = tmp_path / "o.zarr"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fastmoments", "features", str(tmp_path / "big.npy"), "--out",
         str(out), "--orders", "30", "--batch", "10", "--scheduler", "local", "--workers", "2",
         "--no-progress"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    while proc.poll() is None and not (out / "done" / "c").is_dir():  # a first chunk is done
        time.sleep(0.05)
    if proc.poll() is not None:
        proc.communicate()
        pytest.skip("the run ended before it could be interrupted")
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    _, err = proc.communicate()
    text = err.decode()
    assert proc.returncode == 130, text
    assert text.splitlines() == [f"fastmoments features: interrupted; the chunks written so far "
                                 f"are kept in {out}: run the same command again to resume"]
