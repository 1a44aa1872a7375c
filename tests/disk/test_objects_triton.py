"""The Triton kernels of the per-object moments (fastmoments.disk._triton_labels) against
the torch and host references: the geometry (counts, centroids, boxes to the bit, minimum
enclosing circles to rounding) and the moment sums of both conventions. Run by Triton's
interpreter on the CPU (kept small: it is slow), compiled on CUDA when present."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from ..scripts import run_script

pytest.importorskip("triton")

CHECKS = textwrap.dedent("""
    import numpy as np, torch
    from fastmoments.disk import _triton_labels as tk
    from fastmoments.disk.enclosing import convex_hulls
    from fastmoments.disk import label_geometry
    from fastmoments.disk.label_geometry import (_fused_pass, _geometry, _triton_geometry,
                                                 _triton_geometry_pass, _triton_hull_disks,
                                                 _triton_hulls)
    from fastmoments.disk.labels import ON_CIRCLE, _kernel_sums, _moment_plan
    from tests.disk.test_objects_kernels import awkward
    from tests.disk.test_objects_labels import ellipses

    def same_geometry(g, ref, scale):
        for field in ("labels", "area", "centroid", "bbox"):
            np.testing.assert_array_equal(getattr(g, field), getattr(ref, field))
        np.testing.assert_allclose(g.centre, ref.centre, rtol=0, atol=4e-16 * scale)
        np.testing.assert_allclose(g.radius, ref.radius, rtol=0, atol=4e-16 * scale)

    def check(lab, dev, orders=(9,), dtypes=(torch.float64,)):
        ref, _ = _geometry(lab, "enclosing", torch.device("cpu"), 2**30)
        t = torch.from_numpy(lab).to(dev)
        g = _triton_geometry(t, dev, 2**30)
        same_geometry(g, ref, max(lab.shape))
        parts = _fused_pass(lab, 2**30)  # ids, counts, sums, boxes, column extremes
        got = _triton_geometry_pass(t, parts[0], dev, 2**30)
        for a, b in zip(got, parts[1:8], strict=True):
            np.testing.assert_array_equal(a, b)
        # the hulls on the device: the host's vertices, in its order
        hull = _triton_hulls(t, dev, 2**30)
        want = (*parts[:4], *convex_hulls(*parts[4:8], len(parts[0])))
        for a, b in zip(hull, want, strict=True):
            np.testing.assert_array_equal(torch.as_tensor(a).cpu().numpy(), b)
        # CellProfiler's circles from them, on the device where their steps are clear:
        # the host's bits
        cp = _triton_hull_disks(t, dev, 2**30)
        for field in ("labels", "area", "centroid", "bbox", "centre", "radius"):
            np.testing.assert_array_equal(getattr(cp, field), getattr(ref, field))
        img = np.random.default_rng(lab.size).random(lab.shape)
        for order in orders:
            plan = _moment_plan("zernike", order)
            for conv in ("standard", "cellprofiler"):
                limit = 1.0 if conv == "cellprofiler" else 1.0 + ON_CIRCLE
                for dt in dtypes:
                    for f in (None, img):
                        want = _kernel_sums(lab, f, ref, plan, conv, torch.float64,
                                            torch.device("cpu"), 2**30, False)
                        got = tk.zernike_box_sums(
                            t, None if f is None else torch.from_numpy(f).to(dev, dt),
                            ref.labels, ref.bbox, ref.centre, ref.radius, plan.pairs,
                            conv == "cellprofiler", limit, dt)
                        got = torch.view_as_complex(got.double()).cpu()
                        scale = 1.0 if dt == torch.float64 else 1e9
                        bound = 4e-16 * scale * float(np.max(ref.area)) * 2**(order / 2)
                        err = (got - want).abs().max().item()
                        assert err <= bound, (order, conv, dt, err, bound)
