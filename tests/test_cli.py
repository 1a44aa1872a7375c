"""The command line: demo, reconstruct, and clean errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fastmoments.cli.main import main


def test_demo_writes_figures_tables_and_timings(tmp_path, capsys):
    out = tmp_path / "demo"
    rc = main(["demo", "--out", str(out), "--size", "32", "--orders", "4,8", "--k", "1,2"])
    assert rc == 0
    assert str(out) in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    for fam in ("zernike", "pseudo-zernike"):
        res = summary["results"][fam]
        assert np.array(res["psnr_db"]).shape == (2, 2)
        assert (out / f"{fam}_grid.png").stat().st_size > 1000
    assert "| k \\ T |" in (out / "README.md").read_text()


def test_reconstruct_image_file(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    path = tmp_path / "img.png"
    Image.fromarray((rng.random((40, 48)) * 255).astype(np.uint8)).save(path)
    out = tmp_path / "rec"
    rc = main(["reconstruct", str(path), "--family", "pseudo-zernike", "--orders", "3,6",
               "--k", "1", "--out", str(out)])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["size"] == 40  # centre-cropped to a square
    assert (out / "pseudo-zernike_grid.png").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["reconstruct", "missing.png"], "does not exist"),
    (["reconstruct", "x.png", "--family", "legendre"], "family must be one of"),
    (["demo", "--orders", "a,b"], "argument --orders: must be comma-separated integers"),
])
def test_errors_are_clean(args, message, capsys, tmp_path):
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err


def test_help_lists_commands(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "demo" in text and "reconstruct" in text
