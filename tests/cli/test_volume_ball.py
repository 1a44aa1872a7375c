"""``fastmoments volume --family zernike3d``: the tables, invariants and moments the command
writes equal the library's (``fastmoments.ball``), the ball options reach the plan, the figures
carry their PSNR, and options of the other family are refused naming the option."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from fastmoments.ball import Zernike3DTransform, psnr, zernike3d_moments
from fastmoments.cli.cmd_volume import default_orders, display_window
from fastmoments.cli.main import main


def _rows(path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _blob_volume(shape=(9, 10, 11), seed=3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vol = np.zeros(shape)
    vol[2:7, 3:8, 2:9] = rng.random((5, 5, 7)) * 50.0
    return vol


def test_ball_writes_the_library_psnr_invariants_and_moments(tmp_path, capsys):
    vol = _blob_volume()
    np.save(tmp_path / "v.npy", vol)
    out = tmp_path / "z"
    rc = main(["volume", str(tmp_path / "v.npy"), "--family", "zernike3d", "--orders", "2,5",
               "--k", "1,2", "--dtype", "float64", "--no-figures", "--no-progress",
               "--device", "cpu", "--out", str(out)])
    assert rc == 0
    assert "invariants.csv" in capsys.readouterr().out
    rows = _rows(out / "psnr.csv")
    assert [(int(r["order"]), int(r["k"])) for r in rows] == [(2, 1), (5, 1), (2, 2), (5, 2)]
    invariants = _rows(out / "invariants.csv")
    for k in (1, 2):
        plan = Zernike3DTransform(vol.shape, 5, k=k, dtype="float64")
        for order in (2, 5):
            # an independent plan of this order: the same moments n <= order
            ref = zernike3d_moments(vol, order, k=k, dtype="float64").reconstruct()
            want = float(psnr(vol, ref, mask=plan.reconstruction_mask))
            got = next(float(r["psnr_db"]) for r in rows
                       if int(r["order"]) == order and int(r["k"]) == k)
            assert got == pytest.approx(want, rel=0, abs=5e-5 + 1e-9)  # rounded to 1e-4 dB
        Om = plan.forward(vol)
        assert [(int(r["n"]), int(r["l"])) for r in invariants] == Om.pairs
        np.testing.assert_allclose([float(r[f"k={k}"]) for r in invariants], Om.invariants(),
                                   rtol=1e-15, atol=0)  # written with repr: every digit
    saved = np.load(out / "moments.npz")
    np.testing.assert_array_equal(saved["nlm"], Om.nlm)
    np.testing.assert_array_equal(saved["values"], Om.values())  # the last k
    assert tuple(saved["center"]) == (4.0, 4.5, 5.0) and float(saved["radius"]) == 4.5
    low, high = (float(next(r["psnr_db"] for r in rows if r["k"] == "2" and r["order"] == o))
                 for o in ("2", "5"))
    assert high > low  # the higher order rebuilds better: not a constant column


@pytest.mark.parametrize("center, radius, lib_center, lib_radius", [
    ("centroid", "enclosing", "centroid", "enclosing"),
    ("4,4.5,5", "3.5", (4.0, 4.5, 5.0), 3.5),
    ("box", "enclosing", None, "enclosing"),
])
def test_ball_placement_options_reach_the_plan(center, radius, lib_center, lib_radius,
                                              tmp_path, capsys):
    vol = _blob_volume()
    np.save(tmp_path / "v.npy", vol)
    out = tmp_path / "z"
    rc = main(["volume", str(tmp_path / "v.npy"), "--family", "zernike3d", "--orders", "4",
               "--k", "1", "--center", center, "--radius", radius, "--dtype", "float64",
               "--no-figures", "--no-progress", "--device", "cpu", "--out", str(out)])
    assert rc == 0
    Om = zernike3d_moments(vol, 4, center=lib_center, radius=lib_radius, dtype="float64")
    plan = Om.plans[0] if Om.plans else Om.plan
    saved = np.load(out / "moments.npz")
    np.testing.assert_allclose(saved["center"], plan.ball_center, rtol=1e-15, atol=0)
    assert float(saved["radius"]) == pytest.approx(plan.ball_radius, rel=1e-15)
    np.testing.assert_allclose(saved["values"], np.asarray(Om.values()).reshape(-1),
                               rtol=0, atol=1e-13 * np.abs(Om.values()).max())
    assert "ball centre" in (out / "psnr.md").read_text()


def test_ball_figures_carry_psnr_and_the_invariants(tmp_path, capsys):
    from PIL import Image

    out = tmp_path / "z"
    assert main(["volume", "phantom", "--size", "12", "--family", "zernike3d", "--orders",
                 "2,4", "--k", "1,2", "--device", "cpu", "--no-progress",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    value = {(int(r["order"]), int(r["k"])): float(r["psnr_db"])
             for r in _rows(out / "psnr.csv")}

    def words(name):
        with Image.open(out / name) as im:  # titles are wrapped: one space for each break
            return {key: " ".join(v.split()) for key, v in im.text.items()}

    xy = words("slices_xy.png")
    for (o, k), v in value.items():
        assert f"order {o}, k = {k}" in xy["fastmoments:axes"]
        assert f"PSNR {v:.2f} dB" in xy["fastmoments:axes"]
    assert "3-D Zernike" in xy["Title"] and "ball centre (5.5, 5.5, 5.5)" in xy["Title"]
    assert "grey levels 0 to 102" in xy["Title"]  # the phantom's skull clipped for display
    planes = words("slices_planes.png")
    assert planes["fastmoments:axes"].count(f"PSNR {value[(4, 2)]:.2f} dB") == 3
    inv = words("invariants.png")
    assert "||Omega_nl||" in inv["Title"] and "energy per order" in inv["fastmoments:axes"]


def test_default_orders_follow_the_volume(tmp_path, capsys):
    out = tmp_path / "j"
    assert main(["volume", "phantom", "--size", "16", "--no-figures", "--no-progress",
                 "--device", "cpu", "--out", str(out)]) == 0
    rows = [(int(r["order"]), int(r["k"])) for r in _rows(out / "psnr.csv")]
    assert rows == [(o, k) for k in (1, 3) for o in (8, 24, 45)]
    assert default_orders("jacobi", "box", (16, 20, 30)) == [4, 8, 15]
    assert default_orders("zernike3d", "total", (4, 4, 4)) == [1, 2]


def test_display_window_clips_only_a_bright_minority():
    v = np.full((4, 4, 4), 10.0)
    assert display_window(v) == (10.0, 11.0)  # constant: a range of one
    v[0, 0, 0] = 15.0
    assert display_window(v) == (10.0, 15.0)  # below twice the median: the whole range
    v[0, 0, 1] = 500.0
    assert display_window(v) == (10.0, 20.0)


@pytest.mark.parametrize("argv, option", [
    (["--family", "zernike3d", "--alpha", "0.5"], "--alpha"),
    (["--family", "zernike3d", "--truncation", "box"], "--truncation"),
    (["--family", "zernike3d", "--clip-plane", "1,0,0,0"], "--clip-plane"),
    (["--center", "centroid"], "--center"),
    (["--radius", "3"], "--radius"),
    (["--family", "zernike3d", "--center", "1,2"], "--center"),
    (["--family", "zernike3d", "--center", "1,2,nan"], "--center"),
    (["--family", "zernike3d", "--radius", "-1"], "--radius"),
    (["--family", "zernike3d", "--radius", "big"], "--radius"),
    (["--family", "zernike3d", "--center", "50,50,50", "--radius", "1"], "--center"),
    (["--family", "ball"], "--family"),
])
def test_options_of_the_other_family_and_bad_ball_options_are_refused(argv, option, tmp_path,
                                                                      capsys):
    rc = main(["volume", "phantom", "--size", "8", "--orders", "2", "--no-figures",
               "--device", "cpu", *argv, "--out", str(tmp_path / "o")])
    assert rc == 2
    err = capsys.readouterr().err
    assert option in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()
