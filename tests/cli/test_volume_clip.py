"""``fastmoments volume --clip-plane``: the clipped reconstruction the command writes equals the
library's, its PSNR is over the kept voxels, and bad planes are refused naming the option."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fastmoments.box import JacobiTransform, Plane
from fastmoments.box.phantom import shepp_logan_3d
from fastmoments.cli.main import main


def test_clip_plane_writes_the_library_result(tmp_path, capsys):
    out = tmp_path / "vol"
    rc = main(["volume", "phantom", "--size", "12", "--orders", "4", "--k", "1",
               "--dtype", "float64", "--clip-plane", "1,0,0,0", "--clip-plane=0,0,-1,0.25",
               "--keep", "below", "--no-figures", "--no-progress", "--out", str(out),
               "--device", "cpu"])
    assert rc == 0
    got = np.load(out / "clipped.npy")
    vol = shepp_logan_3d(12).astype(np.float64)
    J = JacobiTransform(vol.shape, 4, dtype="float64").forward(vol)
    ref = np.asarray(J.reconstruct(clip=[Plane((1, 0, 0), 0.0), Plane((0, 0, -1), 0.25)]))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))  # the same voxels kept
    kept = np.isfinite(ref)
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(got[kept], ref[kept], rtol=1e-12,
                               atol=1e-12 * np.abs(ref[kept]).max())
    mse = np.mean((vol[kept] - ref[kept]) ** 2)
    peak = vol[kept].max() - vol[kept].min()
    psnr = 10 * math.log10(peak**2 / mse)
    text = (out / "psnr.md").read_text()
    assert f"PSNR over them {psnr:.2f} dB" in text


@pytest.mark.parametrize("plane", ["1,2,3", "0,0,0,1", "a,b,c,d", "1,0,0,nan"])
def test_bad_clip_plane_is_refused_naming_the_option(plane, tmp_path, capsys):
    rc = main(["volume", "phantom", "--size", "8", "--orders", "2", "--k", "1",
               f"--clip-plane={plane}", "--no-figures", "--out", str(tmp_path / "o")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "--clip-plane" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()