""")

INTERPRETED = CHECKS + textwrap.dedent("""
    cpu = torch.device("cpu")
    # awkward() made smaller: ellipses, one pixel, lines, a square, an object in two pieces,
    # labels above 1024, ragged blobs
    lab = ellipses((40, 44), seed=3, step=20)
    lab[0, 0] = 900
    lab[2, 3:9] = 901
    lab[30:37, 43] = 902
    lab[np.arange(32, 38), np.arange(2, 8)] = 903
    lab[12:16, 16:20] = 2000
    lab[38, 20:24] = 3001
    lab[39, 40] = 3001
    rng = np.random.default_rng(8)
    for t in range(3):
        r, c = rng.integers(0, 34, 2)
        lab[r:r + 6, c:c + 6][rng.random((6, 6)) < 0.5] = 600 + t
    check(lab, cpu, orders=(9,))
    lab = ellipses((40, 44), seed=3, step=20)
    lab[0, 0] = 900
    check(lab.astype(np.uint8), cpu, orders=(0, 4), dtypes=(torch.float64, torch.float32))
    tk.PIECE_PIXELS = 40  # boxes cut into pieces of rows, added by atomic operations
    check(lab, cpu, orders=(4,))
    # random ragged objects (several pieces, lines, single pixels)
    rng = np.random.default_rng(4)
    for _ in range(3):
        shape = tuple(rng.integers(3, 16, size=2))
        lab = rng.integers(0, 4, size=shape) * (rng.random(shape) < rng.uniform(0.2, 1))
        check(lab.astype(np.int64), cpu, orders=(3,))
    empty = _triton_geometry(torch.zeros(5, 6, dtype=torch.int32), cpu, 2**30)
    assert len(empty) == 0 and empty.centre.shape == (0, 2)
    # the device's circles: CellProfiler's bits where it settles them, the others left
    from fastmoments.disk.enclosing import minimum_enclosing_circles
    from tests.disk.test_objects_kernels import SORTED_HULL, ellipses_and_tied_nuclei
    pts, counts = ellipses_and_tied_nuclei()
    want = minimum_enclosing_circles(pts, counts, method="numpy")
    c, r, ok = tk.settled_circles(torch.from_numpy(pts), torch.from_numpy(counts))
    assert 0 < ok.sum() < len(counts)
    np.testing.assert_array_equal(c.numpy()[ok.numpy()], want[0][ok.numpy()])
    np.testing.assert_array_equal(r.numpy()[ok.numpy()], want[1][ok.numpy()])
    # an object whose tied roads end on circles of other bits (its hull is SORTED_HULL):
    # NumPy's sort of every object's angles decides, and all the circles go to the host
    yy, xx = np.mgrid[:60, :60]
    poly = np.array(SORTED_HULL)
    inside = np.ones((60, 60), bool)
    for (y0, x0), (y1, x1) in zip(poly, np.roll(poly, -1, 0)):
        inside &= (x1 - x0) * (yy - y0) - (xx - x0) * (y1 - y0) >= 0
    lab = ellipses((60, 60), seed=2, step=20)
    lab[40:50, 21:31] = 0
    lab[inside] = 77
    ref, _ = _geometry(lab, "enclosing", cpu, 2**30)
    calls = []
    real = label_geometry.minimum_enclosing_circles
    label_geometry.minimum_enclosing_circles = lambda *a: calls.append(1) or real(*a)
    cp = _triton_hull_disks(torch.from_numpy(lab), cpu, 2**30)
    label_geometry.minimum_enclosing_circles = real
    assert calls == [1]
    np.testing.assert_array_equal(cp.centre, ref.centre)
    np.testing.assert_array_equal(cp.radius, ref.radius)
    print("ok")
""")


@pytest.mark.slow  # the interpreter: ~25 s of CPU
def test_the_kernels_give_the_torch_and_host_numbers_in_the_interpreter():
    run_script(INTERPRETED, TRITON_INTERPRET="1")


def test_jacobi_table_gives_the_zernike_radial_polynomials():
    """The recurrence the sums kernel runs, in NumPy, against the factorial sum in exact
    rational arithmetic."""
    from fractions import Fraction
    from math import factorial

    from fastmoments.disk._triton_labels import jacobi_table
    from fastmoments.disk.labels import _moment_plan

    coef = jacobi_table(20, 10, 32)
    rho = [Fraction(i, 40) for i in range(41)]
    r = np.array([float(q) for q in rho])
    x = 1 - 2 * r**2
    for n, mm in _moment_plan("zernike", 20).pairs:
        j = (n - mm) // 2
        cur, prev = np.ones_like(x), np.zeros_like(x)
        for s in range(j):
            cur, prev = (coef[s, 0, mm] * x + coef[s, 1, mm]) * cur - coef[s, 2, mm] * prev, cur
        exact = [float(sum(Fraction((-1) ** s * factorial(n - s),
                                    factorial(s) * factorial((n + mm) // 2 - s)
                                    * factorial((n - mm) // 2 - s)) * q ** (n - 2 * s)
                           for s in range(j + 1))) for q in rho]
        np.testing.assert_allclose((-1) ** j * r**mm * cur, exact, rtol=0, atol=1e-13)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_the_compiled_kernels_give_the_torch_and_host_numbers():
    namespace: dict = {}
    exec(CHECKS, namespace)
    check = namespace["check"]
    from fastmoments.disk import _triton_labels as tk
    from tests.disk.test_objects_kernels import awkward
    from tests.disk.test_objects_labels import ellipses

    cuda = torch.device("cuda")
    check(awkward(), cuda, orders=(9, 20), dtypes=(torch.float64, torch.float32))
    lab = ellipses((300, 320), seed=5, step=60)
    check(lab, cuda, orders=(9,))
    old = tk.PIECE_PIXELS
    try:
        tk.PIECE_PIXELS = 64
        check(lab, cuda, orders=(9,))
    finally:
        tk.PIECE_PIXELS = old


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("convention", ["standard", "cellprofiler"])
def test_cuda_takes_the_triton_route_and_gives_the_cpu_numbers(convention):
    from fastmoments.disk.labels import object_moments

    from .test_objects_labels import assert_same_features, ellipses

    lab = ellipses((200, 230), seed=19, step=25)
    img = np.random.default_rng(13).random(lab.shape)
    for f in (None, img):
        cpu = object_moments(lab, f, order=12, convention=convention, dtype="float64")
        gpu = object_moments(torch.from_numpy(lab).cuda(),
                             None if f is None else torch.from_numpy(f).cuda(), order=12,
                             convention=convention, dtype="float64")
        assert gpu.route.backend == "triton"
        np.testing.assert_allclose(gpu.geometry.radius, cpu.geometry.radius, rtol=0,
                                   atol=1e-13)
        assert_same_features(gpu.features.cpu().numpy(), cpu, 1e-12)
        tor = object_moments(torch.from_numpy(lab).cuda(), order=12, method="torch",
                             convention=convention)
        assert tor.route.backend == "torch"
