"""Bad input to the signal API, property-based: every value either gives a correct result
(checked against a float64 reference) or a ValueError/TypeError that names the parameter."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.ndimage as ndi
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastmoments as fm
from fastmoments.signal import CWT, GaussianFilter, Morlet, MorletTransform

X = np.random.default_rng(11).standard_normal(64)
SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# numbers and non-numbers in the places of numbers
ANY = st.one_of(
    st.booleans(), st.none(), st.text(max_size=3), st.just("2.0"),
    st.floats(allow_nan=True, allow_infinity=True, min_value=None, max_value=None),
    st.integers(-10**9, 10**9), st.just(1e300), st.just(2.5), st.just(np.float64(3.0)),
    st.just([2.0]), st.just(complex(1, 1)),
)


def morlet_ref(x, sigma, xi=6.0):
    c = (1.0 + math.exp(-xi * xi) - 2.0 * math.exp(-0.75 * xi * xi)) ** -0.5
    w = math.ceil(10 * sigma) + 1
    k = np.arange(-w, w + 1, dtype=np.float64)
    with np.errstate(over="ignore"):  # tiny sigma: (k/sigma)^2 = inf, exp(-inf) = 0
        psi = (c * math.pi ** -0.25 / math.sqrt(sigma) * np.exp(-0.5 * (k / sigma) ** 2)
               * (np.exp(1j * xi * k / sigma) - math.exp(-0.5 * xi * xi)))
    reps = -(-w // len(x)) + 1
    xp = np.pad(x, reps * len(x), mode="symmetric")
    off = reps * len(x)
    return np.convolve(xp[off - w: off + len(x) + w], psi, mode="valid")


def refused(exc: BaseException, name: str) -> None:
    assert isinstance(exc, (ValueError, TypeError)), repr(exc)
    assert name in str(exc), (name, str(exc))


def run(call, name):
    """The result, or ``None`` after checking the error names ``name``."""
    try:
        return call()
    except (ValueError, TypeError) as exc:
        refused(exc, name)
        return None


def _valid_real(v) -> bool:
    return (isinstance(v, (int, float, np.floating)) and not isinstance(v, bool)
            and math.isfinite(v) and v > 0)


def _scipy_taps(sigma: float, radius: int) -> np.ndarray:
    """scipy.ndimage's normalised Gaussian of order 0 on ``-radius..radius``."""
    k = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    return g / g.sum()


@SETTINGS
@given(sigma=ANY)
def test_gaussian_sigma(sigma):
    y = run(lambda: fm.gaussian_filter(X, sigma), "sigma")
    if isinstance(sigma, list):  # one σ per filtered axis
        sigma = sigma[0]
    if isinstance(sigma, np.ndarray) and sigma.ndim == 0:  # a 0-d array is its value
        sigma = sigma.item()
    if y is not None:
        if (isinstance(sigma, (int, float, np.integer, np.floating))
                and not isinstance(sigma, (bool, np.bool_)) and sigma == 0):
            np.testing.assert_array_equal(y, X)  # σ = 0 leaves the axis alone, as scipy
            return
        assert _valid_real(sigma) and sigma <= 2**20
        plan = GaussianFilter(float(sigma))
        if plan.uses_folded(len(X)):  # the folded kernel, exactly (method "auto": untruncated)
            r = plan.folded_radius
            ref = ndi.correlate1d(X, _scipy_taps(float(sigma), r), mode="reflect")
            assert np.linalg.norm(y - ref) <= 1e-13 * np.linalg.norm(X)
        elif float(sigma) < 1e-3:  # an impulse (scipy divides by σ² and overflows)
            assert np.linalg.norm(y - X) <= 1e-15 * np.linalg.norm(X)
        else:
            ref = ndi.gaussian_filter1d(X, float(sigma), truncate=12.0)
            assert np.linalg.norm(y - ref) <= (3 * plan.rmse + 1e-4) * np.linalg.norm(X)
    run(lambda: GaussianFilter(sigma), "sigma")


@SETTINGS
@given(value=ANY, name=st.sampled_from(["order", "terms", "shift", "truncate"]))
def test_gaussian_integers_and_truncate(value, name):
    kw = {name: value}
    if name == "shift":
        kw["method"] = "asft"
    y = run(lambda: fm.gaussian_filter(X, 8.0, **kw), name)
    if y is not None:
        if name in ("terms", "shift") and value is None:
            pass  # the default
        elif name in ("order", "terms", "shift"):
            assert isinstance(value, int) and not isinstance(value, bool)
        else:
            assert _valid_real(value)
        order = value if name == "order" else 0
        if order > 2:  # scipy's truncated kernel of that order, exactly
            ref = ndi.gaussian_filter1d(X, 8.0, order=order)
            assert np.abs(y - ref).max() <= 1e-10 * np.abs(ref).max()
            return
        if name == "truncate":  # given: scipy's truncated kernel, exactly
            ref = ndi.gaussian_filter(X, 8.0, truncate=value)
            assert np.abs(y - ref).max() <= 1e-12 * np.abs(X).max()
            return
        plan = GaussianFilter(8.0, **kw)
        ref = ndi.gaussian_filter1d(X, 8.0, order=order, truncate=12.0)
        tol = 3 * plan.rmse + 1e-12 if plan.method != "direct" else 1e-2
        assert np.linalg.norm(y - ref) <= tol * np.linalg.norm(ref) + 1e-12
    run(lambda: GaussianFilter(8.0, **kw), name)


