"""A first hour without surprises: one set of feature defaults, every command checks its paths,
options and optional packages before it imports torch, one progress convention, and
``did you mean ...?`` for a misspelled command, option or choice."""

from __future__ import annotations

import argparse
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from fastmoments import _defaults, _progress
from fastmoments.cli import _errors
from fastmoments.cli.main import build_parser, main

COMMANDS = ["characters", "demo", "features", "objects", "reconstruct", "scalogram", "volume"]
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _subparser(command: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def _option(command: str, dest: str) -> argparse.Action:
    return next(a for a in _subparser(command)._actions if a.dest == dest)


# ----------------------------------------------------------------------------- one convention

def test_feature_defaults_are_defined_once():
    """features(), fastmoments.dask.features, run_features, object_features,
    select_by_variance, the transformers and the command read fastmoments._defaults."""
    from fastmoments.collections import run_features
    from fastmoments.recognition import features, object_features, select_by_variance
    from fastmoments.sklearn import MomentFeatures, PseudoZernikeFeatures, ZernikeFeatures

    for fn in (features, run_features, object_features, select_by_variance):
        params = inspect.signature(fn).parameters
        assert params["family"].default == _defaults.FAMILY, fn
        assert params["orders"].default == _defaults.ORDERS, fn
        assert params["kind"].default == _defaults.KIND, fn
    for cls in (MomentFeatures, ZernikeFeatures, PseudoZernikeFeatures):
        params = cls().get_params()
        assert "order" not in params  # one parameter name: orders
        assert params["orders"] == _defaults.ORDERS and params["kind"] == _defaults.KIND
    assert MomentFeatures().family == _defaults.FAMILY
    ns = build_parser().parse_args(["features", "in.npy", "--out", "o.zarr"])
    assert (ns.family, ns.orders, ns.kind) == (_defaults.FAMILY, _defaults.ORDERS,
                                              _defaults.KIND)


def test_dask_features_share_the_defaults():
    pytest.importorskip("dask")
    from fastmoments.dask import _features

    for fn in (_features.features, _features.feature_names):
        params = inspect.signature(fn).parameters
        assert (params["family"].default, params["orders"].default, params["kind"].default) \
            == (_defaults.FAMILY, _defaults.ORDERS, _defaults.KIND)


def test_the_vocabularies_checked_before_torch_match_the_library():
    import fastmoments.disk.pht_family  # noqa: F401  (registers the PHT families)
    from fastmoments.disk import FAMILIES
    from fastmoments.moments import KINDS

    assert KINDS is _defaults.KINDS
    assert set(FAMILIES) == set(_defaults.DISK_FAMILIES)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_the_same_device_and_progress_options(command):
    assert _option(command, "device").default == _defaults.CLI_DEVICE == "auto"
    progress = _option(command, "progress")
    assert progress.default is None
    assert set(progress.option_strings) == {"--progress", "--no-progress"}


# ----------------------------------------------------------------------------- check first

def _run_isolated(argv: list[str], hide: tuple[str, ...] = (), cwd: Path | None = None
                  ) -> tuple[int, str, bool]:
    """Run the command in a fresh interpreter (``hide``: packages made unimportable);
    returns the status, stderr and whether torch was imported by the time it ended (in this
    process torch is loaded already, so only a fresh one can tell; no time limit)."""
    code = textwrap.dedent(f"""
        import sys
        for name in {list(hide)!r}:
            sys.modules[name] = None
        from fastmoments.cli.main import main
        rc = main({argv!r})
        print("RESULT", rc, "torch" in sys.modules)
    """)
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=cwd, check=False)
    last = done.stdout.strip().splitlines()[-1].split()
    assert last[0] == "RESULT", done.stdout + done.stderr
    return int(last[1]), done.stderr, last[2] == "True"


