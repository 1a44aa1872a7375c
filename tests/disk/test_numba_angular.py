"""The compiled CPU angular stage (disk/_numba_angular.py) against the torch path it
replaces: the same sums in both layouts (direct and compressed radial stages), for the
polynomial and the polar harmonic families, in float64 to rounding and in float32 within
the float32 bound; gradients keep the torch path."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments.disk import DiskTransform, routes
from fastmoments.disk.pht import PolarHarmonicTransform


@pytest.fixture(autouse=True)
def _every_job(monkeypatch):
    """The compiled kernel for jobs of any size (the engine keeps small ones on torch)."""
    monkeypatch.setattr(routes, "NUMBA_ANGULAR_WORK", 0)


def _pair(monkeypatch, make):
    ref = make()
    ref.engine.numba_angular = False  # the torch reference
    got = make()
    assert got.engine.route_for(1).backend == "numba"
    assert ref.engine.route_for(1).backend == "torch"
    return ref, got


def _compress(monkeypatch, compressed: bool) -> None:
    """Force the compressed radial stage on (for the polynomial families) or off."""
    monkeypatch.setattr(routes, "compress", lambda family, radial_is_complex, n, order:
                        compressed and not radial_is_complex)


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("family", ["zernike", "pseudo-zernike"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_numba_equals_torch(monkeypatch, rng, compressed, family, dtype):
    _compress(monkeypatch, compressed)
    ref, got = _pair(monkeypatch, lambda: DiskTransform(family, 40, 30, k=2, dtype=dtype))
    img = rng.random((3, 40, 40))
    a, b = ref.forward(img).numpy(), got.forward(img).numpy()
    # float64: rounding (the kernel's angular factors by recurrence, restarted every 16
    # columns); float32: the torch path's float32 products against float64 sums
    tol = 1e-13 if dtype == torch.float64 else 2e-6
    np.testing.assert_allclose(b, a, rtol=0, atol=tol * np.abs(a).max())


def test_selection_with_gaps_and_pht(monkeypatch, rng):
    """Columns whose repetitions are not consecutive (the recurrence restarts) and a family
    with complex radial functions."""
    pairs = [(30, 0), (9, 3), (20, 14), (11, 11), (25, 1)]
    ref, got = _pair(monkeypatch, lambda: DiskTransform("zernike", 32, pairs=pairs,
                                                         dtype=torch.float64))
    img = rng.random((32, 32))
    a, b = ref.forward(img).numpy(), got.forward(img).numpy()
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-13 * np.abs(a).max())
    ref, got = _pair(monkeypatch, lambda: PolarHarmonicTransform("pcet", 32, nmax=5, lmax=7,
                                                                  dtype=torch.float64))
    a, b = ref.forward(img).numpy(), got.forward(img).numpy()
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-13 * np.abs(a).max())


def test_small_jobs_keep_the_torch_path(monkeypatch, rng):
    monkeypatch.setattr(routes, "NUMBA_ANGULAR_WORK", 10**9)
    plan = DiskTransform("zernike", 20, 10, dtype=torch.float64)

    def refuse(*args, **kwargs):
        raise AssertionError("the compiled kernel ran")

    monkeypatch.setattr(plan.engine, "_angular_numba", refuse)
    plan.forward(rng.random((20, 20)))


def test_gradients_use_the_torch_path(monkeypatch, rng):
    plan = DiskTransform("zernike", 20, 10, dtype=torch.float64)
    x = torch.tensor(rng.random((20, 20)), requires_grad=True)
    plan.forward(x).data.real.sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all() and x.grad.abs().sum() > 0
