"""Checks of the box moments that each guard a fixed bug: every test failed before its fix."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments.box import JacobiTransform

# ---------------------------------------------------------------- 1. moments know their basis
_BASE = {"alpha": 0.3, "beta": 0.7, "k": 2, "quadrature": "midpoint", "truncation": "total",
         "normalization": "jacobi", "dtype": torch.float64}


@pytest.mark.parametrize(("field", "value"), [
    ("alpha", 0.0), ("beta", 0.3), ("truncation", "box"), ("shape", (10, 12)), ("order", 7),
])
def test_inverse_refuses_moments_of_another_basis(field, value, rng):
    """Before: shape and order matching was enough, and alpha=0 gave a result 53% off."""
    kw = dict(_BASE)
    shape, order = (12, 10), 6
    if field == "shape":
        shape = value
    elif field == "order":
        order = value
    else:
        kw[field] = value
    src = JacobiTransform((12, 10), 6, **_BASE)
    other = JacobiTransform(shape, order, **kw)
    J = src.forward(rng.random((12, 10)))
    with pytest.raises(ValueError, match=f"another basis: {field}="):
        other.inverse(J)
    with pytest.raises(ValueError, match=f"another basis: {field}="):
        other.adjoint(J)


def test_gegenbauer_and_jacobi_normalizations_are_different_bases(rng):
    a = JacobiTransform((8, 8), 5, alpha=0.5, beta=0.5, dtype=torch.float64)
    g = JacobiTransform((8, 8), 5, alpha=0.5, beta=0.5, normalization="gegenbauer",
                        dtype=torch.float64)
    with pytest.raises(ValueError, match="normalization='jacobi'"):
        g.inverse(a.forward(rng.random((8, 8))))


@pytest.mark.parametrize(("field", "value"), [
    ("k", 5), ("quadrature", "gauss"), ("dtype", torch.float32), ("block", 2), ("parity", None),
])
def test_inverse_accepts_moments_of_the_same_basis(field, value, rng):
    """k, quadrature, dtype, block and parity change how, not what: same reconstruction."""
    base = dict(_BASE, alpha=0.4, beta=0.4, parity=True)
    src = JacobiTransform((12, 10), 6, **base)
    other = JacobiTransform((12, 10), 6, **dict(base, **{field: value}))
    J = src.forward(rng.random((12, 10)))
    ref = src.inverse(J)
    got = other.inverse(J)
    # float32 tables: relative rounding of a sum of 49 terms of size <= max|J| max|S|
    tol = 1e-5 if other.dtype == torch.float32 else 1e-13
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol * np.abs(ref).max())
    assert other.basis == src.basis


def test_inverse_refuses_disk_moments():
    import fastmoments as fm

    A = fm.zernike_moments(np.ones((16, 16)), 4)
    plan = JacobiTransform((5, 5), 4)
    with pytest.raises(TypeError, match="coeffs must be box moments"):
        plan.inverse(A)


# ---------------------------------------------------------------- 2. no silent coercion
_IMG = np.ones((6, 6))


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"shape": (16.7, 16)}, TypeError, r"shape\[0\] must be an integer"),
    ({"shape": (16.0, 16)}, TypeError, r"shape\[0\] must be an integer"),
    ({"shape": (True, 16)}, TypeError, r"shape\[0\] must be an integer"),
    ({"shape": "16"}, TypeError, "shape must be a sequence of integers"),
    ({"shape": (16, 0)}, ValueError, r"shape\[1\] must be >= 1"),
    ({"shape": (4, 4, 4, 4)}, ValueError, "shape must have 2 or 3 entries"),
    ({"alpha": True}, TypeError, "alpha must be a real number"),
    ({"alpha": "0.3"}, TypeError, "alpha must be a real number"),
    ({"beta": False}, TypeError, "beta must be a real number"),
    ({"beta": "1"}, TypeError, "beta must be a real number"),
    ({"alpha": 1e6}, ValueError, r"alpha \+ beta must be <= 1000"),
    ({"beta": 1e6}, ValueError, r"alpha \+ beta must be <= 1000"),
    ({"alpha": 600.0, "beta": 600.0}, ValueError, r"alpha \+ beta must be <= 1000"),
    ({"order": True}, TypeError, "order must be an integer"),
    ({"order": 3.0}, TypeError, "order must be an integer"),
    ({"k": True}, TypeError, "k must be an integer"),
    ({"k": 2.0}, TypeError, "k must be an integer"),
    ({"k": "2"}, TypeError, "k must be an integer"),
    ({"block": True}, TypeError, "block must be an integer"),
    ({"block": 4.0}, TypeError, "block must be an integer"),
    ({"block": "4"}, TypeError, "block must be an integer"),
    ({"block": -2}, ValueError, "block must be >= 1"),
    ({"dtype": torch.int32}, TypeError, "dtype must be float32 or float64"),
    ({"dtype": np.int64}, TypeError, "dtype must be float32 or float64"),
    ({"dtype": torch.bool}, TypeError, "dtype must be float32 or float64"),
    ({"dtype": torch.complex64}, TypeError, "dtype must be float32 or float64"),
    ({"dtype": 3}, TypeError, "dtype must be float32 or float64"),
    ({"memory_budget": float("nan")}, ValueError, "memory_budget must be a finite number"),
    ({"memory_budget": True}, TypeError, "memory_budget must be"),
    ({"memory_budget": -5}, ValueError, "memory_budget must be a finite number > 0"),
])
def test_plan_refuses_coercion(kwargs, exc, match):
    args = {"shape": (4, 4), "order": 3, **kwargs}
    with pytest.raises(exc, match=match):
        JacobiTransform(args.pop("shape"), args.pop("order"), **args)


@pytest.mark.parametrize("dtype", [torch.float64, np.float64, "float64", torch.float32, None])
def test_plan_float_dtypes(dtype):
    plan = JacobiTransform((4, 4), 2, dtype=dtype)
    assert plan.dtype == (torch.float32 if dtype in (torch.float32, None) else torch.float64)


def test_huge_block_is_no_blocking_and_agrees(rng):
    x = rng.random((5, 6, 7))
    from .test_moments import rounding_bound

    plan = JacobiTransform((5, 6, 7), 4, dtype=torch.float64, block=10**30)
    assert plan.block == 6
    a = plan.forward(x).numpy()
    b = JacobiTransform((5, 6, 7), 4, dtype=torch.float64, block=2).forward(x).numpy()
    assert np.all(np.abs(a - b) <= rounding_bound(plan, x))


def test_large_alpha_near_the_limit_is_right():
    """alpha + beta = 1000 is accepted and finite; the moment J_00 of a constant image is
    that constant (sum of the analysis row 0 = integral of w P_0 / rho_0 = 1 up to the
    per-pixel rule)."""
    from fastmoments.box import jacobi_moments

    J = jacobi_moments(np.ones((64, 64)), 3, alpha=1000.0, beta=0.0, k=64, quadrature="gauss")
    assert np.isfinite(J.numpy()).all()
    assert abs(float(J[0, 0]) - 1.0) < 1e-6


def test_tables_that_overflow_the_dtype_are_refused():
    with pytest.raises(ValueError, match=r"alpha=500\.0, beta=500\.0 at order 300.*float32"):
        JacobiTransform((64, 64), 300, alpha=500.0, beta=500.0)


@pytest.mark.parametrize("fn", ["jacobi", "legendre", "gegenbauer"])
@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"order": True}, TypeError, "order must be an integer"),
    ({"order": 3.0}, TypeError, "order must be an integer"),
    ({"k": True}, TypeError, "k must be an integer"),
    ({"k": 1.0}, TypeError, "k must be an integer"),
    ({"ndim": True}, TypeError, "ndim must be an integer"),
    ({"ndim": 2.0}, TypeError, "ndim must be an integer"),
    ({"quadrature": None}, ValueError, "quadrature must be one of"),
    ({"truncation": 1}, ValueError, "truncation must be one of"),
])
def test_one_call_validates_before_the_cache(fn, kwargs, exc, match):
    """A cached plan with k=1 / order=3 must not make k=True / order=3.0 acceptable."""
    from fastmoments.box import api

    call = {"jacobi": lambda **kw: api.jacobi_moments(_IMG, kw.pop("order", 3), alpha=0.0,
                                                       beta=0.0, **kw),
            "legendre": lambda **kw: api.legendre_moments(_IMG, kw.pop("order", 3), **kw),
            "gegenbauer": lambda **kw: api.gegenbauer_moments(_IMG, kw.pop("order", 3),
                                                               lam=0.5, **kw)}[fn]
    call(k=1, ndim=2)       # cache a plan with k = 1, order = 3
    with pytest.raises(exc, match=match):
        call(**kwargs)


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"alpha": True, "beta": 0.0}, TypeError, "alpha must be a real number"),
    ({"alpha": "0.3", "beta": 0.0}, TypeError, "alpha must be a real number"),
    ({"alpha": 0.0, "beta": "0"}, TypeError, "beta must be a real number"),
    ({"alpha": 1e6, "beta": 0.0}, ValueError, r"alpha \+ beta must be <= 1000"),
    ({"alpha": 0.0, "beta": 1e6}, ValueError, r"alpha \+ beta must be <= 1000"),
])
def test_jacobi_moments_parameters(kwargs, exc, match):
    from fastmoments.box import jacobi_moments

    jacobi_moments(_IMG, 3, alpha=1.0, beta=0.0)      # a cached plan with alpha = 1.0
    with pytest.raises(exc, match=match):
        jacobi_moments(_IMG, 3, **kwargs)


@pytest.mark.parametrize(("lam", "exc", "match"), [
    (True, TypeError, "lam must be a real number"), ("1", TypeError, "lam must be a real"),
    (1e6, ValueError, r"lam must be <= 500\.5"), (None, TypeError, "lam must be a real"),
])
def test_gegenbauer_lam(lam, exc, match):
    from fastmoments.box import gegenbauer_moments

    with pytest.raises(exc, match=match):
        gegenbauer_moments(_IMG, 3, lam=lam)


# ---------------------------------------------------------------- 3. indexing
def _moments_2d(batch=(), order=5):
    from fastmoments.box import jacobi_moments

    x = np.random.default_rng(3).random((*batch, 9, 8))
    return jacobi_moments(x, order, alpha=0.3, beta=0.7, ndim=2)


@pytest.mark.parametrize("key", [(-1, 0), (0, -1), (6, 0), (0, 6), (2 ** 40, 0)])
def test_negative_or_too_large_index_is_an_error(key):
    """Before: J[-1, 0] returned J[5, 0]."""
    J = _moments_2d()
    with pytest.raises(IndexError, match=r"must be a degree in 0\.\.5"):
        J[key]


def test_wrong_number_of_indices_is_an_error():
    """Before: JB[0, 1, 2] on a batch of 2-D moments silently indexed the batch."""
    JB = _moments_2d(batch=(3,))
    with pytest.raises(IndexError, match="2-D moments take 2 indices"):
        JB[0, 1, 2]
    with pytest.raises(IndexError, match="2-D moments take 2 indices"):
        JB[1]
    J3 = JacobiTransform((3, 4, 5), 2).forward(np.ones((3, 4, 5)))
    with pytest.raises(IndexError, match="3-D moments take 3 indices"):
        J3[0, 0]


def test_index_returns_the_coefficient_for_every_batch_element():
    JB = _moments_2d(batch=(3, 2))
    data = JB.numpy()
    np.testing.assert_array_equal(JB[2, 1], data[..., 2, 1])   # a copy of the same numbers
    assert JB[2, 1].shape == (3, 2)
    np.testing.assert_array_equal(JB[1:3, :2], data[..., 1:3, :2])


@pytest.mark.parametrize(("key", "exc"), [
    ((True, 0), TypeError), ((1.0, 0), TypeError), (("1", 0), TypeError),
    ((slice(-2, None), 0), IndexError), ((slice(0, 3, -1), 0), IndexError),
    ((slice(0.5, 3), 0), TypeError), ((None, 0), TypeError), ((Ellipsis, 0), TypeError),
    ((3, 3), IndexError),            # outside the total-degree set of order 5
])
def test_bad_index_kinds(key, exc):
    J = _moments_2d()
    with pytest.raises(exc, match=r"index|outside the total-degree set"):
        J[key]


def test_box_truncation_allows_every_index_up_to_the_order():
    from fastmoments.box import jacobi_moments

    J = jacobi_moments(np.ones((6, 6)), 3, alpha=0.0, beta=0.0, truncation="box")
    assert np.isfinite(J[3, 3])


# ---------------------------------------------------------------- 4. memory, for a batch of one
@pytest.mark.parametrize("batch", [(), (1,), (2,)])
def test_memory_is_checked_for_every_batch_size(batch):
    """Before: a batch of one skipped the check and went straight to the allocator."""
    plan = JacobiTransform((24, 24, 24), 40, memory_budget=300_000)     # tables: ~0.2 MB
    assert plan.table_bytes() < 300_000
    x = np.ones((*batch, 24, 24, 24))
    with pytest.raises(MemoryError, match=r"needs at least .* budget is 292\.97 KiB"):
        plan.forward(x)
    with pytest.raises(MemoryError, match="needs at least"):
        plan.inverse(np.ones((*batch, 41, 41, 41)))
    with pytest.raises(MemoryError, match="needs at least"):
        plan.adjoint(np.ones((*batch, 41, 41, 41)))


def test_one_call_checks_memory_for_one_volume(monkeypatch):
    """The issue's case scaled down: one volume, budget from the environment."""
    from fastmoments.box import api

    monkeypatch.setenv("FASTMOMENTS_MEMORY_BUDGET", "400000")
    with pytest.raises(MemoryError, match="needs at least"):
        api.jacobi_moments(np.ones((24, 24, 24)), 40, alpha=0.3, beta=0.2, ndim=3)


def test_plan_checks_its_tables_before_building_them():
    with pytest.raises(MemoryError, match=r"JacobiTransform\(shape=\(64, 64\), order=500, "
                                          r"k=3\) needs at least .* for its tables"):
        JacobiTransform((64, 64), 500, k=3, memory_budget=100_000)
    with pytest.raises(MemoryError, match="for its tables"):
        JacobiTransform((8, 8), 10**9, memory_budget=2**30)


def test_chunked_batches_equal_one_shot(rng):
    x = rng.random((5, 10, 10))
    small = JacobiTransform((10, 10), 6, dtype=torch.float64, memory_budget=12_000)
    big = JacobiTransform((10, 10), 6, dtype=torch.float64)
    assert small._chunk(5) < 5
    from .test_moments import rounding_bound

    J = small.forward(x)
    assert np.all(np.abs(J.numpy() - big.forward(x).numpy()) <= rounding_bound(big, x))
    np.testing.assert_allclose(small.inverse(J), big.inverse(J), rtol=0, atol=1e-13)