@pytest.fixture(scope="module")
def place(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("first_hour")
    np.save(base / "stack.npy", np.zeros((2, 8, 8)))
    (base / "afile").write_text("not a folder")
    return base


CASES = {
    "reconstruct: missing image": (["reconstruct", "missing.png"], (), "IMAGE 'missing.png'"),
    "scalogram: missing signal": (["scalogram", "missing.wav"], (), "SIGNAL 'missing.wav'"),
    "characters: missing font": (["characters", "--font", "missing.ttc"], (),
                                 "--font 'missing.ttc'"),
    "features: missing input": (["features", "missing.npy", "--out", "o.zarr"], (),
                                "INPUT 'missing.npy'"),
    "objects: missing labels": (["objects", "missing.tif", "--out", "o.csv"], (),
                                "LABELS 'missing.tif'"),
    "objects: missing image": (["objects", "stack.npy", "missing.tif", "--out", "o.csv"], (),
                               "IMAGE 'missing.tif'"),
    "objects: Parquet without pyarrow": (
        ["objects", "stack.npy", "--out", "o.parquet"], ("pyarrow",),
        'pip install "fastmoments[dask]"'),
    "volume: missing volume": (["volume", "missing.nii"], (), "VOLUME 'missing.nii'"),
    "demo: output under a file": (["demo", "--out", "afile/out"], (), "--out 'afile/out'"),
    "reconstruct: output under a file": (["reconstruct", "stack.npy", "--out", "afile/o"], (),
                                         "--out 'afile/o'"),
    "features: output under a file": (["features", "stack.npy", "--out", "afile/o.zarr"], (),
                                      "--out 'afile/o.zarr'"),
    "features: Parquet without pyarrow": (
        ["features", "stack.npy", "--out", "o.parquet"], ("pyarrow",),
        'pip install "fastmoments[dask]"'),
    "features: Zarr without zarr": (["features", "stack.npy", "--out", "o.zarr"], ("zarr",),
                                    'pip install "fastmoments[dask]"'),
    "features: scheduler without distributed": (
        ["features", "stack.npy", "--out", "o.zarr", "--scheduler", "local"],
        ("distributed",), 'pip install "fastmoments[dask]"'),
    "features: workers without scheduler": (
        ["features", "stack.npy", "--out", "o.zarr", "--workers", "2"], (), "--scheduler"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_mistakes_are_reported_before_torch_is_imported(case, place):
    argv, hide, named = CASES[case]
    rc, err, torch_imported = _run_isolated(argv, hide, cwd=place)
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"fastmoments {argv[0]}: error: "), err
    assert named in lines[0], err
    assert not torch_imported, f"{case}: torch was imported before the error"


def test_require_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "nibabel", None)
    with pytest.raises(_errors.UsageError) as exc:
        _errors.require(["pyarrow", "nibabel", "os"], "this output")
    text = str(exc.value)
    assert text.startswith("this output needs pyarrow, nibabel, which are not installed")
    assert 'pip install "fastmoments[dask,volume]"' in text


def test_sklearn_module_says_which_extra(monkeypatch):
    import importlib

    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.delitem(sys.modules, "fastmoments.sklearn", raising=False)
    with pytest.raises(ModuleNotFoundError, match=r'pip install "fastmoments\[sklearn\]"'):
        importlib.import_module("fastmoments.sklearn")


# ----------------------------------------------------------------------------- did you mean

def _err(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


def test_misspelled_command(capsys):
    err = _err(["dmeo"], capsys)
    assert err.startswith("usage: fastmoments")
    assert "invalid choice: 'dmeo'" in err and "did you mean demo?" in err


@pytest.mark.parametrize(("argv", "wrong", "right"), [
    (["demo", "--ordres", "3"], "--ordres", "--orders"),
    (["scalogram", "chirp", "--min-sacle", "3"], "--min-sacle", "--min-scale"),
    (["features", "a.npy", "--out", "o.zarr", "--famly", "zernike"], "--famly", "--family"),
    (["characters", "--no-porgress"], "--no-porgress", "--no-progress"),
])
def test_misspelled_option_gets_the_commands_usage(argv, wrong, right, capsys):
    err = _err(argv, capsys)
    assert err.startswith(f"usage: fastmoments {argv[0]} ")  # the command's usage
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"fastmoments {argv[0]}: error: unrecognized arguments: {wrong}")
    assert f"did you mean {right}?" in last


def test_misspelled_choice(capsys):
    err = _err(["scalogram", "chirp", "--method", "sfft"], capsys)
    assert "invalid choice: 'sfft'" in err and "did you mean sft?" in err
    err = _err(["features", "a.npy", "--out", "o.zarr", "--family", "zernik"], capsys)
    assert "did you mean zernike?" in err
    err = _err(["reconstruct", "a.png", "--family", "pseudozernike"], capsys)
    assert "did you mean pseudo-zernike?" in err


# ----------------------------------------------------------------------------- progress

def test_bar_has_a_total_and_ends_its_line(capsys):
    bar = _progress.progress_bar(4, desc="job", show=True, unit="step")
    for _ in range(4):
        bar.update(1)
    bar.close()
    err = capsys.readouterr().err
    assert "job" in err and "4/4" in err and "<" in err  # elapsed<left: the ETA
    assert err.endswith("\n")


def test_default_bar_only_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "on_terminal", lambda: False)
    assert isinstance(_progress.progress_bar(100), _progress._Silent)
    assert list(_progress.progress(range(20))) == list(range(20))
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(_progress, "on_terminal", lambda: True)
    bar = _progress.progress_bar(100)
    assert not isinstance(bar, _progress._Silent) and bar.delay == _progress.DELAY_S
    bar.close()
    assert isinstance(_progress.progress_bar(100, large=False), _progress._Silent)
    capsys.readouterr()


