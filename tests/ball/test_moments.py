"""3-D Zernike moments of volumes: direct reference, orthonormality, invariance, properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import fastmoments.ball.routes as routes
from fastmoments.ball import Zernike3DTransform, nmse, psnr, zernike3d, zernike3d_moments

RNG = np.random.default_rng(7)


def direct_moments(volume: np.ndarray, order: int, k: int = 1) -> dict:
    """(3/4pi) sum_p w_p f_p conj(Z(x_p)) over the midpoints of k^3 sub-voxels in the
    inscribed ball, written out point by point (no grouping, no recurrences shared with the
    engine beyond the functions tested against mpmath)."""
    D, H, W = volume.shape
    rho = min(volume.shape) / 2
    offs = (2 * np.arange(1, k + 1) - k - 1) / (2 * k)
    cd, ch, cw = ((s - 1) / 2 for s in volume.shape)
    pts, vals = [], []
    for d, h, w in itertools.product(range(D), range(H), range(W)):
        for a, b, c in itertools.product(offs, offs, offs):
            x, y, z = (w + c - cw) / rho, (h + b - ch) / rho, (d + a - cd) / rho
            if x * x + y * y + z * z <= 1.0:
                pts.append((x, y, z))
                vals.append(volume[d, h, w])
    pts, vals = np.array(pts), np.array(vals)
    wt = 1.0 / (k * rho) ** 3
    out = {}
    for n in range(order + 1):
        for l in range(n % 2, n + 1, 2):
            for m in range(-l, l + 1):
                z = zernike3d(n, l, m, pts[:, 0], pts[:, 1], pts[:, 2])
                out[n, l, m] = 3 / (4 * math.pi) * wt * np.sum(vals * np.conj(z))
    return out


def cube_rotations(a: np.ndarray) -> list[np.ndarray]:
    """The 24 rotations of the cube applied to ``a`` (rot90 combinations, distinct)."""
    seen, out = set(), []
    for i, j, k in itertools.product(range(4), repeat=3):
        b = np.rot90(np.rot90(np.rot90(a, i, (0, 1)), j, (0, 2)), k, (1, 2))
        key = b.tobytes()
        if key not in seen:
            seen.add(key)
            out.append(np.ascontiguousarray(b))
    return out


@pytest.mark.parametrize("shape, order, k", [((6, 6, 6), 5, 1), ((5, 6, 7), 4, 2)])
def test_against_direct_sum(shape, order, k):
    vol = RNG.random(shape)
    ref = direct_moments(vol, order, k)
    Om = zernike3d_moments(vol, order, k=k, dtype="float64")
    for (n, l, m), v in ref.items():
        assert abs(Om[n, l, m] - v) <= 1e-14 * max(1.0, abs(v)), (n, l, m)


def test_orthonormal_quadrature_error_shrinks_with_k():
    order, errors = 4, []
    for k in (1, 2, 4):
        plan = Zernike3DTransform((10, 10, 10), order, k=k, dtype="float64")
        xyz = torch.as_tensor(plan.sampling.xyz)
        z = torch.stack([zernike3d(int(n), int(l), int(m), xyz[:, 0], xyz[:, 1], xyz[:, 2])
                         for n, l, m in plan.index.nlm])
        gram = plan.engine.forward_points(z.real) + 1j * plan.engine.forward_points(z.imag)
        errors.append(float((gram - torch.eye(len(z))).abs().max()))
    # measured: 0.26, 0.051, 0.018 (the step of the ball's boundary, O(1/(N k)))
    assert errors[0] < 0.3 and errors[2] < 0.02 and errors[2] < errors[0] / 10
    assert errors[0] > errors[1] > errors[2]


def test_gauss_quadrature_matches_midpoint_in_the_limit():
    vol = np.ones((8, 8, 8))
    gauss = zernike3d_moments(vol, 2, k=3, quadrature="gauss", dtype="float64")
    # the ball's volume share of the moment Om_000 of f = 1 is exactly 1
    assert abs(gauss[0, 0, 0] - 1) < 0.02


def test_invariants_exact_under_the_24_cube_rotations():
    vol = RNG.random((12, 12, 12))
    plan = Zernike3DTransform((12, 12, 12), 8, dtype="float64")
    ref = plan.forward(vol).invariants()
    rots = cube_rotations(vol)
    assert len(rots) == 24
    for b in rots:
        got = plan.forward(b).invariants()
        assert np.max(np.abs(got - ref)) <= 1e-14 * ref.max()


def test_invariants_under_an_arbitrary_rotation_within_resampling_error():
    # a smooth density sampled on the grid, rotated analytically (no interpolation)
    g = (np.arange(24) - 11.5) / 12
    z, y, x = np.meshgrid(g, g, g, indexing="ij")

    def blobs(x, y, z):
        return (np.exp(-((x - 0.3) ** 2 + y**2 + z**2) / 0.03)
                + 0.7 * np.exp(-(x**2 + (y - 0.35) ** 2 + (z + 0.2) ** 2) / 0.02))

    c, s = math.cos(0.7), math.sin(0.7)
    a = blobs(x, y, z)
    b = blobs(c * x + s * z, y, -s * x + c * z)  # a rotation about y by 0.7 rad
    ia = zernike3d_moments(a, 8, k=2, dtype="float64").invariants()
    ib = zernike3d_moments(b, 8, k=2, dtype="float64").invariants()
    assert np.max(np.abs(ia - ib)) < 0.01 * ia.max()


def test_negative_m_by_conjugation():
    vol = RNG.random((6, 6, 6))
    ref = direct_moments(vol, 3)
    Om = zernike3d_moments(vol, 3, dtype="float64")
    for m in (1, 2, 3):
        assert abs(Om[3, 3, -m] - ref[3, 3, -m]) < 1e-14
        assert abs(Om[3, 3, -m] - (-1) ** m * np.conj(Om[3, 3, m])) < 1e-15


def test_batch_equals_loop_and_kinds():
    vols = RNG.random((2, 3, 8, 8, 8)).astype(np.float32)
    plan = Zernike3DTransform((8, 8, 8), 5)
    Om = plan.forward(vols)
    assert Om.batch_shape == (2, 3)
    assert isinstance(Om.values(), np.ndarray) and Om.values().dtype == np.complex64
    for i, j in itertools.product(range(2), range(3)):
        one = plan.forward(vols[i, j])
        assert np.allclose(Om.values()[i, j], one.values(), rtol=0, atol=1e-6)
    t = plan.forward(torch.as_tensor(vols))
    assert isinstance(t.values(), torch.Tensor)
    assert isinstance(t.reconstruct(), torch.Tensor)
    assert isinstance(Om.reconstruct(), np.ndarray)
    assert Om.reconstruct().shape == (2, 3, 8, 8, 8)
    assert Om.invariants().shape == (2, 3, len(Om.pairs))


def test_round_trip_recovers_band_limited_moments():
    plan = Zernike3DTransform((24, 24, 24), 4, dtype="float64")
    coef = np.zeros(plan.index.size, dtype=complex)
    for (n, l, m), v in {(0, 0, 0): 1.0, (2, 2, 1): 0.3 - 0.2j, (3, 1, 0): -0.4,
                         (4, 4, 3): 0.1j}.items():
        coef[plan.index.position(n, l, m)] = v
    vol = plan.inverse(coef)
    assert isinstance(vol, np.ndarray) and vol.shape == (24, 24, 24)
    back = plan.forward(vol).values()
    # the error is that of the voxel quadrature of the ball (boundary voxels)
    assert np.max(np.abs(back - coef)) < 0.03


def test_partial_reconstruction_error_falls_with_order():
    g = (np.arange(20) - 9.5) / 10
    z, y, x = np.meshgrid(g, g, g, indexing="ij")
    vol = np.exp(-((x - 0.2) ** 2 + y**2 + (z + 0.1) ** 2) / 0.1)
    plan = Zernike3DTransform((20, 20, 20), 12, dtype="float64")
    Om = plan.forward(vol)
    mask = plan.reconstruction_mask
    assert np.array_equal(mask, Zernike3DTransform((20, 20, 20), 2, k=2).reconstruction_mask)
    errs = [nmse(vol, Om.reconstruct(orders=t), mask=mask) for t in (2, 6, 12)]
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.02
    assert psnr(vol, Om.reconstruct(), mask=mask) > 25
    only_high = Om.reconstruct(orders=(7, 12))
    assert np.allclose(Om.reconstruct(orders=6) + only_high, Om.reconstruct(), atol=1e-12)
    assert np.allclose(Om.reconstruct(orders=[0, 1, 2]), Om.reconstruct(orders=2), atol=1e-12)


def test_adjoint():
    plan = Zernike3DTransform((7, 8, 9), 5, k=2, dtype="float64")
    x = RNG.standard_normal((7, 8, 9))
    y = RNG.standard_normal(plan.index.size) + 1j * RNG.standard_normal(plan.index.size)
    ax = plan.forward(x).values()
    lhs = np.real(np.vdot(y, ax))  # Re <Ax, y>
    rhs = np.sum(x * plan.adjoint(y))
    assert abs(lhs - rhs) <= 1e-12 * abs(lhs)


def test_float32_against_float64():
    vol = RNG.random((16, 16, 16))
    a = zernike3d_moments(vol, 10, dtype="float64").values()
    b = zernike3d_moments(vol.astype(np.float32), 10).values()
    assert b.dtype == np.complex64
    # float32 sums of ~2000 points per shell: a few ulps of the largest moment
    assert np.max(np.abs(a - b)) <= 2e-6 * np.max(np.abs(a))


def test_gradcheck():
    plan = Zernike3DTransform((3, 3, 4), 2, dtype="float64")
    x = torch.rand(3, 3, 4, dtype=torch.float64, requires_grad=True)
    torch.autograd.gradcheck(lambda v: torch.view_as_real(plan.forward(v).values()), (x,))
    torch.autograd.gradcheck(lambda v: plan.forward(v).invariants(), (x,))


def test_chunked_and_recomputed_harmonics_agree(monkeypatch):
    vol = RNG.random((2, 10, 10, 10))
    ref = Zernike3DTransform((10, 10, 10), 6, dtype="float64").forward(vol).values()
    small = Zernike3DTransform((10, 10, 10), 6, dtype="float64", memory_budget=2**20)
    assert np.allclose(small.forward(vol).values(), ref, rtol=0, atol=1e-14)
    monkeypatch.setitem(routes.TABLES_CACHE, "cpu", 0)
    plan = Zernike3DTransform((10, 10, 10), 6, dtype="float64", memory_budget=2**20)
    assert plan.route.kernel == "recomputed-tables"
    assert "recomputed-tables" in repr(plan)
    assert np.allclose(plan.forward(vol).values(), ref, rtol=0, atol=1e-14)


def test_centroid_and_enclosing_follow_the_object():
    g = np.arange(20)
    z, y, x = np.meshgrid(g, g, g, indexing="ij")
    def blob(c):
        return (np.exp(-((z - c[0]) ** 2 + (y - c[1]) ** 2 + (x - c[2]) ** 2) / 4.0)
                * (((z - c[0]) ** 2 + (y - c[1]) ** 2 + (x - c[2]) ** 2) <= 16))
    a, b = blob((8, 9, 10)), blob((11, 7, 9))
    ia = zernike3d_moments(a, 6, center="centroid", radius="enclosing", dtype="float64")
    ib = zernike3d_moments(b, 6, center="centroid", radius="enclosing", dtype="float64")
    assert ia.plan.ball_center == pytest.approx((8, 9, 10))
    assert np.allclose(ia.values(), ib.values(), rtol=0, atol=1e-12)
    both = zernike3d_moments(np.stack([a, b]), 6, center="centroid", dtype="float64")
    assert both.batch_shape == (2,)
    assert both.reconstruct().shape == (2, 20, 20, 20)
    fixed = zernike3d_moments(a, 6, center=(8, 9, 10), radius=5.0, dtype="float64")
    assert fixed.plan.ball_radius == 5.0


def test_input_not_modified():
    vol = RNG.random((8, 8, 8))
    keep = vol.copy()
    Om = zernike3d_moments(vol, 4, center="centroid")
    Om.reconstruct()
    t = torch.as_tensor(vol)
    zernike3d_moments(t, 4)
    assert np.array_equal(vol, keep) and torch.equal(t, torch.as_tensor(keep))


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"volume": np.zeros((4, 4))}, ValueError, "volume"),
    ({"order": -1}, ValueError, "order"),
    ({"order": 2.0}, TypeError, "order"),
    ({"k": 0}, ValueError, "k"),
    ({"quadrature": "simpson"}, ValueError, "quadrature"),
    ({"center": "middle"}, ValueError, "center"),
    ({"center": (1, 2)}, ValueError, "center"),
    ({"center": (1, 2, float("nan"))}, ValueError, "center"),
    ({"radius": -1.0}, ValueError, "radius"),
    ({"radius": "outer"}, ValueError, "radius"),
    ({"radius": 0.01, "center": (100, 100, 100)}, ValueError, "ball"),
    ({"volume": np.full((4, 4, 4), np.nan)}, ValueError, "volume"),
    ({"volume": np.zeros((4, 4, 4), complex)}, ValueError, "volume"),
    ({"volume": "abc"}, TypeError, "volume"),
    ({"volume": np.zeros((4, 4, 4)), "center": "centroid"}, ValueError, "centroid"),
])
def test_bad_input(kwargs, exc, match):
    args = {"volume": np.ones((4, 4, 4)), "order": 2} | kwargs
    with pytest.raises(exc, match=match):
        zernike3d_moments(args.pop("volume"), args.pop("order"), **args)


def test_bad_plan_input_and_indexing():
    with pytest.raises(ValueError, match="shape"):
        Zernike3DTransform((4, 4), 2)
    plan = Zernike3DTransform((4, 4, 4), 2)
    with pytest.raises(ValueError, match="volume must have shape"):
        plan.forward(np.ones((5, 4, 4)))
    Om = plan.forward(np.ones((4, 4, 4)))
    with pytest.raises(IndexError, match="not a computed"):
        Om[2, 1, 0]
    with pytest.raises(IndexError, match="not a computed"):
        Om[4, 0, 0]
    with pytest.raises(TypeError):
        Om[2, 0]
    with pytest.raises(ValueError, match="orders"):
        Om.reconstruct(orders=3)


def test_too_little_memory_says_what_is_needed():
    plan = Zernike3DTransform((8, 8, 8), 6, memory_budget=4096)
    with pytest.raises(MemoryError, match="needs at least"):
        plan.forward(np.ones((8, 8, 8)))


def test_enclosing_ball_holds_every_nonzero_voxel():
    vol = np.zeros((16, 18, 20))
    vol[2, 3, 4] = 1.0
    vol[12, 15, 17] = 2.0
    vol[7, 9, 11] = 5.0
    Om = zernike3d_moments(vol, 4, center="centroid", radius="enclosing")
    assert Om.plan.mask[vol != 0].all()
    # every non-zero voxel lies whole in the ball: its centre at least half a voxel inside
    dist = np.linalg.norm(np.argwhere(vol != 0) - np.array(Om.plan.ball_center), axis=1)
    assert Om.plan.ball_radius >= dist.max() + 0.5


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_matches_cpu():
    vol = torch.as_tensor(RNG.random((2, 16, 16, 16)))
    cpu = zernike3d_moments(vol, 8, k=2)
    gpu = zernike3d_moments(vol.cuda(), 8, k=2)
    assert gpu.values().device.type == "cuda"
    assert torch.allclose(gpu.values().cpu(), cpu.values(), rtol=0, atol=1e-13)
    assert torch.allclose(gpu.reconstruct().cpu(), cpu.reconstruct(), rtol=0, atol=1e-12)


def test_progress_option():
    vol = RNG.random((8, 8, 8))
    plan = Zernike3DTransform((8, 8, 8), 4, dtype="float64")
    quiet = plan.forward(vol)
    shown = plan.forward(vol, progress=True)
    assert np.array_equal(quiet.values(), shown.values())
    assert np.array_equal(quiet.reconstruct(progress=True), quiet.reconstruct())
    with pytest.raises(TypeError, match="progress"):
        plan.forward(vol, progress="yes")
    with pytest.raises(TypeError, match="progress"):
        zernike3d_moments(vol, 4, progress=1)


def test_quality_measures():
    a = RNG.random((2, 4, 4, 4))
    b = a + 0.1
    e = nmse(a, b)
    assert e.shape == (2,)
    assert np.allclose(e, 0.01 * 64 / (a**2).sum(axis=(1, 2, 3)))
    assert np.allclose(psnr(a, b, data_range=1.0), 20.0)
    assert psnr(a[0], a[0]) == np.inf
    with pytest.raises(ValueError, match="shape"):
        nmse(a, b[0])
    with pytest.raises(TypeError, match="mask"):
        nmse(a, b, mask=np.ones((4, 4, 4)))


def test_ring_gemm_route_equals_the_shell_stages(monkeypatch):
    vol = RNG.random((3, 12, 12, 12))
    gemm = Zernike3DTransform((12, 12, 12), 9, dtype="float64")
    assert gemm.route.kernel == "ring-gemm"
    monkeypatch.setitem(routes.GEMM_CACHE, "cpu", 0)
    shells = Zernike3DTransform((12, 12, 12), 9, dtype="float64")
    assert shells.route.kernel == "cached-tables"
    a, b = gemm.forward(vol).values(), shells.forward(vol).values()
    assert np.allclose(a, b, rtol=0, atol=1e-14 * np.abs(b).max())


def test_ring_gemm_synthesis_equals_the_shell_stages(monkeypatch):
    plan = Zernike3DTransform((10, 10, 10), 7, k=2, dtype="float64")
    assert plan.route.kernel == "ring-gemm"
    y = RNG.standard_normal(plan.index.size) + 1j * RNG.standard_normal(plan.index.size)
    a, ra = plan.adjoint(y), plan.inverse(y)
    monkeypatch.setitem(routes.GEMM_CACHE, "cpu", 0)
    shells = Zernike3DTransform((10, 10, 10), 7, k=2, dtype="float64")
    assert shells.route.kernel != "ring-gemm"
    assert np.allclose(a, shells.adjoint(y), rtol=0, atol=1e-13 * np.abs(a).max())
    assert np.allclose(ra, shells.inverse(y), rtol=0, atol=1e-13 * np.abs(ra).max())


@pytest.mark.parametrize("gemm", [True, False])
def test_high_order_moments_against_direct_sums(monkeypatch, gemm):
    if not gemm:
        monkeypatch.setitem(routes.GEMM_CACHE, "cpu", 0)
    vol = RNG.random((9, 9, 9))
    Om = Zernike3DTransform((9, 9, 9), 90, dtype="float64").forward(vol)
    assert (Om.plan.route.kernel == "ring-gemm") == gemm
    rho = 4.5
    g = (np.arange(9) - 4) / rho
    z, y, x = np.meshgrid(g, g, g, indexing="ij")
    inside = x**2 + y**2 + z**2 <= 1
    for n, l, m in [(90, 0, 0), (90, 90, 90), (89, 31, 17), (76, 40, -5), (90, 2, 1)]:
        zf = zernike3d(n, l, m, x[inside], y[inside], z[inside])
        ref = 3 / (4 * math.pi) * np.sum(vol[inside] * np.conj(zf)) / rho**3
        scale = 3 / (4 * math.pi) * np.sum(np.abs(vol[inside] * zf)) / rho**3
        assert abs(Om[n, l, m] - ref) <= 1e-13 * scale, (n, l, m)


def test_names_label_the_columns():
    Om = zernike3d_moments(RNG.random((6, 6, 6)), 3)
    assert len(Om.names()) == Om.invariants().shape[-1]
    assert Om.names("moment")[:3] == ["Om[0,0,0]", "Om[2,0,0]", "Om[1,1,0]"]
    assert len(Om.names("moment")) == Om.values().shape[-1]
    with pytest.raises(ValueError, match="kind"):
        Om.names("phase")
