"""The command line: the numbers it writes are the library's, and its errors are clean.

Each command is run in-process on a small input; the test recomputes what the command wrote
through the public library API (in float64 where the command allows it) and compares. The
tolerances are those of the rounding the command applies when it writes (3 decimals of dB in
summary.json, 4 in psnr.csv, 2 in the Markdown tables) plus float32 rounding where the command
computes in float32.
"""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest

import fastmoments as fm
from fastmoments.cli.main import main


def _disk_psnr(image: np.ndarray, family: str, order: int, k: int) -> float:
    """PSNR over the disk of the order-``order`` reconstruction, through the library, float64."""
    plan = fm.DiskTransform(family, image.shape[0], order, k=k, dtype="float64")
    rec = plan.forward(image).reconstruct()
    return float(fm.psnr(image, rec, mask=np.asarray(plan.mask), data_range=255.0))


def _markdown_rows(text: str) -> dict[str, list[float]]:
    """``| k | v1 | v2 |`` rows of a Markdown table, by their first cell."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 1 and re.fullmatch(r"\d+", cells[0]):
            rows[cells[0]] = [float(c) for c in cells[1:]]
    return rows


def _check_study(out, fam: str, image: np.ndarray, orders: list[int], ks: list[int]) -> None:
    summary = json.loads((out / "summary.json").read_text())
    res = summary["results"][fam]
    assert res["orders"] == orders and res["ks"] == ks
    table = np.array(res["psnr_db"])
    assert table.shape == (len(ks), len(orders))
    want = np.array([[_disk_psnr(image, fam, t, k) for t in orders] for k in ks])
    # summary.json rounds to 1e-3 dB (error <= 5e-4); the command computes in float32, which
    # moved these PSNRs by at most 1.4e-6 dB from float64 when measured (32 x 32 camera,
    # orders 4 and 8, k 1 and 2): 1e-4 dB of margin covers it on any CPU.
    np.testing.assert_allclose(table, want, rtol=0, atol=5e-4 + 1e-4)
    assert len({round(v, 1) for v in table.ravel()}) > 1  # not one value repeated
    # the Markdown report shows the same numbers, to 2 decimals
    section = (out / "README.md").read_text().split(f"## {fam}")[1].split("## ")[0]
    rows = _markdown_rows(section)
    for i, k in enumerate(ks):
        np.testing.assert_allclose(rows[str(k)], want[i], rtol=0, atol=0.005 + 1e-4)
    assert (out / res["figure"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_writes_the_library_psnr(tmp_path, capsys):
    out = tmp_path / "demo"
    rc = main(["demo", "--out", str(out), "--size", "32", "--orders", "4,8", "--k", "1,2"])
    assert rc == 0
    assert str(out) in capsys.readouterr().out
    camera = fm.data.sample_image("camera", 32)
    for fam in ("zernike", "pseudo-zernike"):
        _check_study(out, fam, camera, [4, 8], [1, 2])


def test_reconstruct_writes_the_library_psnr(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    pixels = (rng.random((40, 48)) * 255).astype(np.uint8)
    path = tmp_path / "img.png"
    Image.fromarray(pixels).save(path)
    out = tmp_path / "rec"
    rc = main(["reconstruct", str(path), "--family", "pseudo-zernike", "--orders", "3,6",
               "--k", "1", "--out", str(out)])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["size"] == 40
    # the library that made it is recorded
    assert summary["fastmoments"]["version"] == fm.__version__
    assert f"Made by fastmoments {fm.__version__}" in (out / "README.md").read_text()
    square = pixels[:, 4:44].astype(np.float64)  # the centre crop of a 40 x 48 image
    _check_study(out, "pseudo-zernike", square, [3, 6], [1])


def test_volume_writes_the_library_psnr(tmp_path, capsys):
    rng = np.random.default_rng(1)
    vol = rng.random((6, 7, 8)) * 100.0
    np.save(tmp_path / "v.npy", vol)
    out = tmp_path / "vol"
    rc = main(["volume", str(tmp_path / "v.npy"), "--orders", "2,5", "--k", "1,2",
               "--alpha", "0.5", "--beta", "0.25", "--dtype", "float64", "--no-figures",
               "--out", str(out)])
    assert rc == 0
    assert "psnr.csv" in capsys.readouterr().out
    with open(out / "psnr.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(int(r["order"]), int(r["k"])) for r in rows] == [(2, 1), (5, 1), (2, 2), (5, 2)]
    peak = vol.max() - vol.min()
    want = {}
    for order, k in ((2, 1), (5, 1), (2, 2), (5, 2)):
        plan = fm.JacobiTransform(vol.shape, order, alpha=0.5, beta=0.25, k=k, dtype="float64")
        rec = np.asarray(plan.forward(vol).reconstruct())
        want[order, k] = 10 * np.log10(peak**2 / np.mean((vol - rec) ** 2))
    for r in rows:  # psnr.csv rounds to 1e-4 dB (error <= 5e-5); float64 on both sides
        assert float(r["psnr_db"]) == pytest.approx(want[int(r["order"]), int(r["k"])],
                                                    rel=0, abs=5e-5 + 1e-6)
    assert want[5, 2] > want[2, 2] + 0.1  # a higher order reconstructs better: not a constant
    md_text = (out / "psnr.md").read_text()
    assert f"Made by fastmoments {fm.__version__}" in md_text  # the library is recorded
    md = _markdown_rows(md_text)
    for k in (1, 2):
        np.testing.assert_allclose(md[str(k)], [want[2, k], want[5, k]], rtol=0,
                                   atol=0.005 + 1e-6)


@pytest.mark.parametrize("kind", ["csv", "wav"])
def test_scalogram_writes_the_library_cwt(kind, tmp_path, capsys):
    n = 400
    t = np.arange(n)
    x = np.sin(2 * np.pi * 0.05 * t) + 0.5 * np.sin(2 * np.pi * 0.2 * t)
    if kind == "csv":
        path = tmp_path / "x.csv"
        np.savetxt(path, np.column_stack([np.zeros(n), x]), delimiter=",")
        extra, rate = ["--column", "1", "--rate", "50"], 50.0
    else:
        from scipy.io import wavfile

        x = np.round(x * 8000).astype(np.int16)
        path = tmp_path / "x.wav"
        wavfile.write(path, 8000, x)
        extra, rate = [], 8000.0
    fig, data = tmp_path / "s.png", tmp_path / "s.npz"
    rc = main(["scalogram", str(path), "--scales", "8,2,4", "--xi", "5", *extra,
               "--out", str(fig), "--save", str(data)])
    assert rc == 0
    assert "400 samples at 3 scales" in capsys.readouterr().out
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    want, freqs = fm.cwt(np.asarray(x, dtype=np.float64), [8.0, 2.0, 4.0], fm.Morlet(5.0),
                         sampling_period=1.0 / rate)
    with np.load(data) as z:
        np.testing.assert_allclose(z["scales"], [8.0, 2.0, 4.0], rtol=1e-15)
        assert float(z["rate"]) == pytest.approx(rate, rel=1e-15)
        np.testing.assert_allclose(z["frequencies"], freqs, rtol=1e-13)
        got = z["coefficients"]
        assert str(z["fastmoments_version"]) == fm.__version__  # the library is recorded
    assert got.shape == (3, n) and np.iscomplexobj(got)
    # the same float64 computation in the same process: equal up to summation order
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
    # the rows follow the order of --scales: the coarsest scale (8) answers the slow sine
    assert np.abs(got[0]).mean() > np.abs(got[1]).mean()


@pytest.mark.parametrize(("args", "message"), [
    (["reconstruct", "missing.png"], "does not exist"),
    (["reconstruct", "x.png", "--family", "legendre"], "argument --family: must be one of"),
    (["demo", "--orders", "a,b"], "argument --orders: must be comma-separated integers"),
])
def test_errors_are_clean(args, message, capsys, tmp_path):
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err


def test_help_lists_commands(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "demo" in text and "reconstruct" in text
