"""Zernike and pseudo-Zernike moments: references, methods, properties, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.disk import ZernikeTransform, disk_sampling, order_pairs
from fastmoments.disk.radial import radial_steps

from ..reference_disk import basis_image, moments_direct, radial_exact

FAMILIES = ["zernike", "pseudo-zernike"]
FUNCS = {"zernike": fm.zernike_moments, "pseudo-zernike": fm.pseudo_zernike_moments}


def _all_pairs(family, T):
    fam = fm.disk.get_family(family)
    return [(n, m) for n in range(T + 1) for m in range(-n, n + 1) if fam.is_valid(n, m)]


# ----------------------------------------------------------------------------- references
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("N", "k", "quadrature", "rule"), [
    (16, 1, "midpoint", "inscribed"),
    (15, 3, "midpoint", "inscribed"),
    (12, 2, "gauss", "inscribed"),
    (13, 1, "midpoint", "centre"),
    (10, 4, "midpoint", "centre"),
])
def test_matches_direct_definition(family, N, k, quadrature, rule, rng):
    img = rng.random((N, N))
    T = 8
    A = FUNCS[family](img, T, k=k, quadrature=quadrature, rule=rule, dtype="float64")
    pairs = _all_pairs(family, T)
    ref = moments_direct(family, img, pairs, k=k, quadrature=quadrature, rule=rule)
    got = np.array([A[n, m] for n, m in pairs])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13 * np.abs(ref).max())


@pytest.mark.parametrize("family", FAMILIES)
def test_higher_order_against_exact_rationals(family, rng):
    img = rng.random((24, 24))
    pairs = [(40, 0), (40, 2), (41, 39), (40, 40), (37, 13)]
    pairs = [p for p in pairs if fm.disk.get_family(family).is_valid(*p)]
    A = FUNCS[family](img, 41, dtype="float64")
    ref = moments_direct(family, img, pairs)
    got = np.array([A[n, m] for n, m in pairs])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("family", FAMILIES)
def test_radial_recurrence_accurate_at_order_1000(family):
    r = np.array([0.05, 0.61, 0.97, 0.999])
    T = 1000
    wanted = [(1000, 0), (1000, 500), (1000, 998), (999, 1)]
    fam = fm.disk.get_family(family)
    wanted = [p for p in wanted if fam.is_valid(*p)]
    index = fam.full(T)
    rt = torch.tensor(r, dtype=torch.float64)
    got = {}
    for method in ("deng", "jacobi"):
        for cols, rows, vals in radial_steps(family, method, rt, index.ms, index.ns):
            cols = np.arange(index.n_cols)[cols] if isinstance(cols, slice) else cols.numpy()
            for c, j, v in zip(cols.tolist(), rows.tolist(), vals, strict=True):
                n, m = index.ns[c][j], index.ms[c]
                if (n, m) in wanted:
                    got[method, n, m] = v.numpy()
    for n, m in wanted:
        ref = radial_exact(family, n, m, r)
        for method in ("deng", "jacobi"):
            np.testing.assert_allclose(got[method, n, m], ref, rtol=0, atol=5e-11,
                                       err_msg=f"{family} {method} R_{n},{m}")


def test_methods_agree_and_direct_warns(rng):
    img = rng.random((32, 32))
    ref = fm.zernike_moments(img, 26, dtype="float64").numpy()
    # direct is within its documented breakdown order (29) but cancels digits already
    for method, tol in (("kintner", 1e-12), ("q-recursive", 1e-10), ("jacobi", 1e-12),
                        ("direct", 1e-6)):
        got = fm.zernike_moments(img, 26, dtype="float64", method=method).numpy()
        assert np.abs(got - ref).max() <= tol * np.abs(ref).max(), method
    with pytest.warns(RuntimeWarning, match="direct"):
        fm.zernike_moments(img, 40, method="direct", dtype="float64")
    with pytest.warns(RuntimeWarning, match="direct"):
        fm.pseudo_zernike_moments(img, 20, method="direct", dtype="float64")


def test_pseudo_methods_agree(rng):
    img = rng.random((20, 20))
    ref = fm.pseudo_zernike_moments(img, 12, dtype="float64").numpy()
    for method, tol in (("jacobi", 1e-12), ("direct", 1e-6)):
        got = fm.pseudo_zernike_moments(img, 12, dtype="float64", method=method).numpy()
        assert np.abs(got - ref).max() <= tol * np.abs(ref).max(), method


@pytest.mark.parametrize("family", FAMILIES)
def test_float32_error_bound(family, rng):
    img = rng.random((64, 64)) * 255
    a64 = FUNCS[family](img, 60, dtype="float64").numpy()
    a32 = FUNCS[family](img.astype(np.float32), 60).numpy()
    assert a32.dtype == np.complex64
    err = np.linalg.norm(a32 - a64) / np.linalg.norm(a64)
    assert err < 1e-5


# ----------------------------------------------------------------------------- properties
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(("k", "quadrature"), [(1, "midpoint"), (3, "midpoint"), (2, "gauss")])
def test_rotation_and_mirror_invariance_exact(family, k, quadrature, rng):
    img = rng.random((20, 20))
    f = FUNCS[family]
    base = f(img, 15, k=k, quadrature=quadrature, dtype="float64").invariants()
    scale = np.abs(base).max()
    for turned in (np.rot90(img, 1), np.rot90(img, 2), np.rot90(img, 3), img[:, ::-1],
                   img[::-1, :], img.T):
        inv = f(np.ascontiguousarray(turned), 15, k=k, quadrature=quadrature,
                dtype="float64").invariants()
        np.testing.assert_allclose(inv, base, rtol=0, atol=1e-13 * scale)


def test_rotation_phase_law(rng):
    """A 90-degree counter-clockwise turn multiplies A_nm by exp(-i m pi/2) (Eq. 2.8)."""
    img = rng.random((16, 16))
    A = fm.zernike_moments(img, 9, dtype="float64")
    B = fm.zernike_moments(np.rot90(img).copy(), 9, dtype="float64")
    for n, m in [(5, 1), (6, 2), (9, 3), (8, -4)]:
        np.testing.assert_allclose(B[n, m], A[n, m] * np.exp(-1j * m * np.pi / 2), atol=1e-14)


@pytest.mark.parametrize("family", FAMILIES)
def test_batch_equals_loop_and_kinds(family, device, rng):
    imgs = rng.random((2, 3, 18, 18)).astype(np.float32)
    f = FUNCS[family]
    A = f(imgs, 10)
    assert A.batch_shape == (2, 3)
    vals = A.values()
    assert isinstance(vals, np.ndarray) and vals.shape[:2] == (2, 3)
    for i in range(2):
        for j in range(3):
            single = f(imgs[i, j], 10).values()
            np.testing.assert_allclose(vals[i, j], single, rtol=1e-5, atol=1e-6)
    t = torch.from_numpy(imgs).to(device)
    At = f(t, 10)
    v = At.values()
    assert isinstance(v, torch.Tensor) and v.device.type == device
    np.testing.assert_allclose(v.cpu().numpy(), vals, rtol=1e-5, atol=1e-6)
    assert isinstance(At[3, 1], torch.Tensor)
    rec = At.reconstruct()
    assert isinstance(rec, torch.Tensor) and rec.shape == (2, 3, 18, 18)


def test_integer_input_and_dtype_policy(rng):
    img = (rng.random((16, 16)) * 255).astype(np.uint8)
    A = fm.zernike_moments(img, 6)
    assert A.dtype == torch.complex64
    B = fm.zernike_moments(img.astype(np.float64), 6)
    assert B.dtype == torch.complex128
    np.testing.assert_allclose(A.values(), B.values(), rtol=1e-5, atol=1e-4)


def test_negative_repetitions_are_conjugates(rng):
    A = fm.pseudo_zernike_moments(rng.random((16, 16)), 7)
    for n in range(8):
        for m in range(1, n + 1):
            assert A[n, -m] == np.conj(A[n, m])  # the stored value conjugated: exact
    assert A.dense().shape == (8, 15)


@pytest.mark.parametrize("family", FAMILIES)
def test_orthogonality_peaks(family):
    N = 32
    p, q = (6, 2)
    img = basis_image(family, N, p, q)
    A = FUNCS[family](img, 10, k=5, dtype="float64")
    mags = {pair: abs(A[pair]) for pair in A.pairs}
    best = max(mags, key=mags.get)
    assert best == (p, q)
    # Re V_pq = (V_pq + V_p,-q)/2: the (p, q) moment is near 1/2; the pixels cut off at the
    # disk's edge (about 4% of its area at N = 32) keep it from being exact
    assert abs(A[p, q] - 0.5) < 0.15
    others = sorted(mags.values())[-2]
    assert others < 0.3 * mags[(p, q)]


@pytest.mark.parametrize("family", FAMILIES)
def test_round_trip_on_band_limited_image(family):
    """A polynomial of degree 8 that vanishes smoothly at the rim is reproduced by the
    moments up to order 8; the error shrinks with N (discretization only)."""
    errs = []
    for N in (32, 64):
        c = (2 * np.arange(N) - N + 1) / N
        X, Y = np.meshgrid(c, -c)
        img = (1 - X**2 - Y**2).clip(0) ** 2 * (1 + X - 0.5 * Y**2 + 0.3 * X * Y)
        mask = fm.disk.pixel_mask(N)
        rec = FUNCS[family](img, 8, k=5, dtype="float64").reconstruct()
        errs.append(np.abs(rec - img)[mask].max())
        assert np.all(rec[~mask] == 0)
    assert errs[1] < 1e-3
    assert errs[1] < errs[0] / 2


@pytest.mark.parametrize("family", FAMILIES)
def test_adjoint_identity(family, rng):
    plan = fm.DiskTransform(family, 14, 9, k=2, dtype=torch.float64)
    x = rng.standard_normal((14, 14))
    A = plan.forward(x)
    a = rng.standard_normal(A.data.shape) + 1j * rng.standard_normal(A.data.shape)
    a = a * plan.index.valid_mask()
    lhs = np.real(np.vdot(a, A.numpy()))
    rhs = np.sum(x * plan.adjoint(a))
    assert abs(lhs - rhs) <= 1e-12 * max(abs(lhs), 1.0)


def test_gradcheck():
    plan = ZernikeTransform(8, 5, k=2, dtype=torch.float64)
    x = torch.rand(8, 8, dtype=torch.float64, requires_grad=True)

    def fn(t):
        return torch.view_as_real(plan.forward(t).data)

    assert torch.autograd.gradcheck(fn, (x,))

    def rec(t):
        return plan.forward(t).reconstruct(orders=(1, 4))

    assert torch.autograd.gradcheck(rec, (x,))


# ----------------------------------------------------------------------------- selection
@pytest.mark.parametrize("family", FAMILIES)
def test_selected_moments_equal_full_set(family, rng):
    img = rng.random((2, 30, 30))
    f = FUNCS[family]
    full = f(img, 24, dtype="float64")
    pairs = [(24, 0), (20, -4), (17, 3), (24, 24)]
    pairs = [p for p in pairs if fm.disk.get_family(family).is_valid(*p)]
    sel = f(img, pairs=pairs, dtype="float64")
    for p in pairs:
        np.testing.assert_allclose(sel[p], full[p], atol=1e-13)
    one = f(img, pairs=order_pairs(family, 21), dtype="float64")
    for p in order_pairs(family, 21):
        np.testing.assert_allclose(one[p], full[p], atol=1e-13)
    with pytest.raises(KeyError, match="not computed"):
        sel[2, 0]
    reps = f(img, 24, repetitions=[3, -5], dtype="float64")
    for n in range(5, 25):
        if fm.disk.get_family(family).is_valid(n, 5):
            np.testing.assert_allclose(reps[n, -5], full[n, -5], atol=1e-13)


# ----------------------------------------------------------------------------- reconstruction
def test_partial_reconstructions_add_up(rng):
    img = rng.random((32, 32))
    A = fm.zernike_moments(img, 20, dtype="float64")
    full = A.reconstruct()
    parts = sum(A.reconstruct(orders=rng_) for rng_ in [(0, 5), (6, 12), (13, 20)])
    np.testing.assert_allclose(parts, full, atol=1e-12)
    np.testing.assert_allclose(A.reconstruct(orders=20), full, atol=1e-14)
    pos = A.reconstruct(repetitions="positive")
    neg = A.reconstruct(repetitions="negative")
    np.testing.assert_allclose(pos, neg, atol=1e-14)
    nonneg = A.reconstruct(repetitions="nonnegative")
    np.testing.assert_allclose(nonneg, A.reconstruct(repetitions="nonpositive"), atol=1e-14)
    zero = A.reconstruct(repetitions="zero")
    np.testing.assert_allclose(zero + 2 * pos, full, atol=1e-12)
    # reconstruction is linear in the chosen repetitions
    parts = sum(A.reconstruct(repetitions=r) for r in ([0], [1, -1], [2, -2]))
    np.testing.assert_allclose(A.reconstruct(repetitions=[0, 1, -1, 2, -2]), parts, atol=1e-13)
    explicit = A.reconstruct(repetitions=list(range(-20, 21)))
    np.testing.assert_allclose(explicit, full, atol=1e-12)


def test_psnr_improves_with_k_at_high_order():
    img = fm.data.sample_image("camera", 64)
    mask = fm.disk.pixel_mask(64)
    p1 = fm.psnr(img, fm.zernike_moments(img, 60, k=1).reconstruct(), mask=mask)
    p5 = fm.psnr(img, fm.zernike_moments(img, 60, k=5).reconstruct(), mask=mask)
    assert p5 > p1


# ----------------------------------------------------------------------------- memory
def test_chunked_and_streamed_equal_cached(rng):
    img = rng.random((3, 40, 40))
    ref_plan = ZernikeTransform(40, 30, k=2, dtype=torch.float64)
    ref = ref_plan.forward(img)
    small = ZernikeTransform(40, 30, k=2, dtype=torch.float64, memory_budget=2_000_000)
    assert small.engine.table() is None  # streamed
    got = small.forward(img)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=1e-13)
    np.testing.assert_allclose(got.reconstruct(), ref.reconstruct(), atol=1e-12)
    np.testing.assert_allclose(small.adjoint(ref.numpy()), ref_plan.adjoint(ref.numpy()),
                               atol=1e-12)


def test_large_batch_is_split_to_fit(rng):
    img = rng.random((6, 24, 24))
    ref = ZernikeTransform(24, 12, dtype=torch.float64).forward(img)
    tight = ZernikeTransform(24, 12, dtype=torch.float64, memory_budget=60_000)
    assert tight.engine.batch_size(6) < 6
    got = tight.forward(img)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=1e-13)
    np.testing.assert_allclose(got.reconstruct(), ref.reconstruct(), atol=1e-12)


def test_memory_error_says_how_much(rng):
    # the plan checks what it needs before building anything
    with pytest.raises(MemoryError, match=r"order 30 \(256 moments\) need at least .* "
                                          r"but the memory budget is 1000 B"):
        ZernikeTransform(40, 30, memory_budget=1000)
    # the estimate is the least a plan needs: a budget just above it runs
    from fastmoments.disk.transform import estimate_disk_memory

    est = estimate_disk_memory(fm.disk.get_family("zernike"), 40, 30, dtype=torch.float64)
    need = est["index_bytes"] + est["device_bytes"]
    plan = ZernikeTransform(40, 30, memory_budget=need * 1.1, dtype=torch.float64)
    ref = ZernikeTransform(40, 30, dtype=torch.float64)
    img = rng.random((40, 40))
    np.testing.assert_allclose(plan.forward(img).numpy(), ref.forward(img).numpy(), atol=1e-13)


# ----------------------------------------------------------------------------- sampling
def test_sampling_counts_and_symmetry():
    for N, k in [(16, 1), (15, 3), (12, 2)]:
        s = disk_sampling(N, k)
        mask = fm.disk.pixel_mask(N)
        assert s.n_points == mask.sum() * k * k
        # every used pixel receives exactly k*k sample points
        counts = np.bincount(s.pix[s.slot_used], minlength=N * N).reshape(N, N)
        assert np.all(counts[mask] == k * k) and np.all(counts[~mask] == 0)
        assert np.all(np.diff(s.radius) > 0)
    g = disk_sampling(12, 3, "gauss")
    assert np.isclose(g.weight.sum() * 0 + (g.weight[:, None] * g.slot_used).sum(),
                      fm.disk.pixel_mask(12).sum() * (2 / 12) ** 2)


# ----------------------------------------------------------------------------- errors
def test_errors_name_the_parameter(rng):
    img = rng.random((16, 16))
    with pytest.raises(ValueError, match="square"):
        fm.zernike_moments(rng.random((16, 15)), 4)
    with pytest.raises(ValueError, match="image"):
        fm.zernike_moments(rng.random(16), 4)
    bad = img.copy()
    bad[3, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fm.zernike_moments(bad, 4)
    bad[3, 3] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        fm.zernike_moments(bad, 4)
    with pytest.raises(ValueError, match="order"):
        fm.zernike_moments(img, -1)
    with pytest.raises(TypeError, match="order"):
        fm.zernike_moments(img, 4.0)
    with pytest.raises(ValueError, match="k must be"):
        fm.zernike_moments(img, 4, k=0)
    with pytest.raises(ValueError, match="quadrature must be one of"):
        fm.zernike_moments(img, 4, quadrature="simpson")
    with pytest.raises(ValueError, match="rule must be one of"):
        fm.zernike_moments(img, 4, rule="outside")
    with pytest.raises(ValueError, match="method must be one of"):
        fm.zernike_moments(img, 4, method="fast")
    with pytest.raises(ValueError, match="method must be one of"):
        fm.pseudo_zernike_moments(img, 4, method="kintner")
    with pytest.raises(ValueError, match="not a valid zernike index"):
        fm.zernike_moments(img, pairs=[(4, 1)])
    with pytest.raises(ValueError, match="exactly one"):
        fm.zernike_moments(img)
    with pytest.raises(ValueError, match="real"):
        fm.zernike_moments(img + 1j, 4)
    with pytest.raises(ValueError, match="device"):
        fm.zernike_moments(img, 4, device="tpu")
    A = fm.zernike_moments(img, 4)
    with pytest.raises(IndexError, match=r"A\[3, 2\] is not a zernike moment"):
        A[3, 2]
    with pytest.raises(ValueError, match="repetitions must be one of"):
        A.reconstruct(repetitions="odd")
    with pytest.raises(ValueError, match="orders"):
        A.reconstruct(orders=(5, 2))
    with pytest.raises(ValueError, match="repetitions must satisfy"):
        fm.zernike_moments(img, 4, repetitions=[6])


def test_input_not_modified(rng):
    img = rng.random((16, 16))
    keep = img.copy()
    t = torch.from_numpy(img.copy())
    tkeep = t.clone()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fm.zernike_moments(img, 6, k=3).reconstruct()
        fm.pseudo_zernike_moments(t, 6).reconstruct()
    assert np.array_equal(img, keep)
    assert torch.equal(t, tkeep)


def test_psnr():
    a = np.zeros((4, 4))
    b = a.copy()
    b[0, 0] = 2.0
    assert np.isclose(fm.psnr(a, b, data_range=2.0), 10 * np.log10(4 / (4 / 16)))
    assert fm.psnr(a, a, data_range=1.0) == np.inf
    m = np.ones((4, 4), bool)
    m[0, 0] = False
    assert fm.psnr(a, b, mask=m, data_range=1.0) == np.inf
    with pytest.raises(ValueError, match="shape"):
        fm.psnr(a, np.zeros((3, 3)))
    batch = fm.psnr(np.stack([a, a]), np.stack([b, a]), data_range=2.0)
    assert batch.shape == (2,) and np.isinf(batch[1])


@pytest.mark.parametrize("family", FAMILIES)
def test_dense_layout_matches_indexing(family, rng):
    A = FUNCS[family](rng.random((2, 20, 20)), 12, dtype="float64")
    D = A.dense()
    assert D.shape == (2, 13, 25)
    fam = fm.disk.get_family(family)
    for n in range(13):
        for m in range(-12, 13):
            want = A[n, m] if fam.is_valid(n, m) else 0
            np.testing.assert_array_equal(D[:, n, m + 12], want)