@SETTINGS
@given(value=ANY)
def test_morlet_sigma_and_xi(value):
    y = run(lambda: fm.morlet_transform(X, value), "sigma")
    if y is not None:
        assert _valid_real(value) and value <= 2**20
        if value < 200:
            plan = MorletTransform(float(value))
            ref = morlet_ref(X, float(value))
            assert np.linalg.norm(y - ref) <= (3 * plan.rmse + 1e-12) * np.linalg.norm(ref)
    run(lambda: MorletTransform(value), "sigma")
    y = run(lambda: MorletTransform(4.0, value), "xi")
    run(lambda: Morlet(value), "xi")
    run(lambda: fm.cwt(X, [4.0], Morlet(6.0), sampling_period=value), "sampling_period")


@SETTINGS
@given(value=ANY)
def test_cwt_scales(value):
    for scales in (value, [3.0, value], (value,)):
        got = run(lambda s=scales: fm.cwt(X, s), "scales")
        if isinstance(value, list):  # a list of one scale
            value = value[0]
            continue
        if got is not None:
            coef, _ = got
            assert _valid_real(value)
            if value < 200:
                ref = morlet_ref(X, float(value))
                plan = MorletTransform(float(value))
                assert np.linalg.norm(coef[-1] - ref) <= (3 * plan.rmse + 1e-12) * np.linalg.norm(
                    ref)
        run(lambda s=scales: CWT(s), "scales")


@SETTINGS
@given(value=ANY, name=st.sampled_from(["terms", "truncate", "cval", "memory_budget"]))
def test_cwt_options(value, name):
    if name in ("terms", "truncate"):
        run(lambda: CWT([3.0, 9.0], **{name: value}), name)
        run(lambda: fm.cwt(X, [3.0, 9.0], **{name: value}), name)
    else:
        try:
            got = run(lambda: fm.cwt(X, [3.0, 9.0], **{name: value}), name)
        except MemoryError as exc:  # a budget of a few bytes: refused, saying so
            assert name == "memory_budget" and "memory_budget" in str(exc)
            return
        if got is not None:
            if name == "cval":
                assert isinstance(value, (int, float)) and math.isfinite(value)
            elif value is not None:
                assert _valid_real(value)
        for f in (fm.gaussian_filter, fm.morlet_transform):
            try:
                run(lambda f=f: f(X, 3.0, **{name: value}), name)
            except MemoryError as exc:
                assert name == "memory_budget" and "memory_budget" in str(exc)


@pytest.mark.parametrize("name,value", [
    ("mode", "reflective"), ("mode", None), ("engine", "fast"), ("engine", 3),
    ("method", "fft"), ("method", None), ("axis", 5), ("axis", -6), ("axis", 1.0),
    ("axis", True), ("axis", "0"), ("progress", "yes"), ("progress", 1),
])
def test_unknown_options(name, value):
    calls = [
        lambda kw: fm.gaussian_filter(X, 2.0, **kw),
        lambda kw: fm.morlet_transform(X, 2.0, **kw),
        lambda kw: fm.cwt(X, [2.0, 5.0], **kw),
    ]
    if name != "method":
        calls += [lambda kw: GaussianFilter(2.0)(X, **kw), lambda kw: MorletTransform(2.0)(X, **kw),
                  lambda kw: CWT([2.0])(X, **kw)]
    else:
        calls += [lambda kw: GaussianFilter(2.0, **kw), lambda kw: MorletTransform(2.0, **kw),
                  lambda kw: CWT([2.0], **kw)]
    for call in calls:
        with pytest.raises((ValueError, TypeError), match=name):
            call({name: value})


def test_bad_out():
    x32 = X.astype(np.float32)
    cases = [
        (np.empty(63), "shape"), (np.empty(64, np.float32), "dtype"),
        (torch.empty(64, dtype=torch.float64), "numpy"), ([0.0] * 64, "out"),
    ]
    ro = np.empty(64)
    ro.flags.writeable = False
    cases.append((ro, "read-only"))
    for out, word in cases:
        with pytest.raises((ValueError, TypeError), match=word):
            fm.gaussian_filter(X, 2.0, out=out)
    with pytest.raises(TypeError, match="dtype"):
        fm.morlet_transform(x32, 2.0, out=np.empty(64, np.complex128))
    with pytest.raises(ValueError, match="shape"):
        fm.cwt(X, [2.0, 3.0], out=np.empty((3, 64), np.complex128))
    with pytest.raises(TypeError, match="dtype"):
        fm.cwt(X, [2.0, 3.0], out=np.empty((2, 64), np.float64))
    with pytest.raises(TypeError, match="out"):
        fm.cwt(torch.from_numpy(X), [2.0], out=np.empty((1, 64), np.complex128))
    if torch.cuda.is_available():  # pragma: no cover - GPU
        with pytest.raises(ValueError, match=r"out must be on cuda(:0)? like the input"):
            fm.gaussian_filter(torch.from_numpy(X).cuda(), 2.0, out=torch.empty(64).double())
