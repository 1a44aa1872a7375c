"""The geometric-moments method (thesis Eq. 3.1-3.9): exact and float64 arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments.data import sample_image
from fastmoments.disk import PseudoZernikeTransform, ZernikeTransform
from fastmoments.disk.geometric import GeometricEngine, geometric_moments, make_engine
from fastmoments.disk.radial import radial_steps

from ..reference_disk import moments_direct, sum_bound

PLANS = {"zernike": ZernikeTransform, "pseudo-zernike": PseudoZernikeTransform}
RNG = np.random.default_rng(17)
IMG16 = RNG.integers(0, 256, (16, 16)).astype(np.uint8)


def _pairs(plan):
    return [(n, m) for m, col in zip(plan.index.ms, plan.index.ns, strict=True) for n in col]


def _values(moments, plan):
    data = moments.data.numpy()
    return np.array([data[c, j] for c, col in enumerate(plan.index.ns) for j in range(len(col))])


@pytest.mark.parametrize("family", list(PLANS))
@pytest.mark.parametrize("sampling", [{}, {"k": 2}, {"k": 2, "quadrature": "gauss"},
                                      {"rule": "centre"}])
def test_exact_equals_definition(family, sampling):
    order = 8
    plan = PLANS[family](16, order, dtype="float64", **sampling)
    got = _values(geometric_moments(plan, IMG16, exact=True), plan)
    k = sampling.get("k", 1)
    ref = moments_direct(family, IMG16.astype(np.float64), _pairs(plan), k,
                         sampling.get("quadrature", "midpoint"), sampling.get("rule",
                                                                              "inscribed"))
    # the exact sum is rounded once; the reference sums in float64 in its own order
    tol = sum_bound(IMG16.astype(np.float64)[None], (order + 1) / np.pi, k)[0]
    assert np.abs(got - ref).max() <= tol


@pytest.mark.parametrize("family", list(PLANS))
def test_float64_low_order_equals_definition(family):
    order = 6
    plan = PLANS[family](16, order, dtype="float64")
    got = _values(geometric_moments(plan, IMG16), plan)
    ref = moments_direct(family, IMG16.astype(np.float64), _pairs(plan))
    # cancellation in sum_k B_nmk P_km: sum |B| <= 3^(2T+2) (pseudo) times the bound of one
    # sum; measured 7e-14 relative at T = 6 (Zernike, 64 x 64)
    assert np.abs(got - ref).max() <= 1e-9 * np.abs(ref).max()


def test_exact_matches_deng_64():
    img = sample_image("camera", 64)
    plan = ZernikeTransform(64, 23, dtype="float64")
    exact = geometric_moments(plan, img, exact=True).data.numpy()
    deng = plan.forward(img).data.numpy()
    # measured 1.1e-15 relative to the largest moment
    assert np.abs(exact - deng).max() <= 1e-12 * np.abs(deng).max()


def test_float64_error_grows_with_order():
    img = sample_image("camera", 64)
    errs = {}
    for order in (6, 23, 40):
        plan = ZernikeTransform(64, order, dtype="float64")
        exact = geometric_moments(plan, img, exact=True).data.numpy()
        flt = geometric_moments(plan, img).data.numpy()
        errs[order] = np.abs(flt - exact).max() / np.abs(exact).max()
    # measured (CPU, float64): 7e-14 at T = 6, 9e-8 at T = 23, 8e-2 at T = 40 (relative to
    # the largest moment): the B_nmk grow like 2^n and the sum cancels. The thesis's
    # "totally broken" image at T = 23 is not reproduced in float64 with coordinates in
    # [-1, 1]; the loose bounds below follow from the cancellation alone.
    assert errs[6] < 1e-10
    assert errs[23] > 100 * errs[6]
    assert errs[40] > 1e-3


def test_pseudo_float64_error_grows_with_order():
    img = sample_image("camera", 32)
    errs = []
    for order in (4, 20):
        plan = PseudoZernikeTransform(32, order, dtype="float64")
        exact = geometric_moments(plan, img, exact=True).data.numpy()
        flt = geometric_moments(plan, img).data.numpy()
        errs.append(np.abs(flt - exact).max() / np.abs(exact).max())
    # measured: 4e-13 at T = 4 and 0.11 at T = 20 on 32 x 32 (the pseudo-Zernike B_nmk grow
    # like 4^n, faster than the Zernike ones)
    assert errs[1] > 1e3 * errs[0]


@pytest.mark.parametrize("family", list(PLANS))
def test_method_names(family):
    with pytest.raises(ValueError, match="method"):
        PLANS[family](16, 4, method="geometrical")
    plan = PLANS[family](16, 4, method="geometric")
    assert plan.method == "geometric"
    with pytest.raises(ValueError, match="method"):
        list(radial_steps(family, "geometric", torch.ones(3, dtype=torch.float64), [0], [[0]]))
    with pytest.raises(ValueError, match="method"):
        GeometricEngine(plan.sampling, plan.family, plan.index, "deng", plan.dtype,
                        plan.device)
    with pytest.raises(TypeError, match="exact"):
        geometric_moments(plan, IMG16, exact=1)


def test_make_engine_and_input_untouched():
    plan = ZernikeTransform(16, 5, method="geometric", dtype="float64")
    eng = make_engine(plan.sampling, plan.family, plan.index, "geometric-exact", plan.dtype,
                      plan.device)
    img = IMG16.astype(np.float64)
    before = img.copy()
    coef = eng.forward(torch.as_tensor(img).reshape(1, -1))
    np.testing.assert_array_equal(img, before)
    ref = ZernikeTransform(16, 5, dtype="float64").forward(img).data.numpy()
    assert np.abs(coef[0].numpy() - ref).max() <= 1e-12 * np.abs(ref).max()
    assert type(make_engine(plan.sampling, plan.family, plan.index, "deng", plan.dtype,
                            plan.device)).__name__ == "DiskEngine"
    with pytest.raises(ValueError, match="image"):
        geometric_moments(plan, np.full((16, 16), np.nan))


@pytest.mark.parametrize("family", list(PLANS))
def test_plan_hook(family):
    """What DiskTransform does once it builds its engine with make_engine: forward gives the
    geometric moments, reconstruction and the adjoint run through the default recurrence."""
    img = IMG16.astype(np.float64)
    plan = PLANS[family](16, 6, method="geometric-exact", dtype="float64")
    plan.engine = make_engine(plan.sampling, plan.family, plan.index, plan.method, plan.dtype,
                              plan.device)
    ref_plan = PLANS[family](16, 6, dtype="float64")
    A, ref = plan.forward(img), ref_plan.forward(img)
    scale = np.abs(ref.data.numpy()).max()
    assert np.abs(A.data.numpy() - ref.data.numpy()).max() <= 1e-12 * scale
    rec, rec_ref = A.reconstruct(), ref.reconstruct()
    assert np.abs(rec - rec_ref).max() <= 1e-10 * np.abs(rec_ref).max()
    adj = plan.adjoint(ref)
    assert np.abs(adj - ref_plan.adjoint(ref)).max() <= 1e-12 * np.abs(adj).max()
