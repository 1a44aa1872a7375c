"""Property-based bad-input suite for the disk API: every call is either a correct
result or a ValueError/TypeError that names the parameter (a MemoryError saying what is
needed for huge requests, an IndexError naming the index for ``A[n, m]``).

Each test varies one argument over good, odd and bad values (negative, huge, float, bool,
string, None, containers, NumPy integers) with the others fixed, decides from the documented
rules whether the value is valid, and then checks the outcome: a valid value must give the
result of the same call with the canonical value (itself checked against the direct float64
definition here or in the other disk tests), an invalid one must be refused by name.
"""

from __future__ import annotations

import math
import numbers
import re
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastmoments as fm
from fastmoments.disk import (
    PolarHarmonicTransform,
    PseudoZernikeTransform,
    ZernikeTransform,
    get_family,
)
from fastmoments.recognition import moment_pairs

from ..reference_disk import moments_direct, pht_moments_direct, sum_bound

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
IMG = np.random.default_rng(11).random((8, 8))
BATCH = np.random.default_rng(12).random((2, 8, 8))
HUGE = (10**9, 10**12)

# ----------------------------------------------------------------------------- values
ints = st.one_of(st.integers(-3, 8), st.sampled_from(HUGE),
                 st.builds(np.int64, st.integers(-2, 8)))
junk = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                 st.text(max_size=2), st.none(), st.just([2]), st.just((2,)),
                 st.just(2 + 0j), st.just(np.float64(2.0)), st.just(np.bool_(True)))
int_like = st.one_of(ints, junk)
options = st.one_of(st.sampled_from(["midpoint", "gauss", "inscribed", "centre", "deng",
                                     "jacobi", "direct", "auto", "engine", "gemm", "nufft",
                                     "kintner", "q-recursive", "Gauss", ""]),
                    st.text(max_size=4), st.none(), st.integers(-1, 2), st.just(["gauss"]))
int_lists = st.one_of(st.lists(int_like, max_size=3), st.text(max_size=2), int_like,
                      st.just(np.array([0, 2])), st.just(np.array([[1]])))
pair_lists = st.one_of(st.lists(st.tuples(int_like, int_like), max_size=3),
                       st.lists(st.lists(st.integers(-2, 6), max_size=3), max_size=3),
                       st.lists(st.tuples(st.integers(-2, 6), st.integers(-6, 6)),
                                min_size=1, max_size=4),
                       int_like)


def is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _pair_ok(p, fam) -> bool:
    """A well-formed, valid (n, m) of the family."""
    return (isinstance(p, (tuple, list)) and len(p) == 2 and is_int(p[0]) and is_int(p[1])
            and fam.is_valid(int(p[0]), int(p[1])))


def outcome(call, names: tuple[str, ...], valid: bool, huge: bool = False):
    """Run ``call``; a valid value must succeed (or, when ``huge``, may fail with a
    MemoryError that says what it needs); an invalid one must raise a ValueError/TypeError
    naming one of ``names``. Returns the result, or None after an accepted error."""
    try:
        out = call()
    except (ValueError, TypeError) as exc:
        assert not valid, f"a valid value was refused: {type(exc).__name__}: {exc}"
        assert any(n in str(exc) for n in names), f"the error does not name {names}: {exc}"
        return None
    except MemoryError as exc:
        assert valid and huge, f"unexpected MemoryError: {exc}"
        assert re.search("needs? at least", str(exc)) and "budget" in str(exc), str(exc)
        return None
    assert valid, f"an invalid value was accepted (result {type(out).__name__})"
    return out


def close(a, b, scale=None) -> None:
    a, b = np.asarray(a), np.asarray(b)
    s = scale if scale is not None else max(float(np.abs(b).max(initial=0.0)), 1.0)
    assert np.abs(a - b).max(initial=0.0) <= 1e-12 * s


def pht_tol(img, pairs) -> float:
    """How far two float64 evaluations of polar harmonic moments may differ: the rounding
    of the sums (:func:`sum_bound`, twice for the engine's two stages) plus that of the
    phase :math:`a n r^2` (:math:`a \\le 2\\pi`), computed with a relative error of a few
    ``u``, so off by up to :math:`4 \\pi |n| u` in every term."""
    nmax = max(abs(n) for n, _l in pairs)
    N = img.shape[-1]
    terms = 2 / np.pi * (2 / N) ** 2 * np.abs(img).sum()
    u = np.finfo(np.float64).eps / 2
    return float(2 * sum_bound(img, 2 / np.pi)[0] + 4 * np.pi * (nmax + 1) * u * terms * 4)


