"""The slab-and-circle layout of the 3-D Zernike engine's azimuthal stage.

The engine sums phases over (slab, circle) cells of a shared in-plane table and adds the cells
up per ring; these tests hold that against the ring sums written out point by point in float64
(``E^0_{q,m} = sum_{p in q} v_p e^{-i m phi_p}``, ``E^1`` with ``sign(z_p)``), for centred
grids, sub-voxels, Gauss points and a centre off the lattice (float radius keys), and check
that any valid partition into circles (one position per circle) gives the same moments.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments.ball.engine as engine
from fastmoments._threads import cpu_threads
from fastmoments.ball import Zernike3DTransform
from fastmoments.ball.engine import BallEngine
from fastmoments.ball.sampling import ball_sampling

RNG = np.random.default_rng(11)


def direct_ring_sums(sampling, values: np.ndarray, order: int) -> np.ndarray:
    """``(Q, 2, L + 1)`` complex: both parities of the phase sums of every ring."""
    phi = np.arctan2(sampling.xyz[:, 1], sampling.xyz[:, 0])
    ph = np.exp(-1j * np.outer(phi, np.arange(order + 1)))  # (P, L + 1)
    out = np.zeros((sampling.n_rings, 2, order + 1), dtype=complex)
    np.add.at(out[:, 0], sampling.ring, values[:, None] * ph)
    np.add.at(out[:, 1], sampling.ring, (sampling.zsign * values)[:, None] * ph)
    return out


@pytest.mark.parametrize(("shape", "k", "quadrature", "center"), [
    ((12, 12, 12), 1, "midpoint", None),
    ((9, 10, 11), 2, "midpoint", None),
    ((8, 8, 8), 2, "gauss", None),
    ((10, 10, 10), 1, "midpoint", (4.3, 4.6, 4.45)),
])
def test_ring_sums_against_point_by_point_sums(shape, k, quadrature, center):
    order = 7
    s = ball_sampling(shape, k, quadrature, center, None if center is None else 4.0)
    eng = BallEngine(s, order, torch.float64, torch.device("cpu"))
    values = RNG.standard_normal((2, s.n_points))
    E = eng.azimuthal_sums(torch.as_tensor(values))  # (Q, (parity, m), (b, c))
    E = E.reshape(s.n_rings, 2, order + 1, 2, 2).numpy()
    for b in range(2):
        ref = direct_ring_sums(s, values[b], order)
        got = E[..., b, 0] + 1j * E[..., b, 1]
        assert np.abs(got - ref).max() <= 1e-13 * np.abs(ref).max()


def test_circles_hold_one_ring_per_slab():
    s = ball_sampling((14, 14, 14), 1, "midpoint", None, None)
    eng = BallEngine(s, 4, torch.float64, torch.device("cpu"))
    assert eng._n_circle < eng._n_plane  # positions share circles on a centred grid
    assert eng._n_plane * eng._n_slab < 2 * s.n_points  # the cylinder around the ball
    assert eng._phases.shape == (eng._n_plane, 2 * 5)


@pytest.mark.parametrize("gemm", [True, False])
def test_one_position_per_circle_gives_the_same_moments(monkeypatch, gemm):
    import fastmoments.ball.routes as routes

    if not gemm:
        monkeypatch.setitem(routes.GEMM_CACHE, "cpu", 0)
    vol = RNG.random((2, 11, 11, 11))
    coef = RNG.standard_normal(200) + 1j * RNG.standard_normal(200)
    plan = Zernike3DTransform((11, 11, 11), 9, dtype="float64")
    a, ra = plan.forward(vol).values(), plan.adjoint(coef[:plan.index.size])
    monkeypatch.setattr(engine, "_plane_circles", lambda plane, slab, ring, n, a: np.arange(n))
    single = Zernike3DTransform((11, 11, 11), 9, dtype="float64", memory_budget=2**30)
    assert single.engine._n_circle == single.engine._n_plane
    b, rb = single.forward(vol).values(), single.adjoint(coef[:plan.index.size])
    assert np.abs(a - b).max() <= 1e-14 * np.abs(a).max()
    assert np.abs(ra - rb).max() <= 1e-13 * np.abs(ra).max()


def test_slab_chunks_agree(monkeypatch):
    vol = RNG.random((3, 12, 12, 12))
    plan = Zernike3DTransform((12, 12, 12), 8, dtype="float64")
    a = plan.forward(vol).values()
    coef = RNG.standard_normal(plan.index.size) + 1j * RNG.standard_normal(plan.index.size)
    ra = plan.adjoint(coef)
    monkeypatch.setattr(engine, "CHUNK_BYTES", 1)  # one slab, one ring per chunk
    small = Zernike3DTransform((12, 12, 12), 8, dtype="float64", memory_budget=2**29)
    with cpu_threads(1):  # the chunks of a call on one thread (its public calls' count here)
        assert small.engine._chunks(3)[0] == 1
    assert np.abs(a - small.forward(vol).values()).max() <= 1e-14 * np.abs(a).max()
    assert np.abs(ra - small.adjoint(coef)).max() <= 1e-13 * np.abs(ra).max()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_compiled_legendre_stage_equals_the_torch_path(monkeypatch, dtype):
    import fastmoments.ball.routes as routes

    monkeypatch.setitem(routes.GEMM_CACHE, "cpu", 0)
    vol = RNG.random((2, 14, 14, 14))
    plan = Zernike3DTransform((14, 14, 14), 12, dtype=dtype)
    assert plan.route.kernel == "cached-tables"
    a = plan.forward(vol).values()
    calls = []
    kernel = BallEngine._shell_sums_numba
    monkeypatch.setattr(engine, "NUMBA_SHELL_WORK", 0)
    monkeypatch.setattr(BallEngine, "_shell_sums_numba",
                        lambda self, E: calls.append(1) or kernel(self, E))
    b = plan.forward(vol).values()
    assert calls
    tol = 1e-14 if dtype == "float64" else 1e-6
    assert np.abs(a - b).max() <= tol * np.abs(a).max()
    x = torch.as_tensor(vol[0], dtype=plan.dtype).requires_grad_()  # gradients: torch path
    calls.clear()
    plan.forward(x).values().abs().sum().backward()
    assert not calls and x.grad is not None


@pytest.mark.parametrize(("gemm", "shape", "k", "center"), [
    (True, (13, 12, 11), 1, None),
    (False, (13, 12, 11), 1, None),
    (True, (10, 10, 10), 2, (4.3, 4.6, 4.45)),
])
def test_ring_phases_route_equals_the_circle_route(monkeypatch, gemm, shape, k, center):
    """The azimuthal stage by rings with every point's phases (the CUDA route, forced here on
    the CPU) against the slab-and-circle stage: forward, adjoint and gradient in float64."""
    import fastmoments.ball.routes as routes

    if not gemm:
        monkeypatch.setitem(routes.GEMM_CACHE, "cpu", 0)
    opts = dict(dtype="float64", k=k, center=center, radius=None if center is None else 4.0)
    vol = RNG.random((3, *shape))
    circles = Zernike3DTransform(shape, 9, **opts)
    monkeypatch.setitem(routes.RING_PHASES_CACHE, "cpu", 2**30)
    rings = Zernike3DTransform(shape, 9, **opts)
    assert str(rings.route) == "shells/torch:ring-phases+" + circles.route.kernel
    assert rings.engine.stages == circles.engine.stages
    a, b = circles.forward(vol).values(), rings.forward(vol).values()
    assert np.abs(a - b).max() <= 1e-14 * np.abs(a).max()
    coef = RNG.standard_normal(circles.index.size) + 1j * RNG.standard_normal(circles.index.size)
    ra, rb = circles.adjoint(coef), rings.adjoint(coef)
    assert np.abs(ra - rb).max() <= 1e-13 * np.abs(ra).max()
    grads = []
    for plan in (circles, rings):
        x = torch.as_tensor(vol[0]).requires_grad_()
        plan.forward(x).values().abs().sum().backward()
        grads.append(x.grad.numpy())
    assert np.abs(grads[0] - grads[1]).max() <= 1e-13 * np.abs(grads[0]).max()


def test_ring_phases_route_is_chosen_on_cuda_from_its_table_size():
    import fastmoments.ball.routes as routes

    cuda = torch.device("cuda")
    # 100^3, order 20, float32: 524,000 points x 84 phases x 4 bytes = 176 MB
    route = routes.choose_route(7860, 23162, 231, 20, torch.float32, cuda, 946, 523984)
    assert str(route) == "shells/torch:ring-phases+ring-gemm"
    assert "RING_PHASES_CACHE" in route.reason
    big = routes.choose_route(7860, 23162, 231, 20, torch.float32, cuda, 946, 10**8)
    assert str(big) == "shells/torch:ring-gemm"
    cpu = routes.choose_route(7860, 23162, 231, 20, torch.float32, torch.device("cpu"), 946,
                              523984)
    assert not cpu.kernel.startswith("ring-phases")


def test_recomputed_legendre_table_once_per_budget_chunk(monkeypatch):
    """On the recomputed-tables route the Legendre recurrence runs once per chunk of the
    budget, however small the cache-sized pieces of the products are; the results equal
    those of the kept table."""
    import fastmoments.ball.routes as routes

    vol = RNG.random((2, 12, 12, 12))
    ref = Zernike3DTransform((12, 12, 12), 8, dtype="float64")
    a = ref.forward(vol).values()
    coef = RNG.standard_normal(ref.index.size) + 1j * RNG.standard_normal(ref.index.size)
    ra = ref.adjoint(coef)
    monkeypatch.setitem(routes.TABLES_CACHE, "cpu", 0)
    monkeypatch.setitem(routes.GEMM_CACHE, "cpu", 0)
    monkeypatch.setattr(engine, "CHUNK_BYTES", 1)  # pieces of one ring
    plan = Zernike3DTransform((12, 12, 12), 8, dtype="float64", memory_budget=2**18)
    assert plan.route.kernel == "recomputed-tables"
    calls = []
    compute = BallEngine._compute_legendre
    monkeypatch.setattr(BallEngine, "_compute_legendre",
                        lambda self, q0, q1: calls.append(q1 - q0) or compute(self, q0, q1))
    b = plan.forward(vol).values()
    step_q = plan.engine._chunks(2)[1]
    n_rings = plan.engine.sampling.n_rings
    assert 1 < step_q < n_rings  # several chunks of several rings each
    assert calls == [min(step_q, n_rings - q) for q in range(0, n_rings, step_q)]
    assert np.abs(a - b).max() <= 1e-14 * np.abs(a).max()
    assert np.abs(ra - plan.adjoint(coef)).max() <= 1e-13 * np.abs(ra).max()


def test_unique_rows_equal_numpy_row_unique():
    from fastmoments.ball.engine import _unique_rows

    lattice = (np.arange(-7, 8) + 0.5) / 7.5
    a = RNG.choice(lattice, size=(5000, 2))
    a[::7, 1] = a[::7, 0]  # repeated rows and shared values across the columns
    rows, inverse = _unique_rows(a)
    ref_rows, ref_inverse = np.unique(a, axis=0, return_inverse=True)
    assert np.array_equal(rows, ref_rows)
    assert np.array_equal(inverse, ref_inverse.reshape(-1))
    assert np.array_equal(rows[inverse], a)
