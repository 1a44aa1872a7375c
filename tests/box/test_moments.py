"""Box moments against the direct formula (Eq. 31-34, 42), and their properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.special import eval_gegenbauer, eval_jacobi, gamma

import fastmoments as fm
from fastmoments.box import JacobiTransform, gegenbauer_moments, jacobi_moments, legendre_moments


def rho(n, a, b):
    if n == 0:
        return 2 ** (a + b + 1) * gamma(a + 1) * gamma(b + 1) / gamma(a + b + 2)
    return (2 ** (a + b + 1) / (2 * n + a + b + 1) * gamma(n + a + 1) * gamma(n + b + 1)
            / (gamma(n + a + b + 1) * math.factorial(n)))


def h_direct(n_pix, order, a, b, k, poly=None, norm=None):
    """h[n, i] / norm_n of Eq. 33, with sub-points of Eq. 34 (coordinate -1 -> 1), by loops."""
    delta = 2.0 / n_pix
    out = np.zeros((order + 1, n_pix))
    for n in range(order + 1):
        nn = rho(n, a, b) if norm is None else norm(n)
        for i in range(n_pix):
            xs = np.array([-1 + (i * k + r + 0.5) * delta / k for r in range(k)])
            vals = eval_jacobi(n, a, b, xs) if poly is None else poly(n, xs)
            out[n, i] = np.sum(delta / k * vals * (1 - xs) ** a * (1 + xs) ** b) / nn
    return out


def rounding_bound(plan, x, *, steps=None):
    r"""A bound on the float64 rounding of the moments of ``x`` (batch allowed) by ``plan``.

    Each moment is a sum of products :math:`\sum A_{p,i} B_{q,j} x_{ij}`; any evaluation order
    (parity folds, blocks, GEMM kernels, threads) errs by at most
    :math:`\gamma_m \sum |A_{p,i}||B_{q,j}||x_{ij}|` with :math:`\gamma_m \approx m u`,
    :math:`m` the number of roundings on the way (sums over every axis plus one per factor)
    and :math:`u = 2^{-53}`. Two evaluations differ by at most twice that.
    """
    mats = [np.abs(m.cpu().numpy()).astype(np.float64) for m in plan.analysis_matrices()]
    ax = np.abs(np.asarray(x, dtype=np.float64))
    letters = "ijk"[:plan.ndim]
    outs = "pqr"[:plan.ndim]
    pairs = ",".join(f"{o}{i}" for o, i in zip(outs, letters, strict=True))
    spec = f"{pairs},...{letters}->...{outs}"
    cond = np.einsum(spec, *mats, ax)
    m = (sum(plan.shape) + 2 * plan.ndim) if steps is None else steps
    return 2 * m * 2.0**-53 * cond


def total_mask(order, ndim):
    idx = np.indices((order + 1,) * ndim).sum(0)
    return idx <= order


@pytest.mark.parametrize(("a", "b"), [(0.3, 0.3), (0.3, 0.7), (0.0, 0.0), (-0.6, 1.4)])
@pytest.mark.parametrize("truncation", ["total", "box"])
def test_2d_matches_direct_formula(a, b, truncation, rng, device):
    h, w, order, k = 13, 10, 8, 3
    img = rng.random((h, w))
    J = jacobi_moments(torch.from_numpy(img).to(device), order, alpha=a, beta=b, k=k,
                       truncation=truncation)
    ref = h_direct(h, order, a, b, k) @ img @ h_direct(w, order, a, b, k).T
    if truncation == "total":
        ref = np.where(total_mask(order, 2), ref, 0.0)
    got = J.data.cpu().numpy()
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize(("a", "b"), [(0.3, 0.3), (0.3, 0.7)])
def test_3d_matches_direct_formula(a, b, rng, device):
    shape, order, k = (7, 9, 8), 6, 2
    vol = rng.random(shape)
    J = jacobi_moments(torch.from_numpy(vol).to(device), order, alpha=a, beta=b, k=k, ndim=3)
    hs = [h_direct(n, order, a, b, k) for n in shape]
    ref = np.einsum("pi,qj,rk,ijk->pqr", *hs, vol)
    ref = np.where(total_mask(order, 3), ref, 0.0)
    np.testing.assert_allclose(J.data.cpu().numpy(), ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_gegenbauer_matches_direct_formula(rng):
    lam, order, k = 1.5, 7, 3
    img = rng.random((11, 12))

    def norm(n):  # squared norm of G_n^(lam) with weight (1 - x^2)^(lam - 1/2)
        return (math.pi * 2 ** (1 - 2 * lam) * gamma(n + 2 * lam)
                / (math.factorial(n) * (n + lam) * gamma(lam) ** 2))

    def poly(n, x):
        return eval_gegenbauer(n, lam, x)

    a = lam - 0.5
    ref = (h_direct(11, order, a, a, k, poly, norm) @ img
           @ h_direct(12, order, a, a, k, poly, norm).T)
    ref = np.where(total_mask(order, 2), ref, 0.0)
    got = gegenbauer_moments(img, order, lam=lam, k=k).numpy()
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    rec = gegenbauer_moments(img, order, lam=lam, k=k).reconstruct()
    rec_j = jacobi_moments(img, order, alpha=a, beta=a, k=k).reconstruct()
    np.testing.assert_allclose(rec, rec_j, atol=1e-12)


def test_legendre_is_jacobi_zero_zero(rng):
    """The same plan (so the same tables); repeated GEMMs agree within their rounding bound
    (bitwise equality is not promised by BLAS kernels across calls and threads)."""
    img = rng.random((3, 16, 20))
    L = legendre_moments(img, 9, ndim=2)
    J = jacobi_moments(img, 9, alpha=0, beta=0, ndim=2)
    assert L.plan is J.plan
    assert np.all(np.abs(L.numpy() - J.numpy()) <= rounding_bound(L.plan, img))


def test_reconstruction_matches_direct_series(rng, device):
    """Eq. 26 written as a triple sum over the total-degree set."""
    a, b, order, shape = 0.3, 0.7, 5, (4, 5, 6)
    J = jacobi_moments(torch.from_numpy(rng.random(shape)).to(device), order, alpha=a, beta=b,
                       ndim=3)
    c = J.data.cpu().numpy()
    centres = [-1 + (np.arange(n) + 0.5) * 2 / n for n in shape]
    ref = np.zeros(shape)
    for m in range(order + 1):
        for n in range(order + 1 - m):
            for o in range(order + 1 - m - n):
                ref += c[m, n, o] * np.einsum(
                    "i,j,k->ijk", eval_jacobi(m, a, b, centres[0]),
                    eval_jacobi(n, a, b, centres[1]), eval_jacobi(o, a, b, centres[2]))
    np.testing.assert_allclose(J.reconstruct().cpu().numpy(), ref, atol=1e-12)


@pytest.mark.parametrize(("a", "b"), [(0.0, 0.0), (0.3, 0.3)])
def test_orthogonality_peak(a, b):
    """Moments of a sampled P_s(x) P_t(y) peak at [s, t] with value about 1."""
    h, w, order, s, t = 160, 144, 12, 5, 3
    yc = -1 + (np.arange(h) + 0.5) * 2 / h
    xc = -1 + (np.arange(w) + 0.5) * 2 / w
    img = np.outer(eval_jacobi(s, a, b, yc), eval_jacobi(t, a, b, xc))
    J = jacobi_moments(img, order, alpha=a, beta=b, k=9).numpy()
    assert np.unravel_index(np.abs(J).argmax(), J.shape) == (s, t)
    assert J[s, t] == pytest.approx(1.0, abs=5e-3)
    others = np.abs(J).copy()
    others[s, t] = 0
    assert others.max() < 1e-2


def _smooth(shape):
    z, y, x = np.meshgrid(*[-1 + (np.arange(n) + 0.5) * 2 / n for n in shape], indexing="ij")
    return np.exp(-3 * (x**2 + (y - 0.2) ** 2 + z**2)) + 0.3 * np.cos(2 * x) * y


def test_round_trip_smooth_volume():
    """A smooth volume comes back from its moments (Eq. 26); the error is the pixel average
    versus the centre sample, O(Delta^2), so it drops about 4x when the grid is refined 2x."""
    errs = []
    for shape in ((12, 14, 16), (24, 28, 32)):
        vol = _smooth(shape)
        rec = legendre_moments(vol, 20, ndim=3, k=8, quadrature="gauss").reconstruct()
        errs.append(np.abs(rec - vol).max())
    assert errs[1] < 6e-3
    assert errs[0] / errs[1] > 3.0


def test_round_trip_converges_with_k_and_order():
    from fastmoments.data import sample_image

    img = sample_image("camera", 64)
    p = [fm.psnr(img, jacobi_moments(img, o, alpha=0.3, beta=0.3, k=k).reconstruct(),
                 data_range=255) for o, k in ((10, 1), (30, 3), (60, 7))]
    assert p[0] < p[1] < p[2]


def test_batch_equals_loop(rng, device):
    x = torch.from_numpy(rng.random((2, 3, 10, 12))).to(device)
    J = jacobi_moments(x, 7, alpha=0.3, beta=0.7, ndim=2, k=2)
    assert J.batch_shape == (2, 3)
    bound = rounding_bound(J.plan, x.cpu().numpy())
    for i in range(2):
        for j in range(3):
            Jij = jacobi_moments(x[i, j], 7, alpha=0.3, beta=0.7, k=2)
            assert np.all((J.data[i, j] - Jij.data).abs().cpu().numpy() <= bound[i, j])
    rec = J.reconstruct()
    torch.testing.assert_close(rec[1, 2], jacobi_moments(x[1, 2], 7, alpha=0.3, beta=0.7,
                                                         k=2).reconstruct(), rtol=0, atol=1e-13)


def test_2d_equals_depth_one_volume(rng):
    """Legendre on a one-voxel-deep volume: J3[0, q, r] = J2[q, r], and J3[p > 0] = 0 where
    the k-point Gauss rule integrates P_p over [-1, 1] exactly (p <= 2k - 1)."""
    img = rng.random((12, 14))
    M2 = legendre_moments(img, 9, k=5, quadrature="gauss")
    M3 = legendre_moments(img[None], 9, ndim=3, k=5, quadrature="gauss")
    J2, J3 = M2.numpy(), M3.numpy()
    # the depth axis is one pixel: its row A_p = (2p+1)/2 sum_r g_r P_p(t_r) (5 Gauss
    # points, |P_p| <= 1, sum g_r = 2) is 1 (p = 0) or 0 (p > 0) up to 8 u (2p+1) in float64
    u = 2.0**-53
    b2 = rounding_bound(M2.plan, img)
    cond2 = b2 / (2 * (sum(img.shape) + 4) * u)           # sum |A_q| |img| |A_r|
    p = np.arange(10)[:, None, None]
    assert np.all(np.abs(J3[0] - J2) <= 2 * b2 + 8 * u * cond2)
    assert np.all(np.abs(J3[1:]) <= (8 * u * (2 * p + 1) * (1 + 1e-12) * cond2)[1:])


@pytest.mark.parametrize("ndim", [2, 3])
def test_adjoint(ndim, rng, device):
    shape = (9, 12, 11)[-ndim:]
    plan = JacobiTransform(shape, 8, alpha=0.3, beta=0.3, k=2, dtype=torch.float64,
                           device=device, block=4, parity=True)
    x = torch.from_numpy(rng.random(shape)).to(device)
    y = torch.from_numpy(rng.standard_normal((9,) * ndim)).to(device)
    lhs = float((plan.forward(x).data * y).sum())
    rhs = float((x * plan.adjoint(y)).sum())
    assert lhs == pytest.approx(rhs, rel=1e-12)


@pytest.mark.parametrize(("a", "b"), [(0.3, 0.3), (0.2, 0.9)])
def test_gradcheck(a, b):
    plan = JacobiTransform((5, 6, 4), 4, alpha=a, beta=b, dtype=torch.float64, block=2,
                           parity=a == b)
    x = torch.rand(5, 6, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: plan.forward(t).data, (x,))
    c = torch.rand(5, 5, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: plan.inverse(t, region=(slice(1, 4), 2, None)),
                                    (c,))


@pytest.mark.parametrize(("a", "b"), [(0.3, 0.3), (0.3, 0.7)])
def test_engine_variants_agree(a, b, rng):
    """Parity on/off and any block size give the same moments and reconstructions."""
    vol = rng.random((11, 10, 13))
    ref = None
    for parity in ([True, False] if a == b else [False]):
        for block in (2, 6, 64):
            plan = JacobiTransform(vol.shape, 10, alpha=a, beta=b, dtype=torch.float64,
                                   parity=parity, block=block)
            J = plan.forward(vol).numpy()
            r = plan.inverse(J)
            if ref is None:
                ref = (J, r)
            np.testing.assert_allclose(J, ref[0], atol=1e-13)
            np.testing.assert_allclose(r, ref[1], atol=1e-12)


def test_box_and_total_agree_on_the_total_set(rng):
    img = rng.random((20, 18))
    Jt = jacobi_moments(img, 10, alpha=0.3, beta=0.7, truncation="total").numpy()
    Jb = jacobi_moments(img, 10, alpha=0.3, beta=0.7, truncation="box").numpy()
    m = total_mask(10, 2)
    bound = rounding_bound(JacobiTransform((20, 18), 10, alpha=0.3, beta=0.7), img)
    assert np.all(np.abs(Jt[m] - Jb[m]) <= bound[m])
    # outside the set the engine writes zeros (masked, never computed): exact by construction
    assert np.all(Jt[~m] == 0) and np.abs(Jb[~m]).max() > 0


def test_partial_order_region_and_slices(rng, device):
    vol = torch.from_numpy(rng.random((10, 12, 9))).to(device)
    J = jacobi_moments(vol, 9, alpha=0.3, beta=0.3, ndim=3, k=2)
    full = J.reconstruct()
    # partial order = full reconstruction of the moments masked to total degree <= 5
    masked = torch.where(torch.from_numpy(total_mask(9, 3) & total_mask(9, 3)
                                          * (np.indices((10,) * 3).sum(0) <= 5)).to(device),
                         J.data, 0.0)
    torch.testing.assert_close(J.reconstruct(order=5), J.plan.inverse(masked), rtol=0,
                               atol=1e-12)
    reg = (slice(2, 7), (3, 10), slice(None))
    torch.testing.assert_close(J.reconstruct(region=reg), full[2:7, 3:10, :], rtol=0,
                               atol=1e-12)
    torch.testing.assert_close(J.slice("xy", 4), full[4], rtol=0, atol=1e-12)
    torch.testing.assert_close(J.slice("xz", -1), full[:, -1], rtol=0, atol=1e-12)
    torch.testing.assert_close(J.slice("yz", 0, order=5),
                               J.reconstruct(order=5)[:, :, 0], rtol=0, atol=1e-12)


def test_float32_error_bound(rng):
    """float32 vs float64: moments within 1e-5 of max|J|, reconstruction within 1e-4."""
    from fastmoments.data import sample_image

    img = sample_image("coins", 192)
    for a, b in ((0.3, 0.3), (0.3, 0.7), (-0.5, 0.5)):
        J32 = jacobi_moments(img.astype(np.float32), 150, alpha=a, beta=b, k=7)
        J64 = jacobi_moments(img, 150, alpha=a, beta=b, k=7)
        assert J32.numpy().dtype == np.float32 and J64.numpy().dtype == np.float64
        err = np.abs(J32.numpy() - J64.numpy()).max() / np.abs(J64.numpy()).max()
        assert err <= 1e-5
        r64 = J64.reconstruct()
        err_r = np.abs(J32.reconstruct() - r64).max() / np.abs(r64).max()
        assert err_r <= 1e-4
    vol = rng.random((20, 24, 28))
    J32 = jacobi_moments(vol.astype(np.float32), 30, alpha=0.3, beta=0.3, ndim=3, k=3)
    J64 = jacobi_moments(vol, 30, alpha=0.3, beta=0.3, ndim=3, k=3)
    err = np.abs(J32.numpy() - J64.numpy()).max() / np.abs(J64.numpy()).max()
    assert err <= 1e-5
