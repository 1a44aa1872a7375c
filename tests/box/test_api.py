"""Box moments API: input kinds, dtype policy, errors that name the parameter, I/O and CLI."""

from __future__ import annotations

import csv
import os

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.box import BoxMoments, JacobiTransform, jacobi_moments, legendre_moments
from fastmoments.box.api import _plan
from fastmoments.box.io import load_volume, sample_volume
from fastmoments.box.phantom import shepp_logan_3d
from fastmoments.cli.main import main


def test_public_names():
    for name in ("jacobi_moments", "legendre_moments", "gegenbauer_moments", "JacobiTransform",
                 "BoxMoments"):
        assert name in fm.__all__ and hasattr(fm, name)


def test_numpy_in_numpy_out_and_input_untouched(rng):
    img = rng.random((12, 10))
    keep = img.copy()
    J = jacobi_moments(img, 6, alpha=0.3, beta=0.7)
    assert isinstance(J, BoxMoments) and isinstance(J[2, 1], np.floating)
    assert isinstance(J[:, 0], np.ndarray) and J[:, 0].shape == (7,)
    assert isinstance(J.reconstruct(), np.ndarray) and J.reconstruct().shape == (12, 10)
    np.testing.assert_array_equal(img, keep)


def test_torch_in_torch_out_same_device(device):
    x = torch.rand(2, 9, 8, device=device)
    keep = x.clone()
    J = jacobi_moments(x, 5, alpha=0.3, beta=0.3, ndim=2)
    assert isinstance(J[1, 1], torch.Tensor) and J[1, 1].shape == (2,)
    rec = J.reconstruct()
    assert isinstance(rec, torch.Tensor) and rec.device.type == device and rec.shape == x.shape
    assert torch.equal(x, keep)


@pytest.mark.parametrize(("dtype", "expected"), [(np.float32, torch.float32),
                                                  (np.float64, torch.float64),
                                                  (np.uint8, torch.float32),
                                                  (np.int64, torch.float32),
                                                  (np.float16, torch.float32)])
def test_dtype_policy(dtype, expected):
    J = legendre_moments(np.ones((6, 6), dtype=dtype), 3)
    assert J.dtype == expected


def test_plan_cache_keys_are_plain_values():
    _plan.cache_clear()
    img = np.ones((8, 8))
    jacobi_moments(img, 3, alpha=0.3, beta=0.3)
    jacobi_moments(img + 1, 3, alpha=0.3, beta=0.3)
    info = _plan.cache_info()
    assert info.hits == 1 and info.misses == 1


def test_rectangular_and_plan_shape():
    plan = JacobiTransform((6, 7, 9), 4, alpha=0.5, beta=0.1)
    J = plan.forward(np.ones((6, 7, 9)))
    assert J.numpy().shape == (5, 5, 5) and J.ndim == 3 and J.order == 4
    assert "jacobi" in repr(J) and "JacobiTransform" in repr(plan)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., D, H, W\)"):
        plan.forward(np.ones((6, 7, 8)))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"alpha": -1.0, "beta": 0.0}, "alpha must be > -1"),
    ({"alpha": 0.0, "beta": -1.5}, "beta must be > -1"),
    ({"alpha": float("nan"), "beta": 0.0}, "alpha"),
    ({"alpha": 0.0, "beta": 0.0, "quadrature": "simpson"},
     "quadrature must be one of 'midpoint', 'gauss'"),
    ({"alpha": 0.0, "beta": 0.0, "truncation": "tri"}, "truncation must be one of 'total', 'box'"),
    ({"alpha": 0.0, "beta": 0.0, "ndim": 4}, "ndim must be <= 3"),
    ({"alpha": 0.0, "beta": 0.0, "k": 0}, "k must be >= 1"),
])
def test_errors_name_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        jacobi_moments(np.ones((4, 4)), 3, **kwargs)


