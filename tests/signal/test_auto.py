"""method="auto": the choice is visible and can be forced, both routes are at least
as accurate as scipy.ndimage's default against the exact convolution, and the numba FIR
agrees with the independent torch route in every boundary mode, on every axis, in both
dtypes."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.ndimage as ndi
import torch

import fastmoments as fm
from fastmoments.signal import GaussianFilter, gaussian, routes
from fastmoments.signal.gaussian_kernels import auto_radius

from ..reference_signal import discrete_gaussian

MODES = ["reflect", "nearest", "mirror", "wrap", "constant"]


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a, dtype=np.float64) - b) / np.linalg.norm(b))


def exact_wrap(x, sigma, order):
    """The untruncated kernel's circular convolution (wrap mode), float64 by FFT."""
    n = x.shape[-1]
    j = np.arange(n)
    j = np.where(j > n // 2, j - n, j)
    w = int(np.ceil(12 * sigma)) + 2
    h = np.zeros(n)
    for k in range(-w, w + 1):
        h[k % n] += discrete_gaussian(np.array([k]), sigma, order)[0]
    return np.real(np.fft.ifft(np.fft.fft(x) * np.fft.fft(h)))


@pytest.mark.parametrize("sigma", [0.5, 1.0, 1.7, 3.0, 8.0])
@pytest.mark.parametrize("order", [0, 1, 2])
def test_auto_at_least_as_accurate_as_scipy(sigma, order):
    """Against the exact (untruncated) convolution, in wrap mode on white noise; the direct
    route of "auto" widens its kernel (auto_radius) so that its tail is below the SFT's
    bound, hence never less accurate than scipy's truncate=4."""
    x = np.random.default_rng(0).standard_normal(4096)
    ref = exact_wrap(x, sigma, order)
    e_fm = rel(fm.gaussian_filter1d(x, sigma, order=order, mode="wrap"), ref)
    e_sp = rel(ndi.gaussian_filter1d(x, sigma, order=order, mode="wrap"), ref)
    if order == 2:  # scipy's order-2 kernel does not sum to zero: compare to our target
        e_sp = max(e_sp, 0.0)
    assert e_fm <= 1e-4 + 1e-12
    assert e_fm <= 1.01 * e_sp + 1e-13
    assert auto_radius(sigma, order) >= int(4 * sigma + 0.5)


def test_choice_is_visible_and_forced_methods_are_kept():
    x = np.random.default_rng(1).standard_normal(1000)
    plan = GaussianFilter(1.0)
    assert plan.requested == "auto" and plan.method == "auto"
    assert plan.choose(1000) == "direct"
    plan(x)
    assert plan.method == "direct"
    big = GaussianFilter(8192.0)
    assert big.choose(100_000) == "sft"
    for method in ("sft", "asft", "direct"):
        p = GaussianFilter(3.0, method=method)
        assert p.choose(1000) == method
        p(x)
        assert p.method == method
    # forcing gives each route's result; they agree to their accuracy
    ys = {m: fm.gaussian_filter1d(x, 3.0, method=m) for m in ("auto", "sft", "direct")}
    assert rel(ys["sft"], ys["direct"]) < 3e-4
    with pytest.raises(ValueError, match="method must be one of 'auto', 'sft'"):
        GaussianFilter(3.0, method="fir")
    with pytest.raises(ValueError, match="shift is only used with method='asft'"):
        fm.gaussian_filter(x, 3.0, shift=1)


def test_selection_from_the_table_and_without_one(monkeypatch):
    assert routes.faster_method(1000, 0.5, 0, 4.0, "float64", "cpu") == "direct"
    assert routes.faster_method(10**6, 8192.0, 2, 4.0, "float32", "cpu") == "sft"
    monkeypatch.setattr(routes, "DIRECT_UP_TO", {("cpu", "float64", 0): (
        (1000, 100.0, 10.0), (100_000, 10.0, 1.0))})
    monkeypatch.setattr(routes, "BATCH", 1 << 18)
    assert routes.crossover_sigma(1000, 0, "float64", "cpu") == pytest.approx(100.0)
    assert routes.crossover_sigma(10_000, 0, "float64", "cpu") == pytest.approx(
        np.sqrt(100.0 * 10.0))
    assert routes.crossover_sigma(1000, 0, "float64", "cpu", batch=263) == pytest.approx(
        10.0)
    assert routes.crossover_sigma(5, 0, "float64", "cpu") == pytest.approx(100.0)
    assert routes.crossover_sigma(10**7, 0, "float64", "cpu") == pytest.approx(10.0)
    assert routes.faster_method(1000, 50.0, 0, 4.0, "float64", "cpu") == "direct"
    assert routes.faster_method(1000, 50.0, 0, 4.0, "float64", "cpu", 1000) == "sft"
    # no table for the device: the FIR while the kernel has at most 25 taps
    assert routes.crossover_sigma(1000, 1, "float64", "cpu") is None
    assert routes.faster_method(1000, 3.0, 1, 4.0, "float64", "cpu") == "direct"
    assert routes.faster_method(1000, 3.1, 1, 4.0, "float64", "cpu") == "sft"


def test_the_route_is_decided_once_per_key_and_shown(monkeypatch):
    """A plan asks the route table once per key (length, batch, dtype, device, engine), keeps
    the route, shows it (``plan.route``, ``repr``), and the one-call functions take their
    plans' routes: an image's two axes ask once each on the first call, never again."""
    calls = []
    real = gaussian.gaussian_route
    monkeypatch.setattr(gaussian, "gaussian_route", lambda **k: calls.append(k) or real(**k))
    plan = GaussianFilter(2.5)
    x = np.random.default_rng(4).standard_normal(3000)
    assert plan.route is None and "route" not in repr(plan)
    for _ in range(3):
        plan(x)
    assert len(calls) == 1
    assert str(plan.route) == "direct/numba:fir" and "route='direct/numba:fir'" in repr(plan)
    assert plan.route.reason
    plan(torch.from_numpy(x).float())  # another dtype: another key
    assert len(calls) == 2 and plan.route.method in ("direct", "sft")
    big = GaussianFilter(8192.0)
    big(x)
    assert str(big.route) == "folded/torch:fft"
    sft = GaussianFilter(300.0, method="sft")
    sft(x)
    assert (sft.route.method, sft.route.backend) == ("sft", "numba")
    calls.clear()
    img = np.random.default_rng(5).standard_normal((37, 41))
    from fastmoments._cache import clear_plan_caches

    clear_plan_caches()
    for _ in range(3):
        fm.gaussian_filter(img, 300.0)
    assert len(calls) == 2  # one per axis length, on the first call only


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_numba_fir_equals_the_torch_route(mode, dtype):
    """Numba loops (NumPy or tensor in, no gradient) against the conv1d route of the same
    kernel (a tensor that requires grad), including signals shorter than the kernel, every
    axis of a volume and non-contiguous input."""
    rng = np.random.default_rng(2)
    tol = 1e-13 if dtype == torch.float64 else 3e-6
    for shape in [(1,), (2,), (3, 5), (7, 4, 9), (2, 300)]:
        x = torch.as_tensor(rng.standard_normal(shape), dtype=dtype)
        for sigma, order in ((0.4, 0), (1.0, 1), (2.3, 2), (4.0, 0)):
            for axis in range(-1, -len(shape) - 1, -1):
                kw = dict(axis=axis, order=order, mode=mode, cval=0.4, method="direct")
                fast = fm.gaussian_filter1d(x.numpy(), sigma, **kw)
                slow = fm.gaussian_filter1d(x.clone().requires_grad_(True), sigma, **kw)
                slow = slow.detach().numpy()
                scale = max(np.abs(slow).max(), 1.0)
                np.testing.assert_allclose(fast, slow, rtol=0, atol=tol * scale)
                assert fast.dtype == slow.dtype
        if len(shape) == 3:
            xt = x.transpose(0, 2).numpy()  # not contiguous
            keep = xt.copy()
            y = fm.gaussian_filter(xt, [1.0, 0.5, 2.0], mode=mode)
            np.testing.assert_array_equal(xt, keep)
            ref = fm.gaussian_filter(np.ascontiguousarray(xt), [1.0, 0.5, 2.0], mode=mode)
            np.testing.assert_allclose(y, ref, rtol=0, atol=tol)


def test_fir_out_nan_and_gradients():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 64))
    out = np.empty_like(x)
    assert fm.gaussian_filter(x, 1.5, out=out) is out
    np.testing.assert_allclose(out, fm.gaussian_filter(x, 1.5), rtol=0, atol=0)
    strided = np.empty((5, 128))[:, ::2]
    assert fm.gaussian_filter(x, 1.5, out=strided) is strided
    np.testing.assert_allclose(strided, out, rtol=0, atol=0)
    with pytest.raises(TypeError, match="out must have dtype float64"):
        fm.gaussian_filter(x, 1.5, out=np.empty((5, 64), np.float32))
    with pytest.raises(ValueError, match="overlap"):
        fm.gaussian_filter(x, 1.5, out=x)
    for bad in (np.nan, np.inf):
        xb = x.copy()
        xb[2, 7] = bad
        with pytest.raises(ValueError, match="NaN or infinity"):
            fm.gaussian_filter(xb, 1.0)
        with pytest.raises(ValueError, match="NaN or infinity"):
            fm.gaussian_filter1d(torch.from_numpy(xb), 1.0, order=1)
    t = torch.tensor(x[:2, :20], requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda v: fm.gaussian_filter(v, 1.2, order=[0, 1], method="direct"), (t,))