ZFUNCS = {"zernike": fm.zernike_moments, "pseudo-zernike": fm.pseudo_zernike_moments}
family_names = st.sampled_from(sorted(ZFUNCS))


# ----------------------------------------------------------------------------- Zernike
@SETTINGS
@given(family=family_names, order=int_like)
def test_zernike_order(family, order):
    valid = is_int(order) and order >= 0
    huge = valid and order in HUGE
    A = outcome(lambda: ZFUNCS[family](IMG, order, dtype="float64"), ("order",), valid, huge)
    if A is not None:
        ref = moments_direct(family, IMG, A.pairs)
        close(A.values(), ref)


@SETTINGS
@given(family=family_names, k=st.one_of(st.integers(-2, 4), st.sampled_from(HUGE), junk))
def test_zernike_k(family, k):
    valid = is_int(k) and k >= 1
    huge = valid and k in HUGE
    A = outcome(lambda: ZFUNCS[family](IMG, 3, k=k, dtype="float64"), ("k",), valid, huge)
    if A is not None:
        close(A.values(), moments_direct(family, IMG, A.pairs, k=int(k)))


@SETTINGS
@given(family=family_names, quadrature=options, rule=options, method=options)
def test_zernike_string_options(family, quadrature, rule, method):
    ok_q = quadrature in ("midpoint", "gauss")
    ok_r = rule in ("inscribed", "centre")
    ok_m = method is None or method in get_family(family).methods
    names = tuple(n for n, ok in (("quadrature", ok_q), ("rule", ok_r), ("method", ok_m))
                  if not ok)
    A = outcome(lambda: ZFUNCS[family](IMG, 4, k=2, quadrature=quadrature, rule=rule,
                                       method=method, dtype="float64"),
                names, ok_q and ok_r and ok_m)
    if A is not None:
        close(A.values(), moments_direct(family, IMG, A.pairs, 2, quadrature, rule))


@SETTINGS
@given(family=family_names, reps=st.one_of(st.none(), int_lists))
def test_zernike_repetitions(family, reps):
    order = 5
    seq = isinstance(reps, (list, tuple)) or (isinstance(reps, np.ndarray) and reps.ndim == 1)
    valid = reps is None or (seq and len(reps) > 0 and all(is_int(m) and abs(m) <= order
                                                           for m in reps))
    A = outcome(lambda: ZFUNCS[family](IMG, order, repetitions=reps, dtype="float64"),
                ("repetitions",), valid)
    if A is not None:
        want = {abs(int(m)) for m in reps} if reps is not None else set(range(order + 1))
        assert {m for _n, m in A.pairs} == want
        close(A.values(), moments_direct(family, IMG, A.pairs))


@SETTINGS
@given(family=family_names, pairs=pair_lists, order=st.one_of(st.none(), st.just(4)))
def test_zernike_pairs(family, pairs, order):
    fam = get_family(family)
    well = (isinstance(pairs, list) and len(pairs) > 0
            and all(_pair_ok(p, fam) for p in pairs))
    valid = (well and order is None) or (pairs is None and order is not None)
    # a moment of order 10**9 needs the recurrence's state of that length: a MemoryError
    # that says how much (valid, but more than the budget)
    huge = well and any(abs(int(n)) in HUGE for n, _m in pairs)
    A = outcome(lambda: ZFUNCS[family](IMG, order, pairs=pairs, dtype="float64"),
                ("pairs", "order"), valid, huge)
    if A is not None:
        prs = A.pairs if pairs is None else [(int(n), int(m)) for n, m in pairs]
        got = np.array([A[n, m] for n, m in prs])
        close(got, moments_direct(family, IMG, prs))


@SETTINGS
@given(family=family_names, budget=st.one_of(int_like, st.floats(1e-3, 1e12)),
       dtype=st.one_of(st.sampled_from(["float32", "float64", "double", "int32", "complex64",
                                        torch.float64, torch.int32, torch.float16,
                                        np.float32, np.int64, "f8"]), junk))
