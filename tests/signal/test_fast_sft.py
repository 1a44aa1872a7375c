"""The NumPy route of the SFT (gaussian_paths._fast_sft): NumPy signals filtered along one
axis by the SFT go straight to the numba engine, with the same values, bit for bit, as the
general path (torch input) and the same errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.signal import gaussian, gaussian_paths
from fastmoments.signal._apply import numba_available

pytestmark = pytest.mark.skipif(not numba_available(), reason="needs numba")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("mode", ["reflect", "nearest", "mirror", "wrap", "constant"])
@pytest.mark.parametrize(("shape", "axis"), [((3000,), -1), ((2, 2500), 1), ((2200, 2), 0)])
def test_numpy_route_equals_the_general_path(dtype, order, mode, shape, axis, monkeypatch):
    sigma = 300.0  # the SFT's side of the crossover at these lengths, both dtypes
    n = shape[axis]
    route = gaussian._cached_plan(sigma, order, "auto", None, None, 4.0).route_for(
        n, batch=int(np.prod(shape)) // n, dtype=np.dtype(dtype).name)
    assert (route.method, route.backend) == ("sft", "numba")
    calls = []
    real = gaussian_paths._fast_sft
    monkeypatch.setattr(gaussian_paths, "_fast_sft", lambda *a: calls.append(1) or real(*a))
    x = np.random.default_rng(order).standard_normal(shape).astype(dtype)
    y = fm.gaussian_filter1d(x, sigma, axis=axis, order=order, mode=mode, cval=0.3)
    assert calls and isinstance(y, np.ndarray) and y.dtype == dtype and y.shape == x.shape
    ref = fm.gaussian_filter1d(torch.from_numpy(x), sigma, axis=axis, order=order, mode=mode,
                               cval=0.3).numpy()
    np.testing.assert_array_equal(y, ref)


def test_numpy_route_refuses_nan_and_leaves_the_input_alone():
    x = np.random.default_rng(0).standard_normal(4000)
    x[1234] = np.nan
    keep = x.copy()
    with pytest.raises(ValueError, match="NaN or infinity"):
        fm.gaussian_filter1d(x, 300.0)
    np.testing.assert_array_equal(x, keep)


def test_numpy_route_leaves_large_jobs_to_the_general_path(monkeypatch):
    monkeypatch.setattr(gaussian_paths, "FAST_SFT_MAX", 100)
    x = np.random.default_rng(1).standard_normal(4000)
    plan = gaussian._cached_plan(300.0, 0, "auto", None, None, 4.0)
    assert gaussian_paths._fast_sft(x, 0, plan, "reflect", 0.0) is None


@pytest.mark.parametrize("requested", ["auto", "sft"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_plan_takes_the_numpy_route_with_the_same_values(requested, dtype, monkeypatch):
    calls = []
    real = gaussian._fast_sft
    monkeypatch.setattr(gaussian, "_fast_sft", lambda *a: calls.append(1) or real(*a))
    plan = fm.signal.GaussianFilter(300.0, order=1, method=requested)
    x = np.random.default_rng(2).standard_normal((2, 3000)).astype(dtype)
    y = plan(x, mode="nearest")
    assert calls and plan.method == "sft" and y.dtype == dtype
    np.testing.assert_array_equal(y, plan(torch.from_numpy(x), mode="nearest").numpy())
    with pytest.raises(ValueError, match="mode"):  # the general path's checks still answer
        plan(x, mode="sideways")