def test_more_errors():
    img = np.ones((4, 4))
    with pytest.raises(ValueError, match="order must be >= 0"):
        jacobi_moments(img, -1, alpha=0, beta=0)
    with pytest.raises(TypeError, match="order must be an integer"):
        jacobi_moments(img, 2.0, alpha=0, beta=0)
    bad = img.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="x contains NaN"):
        jacobi_moments(bad, 2, alpha=0, beta=0)
    with pytest.raises(ValueError, match="x must have at least 2 dimensions"):
        jacobi_moments(np.ones(5), 2, alpha=0, beta=0)
    with pytest.raises(ValueError, match="ndim must be given"):
        jacobi_moments(np.ones((2, 4, 4)), 2, alpha=0, beta=0)
    with pytest.raises(ValueError, match="at least 3 dimensions for ndim=3"):
        jacobi_moments(img, 2, alpha=0, beta=0, ndim=3)
    with pytest.raises(ValueError, match=r"lam must be > -0\.5"):
        fm.gegenbauer_moments(img, 2, lam=-0.5)
    with pytest.raises(ValueError, match="lam must be != 0"):
        fm.gegenbauer_moments(img, 2, lam=0.0)
    with pytest.raises(ValueError, match="shape must have 2 or 3 entries"):
        JacobiTransform((4,), 2)
    with pytest.raises(ValueError, match="parity=True needs alpha == beta"):
        JacobiTransform((4, 4), 2, alpha=0.1, beta=0.2, parity=True)
    with pytest.raises(ValueError, match="normalization must be one of"):
        JacobiTransform((4, 4), 2, normalization="chebyshev")


def test_reconstruct_and_slice_errors():
    J = legendre_moments(np.ones((5, 6, 7)), 3, ndim=3)
    with pytest.raises(ValueError, match="plane must be one of 'xy', 'xz', 'yz'"):
        J.slice("zz", 0)
    with pytest.raises(ValueError, match="index must be <= 5"):
        J.slice("xz", 6)
    with pytest.raises(ValueError, match="order must be <= 3"):
        J.reconstruct(order=4)
    with pytest.raises(ValueError, match="region must give one entry per spatial axis"):
        J.reconstruct(region=(slice(0, 2),))
    with pytest.raises(ValueError, match="region selects no pixel along axis 1"):
        J.reconstruct(region=(slice(None), slice(3, 3), slice(None)))
    with pytest.raises(ValueError, match="coeffs must have shape"):
        J.plan.inverse(np.ones((3, 3, 3)))
    J2 = legendre_moments(np.ones((5, 6)), 3)
    with pytest.raises(ValueError, match="plane slices need 3-D moments"):
        J2.slice("xy", 0)


def test_memory_error_names_the_need():
    plan = JacobiTransform((16, 16, 16), 8, memory_budget=20_000)   # the tables fit
    with pytest.raises(MemoryError, match="needs at least"):
        plan.forward(np.ones((3, 16, 16, 16)))


def test_batches_are_chunked_under_a_small_budget(rng):
    x = rng.random((5, 10, 10))
    small = JacobiTransform((10, 10), 6, dtype=torch.float64, memory_budget=10_000)
    big = JacobiTransform((10, 10), 6, dtype=torch.float64)
    assert small._chunk(5) < 5
    from .test_moments import rounding_bound

    diff = np.abs(small.forward(x).numpy() - big.forward(x).numpy())
    assert np.all(diff <= rounding_bound(big, x))


def test_phantom_and_sample_volume():
    v = shepp_logan_3d((16, 20, 24))
    assert v.shape == (16, 20, 24) and v.dtype == np.float32
    assert v.min() == 0 and v.max() == pytest.approx(255.0)   # background is exactly 0
    assert v[8, 10, 12] == pytest.approx(51.0, abs=1e-3)   # brain tissue: 1 - 0.8 = 0.2
    pytest.importorskip("nibabel")  # the sample volumes are nibabel's test data
    real = sample_volume("example4d")
    assert real.shape == (24, 96, 128) and real.dtype == np.float32


def _legendre_rows(n, order, k):
    """Independent per-axis analysis rows for Legendre, k-point Gauss per voxel (float64)."""
    from scipy.special import eval_legendre

    t, g = np.polynomial.legendre.leggauss(k)
    centres = -1 + (np.arange(n) + 0.5) * 2 / n
    x = centres[:, None] + t[None, :] / n                     # (n, k) nodes, half-width 1/n
    return np.stack([(eval_legendre(p, x) * g / n).sum(1) * (2 * p + 1) / 2
                     for p in range(order + 1)])


