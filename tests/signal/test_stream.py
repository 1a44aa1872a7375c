"""A stream of chunks equals the one-shot Gaussian filter, at bounded memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments import GaussianFilter, GaussianStream, gaussian_filter1d


def _stream(sigma: float, *, order: int = 0, method: str = "direct", truncate: float = 4.0,
            **options) -> GaussianStream:
    return GaussianFilter(sigma, order=order, method=method, truncate=truncate).stream(**options)


def _chunks(n: int, rng: np.random.Generator, top: int) -> list[int]:
    """Random chunk sizes from 0 to ``top`` (empty chunks included) that add up to ``n``."""
    sizes = []
    while sum(sizes) < n:
        sizes.append(int(min(rng.integers(0, top + 1), n - sum(sizes))))
    return sizes


def _run(stream: GaussianStream, x: np.ndarray, sizes: list[int], axis: int = -1):
    parts, pos, held = [], 0, []
    for c in sizes:
        parts.append(stream.push(np.take(x, range(pos, pos + c), axis=axis)))
        pos += c
        held.append(stream.carried)
        assert stream.emitted == max(0, stream.received - stream.delay)  # the fixed delay
    parts.append(stream.flush())
    return np.concatenate(parts, axis=axis), held


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "constant"])
@pytest.mark.parametrize("order", [0, 1, 2])
def test_direct_equals_one_shot(mode, order):
    rng = np.random.default_rng(order)
    x = rng.standard_normal(800)
    sigma = 6.5
    stream = _stream(sigma, order=order, mode=mode, cval=0.7)
    s = stream.delay
    assert s == int(np.ceil(4 * sigma))
    for top in (5, s, 4 * s):  # chunks shorter than the radius, about it, longer
        y, held = _run(stream, x, _chunks(len(x), rng, top))
        ref = gaussian_filter1d(x, sigma, order=order, mode=mode, cval=0.7, method="direct")
        assert y.shape == x.shape
        np.testing.assert_allclose(y, ref, rtol=0, atol=1e-14 * np.abs(ref).max())
        assert max(held) <= 2 * s  # carried samples do not grow with the stream


@pytest.mark.parametrize("order", [0, 2])
def test_sft_equals_one_shot(order):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(6000)
    sigma = 40.0
    stream = _stream(sigma, order=order, method="sft")
    y, _ = _run(stream, x, _chunks(len(x), rng, 900))
    ref = gaussian_filter1d(x, sigma, order=order, method="sft")
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-10 * np.abs(ref).max())


def test_radius_truncate_and_direct_float64_reference():
    """``ceil(truncate σ)`` is the kernel's half-width; the output is the truncated,
    normalised kernel applied with the reflect extension (written here)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(500)
    sigma, r = 3.0, 5
    stream = _stream(sigma, truncate=(r - 0.5) / sigma)
    assert stream.delay == r
    y, _ = _run(stream, x, _chunks(len(x), rng, 13))
    k = np.arange(-r, r + 1)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    g /= g.sum()
    e = np.pad(x, r, mode="symmetric")
    ref = np.array([np.dot(g, e[n: n + 2 * r + 1][::-1]) for n in range(len(x))])
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-14)


def test_short_streams_and_reuse():
    x = np.random.default_rng(1).standard_normal(30)
    stream = _stream(4.0)  # delay 16
    for n in (0, 1, 5, 16, 17, 30):
        y, _ = _run(stream, x[:n], _chunks(n, np.random.default_rng(n), 4))
        if n:
            ref = gaussian_filter1d(x[:n], 4.0, method="direct")
            np.testing.assert_allclose(y, ref, rtol=0, atol=1e-15)
        else:
            assert y.shape == (0,)


def test_batch_axis_dtype_and_tensor():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1200, 3)).astype(np.float32)  # time first
    stream = _stream(5.0, order=1, axis=0)
    y, _ = _run(stream, x, _chunks(1200, rng, 50), axis=0)
    assert y.dtype == np.float32 and y.shape == x.shape
    ref = gaussian_filter1d(x.astype(np.float64), 5.0, axis=0, order=1, method="direct")
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-6 * np.abs(ref).max())
    t = torch.from_numpy(rng.standard_normal((2, 400)))
    st = _stream(2.0)
    parts = [st.push(t[:, i:i + 37]) for i in range(0, 400, 37)] + [st.flush()]
    assert all(isinstance(p, torch.Tensor) for p in parts)
    np.testing.assert_allclose(torch.cat(parts, -1).numpy(),
                               gaussian_filter1d(t.numpy(), 2.0, method="direct"), atol=1e-15)


def test_bad_input():
    with pytest.raises(ValueError, match="mode"):
        _stream(2.0, mode="wrap")
    with pytest.raises(ValueError, match="method"):
        _stream(2.0, method="asft")
    with pytest.raises(ValueError, match="chunk"):
        _stream(2.0, chunk=0)
    with pytest.raises(TypeError, match="chunk"):
        _stream(2.0, chunk=2.5)
    with pytest.raises(ValueError, match="truncate"):
        _stream(2.0, truncate=0.0)
    with pytest.raises(ValueError, match="sigma"):
        _stream(-1.0)
    with pytest.raises(TypeError, match="cval"):
        _stream(2.0, cval="0")
    with pytest.raises(TypeError, match="axis"):
        _stream(2.0, axis=1.0)
    st = _stream(2.0)
    st.push(np.zeros((2, 10)))
    with pytest.raises(ValueError, match="batch shape"):
        st.push(np.zeros((3, 10)))
    with pytest.raises(ValueError, match="NaN"):
        st.push(np.array([[1.0, np.nan], [0.0, 0.0]]))
    chunk = np.ones((2, 5))
    keep = chunk.copy()
    st.push(chunk)
    assert np.array_equal(chunk, keep)


@pytest.mark.parametrize("sigma", [2.0, 300.0])
def test_auto_plan_streams_the_method_its_route_picks(sigma):
    plan = GaussianFilter(sigma)
    stream = plan.stream(chunk=4096)
    assert isinstance(stream, GaussianStream)
    assert stream.method == plan.choose(4096) and stream.sigma == sigma
    x = np.random.default_rng(8).standard_normal(5000)
    y, _ = _run(stream, x, [4096, 904])
    ref = gaussian_filter1d(x, sigma, method=stream.method)
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
