"""fastmoments' Gaussians as scipy.ndimage's: the truncated kernel (``truncate=``,
``radius=``, ``kernel="scipy"``, orders above 2) against a direct float64 convolution,
complex input, ``output=``, :func:`gaussian_laplace` and :func:`gaussian_gradient_magnitude`."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import ndimage

import fastmoments as fm
from fastmoments.signal.gaussian_calls import SequenceLengthError

_PAD = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap",
        "constant": "constant"}


def _taps(sigma: float, order: int, radius: int, kernel: str) -> np.ndarray:
    """The truncated kernel, written out: derivatives of exp(-k²/2σ²) by sympy-free closed
    forms (orders 0-3), normalised by the Gaussian's sum over |k| <= radius."""
    k = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-k * k / (2 * sigma * sigma))
    s = g.sum()
    if order == 0:
        return g / s
    if order == 1:
        return -k / sigma**2 * g / s
    if order == 2:
        h = (k * k / sigma**4 - 1 / sigma**2) * g / s
        if kernel == "moments":
            h = h - h.sum() * g / s
        return h
    return (3 * k / sigma**4 - k**3 / sigma**6) * g / s


def _direct(x: np.ndarray, h: np.ndarray, mode: str, cval: float = 0.0) -> np.ndarray:
    """y[n] = Σ_k h[k] x[n - k] on the extended signal, in float64."""
    r = (len(h) - 1) // 2
    kw = {"constant_values": cval} if mode == "constant" else {}
    xe = np.pad(x.astype(np.float64), r, mode=_PAD[mode], **kw)
    return np.convolve(xe, h, mode="valid")


@pytest.mark.parametrize("method", ["auto", "sft", "asft", "direct"])
@pytest.mark.parametrize("sigma, truncate, n", [(0.7, 3.0, 50), (3.0, 2.5, 200),
                                                (40.0, 2.0, 300), (20.0, 4.0, 30)])
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_truncate_every_method(method, sigma, truncate, n, order, mode):
    """Whatever the method, a given truncate applies the kernel cut at round(truncate σ):
    equal to the direct float64 convolution to rounding."""
    x = np.random.default_rng(1).standard_normal(n)
    r = int(truncate * sigma + 0.5)
    y = fm.gaussian_filter1d(x, sigma, order=order, mode=mode, cval=0.5, truncate=truncate,
                             method=method)
    ref = _direct(x, _taps(sigma, order, r, "moments"), mode, 0.5)
    scale = np.abs(_taps(sigma, order, r, "moments")).sum() * np.abs(x).max()
    assert np.abs(y - ref).max() <= 1e-14 * scale


@pytest.mark.parametrize("kernel", ["moments", "scipy"])
@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("sigma, radius", [(0.5, 2), (1.3, 0), (2.0, 7), (30.0, 100)])
def test_radius_kernels(kernel, order, sigma, radius):
    x = np.random.default_rng(2).standard_normal(400)
    y = fm.gaussian_filter1d(x, sigma, order=order, radius=radius, kernel=kernel)
    h = _taps(sigma, order, radius, kernel)
    assert np.abs(y - _direct(x, h, "reflect")).max() <= 1e-14 * np.abs(h).sum() * 4
    if kernel == "scipy" or order != 2:  # scipy's own numbers
        z = ndimage.gaussian_filter1d(x, sigma, order=order, radius=radius)
        assert np.abs(y - z).max() <= 1e-14 * np.abs(h).sum() * 4


def test_scipy_kernel_is_scipy():
    """kernel="scipy" gives scipy.ndimage's numbers (default truncate) at every order, σ."""
    img = np.random.default_rng(3).random((64, 48))
    for sigma in (0.5, 0.7, 2.0, 9.0):
        for order in ([2, 0], [1, 1], [0, 3]):
            y = fm.gaussian_filter(img, sigma, order=order, kernel="scipy")
            z = ndimage.gaussian_filter(img, sigma, order=order)
            assert np.abs(y - z).max() <= 1e-13 * max(1.0, np.abs(z).max())


def test_truncated_count_nonzero():
    """Outside the radius the kernel is zero (scipy's test_gaussian_truncate, every method)."""
    arr = np.zeros((100, 100))
    arr[50, 50] = 1
    for method in ("auto", "sft", "direct"):
        y = fm.gaussian_filter(arr, 5, truncate=2, method=method)
        assert int((y > 0).sum()) == 21**2
        assert fm.gaussian_filter(arr, 5, radius=[3, 7], method=method)[50].nonzero()[0].size \
            == 15


