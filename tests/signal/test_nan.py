"""NaN-aware Gaussian smoothing against a direct masked float64 convolution written here."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fastmoments.signal import gaussian_filter, gaussian_filter1d


def _extend(x: np.ndarray, r: int, mode: str, cval: float) -> np.ndarray:
    """The last axis extended by ``r`` samples per side (NumPy's own padding modes)."""
    pad = [(0, 0)] * (x.ndim - 1) + [(r, r)]
    if mode == "constant":
        return np.pad(x, pad, mode="constant", constant_values=cval)
    npmode = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap"}
    return np.pad(x, pad, mode=npmode[mode])


def _kernel(sigma: float, radius: int) -> np.ndarray:
    k = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    return g / g.sum()


def _masked_reference(x: np.ndarray, sigma: float, radius: int, mode: str = "reflect",
                      cval: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(G*(x m) / G*m, G*m)`` by a plain loop over the taps (last axis, float64)."""
    g = _kernel(sigma, radius)
    m = np.isfinite(x).astype(np.float64)
    xm = np.where(np.isfinite(x), x, 0.0)
    ex = _extend(xm, radius, mode, cval)
    em = _extend(m, radius, mode, 1.0)
    n = x.shape[-1]
    num = np.zeros(x.shape)
    den = np.zeros(x.shape)
    for j, w in enumerate(g):  # y[n] = sum_k g[k] x[n - k]; g is symmetric
        num += w * ex[..., j:j + n]
        den += w * em[..., j:j + n]
    return num / np.where(den > 0, den, 1.0), den


def _signal(n: int, frac: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    x = np.sin(2 * np.pi * t / 97.0) + 0.3 * rng.standard_normal(n)
    x[rng.random(n) < frac] = np.nan
    x[200:240] = np.nan  # a gap
    return x


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_omit_direct_equals_masked_convolution(mode):
    x = _signal(1000, 0.1)
    y = gaussian_filter1d(x, 3.0, mode=mode, cval=0.5, method="direct", min_weight=0.0,
                          nan_policy="omit")
    ref, den = _masked_reference(x, 3.0, 12, mode, 0.5)
    ok = den > 0
    assert np.array_equal(np.isnan(y), ~ok)
    np.testing.assert_allclose(y[ok], ref[ok], rtol=0, atol=1e-12 / den[ok].min())


@pytest.mark.parametrize("sigma", [1.5, 40.0])
def test_omit_auto_within_the_gaussians_error(sigma):
    """``method="auto"`` against the untruncated kernel (cut at 12σ): within the stated error
    ``~1.5e-4 (|x| + |y|) / den``."""
    x = _signal(3000, 0.1, seed=1)
    y = gaussian_filter1d(x, sigma, nan_policy="omit")
    ref, den = _masked_reference(x, sigma, math.ceil(12 * sigma))
    ok = den > 1e-2
    assert np.array_equal(np.isnan(y), ~ok)
    bound = 1.5e-4 * (np.nanmax(np.abs(x)) + np.abs(ref[ok])) / den[ok]
    assert np.all(np.abs(y[ok] - ref[ok]) <= bound)


def test_min_weight_gives_nan_where_few_samples_remain():
    x = np.ones(400)
    x[100:300] = np.nan
    y = gaussian_filter1d(x, 5.0, method="direct", min_weight=0.2, nan_policy="omit")
    _, den = _masked_reference(x, 5.0, 20)
    assert np.array_equal(np.isnan(y), den <= 0.2)
    np.testing.assert_allclose(y[~np.isnan(y)], 1.0, atol=1e-14)


@pytest.mark.parametrize("order", [0, 1, 2])
def test_propagate_marks_the_truncated_support(order):
    x = _signal(600, 0.0)
    x[[10, 300, 301, 590]] = [np.nan, np.inf, np.nan, -np.inf]
    sigma, radius = 2.5, 10
    y = gaussian_filter1d(x, sigma, order=order, nan_policy="propagate", method="direct")
    bad = ~np.isfinite(_extend(x, radius, "reflect", 0.0))
    expect = np.array([bad[i:i + 2 * radius + 1].any() for i in range(600)])
    assert np.array_equal(np.isnan(y), expect)
    # elsewhere: the filter of the signal with the bad samples set to zero
    clean = np.where(np.isfinite(x), x, 0.0)
    ref = gaussian_filter1d(clean, sigma, order=order, method="direct")
    np.testing.assert_allclose(y[~expect], ref[~expect], rtol=0, atol=1e-14)


def test_raise_and_bad_options():
    x = _signal(100, 0.1)
    with pytest.raises(ValueError, match="NaN"):
        gaussian_filter1d(x, 2.0, nan_policy="raise")
    for call in (gaussian_filter1d, gaussian_filter):  # "raise" is the default
        with pytest.raises(ValueError, match="NaN"):
            call(x, 2.0)
    with pytest.raises(ValueError, match="nan_policy"):
        gaussian_filter1d(x, 2.0, nan_policy="ignore")
    with pytest.raises(ValueError, match="min_weight"):
        gaussian_filter1d(x, 2.0, min_weight=1.0, nan_policy="omit")
    with pytest.raises(TypeError, match="min_weight"):
        gaussian_filter1d(x, 2.0, min_weight="0.1", nan_policy="omit")
    with pytest.raises(ValueError, match="order=0"):
        gaussian_filter1d(x, 2.0, order=1, nan_policy="omit")
    with pytest.raises(ValueError, match="infinity"):
        gaussian_filter1d(np.array([1.0, np.inf, 2.0, np.nan]), 1.0, nan_policy="omit")
    with pytest.raises(ValueError, match="mode"):
        gaussian_filter1d(x, 2.0, mode="edge", nan_policy="omit")
    with pytest.raises(ValueError, match="axis"):
        gaussian_filter1d(x, 2.0, axis=1, nan_policy="omit")
    with pytest.raises(TypeError, match="axis"):
        gaussian_filter1d(x, 2.0, axis=(0,), nan_policy="omit")
    with pytest.raises(ValueError, match="nan_policy"):
        gaussian_filter(x, 2.0, nan_policy="interpolate")
    with pytest.raises(TypeError, match="out"):
        gaussian_filter1d(x, 2.0, out=np.empty_like(x), nan_policy="omit")


def test_without_nan_equals_the_plain_filter_and_input_untouched():
    x = np.random.default_rng(3).standard_normal((3, 500))
    keep = x.copy()
    for policy in ("omit", "propagate", "raise"):
        y = gaussian_filter1d(x, 4.0, nan_policy=policy)
        np.testing.assert_array_equal(y, gaussian_filter1d(x, 4.0))
    xn = _signal(500, 0.1)
    keepn = xn.copy()
    gaussian_filter1d(xn, 4.0, nan_policy="omit")
    assert np.array_equal(x, keep) and np.array_equal(xn, keepn, equal_nan=True)


def test_axis_batch_dtype_and_tensor():
    x = np.stack([_signal(300, 0.1, seed=s) for s in range(3)], axis=1)  # time on axis 0
    y = gaussian_filter1d(x, 3.0, axis=0, method="direct", nan_policy="omit")
    for j in range(3):
        np.testing.assert_array_equal(
            y[:, j], gaussian_filter1d(np.ascontiguousarray(x[:, j]), 3.0, method="direct",
                                       nan_policy="omit"))
    y32 = gaussian_filter1d(x.astype(np.float32), 3.0, axis=0, method="direct", nan_policy="omit")
    assert y32.dtype == np.float32
    ok = ~np.isnan(y)
    assert np.array_equal(ok, ~np.isnan(y32))
    np.testing.assert_allclose(y32[ok], y[ok], atol=1e-5)
    t = torch.from_numpy(x)
    yt = gaussian_filter1d(t, 3.0, axis=0, method="direct", nan_policy="omit")
    assert isinstance(yt, torch.Tensor) and yt.dtype == torch.float64
    np.testing.assert_array_equal(yt.numpy(), y)


def test_nd_omit_equals_masked_separable_reference():
    rng = np.random.default_rng(5)
    img = rng.standard_normal((40, 50))
    img[rng.random(img.shape) < 0.15] = np.nan
    y = gaussian_filter(img, [1.5, 2.0], method="direct", min_weight=0.0, nan_policy="omit")
    # the 2-D masked convolution with the separable truncated kernel, written plainly
    g0, g1 = _kernel(1.5, 6), _kernel(2.0, 8)
    m = np.isfinite(img).astype(float)
    xm = np.where(np.isfinite(img), img, 0.0)
    ex = np.pad(xm, ((6, 6), (8, 8)), mode="symmetric")
    em = np.pad(m, ((6, 6), (8, 8)), mode="symmetric")
    num = np.zeros_like(img)
    den = np.zeros_like(img)
    for a, wa in enumerate(g0):
        for b, wb in enumerate(g1):
            num += wa * wb * ex[a:a + 40, b:b + 50]
            den += wa * wb * em[a:a + 40, b:b + 50]
    ok = den > 0
    assert np.array_equal(~np.isnan(y), ok)
    np.testing.assert_allclose(y[ok], num[ok] / den[ok], rtol=0, atol=1e-12)


def test_nd_propagate_and_channel_axis():
    img = np.ones((30, 30, 2))
    img[10, 12, 0] = np.nan
    y = gaussian_filter(img, 1.0, channel_axis=-1, nan_policy="propagate", method="direct")
    assert np.isnan(y[6:15, 8:17, 0]).all() and np.isnan(y[..., 0]).sum() == 81
    assert not np.isnan(y[..., 1]).any()
    np.testing.assert_allclose(y[..., 1], 1.0, atol=1e-14)


def test_integer_input_and_raise_with_min_weight():
    """Integers hold no NaN: every policy is the plain filter; ``"raise"`` ignores
    ``min_weight`` (after checking it)."""
    xi = np.arange(60, dtype=np.int16) % 7
    ref = gaussian_filter1d(xi, 2.0)
    for policy in ("omit", "propagate"):
        np.testing.assert_array_equal(gaussian_filter1d(xi, 2.0, nan_policy=policy), ref)
    x = np.random.default_rng(9).standard_normal(80)
    np.testing.assert_array_equal(gaussian_filter1d(x, 2.0, min_weight=0.5),
                                  gaussian_filter1d(x, 2.0))
    with pytest.raises(ValueError, match="min_weight"):
        gaussian_filter1d(x, 2.0, min_weight=-0.1)
