"""A moments object knows its plan: a plan refuses moments computed by a plan
whose coefficients differ (other size, sampling, family, kind, exponent or set of moments),
and accepts those that differ only in how the sums were computed (method, dtype)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.disk import DiskMoments, DiskTransform, PolarHarmonicTransform, ZernikeTransform

RNG = np.random.default_rng(7)


def _zernike(**kw):
    base = {"family": "zernike", "size": 16, "order": 6}
    base.update(kw)
    fam, size, order = base.pop("family"), base.pop("size"), base.pop("order")
    return DiskTransform(fam, size, order, dtype=torch.float64, **base)


@pytest.mark.parametrize(("other", "match"), [
    ({"size": 18}, "size=18 \\(this plan: 16\\)"),
    ({"k": 2}, "k=2 \\(this plan: 1\\)"),
    ({"quadrature": "gauss", "k": 1}, "quadrature='gauss'"),
    ({"rule": "centre"}, "rule='centre'"),
    ({"order": 7}, "another set of moments"),
    ({"repetitions": [0, 2]}, "another set of moments"),
])
def test_zernike_plans_refuse_other_coefficients(other, match):
    plan = _zernike()
    theirs = _zernike(**other)
    A = theirs.forward(RNG.random((theirs.size, theirs.size)))
    with pytest.raises(ValueError, match=match):
        plan.adjoint(A)


def test_same_index_other_family_is_refused():
    """Zernike and pseudo-Zernike moments of one selection share the layout but not the
    basis."""
    z = DiskTransform("zernike", 16, pairs=[(2, 0), (4, 2)], dtype=torch.float64)
    p = DiskTransform("pseudo-zernike", 16, pairs=[(2, 0), (4, 2)], dtype=torch.float64)
    assert z.index == p.index
    A = p.forward(RNG.random((16, 16)))
    with pytest.raises(ValueError, match="family 'pseudo-zernike' \\(this plan: 'zernike'\\)"):
        z.adjoint(A)


@pytest.mark.parametrize(("mine", "theirs", "match"), [
    ({"kind": "pct"}, {"kind": "pst"}, "family 'pst'"),
    ({"kind": "pcet"}, {"kind": "pcet", "s": 3.0}, "family 'gpcet\\(s=3\\)'"),
    ({"kind": "pcet", "s": 3.0}, {"kind": "pcet", "s": 3.0000001}, "family"),
    ({"kind": "pcet"}, {"kind": "pcet", "k": 2}, "k=2"),
    ({"kind": "pcet"}, {"kind": "pcet", "size": 14}, "size=14"),
])
def test_pht_plans_refuse_other_coefficients(mine, theirs, match):
    def plan(kind, size=16, **kw):
        return PolarHarmonicTransform(kind, size, pairs=[(1, 1), (2, 0)], method="engine",
                                      dtype=torch.float64, **kw)

    a, b = plan(**mine), plan(**theirs)
    assert a.index == b.index
    M = b.forward(RNG.random((b.size, b.size)))
    with pytest.raises(ValueError, match=match):
        a.adjoint(M)


def test_how_the_sums_are_computed_does_not_matter():
    img = RNG.random((16, 16))
    plan = _zernike(method="deng")
    A = _zernike(method="jacobi").forward(img)
    ref = plan.adjoint(plan.forward(img))
    # both are float64 evaluations of the same sums: the recurrences differ by a few
    # roundings per value
    np.testing.assert_allclose(plan.adjoint(A), ref, rtol=0, atol=1e-13 * np.abs(ref).max())
    A32 = DiskTransform("zernike", 16, 6, dtype=torch.float32).forward(img)
    out = plan.adjoint(A32)  # cast to the plan's dtype
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-5 * np.abs(ref).max())
    P = PolarHarmonicTransform("pcet", 16, 2, 2, method="gemm", dtype=torch.float64)
    Q = PolarHarmonicTransform("pcet", 16, 2, 2, method="engine", dtype=torch.float64)
    np.testing.assert_allclose(Q.adjoint(P.forward(img)), Q.adjoint(Q.forward(img)),
                               atol=1e-13)


def test_moments_data_must_fit_the_plan():
    plan = _zernike()
    with pytest.raises(ValueError, match="data must have shape \\(\\.\\.\\., 7, 4\\)"):
        DiskMoments(torch.zeros(3, 3, dtype=torch.complex128), plan, None)


def test_route_is_decided_when_the_plan_is_built(rng):
    """``plan.route`` names what runs (method/backend:kernel), is in ``repr(plan)``, is the
    one-call function's route, and does not change with the calls made."""
    from fastmoments.disk import routes

    plan = ZernikeTransform(64, 30, dtype="float64")
    route = plan.route
    assert (route.method, route.kernel) == ("deng", "compressed")
    assert route.backend in ("torch", "numba") and route.reason
    assert str(route) in repr(plan)
    img = rng.random((64, 64))
    first = plan.forward(img).values()
    A = fm.zernike_moments(img, 30, dtype="float64")
    assert A.plan.route == route and plan.route == route
    np.testing.assert_array_equal(A.values(), first)
    big = plan.route_for(routes.NUMBA_ANGULAR_WORK)
    assert big.backend == "numba" and plan.route_for(1).backend == "torch"
    small = ZernikeTransform(16, 4)
    assert small.route.kernel == "table"
    assert ZernikeTransform(64, 30, method="geometric").route.method == "geometric"