def test_route_reported():
    plan = fm.signal.TruncatedGaussian(100.0, order=1, radius=1500)
    plan(np.zeros(5000))
    assert str(plan.route) == "folded/torch:fft"
    plan = fm.signal.TruncatedGaussian(100.0, order=1, radius=1500, method="direct")
    plan(np.zeros(5000))
    assert plan.route.method == "direct"
    plan = fm.signal.TruncatedGaussian(2.0, radius=8)
    plan(np.zeros(1000))
    assert plan.route.method == "direct"


@pytest.mark.parametrize("bad", [-1, 1.1, 2.0, True, "3"])
def test_radius_invalid(bad):
    with pytest.raises(ValueError, match="radius"):
        fm.gaussian_filter1d(np.zeros(8), 1.0, radius=bad)


def test_kernel_invalid():
    with pytest.raises(ValueError, match="kernel"):
        fm.gaussian_filter(np.zeros(8), 1.0, kernel="exact")


def test_sequence_length():
    with pytest.raises(SequenceLengthError, match="sigma") as e:
        fm.gaussian_filter(np.zeros((4, 4)), [1.0, 2.0, 3.0])
    assert isinstance(e.value, ValueError) and isinstance(e.value, RuntimeError)


@pytest.mark.parametrize("method", ["auto", "sft", "direct"])
def test_complex_is_linear(method):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((30, 40)) + 1j * rng.standard_normal((30, 40))
    y = fm.gaussian_filter(x, 3.0, order=[1, 0], method=method, mode="constant",
                           cval=1 + 2j)
    re = fm.gaussian_filter(x.real, 3.0, order=[1, 0], method=method, mode="constant", cval=1)
    im = fm.gaussian_filter(x.imag, 3.0, order=[1, 0], method=method, mode="constant", cval=2)
    assert y.dtype == np.complex128
    np.testing.assert_array_equal(y, re + 1j * im)
    z = ndimage.gaussian_filter(x, 3.0, order=[1, 0], mode="constant", cval=1 + 2j,
                                truncate=5.0)
    y5 = fm.gaussian_filter(x, 3.0, order=[1, 0], mode="constant", cval=1 + 2j, truncate=5.0)
    assert np.abs(y5 - z).max() < 1e-14
    assert fm.gaussian_filter1d(x.astype(np.complex64), 2.0).dtype == np.complex64


def test_complex_torch_autograd():
    x = torch.randn(20, 30, dtype=torch.complex128, requires_grad=True)
    y = fm.gaussian_filter(x, 2.0, truncate=3.0)
    assert y.dtype == torch.complex128
    y.abs().sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape


def test_output_dtype_and_array():
    x = np.random.default_rng(5).random((20, 30)).astype(np.float32)
    y = fm.gaussian_filter(x, 1.5, 0, np.float64)
    assert y.dtype == np.float64
    # computed in float64 (as scipy): agrees with the float64 input's result to rounding
    assert np.abs(y - fm.gaussian_filter(x.astype(np.float64), 1.5)).max() < 1e-15
    out = np.empty((20, 30), np.float32)
    assert fm.gaussian_filter(x, 1.5, output=out) is out
    np.testing.assert_array_equal(out, fm.gaussian_filter(x, 1.5))
    ints = np.empty((20, 30), np.int32)
    fm.gaussian_filter(x * 100, 1.5, output=ints)
    np.testing.assert_array_equal(ints, fm.gaussian_filter((x * 100).astype(np.float64),
                                                           1.5).astype(np.int32))
    same = x.copy()
    fm.gaussian_filter(same, 1.5, output=same)  # in place, as scipy allows
    np.testing.assert_array_equal(same, fm.gaussian_filter(x, 1.5))
    assert fm.gaussian_filter1d(x, 2.0, -1, 0, "float64").dtype == np.float64


def test_output_errors():
    x = np.zeros((5, 6))
    with pytest.raises(ValueError, match="output"):
        fm.gaussian_filter(x, 1.0, output=np.zeros((6, 5)))
    with pytest.raises(TypeError, match="output"):
        fm.gaussian_filter(x, 1.0, output=torch.zeros(5, 6))
    with pytest.raises(TypeError, match="output"):
        fm.gaussian_filter(x, 1.0, output="not a dtype")
    with pytest.raises(TypeError, match="output"):
        fm.gaussian_filter(x + 1j, 1.0, output=np.float64)
    with pytest.raises(TypeError, match="output"):
        fm.gaussian_filter(x, 1.0, output=np.bool_)
    with pytest.raises(TypeError, match="out"):
        fm.gaussian_filter(x, 1.0, output=np.float64, out=np.zeros((5, 6)))
    with pytest.raises(TypeError, match="pass mode='wrap' as a keyword"):
        fm.gaussian_filter1d(x, 1.0, -1, 0, "wrap")


