"""The compressed radial stage of the disk engine (disk/compression.py).

The compression replaces sums over many radii by sums over Chebyshev nodes; it is exact for
polynomials of degree <= T, so it must reproduce the direct radial stage to rounding, for
every family, sampling, rule and index set it serves, in both directions (forward and
adjoint), with gradients, and in float32 within the float32 bound."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from numpy.polynomial import chebyshev as C

from fastmoments.disk import DiskTransform, routes
from fastmoments.disk.compression import LOCAL_NODES, RadialCompression


def _plan(monkeypatch, compressed: bool, *args, **kwargs) -> DiskTransform:
    """A plan with the compressed radial stage forced on or off (the route table decides it
    otherwise)."""
    with monkeypatch.context() as m:
        m.setattr(routes, "compress", lambda family, radial_is_complex, n, order: compressed)
        p = DiskTransform(*args, **kwargs)
    assert (p.engine.compression is not None) == compressed
    assert (p.route.kernel == "compressed") == compressed
    return p


CASES = [
    ("zernike", 24, 16, dict(k=3)),
    ("pseudo-zernike", 24, 12, dict(k=3)),
    ("zernike", 20, 11, dict(k=2, rule="centre")),  # groups outside the unit disk
    ("pseudo-zernike", 20, 9, dict(k=2, rule="centre")),
    ("zernike", 18, 10, dict(k=3, quadrature="gauss")),
    ("zernike", 16, 0, dict(pairs=[(9, 1), (4, 0), (12, 12), (7, 3)])),
    ("pseudo-zernike", 16, 0, dict(pairs=[(9, 1), (4, 0), (8, 8)])),
]


@pytest.mark.parametrize("family,size,order,kw", CASES)
def test_compressed_equals_direct_float64(monkeypatch, rng, family, size, order, kw):
    direct = _plan(monkeypatch, False, family, size, order, dtype=torch.float64, **kw)
    comp = _plan(monkeypatch, True, family, size, order, dtype=torch.float64, **kw)
    img = rng.random((2, size, size))
    a, b = direct.forward(img).numpy(), comp.forward(img).numpy()
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * np.abs(a).max())
    coef = rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)
    ra, rb = direct.adjoint(coef), comp.adjoint(coef)
    np.testing.assert_allclose(rb, ra, rtol=0, atol=1e-12 * np.abs(ra).max())


@pytest.mark.parametrize("family", ["zernike", "pseudo-zernike"])
def test_local_level_equals_direct(monkeypatch, rng, family):
    """k = 11 on a 40² image: about 10⁴ radius groups, most of them in narrow blocks that
    the local level moves to 16 points each."""
    direct = _plan(monkeypatch, False, family, 40, 20, k=11, dtype=torch.float64)
    comp = _plan(monkeypatch, True, family, 40, 20, k=11, dtype=torch.float64)
    lo = comp.engine.compression.local
    assert lo is not None and lo.nb * lo.L > comp.engine.sampling.n_groups // 2
    img = rng.random((40, 40))
    a, b = direct.forward(img).numpy(), comp.forward(img).numpy()
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * np.abs(a).max())
    coef = a.copy()
    ra, rb = direct.adjoint(coef), comp.adjoint(coef)
    np.testing.assert_allclose(rb, ra, rtol=0, atol=1e-12 * np.abs(ra).max())


@pytest.mark.parametrize("zernike", [True, False])
def test_node_sums_reproduce_polynomial_sums(rng, zernike):
    """The compression identity on its own, against NumPy's Chebyshev series:
    sum_g S_g p(r_g) = sum_k W_k p(x_k) for any polynomial p of degree <= T (with the
    parity of m for Zernike), also through the local level."""
    T = 14
    r = np.sort(rng.random(6000)) ** 0.5  # radii dense enough for the local level
    ms = [0, 1, 2, 5]
    comp = RadialCompression("zernike" if zernike else "pseudo-zernike", ms, T,
                             torch.device("cpu"), radius=r)
    assert comp.local is not None
    S = torch.as_tensor(rng.standard_normal((r.size, len(ms), 2)))
    Sc = S[:, comp.order]  # columns in the compression's order
    lo = comp.local
    out = comp.moments(Sc[:lo.g0], 0)
    out = comp.moments_local(Sc[lo.g0:lo.g1], lo.g0, out)
    out = comp.moments(Sc[lo.g1:], lo.g1, out)
    W = comp.node_weights(out, 2).numpy()  # (cols, K, 2), original column order
    x = comp.nodes.numpy()
    for c, m in enumerate(ms):
        coef = rng.standard_normal(T + 1)
        if zernike:
            coef[(np.arange(T + 1) - m) % 2 == 1] = 0  # the parity of m
            p = C.Chebyshev(coef)
        else:
            p = C.Chebyshev(coef, domain=[0, 1])
        want = (S[:, c].numpy() * p(r)[:, None]).sum(0)
        got = (W[c] * p(x)[:, None]).sum(0)
        np.testing.assert_allclose(got, want, rtol=0,
                                   atol=1e-11 * np.abs(S[:, c].numpy()).sum())
    assert lo.d == LOCAL_NODES


@pytest.mark.parametrize("family", ["zernike", "pseudo-zernike"])
def test_float32_within_bound(monkeypatch, rng, family):
    """float32 plans: the products over radii run in float64, so the error against
    float64 is the float32 angular stage's, below 1e-6 of the largest moment (measured
    1e-7; the direct stage leaves up to 1e-5 here)."""
    img = rng.random((64, 64))
    ref = _plan(monkeypatch, False, family, 64, 30, k=5, dtype=torch.float64).forward(img)
    got = _plan(monkeypatch, True, family, 64, 30, k=5, dtype=torch.float32).forward(
        img.astype(np.float32))
    a = ref.numpy()
    assert np.abs(got.numpy() - a).max() <= 1e-6 * np.abs(a).max()


def test_gradients_match_direct(monkeypatch, rng):
    img = rng.random((20, 20))
    w = None
    grads = []
    for compressed in (False, True):
        p = _plan(monkeypatch, compressed, "zernike", 20, 12, k=3, dtype=torch.float64)
        x = torch.tensor(img, requires_grad=True)
        A = p.forward(x)
        if w is None:
            w = torch.as_tensor(rng.standard_normal(tuple(A.data.shape)))
        (A.data.real * w).sum().backward()
        grads.append(x.grad.clone())
    torch.testing.assert_close(grads[1], grads[0], rtol=0, atol=1e-12)


def test_auto_choice():
    # many radii per node: compressed; a tiny image at a high order, or a low order: direct
    assert DiskTransform("zernike", 64, 30, k=3).engine.compression is not None
    assert DiskTransform("zernike", 8, 40).engine.compression is None
    assert DiskTransform("zernike", 64, 10, k=3).engine.compression is None
    # non-polynomial families never
    from fastmoments.disk.pht import PolarHarmonicTransform
    assert PolarHarmonicTransform("pcet", 32, nmax=4, lmax=4).engine.compression is None
    assert routes.compress("zernike", False, 4 * 16, 30)
    assert not routes.compress("zernike", False, 4 * 16 - 1, 30)
    assert not routes.compress("zernike", False, 10**6, routes.COMPRESSION_MIN_ORDER - 1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("family", ["zernike", "pseudo-zernike"])
def test_cuda_matches_cpu(monkeypatch, rng, family):
    img = rng.random((2, 64, 64))
    cpu = _plan(monkeypatch, True, family, 64, 40, k=7, dtype=torch.float64).forward(img)
    gpu = _plan(monkeypatch, True, family, 64, 40, k=7, dtype=torch.float64, device="cuda")
    assert gpu.engine.compression.local is not None
    np.testing.assert_allclose(gpu.forward(img).numpy(), cpu.numpy(), rtol=0,
                               atol=1e-12 * np.abs(cpu.numpy()).max())
    g32 = _plan(monkeypatch, True, family, 64, 40, k=7, dtype=torch.float32, device="cuda")
    a = cpu.numpy()
    assert np.abs(g32.forward(img.astype(np.float32)).numpy() - a).max() <= 1e-6 * np.abs(
        a).max()
