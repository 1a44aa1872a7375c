"""Polar harmonic transforms (PCET, PCT, PST, generic s): against the definition, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.disk import nufft as nufft_mod
from fastmoments.disk.pht import (
    PolarHarmonicTransform,
    pht_family,
)
from fastmoments.disk.routes import pht_method

from ..reference_disk import sum_bound

KINDS = ("pcet", "pct", "pst")
_NO_FINUFFT = pytest.mark.skipif(not nufft_mod.have_finufft(), reason="finufft not installed")
METHODS = ("engine", "gemm", pytest.param("nufft", marks=_NO_FINUFFT))
ALL_METHODS = ("engine", "gemm", "nufft") if nufft_mod.have_finufft() else ("engine", "gemm")


# ----------------------------------------------------------------------------- reference
def _points(N: int, k: int, quadrature: str):
    """Sample points by the definition (independent of the package's orbit sampling)."""
    c = (2 * np.arange(N) - N + 1) / N  # pixel centres
    if quadrature == "midpoint":
        off = (2 * np.arange(1, k + 1) - k - 1) / (N * k)
        w1 = np.full(k, 2.0 / (N * k))
    else:
        nodes, wts = np.polynomial.legendre.leggauss(k)
        off, w1 = nodes / N, wts / N
    inside = (np.abs(c)[:, None] + 1 / N) ** 2 + (np.abs(c)[None, :] + 1 / N) ** 2 <= 1 + 1e-12
    rows, cols = np.nonzero(inside)  # row j: y = c[N-1-j]; col i: x = c[i]
    x = c[cols][:, None, None] + off[None, :, None]
    y = -c[rows][:, None, None] + off[None, None, :]
    w = (w1[:, None] * w1[None, :])[None]
    pix = (rows * N + cols)[:, None, None]
    x, y, w, pix = np.broadcast_arrays(x, y, w, pix)
    return x.ravel(), y.ravel(), w.ravel(), pix.ravel()


def reference(kind: str, img: np.ndarray, pairs, *, k=1, quadrature="midpoint", s=2.0):
    """Direct float64 sum of f * conj(H_nl) * dx dy over the sample points."""
    N = img.shape[-1]
    x, y, w, pix = _points(N, k, quadrature)
    r, th = np.hypot(x, y), np.arctan2(y, x)
    f = img.reshape(*img.shape[:-2], N * N)[..., pix].astype(np.float64)
    amp = np.sqrt(0.5 * s * r ** (s - 2.0))
    out = []
    for n, l in pairs:
        if kind == "pcet":
            R, c = np.exp(2j * np.pi * n * r**s), 1 / np.pi
        elif kind == "pct":
            R, c = np.cos(np.pi * n * r**s), (1 / np.pi if n == 0 else 2 / np.pi)
        else:
            R, c = np.sin(np.pi * n * r**s), 2 / np.pi
        out.append(c * (f * w * amp * np.conj(R) * np.exp(-1j * l * th)).sum(-1))
    return np.stack(out, -1)


def _pairs(kind, nmax, lmax):
    lo = {"pcet": -nmax, "pct": 0, "pst": 1}[kind]
    return [(n, l) for n in range(lo, nmax + 1) for l in range(-lmax, lmax + 1)]


def _get(M, pairs):
    return np.stack([np.asarray(M[n, l]) for n, l in pairs], -1)


# ----------------------------------------------------------------------------- definition
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", KINDS)
def test_matches_definition_float64(kind, method, rng):
    img = rng.random((2, 16, 16))
    M = PolarHarmonicTransform(kind, 16, 5, 4, method=method, dtype="float64").forward(img)
    pairs = _pairs(kind, 5, 4)
    got, ref = _get(M, pairs), reference(kind, img, pairs)
    tol = 1e-10 if method == "nufft" else 1e-13  # nufft: eps = 1e-12 in float64
    assert np.abs(got - ref).max() <= tol * np.abs(ref).max()


@pytest.mark.parametrize("quadrature,k", [("midpoint", 2), ("midpoint", 3), ("gauss", 3)])
@pytest.mark.parametrize("kind", KINDS)
def test_subpixel_schemes(kind, quadrature, k, rng):
    img = rng.random((15, 15))
    pairs = _pairs(kind, 3, 3)
    ref = reference(kind, img, pairs, k=k, quadrature=quadrature)
    for method in ALL_METHODS:
        M = getattr(fm, kind)(img, 3, 3, k=k, quadrature=quadrature, dtype="float64",
                              method=method)
        assert np.abs(_get(M, pairs) - ref).max() <= 1e-10 * np.abs(ref).max()


@pytest.mark.parametrize("s", [1.5, 3.0])
@pytest.mark.parametrize("kind", KINDS)
def test_generic_s_matches_definition(kind, s, rng):
    img = rng.random((16, 16))  # even size: no sample point at r = 0
    pairs = _pairs(kind, 3, 2)
    ref = reference(kind, img, pairs, s=s)
    for method in ALL_METHODS:
        M = getattr(fm, kind)(img, 3, 2, s=s, dtype="float64", method=method)
        assert np.abs(_get(M, pairs) - ref).max() <= 1e-10 * np.abs(ref).max()


def test_generic_s2_is_classical(rng):
    img = rng.random((12, 12))
    a = fm.pcet(img, 3, 3, s=2.0, dtype="float64").numpy()
    b = fm.pcet(img, 3, 3, s=2, dtype="float64").numpy()
    np.testing.assert_array_equal(a, b)  # one and the same plan: bit-exactness is the property


@pytest.mark.parametrize("s", [1.5, 2.0, 3.0])
@pytest.mark.parametrize("kind", KINDS)
def test_radial_orthonormal(kind, s):
    """c_n * 2 pi * int_0^1 R_n R_k^* r dr = delta_nk (continuous orthogonality, Eq. 4, 9, 15)."""
    fam = pht_family(kind, s)
    u, wu = np.polynomial.legendre.leggauss(400)
    u, wu = (u + 1) / 2, wu / 2  # u = r^s on [0, 1]: exact for the oscillating part
    r = u ** (1 / s)
    jac = r ** (1 - s) / s  # dr = jac du
    ns = list(fam.orders(4))
    R = fam.radial(torch.as_tensor(r), torch.as_tensor(ns)).numpy()
    gram = (R * (wu * jac * r)) @ np.conj(R).T * 2 * np.pi
    from fastmoments.disk.indexing import IndexSet

    c = fam.norm(IndexSet.from_columns({0: ns}))[0]
    np.testing.assert_allclose(c[:, None] * gram, np.eye(len(ns)), atol=1e-12)


def test_s_below_two_needs_no_centre_point():
    with pytest.raises(ValueError, match=r"s=1\.5 < 2"):
        PolarHarmonicTransform("pcet", 15, 2, 2, s=1.5)


def test_known_values():
    """Constant image: M_00 = area / pi; every other PCET moment with l % 4 != 0 vanishes."""
    N = 32
    M = fm.pcet(np.ones((N, N)), 3, 5, dtype="float64", method="engine")
    area = fm.disk.pixel_mask(N).sum() * (2 / N) ** 2
    assert abs(M[0, 0] - area / math.pi) < 1e-14
    for n in range(-3, 4):
        for l in (1, 2, 3, 5, -1, -2):
            assert abs(M[n, l]) < 1e-14


# ----------------------------------------------------------------------------- properties
@pytest.mark.parametrize("kind", KINDS)
def test_rotation_and_mirror_invariance(kind, rng):
    img = rng.random((20, 20))
    plan = PolarHarmonicTransform(kind, 20, 6, 6, method="engine", dtype="float64")
    M = plan.forward(img)
    a = M.invariants()
    for other in (np.rot90(img), np.rot90(img, 2), np.rot90(img, 3)):
        np.testing.assert_allclose(plan.forward(other.copy()).invariants(), a,
                                   rtol=1e-12, atol=1e-14)
    # a mirror maps M_nl to (-1)^l conj(M_{-n,l}) for PCET (theta -> pi - theta), and to
    # (-1)^l conj(M_nl) for PCT/PST: the magnitudes are kept, with n -> -n for PCET
    sign = -1 if kind == "pcet" else 1
    mirrored = np.array([abs(M[sign * n, l]) for n, l in M.pairs])
    for other in (np.fliplr(img), np.flipud(img), img.T):
        np.testing.assert_allclose(plan.forward(other.copy()).invariants(), mirrored,
                                   rtol=1e-12, atol=1e-14)
    F = plan.forward(np.fliplr(img).copy())
    for n, l in [(1, 1), (2, 3), (3, -2)]:
        assert abs(F[n, l] - (-1) ** l * np.conj(M[sign * n, l])) < 1e-13
    # rotation by +90 degrees multiplies M_nl by exp(-i l pi / 2)
    R = plan.forward(np.rot90(img).copy())
    for n, l in [(1, 1), (2, 3), (3, -2)]:
        assert abs(R[n, l] - M[n, l] * np.exp(-1j * l * np.pi / 2)) < 1e-13


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_band_limited(kind):
    """A band-limited image built from a few basis functions is recovered (pixel sampling
    error only: the tolerance is tied to N = 128)."""
    N = 128
    plan = PolarHarmonicTransform(kind, N, 4, 4, rule="centre", dtype="float64")
    coef = {(1, 2): 0.5 + 0.25j, (2, 0): 0.75, (3, 1): -0.3j}
    if kind == "pcet":
        coef[(0, 0)] = 1.0
    x = (2 * np.arange(N) - N + 1) / N
    X, Y = np.meshgrid(x, -x)
    r, th = np.hypot(X, Y), np.arctan2(Y, X)
    fam = plan.family
    img = np.zeros((N, N))
    for (n, l), a in coef.items():
        R = fam.radial(torch.as_tensor(r.ravel()), torch.tensor([n]))[0].numpy().reshape(N, N)
        term = a * R * np.exp(1j * l * th)
        partner = l != 0 or (kind == "pcet" and n != 0)
        img += term.real * (2 if partner else 1)  # + its conjugate partner
    img *= plan.mask
    M = plan.forward(img)
    for (n, l), a in coef.items():
        assert abs(M[n, l] - a) < 0.03, (n, l, M[n, l], a)
    rec = M.reconstruct()
    err = np.linalg.norm((rec - img)[plan.mask]) / np.linalg.norm(img[plan.mask])
    assert err < 0.05


def test_partial_reconstruction(rng):
    img = rng.random((24, 24))
    M = fm.pcet(img, 4, 4, dtype="float64")
    mask = fm.disk.pixel_mask(24)
    full = M.reconstruct()
    # linearity over disjoint repetition sets
    parts = M.reconstruct(repetitions=[0]) + M.reconstruct(repetitions=[-1, 1]) + \
        M.reconstruct(repetitions=[-4, -3, -2, 2, 3, 4])
    np.testing.assert_allclose(parts, full, atol=1e-13)
    np.testing.assert_allclose(M.reconstruct(lmax=1),
                               M.reconstruct(repetitions=[-1, 0, 1]), atol=1e-14)
    np.testing.assert_allclose(M.reconstruct(nmax=1), M.reconstruct(orders=(-1, 1)),
                               atol=1e-14)
    sym = M.reconstruct(orders=[-2, 2], repetitions=[0])  # M_{2,0} H_{2,0} + its partner
    x = (2 * np.arange(24) - 23) / 24
    r2 = x[None, :] ** 2 + x[:, None] ** 2
    np.testing.assert_allclose(sym, 2 * (M[2, 0] * np.exp(4j * np.pi * r2)).real * mask,
                               atol=1e-14)
    dc = M.reconstruct(nmax=0, lmax=0)
    np.testing.assert_allclose(dc[mask], np.full(mask.sum(), M[0, 0].real), atol=1e-14)
    assert np.all(dc[~mask] == 0)
    # more moments approximate better (PSNR grows with nmax)
    errs = [np.linalg.norm((M.reconstruct(nmax=t, lmax=t) - img)[mask]) for t in (0, 2, 4)]
    assert errs[0] > errs[1] > errs[2]


def test_batch_equals_loop_and_kinds(device, rng):
    imgs = rng.random((2, 3, 12, 12)).astype(np.float32)
    plan = PolarHarmonicTransform("pct", 12, 3, 3, device=device)
    Mb = plan.forward(torch.as_tensor(imgs, device=device))
    assert isinstance(Mb.values(), torch.Tensor) and Mb.values().device.type == device
    assert Mb.batch_shape == (2, 3)
    for i in range(2):
        for j in range(3):
            Mi = plan.forward(imgs[i, j])
            assert isinstance(Mi.values(), np.ndarray)
            np.testing.assert_allclose(Mi.values(), Mb.values()[i, j].cpu().numpy(),
                                       rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_methods_agree_float32_and_error_bound(method, rng):
    img = rng.random((3, 24, 24))
    pairs = _pairs("pcet", 6, 6)
    ref = reference("pcet", img, pairs)
    M = fm.pcet(img.astype(np.float32), 6, 6, method=method)
    got = _get(M, pairs)
    assert got.dtype == np.complex64
    rel = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    assert rel < 1e-5


def test_input_not_modified(rng):
    img = rng.random((10, 10))
    keep = img.copy()
    t = torch.as_tensor(img.copy())
    for method in ALL_METHODS:
        fm.pst(img, 2, 2, method=method)
        fm.pst(t, 2, 2, method=method)
    np.testing.assert_array_equal(img, keep)
    np.testing.assert_array_equal(t.numpy(), keep)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", KINDS)
def test_gradcheck(kind, method):
    plan = PolarHarmonicTransform(kind, 6, 2, 2, method=method, dtype="float64")
    x = torch.rand(1, 6, 6, dtype=torch.float64, requires_grad=True)

    def f(x):
        return torch.view_as_real(plan.forward(x).values())

    assert torch.autograd.gradcheck(f, (x,))


@pytest.mark.parametrize("kind", KINDS)
def test_adjoint(kind, rng):
    plan = PolarHarmonicTransform(kind, 14, 3, 3, dtype="float64")
    x = rng.random((14, 14))
    idx = plan.index
    y = (rng.standard_normal((idx.n_cols, idx.n_rows))
         + 1j * rng.standard_normal((idx.n_cols, idx.n_rows))) * idx.valid_mask()
    Ax = plan.forward(x).data.numpy()
    lhs = np.real(np.vdot(y, Ax))
    rhs = np.sum(x * plan.adjoint(y))
    assert abs(lhs - rhs) < 1e-12 * max(1.0, abs(lhs))


# ----------------------------------------------------------------------------- selections
def test_paper_selection_and_partners(rng):
    img = rng.random((2, 16, 16))
    M = fm.pcet(img, 5, 4, nmin=1, lmin=1, dtype="float64", method="engine")
    assert sorted(M.pairs) == sorted((n, l) for n in range(1, 6) for l in range(1, 5))
    assert M.invariants().shape == (2, 20)
    np.testing.assert_allclose(M[-2, -3], np.conj(M[2, 3]))
    with pytest.raises(KeyError, match="not computed"):
        M[1, 0]
    P = fm.pst(img, pairs=[(1, -2), (3, 1)], dtype="float64")
    ref = reference("pst", img, [(1, -2), (3, 1), (1, 2)])
    np.testing.assert_allclose(_get(P, [(1, -2), (3, 1), (1, 2)]), ref, atol=1e-14)


def test_dense_layout(rng):
    img = rng.random((12, 12))
    M = fm.pcet(img, 2, 2, dtype="float64")
    D = M.dense()
    assert D.shape == (5, 5)
    for n in range(-2, 3):
        for l in range(-2, 3):
            assert abs(D[n + 2, l + 2] - M[n, l]) < 1e-15


# ----------------------------------------------------------------------------- methods
@_NO_FINUFFT
def test_nufft_eps_is_respected(rng):
    img = rng.random((2, 32, 32))
    pairs = _pairs("pct", 12, 12)
    ref = reference("pct", img, pairs)
    for eps in (1e-4, 1e-8):
        M = fm.pct(img, 12, 12, method="nufft", eps=eps, dtype="float64")
        rel = np.linalg.norm(_get(M, pairs) - ref) / np.linalg.norm(ref)
        assert rel < 10 * eps


def test_nufft_missing_falls_back_with_one_warning(monkeypatch, rng):
    monkeypatch.setattr(nufft_mod, "_finufft", lambda: None)
    monkeypatch.setattr(nufft_mod, "_WARNED", set())
    img = rng.random((10, 10))
    plan = PolarHarmonicTransform("pcet", 10, 2, 2, method="nufft", dtype="float64")
    with pytest.warns(RuntimeWarning, match="finufft"):
        a = plan.forward(img).numpy()
    b = plan.forward(img).numpy()  # no second warning (filterwarnings = error)
    ref = PolarHarmonicTransform("pcet", 10, 2, 2, method="engine", dtype="float64")
    # another method sums in another order (tests/reference_disk.sum_bound)
    assert np.abs(a - ref.forward(img).numpy()).max() <= sum_bound(img, 1 / np.pi)[0]
    np.testing.assert_array_equal(a, b)  # the same plan twice: bit-exactness is the property


def test_auto_method_rule():
    n = 625
    GiB = 2**30
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert pht_method(cuda, n, 128, GiB, 40 * GiB, False)[0] == "gemm"
    assert pht_method(cuda, n, 1, GiB, 40 * GiB, False)[0] == "gemm"
    assert pht_method(cuda, n, 128, 64 * GiB, 40 * GiB, False)[0] == "engine"
    assert pht_method(cpu, n, 128, GiB, 8 * GiB, False)[0] == "gemm"
    for finufft, fallback in ((True, "nufft"), (False, "engine")):
        assert pht_method(cpu, n, 4, GiB, 8 * GiB, finufft)[0] == fallback
        assert pht_method(cpu, n, 128, 3 * GiB, 8 * GiB, finufft)[0] == fallback
        assert pht_method(cpu, 10, 1, 2**20, 8 * GiB, finufft)[0] == "engine"
    plan = PolarHarmonicTransform("pcet", 16, 2, 2)
    assert plan.method_for(4) == "engine"
    assert plan.method_for(64) == "gemm"


def test_route_is_decided_by_the_key_not_by_history(rng):
    """A small batch takes the same route (and gives the same bits) before and after a large
    batch has built the dense kernel."""
    plan = PolarHarmonicTransform("pcet", 16, 2, 2, dtype="float64")
    img = rng.random((16, 16))
    first = plan.forward(img).numpy()
    assert plan.route.method == "engine" and plan.route_for(64).method == "gemm"
    assert str(plan.route) in repr(plan)
    plan.forward(rng.random((64, 16, 16)))  # builds the dense kernel
    assert plan.route.method == "engine"
    np.testing.assert_array_equal(plan.forward(img).numpy(), first)  # bits are the property
    one = fm.pcet(img, 2, 2, dtype="float64")
    assert one.plan.route == plan.route
    np.testing.assert_array_equal(one.numpy(), first)


@pytest.mark.parametrize("all_pixels", [False, True])
@pytest.mark.parametrize("N,k", [(16, 1), (15, 1), (15, 2)])
def test_gemm_fold_matches_plain(N, k, all_pixels, monkeypatch, rng):
    """The 180-degree fold of the GEMM gives the plain GEMM's moments (odd and even N, with
    and without a centre pixel; all pixels as on a GPU, or only the used ones)."""
    if all_pixels:  # the GPU layout: contiguous halves and a flip, no gathers
        monkeypatch.setattr(PolarHarmonicTransform, "_kernel_base",
                            lambda self: np.arange(self.size * self.size))
    img = rng.random((3, N, N))
    pairs = _pairs("pcet", 3, 4)
    ref = reference("pcet", img, pairs, k=k)
    for fold in (True, False):
        plan = PolarHarmonicTransform("pcet", N, 3, 4, k=k, method="gemm", dtype="float64")
        plan._fold = fold
        tol = sum_bound(img, 1 / np.pi, k)[:, None]  # PCET: c_n = 1/pi, |R_n| = 1
        assert (np.abs(_get(plan.forward(img), pairs) - ref) <= tol).all()
    half = (N * N + 1) // 2 if all_pixels else (int(plan.mask.sum()) + 1) // 2
    plan._fold = True
    assert plan.kernel_pixels() == half


def test_streaming_and_gemm_chunks_match(rng, monkeypatch):
    """A batch over a quarter of the budget is streamed in chunks, and the GEMM splits the
    batch when its scratch does not fit: same moments as in one go."""
    img = rng.random((4, 100, 16, 16)).astype(np.float32)  # 400 KB as float32
    ref = PolarHarmonicTransform("pcet", 16, 12, 12, method="gemm").forward(img)
    small = PolarHarmonicTransform("pcet", 16, 12, 12, method="gemm", memory_budget=2**20)
    assert small._fold and small.kernel_bytes() < 2**19
    chunks: list[int] = []
    chunk = PolarHarmonicTransform._gemm_chunk
    monkeypatch.setattr(PolarHarmonicTransform, "_gemm_chunk",
                        lambda self, x, k: chunks.append(x.shape[0]) or chunk(self, x, k))
    got = small.forward(img)
    assert chunks == [256, 144]  # streamed: a quarter of the budget per chunk
    assert isinstance(got.values(), np.ndarray) and got.batch_shape == (4, 100)
    np.testing.assert_allclose(got.values(), ref.values(), rtol=1e-6, atol=1e-7)
    x = torch.as_tensor(img.reshape(400, 256)).repeat(3, 1)  # 3 KB of scratch per image
    chunks.clear()
    out = small._gemm_forward(x)
    assert len(chunks) == 2 and sum(chunks) == 1200
    np.testing.assert_allclose(out[800:].numpy(),
                               ref.data.reshape(400, *ref.data.shape[-2:]).numpy(),
                               rtol=1e-6, atol=1e-7)


def test_gemm_memory_error():
    plan = PolarHarmonicTransform("pcet", 64, 20, 20, method="gemm", memory_budget=2**20)
    with pytest.raises(MemoryError, match="method='gemm' needs"):
        plan.forward(np.ones((64, 64)))


# ----------------------------------------------------------------------------- errors
def test_errors_name_the_parameter():
    img = np.ones((8, 8))
    with pytest.raises(ValueError, match="kind must be one of 'pcet', 'pct', 'pst'"):
        PolarHarmonicTransform("pzt", 8, 2, 2)
    with pytest.raises(ValueError, match="method must be one of 'auto', 'engine'"):
        fm.pcet(img, 2, 2, method="fast")
    with pytest.raises(ValueError, match="nmax must be >= 0"):
        fm.pcet(img, -1, 2)
    with pytest.raises(ValueError, match="nmax must be >= 1"):
        fm.pst(img, 0, 2)
    with pytest.raises(ValueError, match="lmax must be >= 0"):
        fm.pct(img, 2, -2)
    with pytest.raises(ValueError, match="nmin must be >= 0"):
        fm.pct(img, 2, 2, nmin=-1)
    with pytest.raises(ValueError, match="lmin must be <= lmax"):
        fm.pct(img, 2, 2, lmin=3)
    with pytest.raises(ValueError, match="not a valid pst index"):
        fm.pst(img, pairs=[(0, 1)])
    with pytest.raises(ValueError, match="give nmax and lmax"):
        fm.pct(img)
    with pytest.raises(ValueError, match="s must be > 0"):
        fm.pcet(img, 2, 2, s=-1.0)
    with pytest.raises(ValueError, match="eps must be > 0"):
        fm.pcet(img, 2, 2, eps=0.0)
    with pytest.raises(ValueError, match="image must be square"):
        fm.pcet(np.ones((8, 9)), 2, 2)
    with pytest.raises(ValueError, match="image must be 2-D"):
        fm.pcet(np.ones(8), 2, 2)
    bad = img.copy()
    bad[3, 3] = np.nan
    with pytest.raises(ValueError, match="image"):
        fm.pcet(bad, 2, 2)
    plan = PolarHarmonicTransform("pcet", 8, 2, 2)
    with pytest.raises(ValueError, match="image must be 8x8"):
        plan.forward(np.ones((10, 10)))
    with pytest.raises(TypeError, match="nmax must be an integer"):
        fm.pcet(img, 2.5, 2)


@pytest.mark.parametrize("func", [fm.pcet, fm.pct, fm.pst])
@pytest.mark.parametrize("shape", [(12, 0), (0, 12), (0, 0), (2, 0, 0)])
def test_images_with_no_pixel_name_image(func, shape):
    """A (12, 0) image gave 'size must be >= 1, got 0', which does not say which argument."""
    with pytest.raises(ValueError, match=r"^image must"):
        func(np.zeros(shape), 2, 2)