def test_output_with_nan_policy():
    x = np.ones((6, 7))
    x[2, 3] = np.nan
    out = np.empty((6, 7))
    assert fm.gaussian_filter(x, 1.0, output=out, nan_policy="omit") is out
    np.testing.assert_allclose(out, 1.0)


def test_output_torch():
    x = torch.rand(10, 12)
    out = torch.empty(10, 12, dtype=torch.float64)
    assert fm.gaussian_filter(x, 1.0, output=out) is out
    assert fm.gaussian_filter(x, 1.0, output=torch.float64).dtype == torch.float64


@pytest.mark.parametrize("name", ["gaussian_laplace", "gaussian_gradient_magnitude"])
@pytest.mark.parametrize("sigma", [0.7, 2.0, [1.0, 3.0]])
def test_derived_vs_scipy(name, sigma):
    img = np.random.default_rng(6).random((40, 50))
    ours, theirs = getattr(fm, name), getattr(ndimage, name)
    z = theirs(img, sigma)
    np.testing.assert_allclose(ours(img, sigma, kernel="scipy"), z, rtol=0, atol=1e-13)
    # the default is at least as close to the untruncated convolution (of its own kernel) as
    # scipy is to its own: the truncation error of scipy's default bounds ours
    exact = ours(img, sigma, truncate=20.0)
    exact_scipy = ours(img, sigma, truncate=20.0, kernel="scipy")
    assert np.abs(ours(img, sigma) - exact).max() <= np.abs(z - exact_scipy).max() + 1e-12


def test_derived_axes_modes_output():
    vol = np.random.default_rng(7).random((6, 8, 12))
    y = fm.gaussian_laplace(vol, [1.0, 2.0], axes=(0, 2), mode=["reflect", "wrap"])
    ref = (fm.gaussian_filter(vol, [1.0, 2.0], [2, 0], axes=(0, 2), mode="reflect")
           + fm.gaussian_filter(vol, [1.0, 2.0], [0, 2], axes=(0, 2), mode="wrap"))
    np.testing.assert_array_equal(y, ref)
    out = np.empty_like(vol)
    assert fm.gaussian_gradient_magnitude(vol, 1.0, out) is out
    with pytest.raises(ValueError, match="axes must be unique"):
        fm.gaussian_laplace(vol, 1.0, axes=(1, 1))
    np.testing.assert_array_equal(fm.gaussian_laplace(vol, 1.0, axes=()), vol)


def test_derived_torch_autograd():
    x = torch.rand(12, 14, dtype=torch.float64, requires_grad=True)
    for fn in (fm.gaussian_laplace, fm.gaussian_gradient_magnitude):
        y = fn(x, 1.5)
        assert isinstance(y, torch.Tensor) and y.dtype == torch.float64
        assert torch.autograd.gradcheck(lambda t, fn=fn: fn(t, 1.5), (x,))
    flat = torch.ones(8, 8, dtype=torch.float64, requires_grad=True)
    fm.gaussian_gradient_magnitude(flat, 1.0).sum().backward()
    assert torch.isfinite(flat.grad).all()


def test_numpy_scalars_and_sigma_zero():
    x = np.random.default_rng(8).random((10, 12))
    a = fm.gaussian_filter(x, np.float64(1.5), order=np.int64(1), axes=(np.int64(0),))
    b = fm.gaussian_filter(x, 1.5, order=1, axes=(0,))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fm.gaussian_filter(x, np.array(1.5)), fm.gaussian_filter(x,
                                                                                           1.5))
    np.testing.assert_array_equal(fm.gaussian_filter(x, [0, 1.5]),
                                  fm.gaussian_filter1d(x, 1.5, axis=1))
    np.testing.assert_array_equal(fm.gaussian_filter(x, [0, 1.5], truncate=3.0),
                                  fm.gaussian_filter1d(x, 1.5, axis=1, truncate=3.0))
    np.testing.assert_array_equal(fm.gaussian_filter1d(x, 2.0, axis=np.int64(0)),
                                  fm.gaussian_filter1d(x, 2.0, axis=0))