def test_zernike_budget_and_dtype(family, budget, dtype):
    ok_b = budget is None or (isinstance(budget, numbers.Real) and not isinstance(
        budget, (bool, np.bool_)) and math.isfinite(budget) and budget > 0)
    ok_d = dtype is None or (isinstance(dtype, (str, torch.dtype, type)) and dtype in (
        "float32", "float64", "double", torch.float64, np.float32))
    names = tuple(n for n, ok in (("memory_budget", ok_b), ("dtype", ok_d)) if not ok)
    small_budget = ok_b and budget is not None and 1 < budget < 2e5
    small_fraction = ok_b and budget is not None and budget <= 1e-6
    A = outcome(lambda: ZFUNCS[family](IMG, 4, memory_budget=budget, dtype=dtype),
                names, ok_b and ok_d, huge=small_budget or small_fraction)
    if A is not None:
        ref = moments_direct(family, IMG, A.pairs)
        tol = 1e-12 if A.dtype == torch.complex128 else 1e-5
        assert np.abs(A.values() - ref).max() <= tol * np.abs(ref).max()


# ----------------------------------------------------------------------------- PHT
PHT = {"pcet": fm.pcet, "pct": fm.pct, "pst": fm.pst}
kinds = st.sampled_from(sorted(PHT))
NLOW = {"pcet": None, "pct": 0, "pst": 1}


def _pht_valid(kind, nmax, lmax, nmin, lmin) -> bool:
    if not (is_int(nmax) and is_int(lmax)):
        return False
    if nmin is not None and not is_int(nmin):
        return False
    if lmin is not None and not is_int(lmin):
        return False
    if nmax < (1 if kind == "pst" else 0) or lmax < 0:
        return False
    lo = NLOW[kind] if NLOW[kind] is not None else -nmax
    nmin_v = lo if nmin is None else nmin
    lmin_v = -lmax if lmin is None else lmin
    if NLOW[kind] is not None and nmin_v < NLOW[kind]:
        return False
    return nmin_v <= nmax and -lmax <= lmin_v <= lmax


@SETTINGS
@given(kind=kinds, nmax=int_like, lmax=st.one_of(st.integers(-1, 3), junk),
       nmin=st.one_of(st.none(), st.integers(-4, 4), junk),
       lmin=st.one_of(st.none(), st.integers(-4, 4), junk))
def test_pht_orders(kind, nmax, lmax, nmin, lmin):
    valid = _pht_valid(kind, nmax, lmax, nmin, lmin)
    huge = valid and nmax in HUGE
    M = outcome(lambda: PHT[kind](IMG, nmax, lmax, nmin=nmin, lmin=lmin, dtype="float64",
                                  method="engine"),
                ("nmax", "lmax", "nmin", "lmin"), valid, huge)
    if M is not None:
        lo = NLOW[kind] if NLOW[kind] is not None else -int(nmax)
        nlo = lo if nmin is None else int(nmin)
        llo = -int(lmax) if lmin is None else int(lmin)
        pairs = [(n, m) for n in range(nlo, int(nmax) + 1) for m in range(llo, int(lmax) + 1)]
        got = np.array([M[n, m] for n, m in pairs])
        close(got, pht_moments_direct(kind, IMG, pairs))


@SETTINGS
@given(kind=kinds, pairs=pair_lists, nmax=st.one_of(st.none(), st.just(2)))
def test_pht_pairs(kind, pairs, nmax):
    fam = fm.disk.pht.pht_family(kind)
    well = (isinstance(pairs, list) and len(pairs) > 0
            and all(_pair_ok(p, fam) for p in pairs))
    valid = (well and nmax is None) or (pairs is None and nmax is not None)
    M = outcome(lambda: PHT[kind](IMG, nmax, nmax, pairs=pairs, dtype="float64"),
                ("pairs", "nmax"), valid)
    if M is not None:
        prs = M.pairs if pairs is None else [(int(n), int(m)) for n, m in pairs]
        got = np.array([M[n, m] for n, m in prs])
        assert np.abs(got - pht_moments_direct(kind, IMG, prs)).max() <= pht_tol(IMG, prs)


@SETTINGS
@given(kind=kinds, s=st.one_of(st.floats(-1, 8), st.sampled_from([2, 3, 1e300, 1e-300]),
                               junk),
       k=st.one_of(st.integers(0, 3), junk), eps=st.one_of(st.none(), st.floats(-1, 1), junk),
       method=options, quadrature=options)