def test_no_progress_silences_the_library_bars(tmp_path, capsys, monkeypatch):
    """--no-progress reaches the library: no bar even on a terminal."""
    from fastmoments.cli import _args

    monkeypatch.setattr(_progress, "on_terminal", lambda: True)
    monkeypatch.setattr(_args, "cuda_available", lambda: False)
    assert main(["demo", "--size", "16", "--orders", "2,4", "--k", "1", "--no-progress",
                 "--out", str(tmp_path / "d")]) == 0
    assert "fastmoments demo:" not in capsys.readouterr().err
    assert main(["demo", "--size", "16", "--orders", "2,4", "--k", "1", "--progress",
                 "--out", str(tmp_path / "d")]) == 0
    assert "fastmoments demo:" in capsys.readouterr().err


def test_characters_bar_counts_its_steps():
    from fastmoments.cli.cmd_characters import count_steps

    # 14 rendering chunks, 2 moments, at most 7 statistics, 3 x 3 rotation checks, and for
    # the recognition test 2 galleries, 1 rotation, 3 noise levels x (2 features + 2 x 6 +
    # 2 x 3 + 1 searches), 1 final search
    assert count_steps(6763, recognition=True, orders=[2, 4, 6, 8, 10, 12],
                       noise=[0, 0.3, 0.6]) == 14 + 2 + 7 + 9 + 2 + 1 + 3 * 21 + 1


# ----------------------------------------------------------------------------- estimates

def test_estimate_counts_the_figures_and_the_load():
    from fastmoments.cli import _estimate

    kw = dict(n=128, orders=[30, 60, 120], ks=[1, 3], families=2, device="cpu")
    work = 2 * _estimate.study_seconds(128, [30, 60, 120], [1, 3])
    figures = _estimate.figure_seconds(2, [30, 60, 120], [1, 3])
    assert figures == 2 * (_estimate.FIGURE_S + 6 * _estimate.PANEL_S)
    quiet, busy = _estimate.estimate_line("demo", **kw), _estimate.estimate_line(
        "demo", load=3.0, **kw)
    total = work + figures
    assert f"about {_estimate._fmt_seconds(total)} ({_estimate._fmt_range(total)}:" in quiet
    assert f"about {_estimate._fmt_seconds(3 * total)} (" in busy and "x 3.0" in busy
    assert "x " not in quiet.split("figures")[1].split(";")[0]
    assert _estimate.load_factor() >= 1.0


@pytest.mark.parametrize(("seconds", "text"), [(2.9, "1.7-8.7 s"), (20.0, "12-60 s"),
                                                (100.0, "1.0-5.0 min"), (600.0, "6-30 min")])
def test_estimate_range(seconds, text):
    from fastmoments.cli import _estimate

    assert _estimate._fmt_range(seconds) == text


def test_features_checks_need_no_torch(monkeypatch, place):
    """In this process: the checks of ``features`` run with torch made unimportable (any
    ``import torch`` on their way would raise ImportError instead of the usage error)."""
    from fastmoments.cli import cmd_features

    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.chdir(place)
    ns = build_parser().parse_args(["features", "stack.npy", "--out", "afile/o.zarr"])
    with pytest.raises(_errors.UsageError, match="afile"):
        cmd_features.check(ns)
    ns = build_parser().parse_args(["features", "nothing.npy", "--out", "o.parquet"])
    with pytest.raises(_errors.UsageError, match=r"INPUT 'nothing\.npy' does not exist"):
        cmd_features.check(ns)
    cmd_features.check(build_parser().parse_args(["features", "stack.npy", "--out", "o.zarr"]))


def test_dask_module_says_which_extra(monkeypatch):
    import importlib

    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.array", None)
    for name in [m for m in sys.modules if m == "fastmoments.dask" or
                 m.startswith("fastmoments.dask.")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ModuleNotFoundError, match=r'pip install "fastmoments\[dask\]"'):
        importlib.import_module("fastmoments.dask")
