"""gaussian_filter means what scipy.ndimage.gaussian_filter means: every axis by
default, axes=, channel_axis=, per-axis sigma/order/mode, gaussian_filter1d for one axis, the
old axis= keyword refused with a pointer, integer input, device lists."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as ndi
import torch

import fastmoments as fm
from fastmoments.signal import gaussian_filter, gaussian_filter1d

MODES = ["reflect", "nearest", "mirror", "wrap", "constant"]
# σ with 4σ an integer: scipy's radius round(4σ) equals ours ceil(4σ), so method="direct"
# applies exactly scipy's kernel (orders 0 and 1) and agrees to rounding
EXACT_SIGMAS = [0.5, 1.0, 2.0, 2.5]


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - b) / np.linalg.norm(b))


@pytest.mark.parametrize("sigma", EXACT_SIGMAS)
@pytest.mark.parametrize("mode", MODES)
def test_every_axis_by_default_like_scipy(sigma, mode):
    rng = np.random.default_rng(1)
    for shape in [(17, 23), (5, 9, 11)]:
        x = rng.standard_normal(shape)
        for order in (0, 1):
            y = gaussian_filter(x, sigma, order=order, mode=mode, cval=0.3, method="direct")
            ref = ndi.gaussian_filter(x, sigma, order=order, mode=mode, cval=0.3)
            np.testing.assert_allclose(y, ref, rtol=0, atol=1e-13 * np.abs(ref).max())


def test_default_is_not_the_last_axis_only():
    """The former bug: a 2-D image was smoothed along rows only (28-52% off scipy)."""
    img = np.random.default_rng(2).random((64, 64))
    y = gaussian_filter(img, 3.0)
    assert rel(y, ndi.gaussian_filter(img, 3.0)) < 1e-4
    assert rel(gaussian_filter1d(img, 3.0), ndi.gaussian_filter(img, 3.0)) > 0.05


def test_per_axis_sigma_order_mode_and_axes():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((12, 15, 18))
    y = gaussian_filter(x, [1.0, 2.0, 0.5], order=[1, 0, 1], mode=["wrap", "nearest", "mirror"],
                        method="direct")
    ref = ndi.gaussian_filter(x, [1.0, 2.0, 0.5], order=[1, 0, 1],
                              mode=["wrap", "nearest", "mirror"])
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-13 * np.abs(ref).max())
    y = gaussian_filter(x, [2.0, 1.0], axes=(2, 0), order=[0, 1], method="direct")
    ref = ndi.gaussian_filter(x, [2.0, 1.0], axes=(2, 0), order=[0, 1])
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-13 * np.abs(ref).max())
    with pytest.raises(ValueError, match="mode must be a scalar or have one entry per axis"):
        gaussian_filter(x, 1.0, mode=["wrap", "nearest"])
    with pytest.raises(ValueError, match="order must be a scalar or have one entry per axis"):
        gaussian_filter(x, 1.0, order=[0, 1], axes=(0,))


def test_channel_axis_is_never_filtered():
    rng = np.random.default_rng(4)
    rgb = rng.random((20, 24, 3))
    y = gaussian_filter(rgb, 2.0, channel_axis=-1)
    for c in range(3):
        np.testing.assert_allclose(y[..., c], gaussian_filter(rgb[..., c], 2.0), rtol=0,
                                   atol=1e-14)
    chw = np.moveaxis(rgb, -1, 0)
    np.testing.assert_allclose(gaussian_filter(chw, 2.0, channel_axis=0),
                               np.moveaxis(y, -1, 0), rtol=0, atol=1e-14)
    np.testing.assert_allclose(gaussian_filter(rgb, [2.0, 1.0], channel_axis=2),
                               gaussian_filter(rgb, [2.0, 1.0], axes=(0, 1)), rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="channel_axis"):
        gaussian_filter(rgb, 2.0, axes=(0, 2), channel_axis=-1)
    with pytest.raises(ValueError, match="channel_axis=3 is out of range"):
        gaussian_filter(rgb, 2.0, channel_axis=3)
    with pytest.raises(TypeError, match="channel_axis must be an integer"):
        gaussian_filter(rgb, 2.0, channel_axis=1.0)


def test_old_axis_keyword_is_a_clear_type_error():
    x = np.ones((4, 5))
    with pytest.raises(TypeError, match=r"gaussian_filter1d\(x, sigma, axis=\.\.\.\)") as e:
        gaussian_filter(x, 1.0, axis=0)
    assert "axes=(axis,)" in str(e.value)
    with pytest.raises(TypeError, match="unexpected keyword argument 'axs'"):
        gaussian_filter(x, 1.0, axs=(0,))


@pytest.mark.parametrize("mode", MODES)
def test_gaussian_filter1d_like_scipy(mode):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 40))
    for axis in (0, -1, 1):
        for order in (0, 1):
            y = gaussian_filter1d(x, 2.0, axis=axis, order=order, mode=mode, cval=-0.2,
                                  method="direct")
            ref = ndi.gaussian_filter1d(x, 2.0, axis=axis, order=order, mode=mode, cval=-0.2)
            np.testing.assert_allclose(y, ref, rtol=0, atol=1e-13 * np.abs(ref).max())
            # positional arguments in scipy's order (input, sigma, axis, order, output, ...)
            y2 = gaussian_filter1d(x, 2.0, axis, order, None, mode, -0.2, method="direct")
            np.testing.assert_array_equal(y, y2)
    with pytest.raises(TypeError, match="axis must be an integer"):
        gaussian_filter1d(x, 2.0, axis=(0, 1))
    with pytest.raises(TypeError, match="sigma must be a real number"):
        gaussian_filter1d(x, [2.0, 1.0])
    with pytest.raises(ValueError, match="axis=2 is out of range"):
        gaussian_filter1d(x, 2.0, axis=2)
    assert fm.gaussian_filter1d is gaussian_filter1d and "gaussian_filter1d" in fm.__all__


def test_integer_input_gives_float32_not_scipys_integer_dtype():
    """Documented choice: integers are filtered in float32 and returned as float32 (the
    package's dtype policy); scipy returns the integer dtype, which wraps the negative values
    of a derivative around for unsigned input."""
    img = np.repeat(np.arange(8, 0, -1, dtype=np.uint8) * 20, 8).reshape(8, 8)  # falls
    y = gaussian_filter(img, 1.0, order=[1, 0])
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, gaussian_filter(img.astype(np.float32), 1.0, order=[1, 0]),
                               rtol=0, atol=0)
    assert (y < -5).all()  # the derivative of a falling ramp; scipy's uint8 wraps it around
    assert (ndi.gaussian_filter(img, 1.0, order=[1, 0]) > 200).all()
    assert gaussian_filter1d(np.arange(10), 1.0).dtype == np.float32
    assert gaussian_filter(np.arange(10, dtype=np.int64), 300.0).dtype == np.float32
    t = gaussian_filter(torch.arange(10), 1.0)
    assert t.dtype == torch.float32


def test_float32_stays_float32_on_every_route():
    x = np.random.default_rng(6).standard_normal((16, 300)).astype(np.float32)
    for method in ("auto", "direct", "sft", "asft"):
        y = gaussian_filter(x, 6.0, method=method)
        assert y.dtype == np.float32
        yt = gaussian_filter(torch.from_numpy(x), 6.0, method=method)
        assert yt.dtype == torch.float32


def test_device_lists():
    """Split along the axes that are not filtered; with every axis filtered there is none
    and the call runs on the first device of the list (documented)."""
    x = np.random.default_rng(7).standard_normal((6, 50))
    devs = ["cpu", "cpu"]
    np.testing.assert_allclose(gaussian_filter(x, 2.0, device=devs), gaussian_filter(x, 2.0),
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(gaussian_filter(x, 2.0, channel_axis=0, device=devs),
                               gaussian_filter1d(x, 2.0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(gaussian_filter1d(x, 40.0, axis=0, device=devs),
                               gaussian_filter1d(x, 40.0, axis=0), rtol=0, atol=1e-15)
    assert "device : str" in gaussian_filter.__doc__
    assert "runs on the first device" in gaussian_filter.__doc__


def test_numpy_integer_axes_zero_sigma_axes_and_0d_sigma_as_in_scipy(rng):
    """NumPy integers are integers (axis, axes); σ = 0 on an axis leaves it alone and a 0-d
    array σ is its value, as scipy.ndimage takes them."""
    from scipy import ndimage as ndi

    x = rng.random((20, 30))
    np.testing.assert_allclose(fm.gaussian_filter(x, 2.0, axes=(np.int64(0),)),
                               fm.gaussian_filter(x, 2.0, axes=(0,)), rtol=0, atol=1e-15)
    np.testing.assert_allclose(fm.gaussian_filter1d(x, 2.0, axis=np.int32(0)),
                               fm.gaussian_filter1d(x, 2.0, axis=0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(fm.cwt(x, [2.0], axis=np.int64(0))[0],
                               fm.cwt(x, [2.0], axis=0)[0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(fm.gaussian_filter(x, np.array(2.0)),
                               fm.gaussian_filter(x, 2.0), rtol=0, atol=1e-15)
    # sigma 0 on axis 0: only axis 1 is smoothed (scipy's kernel at truncate=12 is exact to
    # rounding; ours to its stated error, well below 1e-5 here)
    np.testing.assert_allclose(fm.gaussian_filter(x, (0, 2.0)),
                               ndi.gaussian_filter(x, (0, 2.0), truncate=12.0), atol=1e-5)
    np.testing.assert_array_equal(fm.gaussian_filter(x, 0), x)
    with pytest.raises(ValueError, match="sigma"):
        fm.gaussian_filter(x, -1.0)