def test_pht_options(kind, s, k, eps, method, quadrature):
    from .test_pht import reference

    ok_s = isinstance(s, numbers.Real) and not isinstance(s, (bool, np.bool_)) and \
        math.isfinite(s) and s > 0
    ok_k = is_int(k) and k >= 1
    ok_e = eps is None or (isinstance(eps, numbers.Real) and not isinstance(
        eps, (bool, np.bool_)) and math.isfinite(eps) and eps > 0)
    ok_m = method in ("auto", "engine", "gemm", "nufft")
    ok_q = quadrature in ("midpoint", "gauss")
    names = tuple(n for n, ok in (("s", ok_s), ("k", ok_k), ("eps", ok_e), ("method", ok_m),
                                  ("quadrature", ok_q)) if not ok)
    # an odd k puts a sample point at the centre of an even image only with k odd and an odd
    # size; 8 x 8 never has one, so s < 2 is valid here
    with warnings.catch_warnings():  # method="nufft" without finufft warns once, then runs
        warnings.simplefilter("ignore", RuntimeWarning)
        M = outcome(lambda: PHT[kind](IMG, 2, 2, s=s, k=k, eps=eps, method=method,
                                      quadrature=quadrature, dtype="float64"),
                    names, ok_s and ok_k and ok_e and ok_m and ok_q)
    if M is not None and 0.05 <= s <= 8 and method != "nufft":
        pairs = [(n, m) for n in range({"pcet": -2, "pct": 0, "pst": 1}[kind], 3)
                 for m in range(-2, 3)]
        got = np.array([M[n, m] for n, m in pairs])
        ref = reference(kind, IMG, pairs, k=int(k), quadrature=quadrature, s=float(s))
        assert np.abs(got - ref).max() <= 1e-11 * max(np.abs(ref).max(), 1.0)


# ----------------------------------------------------------------------------- plans
@SETTINGS
@given(cls=st.sampled_from([ZernikeTransform, PseudoZernikeTransform]), size=int_like,
       order=st.one_of(st.integers(-1, 5), junk))
def test_transform_plans(cls, size, order):
    # sizes 1 and 2 have no pixel entirely inside the disk (the default rule): an error
    valid = is_int(size) and size >= 3 and is_int(order) and order >= 0
    huge = valid and size in HUGE
    plan = outcome(lambda: cls(size, order, dtype=torch.float64), ("size", "order"), valid,
                   huge)
    if plan is not None:
        img = np.random.default_rng(0).random((int(size), int(size)))
        A = plan.forward(img)
        close(A.values(), moments_direct(plan.family.name, img, A.pairs))


@SETTINGS
@given(kind=st.one_of(kinds, st.text(max_size=4), st.none(), st.integers()),
       size=st.one_of(st.integers(-1, 9), junk), family=st.one_of(st.none(), st.integers(),
                                                                  st.text(max_size=3)))
def test_pht_and_generic_plans(kind, size, family):
    valid = kind in PHT and is_int(size) and size >= 3
    outcome(lambda: PolarHarmonicTransform(kind, size, 1, 1), ("kind", "size"), valid)
    outcome(lambda: PolarHarmonicTransform("pcet", size, 1, 1, rule="centre"), ("size",),
            is_int(size) and size >= 1)
    outcome(lambda: fm.disk.DiskTransform(family, 8, 2), ("family",),
            family in ("zernike", "pseudo-zernike", "pcet", "pct", "pst"))


# ----------------------------------------------------------------------------- moments
A6 = fm.zernike_moments(BATCH, 6, dtype="float64")


def _orders_valid(orders) -> set[int] | None:
    """The orders a valid ``orders`` argument selects (None: invalid)."""
    if orders is None:
        return set(range(7))
    if is_int(orders):
        return set(range(int(orders) + 1)) if 0 <= orders <= 6 else None
    if isinstance(orders, tuple) and len(orders) == 2 and all(is_int(v) for v in orders):
        lo, hi = orders
        return set(range(lo, hi + 1)) if 0 <= lo <= hi <= 6 else None
    if isinstance(orders, (list, tuple)) and all(is_int(v) for v in orders):
        return set(orders) if set(orders) <= set(range(7)) else None
    return None


@SETTINGS
@given(orders=st.one_of(st.none(), int_like, st.tuples(int_like, int_like),
                        st.lists(st.integers(-2, 9), max_size=3)),
       reps=st.one_of(st.none(), st.sampled_from(["all", "positive", "negative", "zero",
                                                  "nonnegative", "nonpositive", "odd", ""]),
                      st.lists(st.integers(-8, 8), max_size=3), junk))