def test_import_does_not_import_numba():
    code = "import sys, fastmoments; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_gpu_routes_from_the_table(monkeypatch):
    """The table's GPU answers, asked on any machine: the fused Triton kernels for the SFT
    (the torch engine for a bank they do not take), the CUDA C++ kernel for a large float32
    batch when CuPy is there, the Triton FIR or conv1d for the direct method."""
    pytest.importorskip("triton")
    from fastmoments.signal import cuda_sft

    monkeypatch.setattr(cuda_sft, "cupy", None)
    plan = GaussianFilter(64.0)
    assert str(plan.route_for(102400, batch=1000, dtype="float32", device="cuda")) == \
        "sft/triton:fused"
    assert str(GaussianFilter(1.5, method="asft").route_for(1000, device="cuda")) == \
        "asft/torch:chunked"  # α C > 1: not for the fused kernels
    assert str(GaussianFilter(2.0, method="direct").route_for(1000, device="cuda")) == \
        "direct/triton:fir"
    assert str(GaussianFilter(20.0, method="direct").route_for(1000, device="cuda")) == \
        "direct/torch:conv1d"  # W = 80 > TRITON_FIR_RADIUS
    monkeypatch.setattr(cuda_sft, "cupy", object())  # CuPy present (nothing is compiled)
    plan = GaussianFilter(64.0)
    assert str(plan.route_for(102400, batch=1000, dtype="float32", device="cuda")) == \
        "sft/cuda:sft_rows"
    assert plan.route_for(102400, batch=10, dtype="float32", device="cuda").backend == "triton"
    assert plan.route_for(102400, batch=1000, dtype="float64", device="cuda").backend == \
        "triton"