def test_real_mri_volume_numbers():
    """The MRI volume (nibabel's example4d): moments against a direct float64 sum, J_000 is
    the mean, float32 agrees with float64, and the reconstruction PSNR is what we measured."""
    pytest.importorskip("nibabel")
    vol = sample_volume("example4d").astype(np.float64)
    order, k = 20, 3
    J = legendre_moments(vol, order, ndim=3, k=k, quadrature="gauss")
    rows = [_legendre_rows(n, order, k) for n in vol.shape]
    scale = np.abs(J.numpy()).max()
    for p, q, r in [(0, 0, 0), (1, 0, 0), (0, 2, 3), (5, 7, 8), (3, 0, 17), (20, 0, 0)]:
        ref = np.einsum("i,j,k,ijk->", rows[0][p], rows[1][q], rows[2][r], vol)
        # sums of 3e5 products of float64 values: rounding below 1e-12 of the largest moment
        assert abs(J[p, q, r] - ref) <= 1e-12 * scale, (p, q, r)
    # Gauss integrates P_0 exactly over each voxel: J_000 is the voxel mean
    assert abs(J[0, 0, 0] - vol.mean()) <= 1e-13 * vol.mean()
    rec = J.reconstruct()
    psnr = 10 * np.log10(vol.max() ** 2 / np.mean((rec - vol) ** 2))
    # measured 24.07 dB at order 20 (21.55 dB at order 10); the floor leaves 0.5 dB
    assert 23.5 < psnr < 25.0
    low = 10 * np.log10(vol.max() ** 2 / np.mean((J.reconstruct(order=10) - vol) ** 2))
    assert 21.0 < low < psnr
    # nesting: the order-10 moments of an order-20 set are the order-10 moments
    J10 = legendre_moments(vol, 10, ndim=3, k=k, quadrature="gauss").numpy()
    low_set = np.indices((11, 11, 11)).sum(0) <= 10
    np.testing.assert_allclose(np.where(low_set, J.numpy()[:11, :11, :11], 0.0), J10, rtol=0,
                               atol=1e-12 * scale)
    # float32: within the documented 1e-5 of max|J|
    J32 = legendre_moments(vol.astype(np.float32), order, ndim=3, k=k, quadrature="gauss")
    assert np.abs(J32.numpy() - J.numpy()).max() <= 1e-5 * scale


def test_load_volume_formats(tmp_path):
    nib = pytest.importorskip("nibabel")
    vol = np.arange(2 * 3 * 4, dtype=np.int16).reshape(2, 3, 4)
    np.save(tmp_path / "v.npy", vol)
    np.savez(tmp_path / "v.npz", a=vol)
    nib.save(nib.Nifti1Image(vol.transpose(2, 1, 0), np.eye(4)), str(tmp_path / "v.nii.gz"))
    for name in ("v.npy", "v.npz", "v.nii.gz"):
        got = load_volume(tmp_path / name)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, vol)
    with pytest.raises(FileNotFoundError):
        load_volume(tmp_path / "missing.npy")
    (tmp_path / "v.txt").write_text("1")
    with pytest.raises(ValueError, match="path must end in"):
        load_volume(tmp_path / "v.txt")
    np.save(tmp_path / "flat.npy", np.ones((3, 3)))
    with pytest.raises(ValueError, match="must be 3-D"):
        load_volume(tmp_path / "flat.npy")


def test_cli_volume_phantom(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["volume", "phantom", "--size", "20", "--orders", "4,12", "--k", "1,3",
               "--alpha", "0.3", "--beta", "0.3", "--out", str(out)])
    assert rc == 0
    with open(out / "psnr.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4
    p = {(int(r["order"]), int(r["k"])): float(r["psnr_db"]) for r in rows}
    assert p[(12, 3)] > p[(4, 3)]
    for name in ("psnr.md", "slices_xy.png", "slices_planes.png"):
        assert os.path.getsize(out / name) > 0
    assert "PSNR" in capsys.readouterr().out


def test_cli_volume_file_and_errors(tmp_path, capsys):
    np.save(tmp_path / "v.npy", np.random.default_rng(0).random((6, 7, 8)))
    assert main(["volume", str(tmp_path / "v.npy"), "--orders", "3", "--k", "1",
                 "--out", str(tmp_path / "o"), "--no-figures"]) == 0
    assert main(["volume", str(tmp_path / "nothing.npy"), "--out", str(tmp_path / "o")]) == 2
    assert main(["volume", "phantom", "--size", "8", "--orders", "3", "--k", "1",
                 "--alpha", "-2", "--out", str(tmp_path / "o")]) == 2
    assert "alpha must be" in capsys.readouterr().err