def test_reconstruct_selections(orders, reps):
    keep_n = _orders_valid(orders)
    named = {"all": None, "positive": "p", "negative": "p", "zero": {0},
             "nonnegative": None, "nonpositive": None}
    ok_r = reps is None or (isinstance(reps, str) and reps in named) or (
        isinstance(reps, (list, tuple)) and all(is_int(m) and abs(m) <= 6 for m in reps))
    if keep_n is not None and ok_r:
        if reps is None or reps in ("all", "nonnegative", "nonpositive"):
            ms = set(range(7))
        elif reps in ("positive", "negative"):
            ms = set(range(1, 7))
        elif reps == "zero":
            ms = {0}
        else:
            ms = {abs(m) for m in reps}
        nonempty = any(n in keep_n and m in ms for n, m in A6.pairs)
    valid = keep_n is not None and ok_r and nonempty
    rec = outcome(lambda: A6.reconstruct(orders=orders, repetitions=reps),
                  ("orders", "repetitions"), valid)
    if rec is not None:
        # the same selection through the explicit-list path
        again = A6.reconstruct(orders=sorted(keep_n & set(range(7))), repetitions=reps)
        close(rec, again)


M3 = fm.pct(BATCH, 3, 3, dtype="float64")


@SETTINGS
@given(nmax=st.one_of(st.none(), int_like), lmax=st.one_of(st.none(), int_like),
       reps=st.one_of(st.sampled_from(["all", "zero", "positive"]),
                      st.lists(st.integers(-4, 4), max_size=2)))
def test_pht_reconstruct_caps(nmax, lmax, reps):
    ok_n = nmax is None or (is_int(nmax) and 0 <= nmax <= 3)
    ok_l = lmax is None or (is_int(lmax) and 0 <= lmax <= 3)
    ok_r = isinstance(reps, str) or all(abs(m) <= 3 for m in reps)
    if ok_n and ok_l and ok_r:
        ns = range(0, 4 if nmax is None else int(nmax) + 1)
        top = 3 if lmax is None else int(lmax)
        ms = {"all": set(range(top + 1)), "zero": {0}, "positive": set(range(1, top + 1))}[
            reps] if isinstance(reps, str) else {abs(m) for m in reps if abs(m) <= top}
        nonempty = bool(ms) and any(n in ns for n in range(4))
    valid = ok_n and ok_l and ok_r and nonempty
    rec = outcome(lambda: M3.reconstruct(nmax, lmax, repetitions=reps),
                  ("nmax", "lmax", "repetitions", "orders"), valid)
    if rec is not None:
        # the same selection as explicit orders and repetitions
        if isinstance(reps, str):
            lo = {"all": -top, "zero": 0, "positive": 1}[reps]
            hi = 0 if reps == "zero" else top
            rlist = list(range(lo, hi + 1))
        else:
            rlist = [m for m in reps if abs(m) <= top]
        close(rec, M3.reconstruct(orders=list(ns), repetitions=rlist))


@SETTINGS
@given(key=st.one_of(st.tuples(int_like, int_like), st.tuples(st.integers(-8, 8),
                                                              st.integers(-8, 8)),
                     st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 1)),
                     int_like, st.just(()), st.just((slice(None), 0))))
def test_indexing(key):
    fam = get_family("zernike")
    two_ints = isinstance(key, tuple) and len(key) == 2 and all(is_int(v) for v in key)
    try:
        v = A6[key]
    except TypeError as exc:
        assert not two_ints, str(exc)
        assert "index" in str(exc)
        return
    except IndexError as exc:
        assert two_ints and not (fam.is_valid(*key) and key[0] <= 6), str(exc)
        assert f"n={int(key[0])}" in str(exc) and f"m={int(key[1])}" in str(exc)
        return
    assert two_ints and fam.is_valid(*key) and key[0] <= 6
    n, m = int(key[0]), int(key[1])
    assert v.shape == (2,)  # the batch of that moment
    ref = np.stack([moments_direct("zernike", b, [(n, m)])[0] for b in BATCH])
    close(v, ref)


