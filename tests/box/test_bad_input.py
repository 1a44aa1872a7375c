"""Property-based bad-input suite for the box moments API.

Every call gets a mix of good and bad values for each parameter. The suite decides from its
own rules (written here, not taken from the code) whether the call is valid; a valid call must
return the right numbers, checked against an independent float64 direct sum (scipy's Jacobi
polynomials at the quadrature nodes); an invalid one must raise ValueError or TypeError
naming one of the parameters that are wrong (IndexError for indices). A request too large for
the memory budget may instead raise MemoryError saying how much it needs.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import eval_gegenbauer, eval_jacobi, gammaln

from fastmoments.box import (
    BoxMoments,
    JacobiTransform,
    gegenbauer_moments,
    jacobi_moments,
    legendre_moments,
)

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- value strategies
JUNK = st.sampled_from([None, True, False, "1", "0.3", [1], (1,), 2.5, float("nan"),
                        float("inf"), -float("inf"), b"1", 1j])
INTS = st.one_of(st.integers(-3, 5), st.sampled_from([2**62, np.int64(3), np.int32(2)]),
                 st.sampled_from([1.0, 3.0, 2.5]), JUNK)
SMALL_INTS = st.one_of(st.integers(-2, 3), st.sampled_from([np.int64(2), 2.0, 10**12]), JUNK)
REALS = st.one_of(st.floats(-1.5, 4.0), st.integers(-2, 3),
                  st.sampled_from([np.float32(0.5), np.float64(0.25), 1e6, 999.5, -1.0]), JUNK)
LAMS = st.one_of(st.floats(-1.0, 3.0), st.sampled_from([0.0, 0, 1, 1e6, 500.5, 501.0]), JUNK)
QUADS = st.one_of(st.sampled_from(["midpoint", "gauss"]),
                  st.sampled_from(["Gauss", "simpson", "", None, 1, True]))
TRUNCS = st.one_of(st.sampled_from(["total", "box"]), st.sampled_from(["Box", "tri", None, 0]))
NORMS = st.one_of(st.sampled_from(["jacobi", "gegenbauer"]), st.sampled_from(["legendre", None]))
DTYPES = st.sampled_from([torch.float64, np.float64, "float64", torch.float32, "float32",
                          None, torch.int32, torch.int64, torch.bool, torch.complex128,
                          np.int16, "int32", "half", 3, object])
BLOCKS = st.one_of(st.none(), st.integers(-2, 8), st.sampled_from([10**30, 2.0, True, "4"]))
PARITIES = st.sampled_from([None, True, False, 1, 0, "yes"])
BUDGETS = st.sampled_from([None, 2**30, 0.5, 0, -1, float("nan"), float("inf"), True, "1e9",
                           1000])


VALID = {
    "order": st.integers(0, 5), "alpha": st.floats(-0.95, 3.0), "beta": st.floats(-0.95, 3.0),
    "lam": st.floats(-0.45, 3.0).filter(lambda v: abs(v) > 1e-3), "k": st.integers(1, 3),
    "quadrature": st.sampled_from(["midpoint", "gauss"]),
    "truncation": st.sampled_from(["total", "box"]),
    "normalization": st.sampled_from(["jacobi", "gegenbauer"]),
    "dtype": st.sampled_from([torch.float64, np.float64, "float64", torch.float32, None]),
    "block": st.one_of(st.none(), st.integers(1, 8)), "parity": st.sampled_from([None, False]),
    "memory_budget": st.sampled_from([None, 2**30]),
}
MIXED = {"order": INTS, "alpha": REALS, "beta": REALS, "lam": LAMS, "k": SMALL_INTS,
         "quadrature": QUADS, "truncation": TRUNCS, "normalization": NORMS, "dtype": DTYPES,
         "block": BLOCKS, "parity": PARITIES, "memory_budget": BUDGETS}
@st.composite
def params(draw, names):
    """Valid values for ``names``, then up to two of them replaced by anything (often bad)."""
    out = {n: draw(VALID[n]) for n in names}
    for n in draw(st.lists(st.sampled_from(names), max_size=2, unique=True)):
        out[n] = draw(MIXED[n])
    return out


# ---------------------------------------------------------------- the rules of validity
def is_int(v, lo):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= lo


def is_real(v):
    return (isinstance(v, numbers.Real) and not isinstance(v, bool)
            and math.isfinite(float(v)))


def check_ab(bad, alpha, beta):
    ok_a = is_real(alpha) and alpha > -1
    ok_b = is_real(beta) and beta > -1
    if not ok_a:
        bad.append("alpha")
    if not ok_b:
        bad.append("beta")
    if ok_a and ok_b and alpha + beta > 1000:
        bad.append("alpha")


def check_common(bad, order, k, quadrature, truncation):
    if not is_int(order, 0):
        bad.append("order")
    if not is_int(k, 1):
        bad.append("k")
    if quadrature not in ("midpoint", "gauss") or not isinstance(quadrature, str):
        bad.append("quadrature")
    if truncation not in ("total", "box") or not isinstance(truncation, str):
        bad.append("truncation")


def outcome(call, bad, huge=False):
    """Run ``call``: a result when ``bad`` is empty, else an error naming a bad parameter."""
    try:
        res = call()
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        assert bad, f"valid call raised {type(exc).__name__}: {msg}"
        assert any(name in msg for name in bad), f"{msg!r} names none of {bad}"
        return None
    except MemoryError as exc:
        assert huge and "needs at least" in str(exc), str(exc)
        return None
    assert not bad, f"accepted invalid {bad}"
    return res


# ---------------------------------------------------------------- the float64 reference
def ref_rows(n, order, a, b, k, quadrature, normalization="jacobi"):
    """Analysis rows (order+1, n) and synthesis rows, by scipy at the quadrature nodes."""
    delta = 2.0 / n
    i = np.arange(n)[:, None]
    if quadrature == "midpoint":
        x = -1 + (i * k + np.arange(k)[None, :] + 0.5) * delta / k
        w = np.full(k, delta / k)
    else:
        t, g = np.polynomial.legendre.leggauss(k)
        x = -1 + (i + 0.5) * delta + t[None, :] * delta / 2
        w = g * delta / 2
    centres = -1 + (np.arange(n) + 0.5) * delta
    ana = np.empty((order + 1, n))
    syn = np.empty((order + 1, n))
    lam = a + 0.5
    for p in range(order + 1):
        if p == 0:     # (the general form is 0/0 when a + b = -1)
            log_rho = ((a + b + 1) * math.log(2) + gammaln(a + 1) + gammaln(b + 1)
                       - gammaln(a + b + 2))
        else:
            log_rho = ((a + b + 1) * math.log(2) - math.log(2 * p + a + b + 1)
                       + gammaln(p + a + 1) + gammaln(p + b + 1) - gammaln(p + a + b + 1)
                       - gammaln(p + 1))
        scale = 1.0
        if normalization == "gegenbauer":
            scale = eval_gegenbauer(p, lam, 1.0) / eval_jacobi(p, a, a, 1.0)
        vals = eval_jacobi(p, a, b, x) * (1 - x) ** a * (1 + x) ** b
        ana[p] = (vals * w).sum(1) / math.exp(log_rho) / scale
        syn[p] = scale * eval_jacobi(p, a, b, centres)
    return ana, syn


def ref_mask(order, ndim, truncation):
    idx = np.indices((order + 1,) * ndim)
    if truncation == "total":
        return idx.sum(0) <= order
    return np.ones((order + 1,) * ndim, dtype=bool)


def ref_moments(x, order, a, b, k, quadrature, truncation, ndim, normalization="jacobi"):
    rows = [ref_rows(n, order, a, b, k, quadrature, normalization)[0] for n in x.shape[-ndim:]]
    spec = "pi,qj,...ij->...pq" if ndim == 2 else "pi,qj,rk,...ijk->...pqr"
    return np.einsum(spec, *rows, x) * ref_mask(order, ndim, truncation)


def ref_inverse(c, shape, order, a, b, truncation, normalization="jacobi", upto=None):
    ndim = len(shape)
    syn = [ref_rows(n, order, a, b, 1, "midpoint", normalization)[1] for n in shape]
    m = order if upto is None else upto
    idx = np.indices((order + 1,) * ndim)
    keep = idx.sum(0) <= m if truncation == "total" else np.all(idx <= m, axis=0)
    spec = "pi,qj,...pq->...ij" if ndim == 2 else "pi,qj,rk,...pqr->...ijk"
    return np.einsum(spec, *syn, c * keep)


def close(got, ref, dtype=torch.float64):
    got = np.asarray(got, dtype=np.float64)
    scale = max(np.abs(ref).max(initial=0.0), 1.0)
    tol = 1e-11 if dtype == torch.float64 else 1e-4
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol * scale)


# ---------------------------------------------------------------- shapes of the input
@st.composite
def images(draw):
    ndim = draw(st.sampled_from([2, 3]))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    batch = draw(st.sampled_from([(), (2,), (0,), (1, 2)]))
    seed = draw(st.integers(0, 2**16))
    return np.random.default_rng(seed).random((*batch, *shape)), ndim


# ---------------------------------------------------------------- one-call functions
@SETTINGS
@given(data=images(), p=params(["order", "alpha", "beta", "k", "quadrature", "truncation"]),
       ndim_kind=st.sampled_from(["right", "right", "none", "wrong", "junk"]))
def test_jacobi_moments_any_input(data, p, ndim_kind):
    x, nd = data
    order, alpha, beta, k = p["order"], p["alpha"], p["beta"], p["k"]
    quadrature, truncation = p["quadrature"], p["truncation"]
    ndim = {"right": nd, "none": None, "wrong": 4, "junk": float(nd)}[ndim_kind]
    bad: list[str] = []
    if ndim is None and x.ndim != 2:
        bad.append("ndim")
    elif ndim is not None and not (is_int(ndim, 2) and ndim <= 3 and x.ndim >= ndim):
        bad.append("ndim")
    check_common(bad, order, k, quadrature, truncation)
    check_ab(bad, alpha, beta)
    huge = (is_int(order, 0) and order > 10) or (is_int(k, 1) and k > 10)
    J = outcome(lambda: jacobi_moments(x, order, alpha=alpha, beta=beta, ndim=ndim, k=k,
                                       quadrature=quadrature, truncation=truncation),
                bad, huge)
    if J is None:
        return
    ndim = 2 if ndim is None else ndim
    ref = ref_moments(x, order, float(alpha), float(beta), k, quadrature, truncation, ndim)
    close(J.numpy(), ref)
    assert J.batch_shape == x.shape[:-ndim]
    rec = J.reconstruct()
    close(rec, ref_inverse(J.numpy(), x.shape[-ndim:], order, float(alpha), float(beta),
                           truncation))


@SETTINGS
@given(data=images(), p=params(["order", "lam", "k", "quadrature", "truncation"]))
def test_gegenbauer_moments_any_input(data, p):
    x, nd = data
    order, lam, k = p["order"], p["lam"], p["k"]
    quadrature, truncation = p["quadrature"], p["truncation"]
    bad: list[str] = []
    check_common(bad, order, k, quadrature, truncation)
    if not (is_real(lam) and lam > -0.5 and lam != 0 and lam <= 500.5):
        bad.append("lam")
    huge = (is_int(order, 0) and order > 10) or (is_int(k, 1) and k > 10)
    J = outcome(lambda: gegenbauer_moments(x, order, lam=lam, ndim=nd, k=k,
                                           quadrature=quadrature, truncation=truncation),
                bad, huge)
    if J is None:
        return
    a = float(lam) - 0.5
    ref = ref_moments(x, order, a, a, k, quadrature, truncation, nd, "gegenbauer")
    close(J.numpy(), ref)


@SETTINGS
@given(data=images(), p=params(["order", "k", "quadrature", "truncation"]))
def test_legendre_moments_any_input(data, p):
    x, nd = data
    order, k, quadrature, truncation = p["order"], p["k"], p["quadrature"], p["truncation"]
    bad: list[str] = []
    check_common(bad, order, k, quadrature, truncation)
    huge = (is_int(order, 0) and order > 10) or (is_int(k, 1) and k > 10)
    J = outcome(lambda: legendre_moments(x, order, ndim=nd, k=k, quadrature=quadrature,
                                         truncation=truncation), bad, huge)
    if J is not None:
        close(J.numpy(), ref_moments(x, order, 0.0, 0.0, k, quadrature, truncation, nd))


@pytest.mark.parametrize("shape", [(4, 0), (0, 4), (0, 0), (2, 0, 3)])
def test_zero_size_spatial_axes_are_errors(shape):
    with pytest.raises(ValueError, match="x"):
        legendre_moments(np.ones(shape), 2, ndim=len(shape))


@pytest.mark.parametrize("x", [np.ones(5), np.float64(3.0), "abc", None])
def test_wrong_input_kinds(x):
    with pytest.raises((ValueError, TypeError), match="x"):
        legendre_moments(x, 2)


# ---------------------------------------------------------------- the plan
SHAPES = st.one_of(
    st.tuples(st.integers(1, 5), st.integers(1, 5)),
    st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)),
    st.sampled_from([(4,), (2, 2, 2, 2), (3.0, 4), (True, 3), "44", None, (4, 0), (-1, 3),
                     [3, 4], (np.int64(3), 4), (2.5, 3)]))


def plan_rules(shape, order, alpha, beta, k, quadrature, truncation, normalization, dtype,
               block, parity, budget):
    bad: list[str] = []
    if not (isinstance(shape, (tuple, list)) and len(shape) in (2, 3)
            and all(is_int(s, 1) for s in shape)):
        bad.append("shape")
    check_common(bad, order, k, quadrature, truncation)
    check_ab(bad, alpha, beta)
    if normalization not in ("jacobi", "gegenbauer") or not isinstance(normalization, str):
        bad.append("normalization")
    elif (normalization == "gegenbauer" and "alpha" not in bad and "beta" not in bad
          and (alpha != beta or alpha == -0.5)):
        bad += ["alpha", "lam"]
    ok_dtypes = (torch.float64, np.float64, "float64", torch.float32, "float32", None)
    if not any(dtype is d for d in ok_dtypes) and dtype not in ("float64", "float32"):
        bad.append("dtype")
    if block is not None and not is_int(block, 1):
        bad.append("block")
    if parity not in (None, True, False) or not isinstance(parity, (bool, type(None))):
        bad.append("parity")
    elif parity and "alpha" not in bad and "beta" not in bad and alpha != beta:
        bad.append("parity")
    if budget is not None and not (is_real(budget) and budget > 0):
        bad.append("memory_budget")
    return bad


@SETTINGS
@given(shape=st.one_of(SHAPES.filter(lambda v: isinstance(v, tuple) and len(v) in (2, 3)
                                     and all(is_int(n, 1) for n in v)), SHAPES),
       p=params(sorted(MIXED.keys() - {"lam"})), seed=st.integers(0, 2**16))
def test_plan_any_parameters(shape, p, seed):
    order, alpha, beta, k = p["order"], p["alpha"], p["beta"], p["k"]
    quadrature, truncation, normalization = p["quadrature"], p["truncation"], p["normalization"]
    dtype, block, parity, budget = p["dtype"], p["block"], p["parity"], p["memory_budget"]
    if normalization == "gegenbauer" and "alpha" in p and is_real(alpha) and is_real(beta) \
            and seed % 2:
        beta = alpha      # often a valid Gegenbauer plan, not only the conflict
    bad = plan_rules(shape, order, alpha, beta, k, quadrature, truncation, normalization,
                     dtype, block, parity, budget)
    huge = ((is_int(order, 0) and order > 10) or (is_int(k, 1) and k > 10)
            or budget in (1000, 0.5))
    plan = outcome(lambda: JacobiTransform(
        shape, order, alpha=alpha, beta=beta, k=k, quadrature=quadrature,
        truncation=truncation, normalization=normalization, dtype=dtype, block=block,
        parity=parity, memory_budget=budget), bad, huge)
    if plan is None:
        return
    x = np.random.default_rng(seed).random((2, *shape))
    try:
        J = plan.forward(x)
    except MemoryError as exc:
        assert huge and "needs at least" in str(exc)
        return
    a, b = float(alpha), float(beta)
    ref = ref_moments(x, order, a, b, k, quadrature, truncation, len(shape), normalization)
    close(J.numpy(), ref, plan.dtype)
    close(plan.inverse(J), ref_inverse(J.numpy().astype(np.float64), tuple(shape), order, a,
                                       b, truncation, normalization), plan.dtype)
    # adjoint: <forward(x), y> = <x, adjoint(y)>
    y = np.random.default_rng(seed + 1).standard_normal(J.numpy().shape)
    lhs = float((J.numpy().astype(np.float64) * y).sum())
    rhs = float((x * np.asarray(plan.adjoint(y), dtype=np.float64)).sum())
    tol = 1e-10 if plan.dtype == torch.float64 else 1e-3
    assert abs(lhs - rhs) <= tol * (np.abs(ref).sum() * np.abs(y).max() + 1)


# ---------------------------------------------------------------- inverse, slices, indexing
_PLAN3 = JacobiTransform((4, 5, 3), 4, alpha=0.3, beta=0.6, k=2, dtype=torch.float64)
_X3 = np.random.default_rng(7).random((2, 4, 5, 3))
_J3 = _PLAN3.forward(_X3)
_REF3 = ref_moments(_X3, 4, 0.3, 0.6, 2, "midpoint", "total", 3)

REGION_ENTRIES = st.one_of(st.none(), st.integers(-6, 6),
                           st.tuples(st.integers(-1, 6), st.integers(-1, 6)),
                           st.builds(slice, st.integers(0, 5), st.integers(0, 6)),
                           st.sampled_from([slice(None), 1.5, "a", True, (1.0, 3)]))


def region_rule(region, shape):
    """Indices per axis for a valid region, or None if invalid."""
    if region is None:
        return [range(n) for n in shape], []
    if not isinstance(region, (tuple, list)) or len(region) != len(shape):
        return None
    out, drop = [], []
    for ax, (sel, n) in enumerate(zip(region, shape, strict=True)):
        if sel is None:
            out.append(range(n))
        elif isinstance(sel, slice):
            out.append(range(n)[sel])
        elif isinstance(sel, tuple):
            if not all(is_int(v, -10**9) for v in sel):
                return None
            out.append(range(n)[slice(*sel)])
        elif is_int(sel, -n) and sel < n:
            out.append(range(n)[sel:sel + 1 if sel != -1 else None])
            drop.append(ax)
        else:
            return None
        if len(out[-1]) == 0:
            return None
    return out, drop


@SETTINGS
@given(order=st.one_of(st.none(), INTS),
       region=st.one_of(st.none(), st.lists(REGION_ENTRIES, min_size=2, max_size=4).map(tuple)))
def test_inverse_order_and_region(order, region):
    bad: list[str] = []
    if order is not None and not (is_int(order, 0) and order <= 4):
        bad.append("order")
    rule = region_rule(region, _PLAN3.shape)
    if rule is None:
        bad.append("region")
    got = outcome(lambda: _J3.reconstruct(order=order, region=region), bad)
    if got is None:
        return
    full = ref_inverse(_J3.numpy(), _PLAN3.shape, 4, 0.3, 0.6, "total", upto=order)
    idx, drop = rule
    ref = full[np.ix_(range(2), *idx)]
    for ax in sorted(drop, reverse=True):
        ref = ref.squeeze(1 + ax)
    close(got, ref)


@SETTINGS
@given(plane=st.one_of(st.sampled_from(["xy", "xz", "yz"]), st.sampled_from(["zz", None, 0])),
       index=st.one_of(st.integers(-7, 7), JUNK), order=st.one_of(st.none(), INTS))
def test_slice_any_input(plane, index, order):
    bad: list[str] = []
    axis = {"xy": 0, "xz": 1, "yz": 2}.get(plane) if isinstance(plane, str) else None
    if axis is None:
        bad.append("plane")
    elif not (is_int(index, -_PLAN3.shape[axis]) and index < _PLAN3.shape[axis]):
        bad.append("index")
    if order is not None and not (is_int(order, 0) and order <= 4):
        bad.append("order")
    got = outcome(lambda: _J3.slice(plane, index, order=order), bad)
    if got is None:
        return
    full = ref_inverse(_J3.numpy(), _PLAN3.shape, 4, 0.3, 0.6, "total", upto=order)
    close(got, np.take(full, index, axis=1 + axis))


KEYS = st.one_of(st.integers(-6, 6), st.builds(slice, st.one_of(st.none(), st.integers(-2, 6)),
                                               st.one_of(st.none(), st.integers(-2, 6))),
                 st.sampled_from([True, 1.0, "1", None, Ellipsis, np.int64(2)]))


@SETTINGS
@given(key=st.lists(KEYS, min_size=1, max_size=4).map(tuple))
def test_indexing_any_key(key):
    valid = len(key) == 3
    ints = []
    for k in key:
        if isinstance(k, slice):
            valid &= all(v is None or v >= 0 for v in (k.start, k.stop))
        elif is_int(k, 0) and k <= 4:
            ints.append(int(k))
        else:
            valid = False
    if valid and len(ints) == 3 and sum(ints) > 4:
        valid = False
    try:
        got = _J3[key]
    except (IndexError, TypeError) as exc:
        assert not valid, f"valid key {key!r} raised {exc}"
        assert "ind" in str(exc)
        return
    assert valid, f"accepted {key!r}"
    np.testing.assert_array_equal(got, _J3.numpy()[(slice(None), *key)])
    if len(ints) == 3:
        assert abs(got - _REF3[(slice(None), *key)]).max() <= 1e-11 * np.abs(_REF3).max()


# ---------------------------------------------------------------- moments of the wrong kind
@SETTINGS
@given(field=st.sampled_from(["alpha", "beta", "shape", "order", "truncation", "k",
                              "quadrature", "dtype"]))
def test_moments_with_another_plan(field):
    kw = {"alpha": 0.3, "beta": 0.6, "k": 2, "dtype": torch.float64}
    shape, order = (4, 5, 3), 4
    change = {"alpha": {"alpha": 0.4}, "beta": {"beta": 0.1}, "truncation": {"truncation": "box"},
              "k": {"k": 3}, "quadrature": {"quadrature": "gauss"},
              "dtype": {"dtype": torch.float32}}.get(field, {})
    if field == "shape":
        shape = (4, 5, 4)
    if field == "order":
        order = 5
    other = JacobiTransform(shape, order, **{**kw, **change})
    same_basis = field in ("k", "quadrature", "dtype")
    if same_basis:
        close(other.inverse(_J3), ref_inverse(_J3.numpy(), shape, order, 0.3, 0.6, "total"),
              other.dtype)
    else:
        with pytest.raises(ValueError, match=field):
            other.inverse(_J3)
    assert isinstance(_J3, BoxMoments)