def test_mode_aliases():
    x = np.random.default_rng(9).random(40)
    for alias, mode in (("grid-mirror", "reflect"), ("grid-wrap", "wrap"),
                        ("grid-constant", "constant")):
        np.testing.assert_array_equal(fm.gaussian_filter(x, 2.0, mode=alias),
                                      fm.gaussian_filter(x, 2.0, mode=mode))


def test_huge_truncate_is_cheap_and_exact():
    """Samples beyond 20σ are zero in float64: a huge truncate or radius is the kernel cut
    there (scipy's numbers at a radius it can still form)."""
    x = np.random.default_rng(10).standard_normal(300)
    y = fm.gaussian_filter1d(x, 2.0, order=2, truncate=1e300, kernel="scipy")
    z = ndimage.gaussian_filter1d(x, 2.0, order=2, radius=200)
    assert np.abs(y - z).max() < 1e-15
    assert np.abs(fm.gaussian_filter1d(x, 2.0, radius=10**12) - ndimage.gaussian_filter1d(
        x, 2.0, radius=200)).max() < 1e-15


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("sigma, kw", [(5.0, dict(truncate=3.0)),
                                       (200.0, dict(radius=2000, order=1)),  # folded FFT
                                       (1.5, dict(kernel="scipy", order=2)),
                                       (5.0, dict(order=3))])
def test_truncated_on_cuda(sigma, kw):
    """The truncated kernel on a GPU (Triton FIR, conv1d or the folded FFT) equals the CPU's."""
    x = torch.rand(64, 3000, dtype=torch.float64)
    cpu = fm.gaussian_filter(x, [0, sigma], **kw)
    gpu = fm.gaussian_filter(x.cuda(), [0, sigma], **kw)
    assert torch.allclose(gpu.cpu(), cpu, rtol=0, atol=1e-13)
    lap = fm.gaussian_laplace(x.cuda(), 2.0, kernel="scipy")
    assert torch.allclose(lap.cpu(), fm.gaussian_laplace(x, 2.0, kernel="scipy"), rtol=0,
                          atol=1e-13)


@pytest.mark.slow  # scipy's σ = 5000 FIR on 2e5 samples: most of ~10 s
def test_documented_departures():
    """The numbers of docs/signal.md's table (the order-2 kernel at small σ and at σ = 5000)."""
    from fastmoments.signal.gaussian_truncated import truncated_taps

    sums = {s: float(truncated_taps(s, 2, int(4 * s + 0.5), "scipy").sum())
            for s in (0.5, 0.7, 1.0, 5000.0)}
    np.testing.assert_allclose([sums[0.5], sums[0.7], sums[1.0], sums[5000.0]],
                               [-0.56, -5.0e-3, -7.2e-5, -4.3e-11], rtol=0.02)
    flat = np.full((8, 8), 255.0)
    assert round(float(ndimage.gaussian_laplace(flat, 0.5)[4, 4]), 1) == -285.5
    assert np.abs(fm.gaussian_laplace(flat, 0.5)).max() < 1e-11
    skdata = pytest.importorskip("skimage.data")
    img = skdata.camera().astype(np.float64)
    for sigma, diff, span in ((0.5, 285, 626), (0.7, 2.5, 182)):
        ours, theirs = fm.gaussian_laplace(img, sigma), ndimage.gaussian_laplace(img, sigma)
        assert abs(np.abs(ours - theirs).max() - diff) < 0.02 * diff
        assert abs(np.abs(theirs).max() - span) < 0.01 * span
        np.testing.assert_allclose(fm.gaussian_laplace(img, sigma, kernel="scipy"), theirs,
                                   rtol=0, atol=1e-10)
    n, sigma = 200_000, 5000.0
    t = np.arange(n, dtype=np.float64)
    x = 1000.0 + 0.01 * t + np.sin(2 * np.pi * t / 40000)
    exact = fm.gaussian_filter1d(x, sigma, order=2, truncate=12.0, kernel="scipy")
    inner = slice(30000, n - 30000)
    true = (-(2 * np.pi / 40000) ** 2 * np.sin(2 * np.pi * t / 40000)
            * np.exp(-0.5 * (2 * np.pi * sigma / 40000) ** 2))
    assert np.abs(exact - true)[inner].max() < 1e-13
    assert abs(np.abs(true).max() - 1.8e-8) < 0.02e-8
    leak = np.abs(ndimage.gaussian_filter1d(x, sigma, order=2) - exact)[inner].max()
    assert abs(leak - 1.2e-7) < 0.05e-7
    assert np.abs(fm.gaussian_filter1d(x, sigma, order=2) - exact)[inner].max() < 1e-11