# ----------------------------------------------------------------------------- features
@SETTINGS
@given(family=st.one_of(st.sampled_from(["zernike", "pseudo-zernike", "pcet", "pct", "pst",
                                         "legendre"]), st.none(), st.integers()),
       orders=st.one_of(int_like, st.lists(st.integers(-1, 4), max_size=3)),
       kind=st.one_of(st.sampled_from(["complex", "real", "magnitude", "phase"]), junk),
       algorithm=st.one_of(st.sampled_from(["auto", "dense", "engine", "fft"]), junk))
def test_features(family, orders, kind, algorithm):
    fams = ("zernike", "pseudo-zernike", "pcet", "pct", "pst")
    ok_f = family in fams
    ok_o = (is_int(orders) and 0 <= orders <= 8) or (
        isinstance(orders, list) and len(orders) > 0 and all(is_int(n) for n in orders))
    if ok_f and ok_o and isinstance(orders, list):
        try:
            ok_o = bool(moment_pairs(family, orders))
        except ValueError:
            ok_o = False
    huge = ok_f and is_int(orders) and orders in HUGE
    ok_o = ok_o or huge
    ok_k = kind in ("complex", "real", "magnitude")
    ok_a = algorithm in ("auto", "dense", "engine")
    names = tuple(n for n, ok in (("family", ok_f), ("orders", ok_o), ("kind", ok_k),
                                  ("algorithm", ok_a)) if not ok)
    fs = outcome(lambda: fm.features(BATCH, family=family, orders=orders, kind=kind,
                                     algorithm=algorithm, dtype="float64"),
                 names, ok_f and ok_o and ok_k and ok_a, huge)
    if fs is not None:
        if family in ("zernike", "pseudo-zernike"):
            ref = np.stack([moments_direct(family, b, fs.pairs) for b in BATCH])
        else:
            ref = pht_moments_direct(family, BATCH, fs.pairs)
        close(fs.complex_values(), ref)


@SETTINGS
@given(select=st.one_of(st.none(), st.integers(-1, 8), pair_lists),
       k=st.one_of(st.integers(-1, 3), st.sampled_from(HUGE), junk),
       batch_size=st.one_of(st.none(), int_like), progress=st.one_of(st.none(), junk))
def test_features_select_and_options(select, k, batch_size, progress):
    fam = get_family("pseudo-zernike")
    n_cand = len(moment_pairs("pseudo-zernike", 2))
    if select is None:
        ok_s = True
    elif is_int(select):
        ok_s = 1 <= select <= n_cand
    else:
        ok_s = (isinstance(select, list) and len(select) > 0
                and all(_pair_ok(p, fam) for p in select))
    ok_k = is_int(k) and k >= 1
    ok_b = batch_size is None or (is_int(batch_size) and batch_size >= 1)
    ok_p = progress is None or isinstance(progress, bool)
    huge = ok_k and k in HUGE
    names = tuple(n for n, ok in (("select", ok_s), ("k", ok_k), ("batch_size", ok_b),
                                  ("progress", ok_p)) if not ok)
    fs = outcome(lambda: fm.features(BATCH, orders=2, select=select, k=k,
                                     batch_size=batch_size, progress=progress,
                                     dtype="float64"),
                 names, ok_s and ok_k and ok_b and ok_p, huge and ok_s and ok_b and ok_p)
    if fs is not None:
        ref = np.stack([moments_direct("pseudo-zernike", b, fs.pairs, k=int(k))
                        for b in BATCH])
        close(fs.complex_values(), ref)


@SETTINGS
@given(family=st.one_of(st.sampled_from(["zernike", "pseudo-zernike", "pcet", "x"]),
                        st.none()), n=int_like)
def test_order_pairs(family, n):
    ok_f = family in ("zernike", "pseudo-zernike", "pcet")
    ok_n = is_int(n) and n >= 0
    names = tuple(x for x, ok in (("family", ok_f), ("n", ok_n)) if not ok)
    out = outcome(lambda: fm.order_pairs(family, n), names, ok_f and ok_n,
                  huge=ok_n and n in HUGE)
    if out is not None:
        fam = get_family(family)
        assert out == [(int(n), m) for m in range(int(n) + 1) if fam.is_valid(int(n), m)]


def test_suite_runs_quickly_enough_to_keep():
    """A guard that the module-level moments are what the tests assume."""
    assert A6.batch_shape == (2,) and A6.order == 6
    with pytest.raises(TypeError):
        A6[0, 0, 0]
