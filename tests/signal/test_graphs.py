"""Replayed CUDA graphs of repeated signal calls (fastmoments._cuda_graph).

On the CPU the mechanism must stay out of the way (every call eager, results unchanged); the
CUDA tests check that a replayed call returns exactly the eager result, still raises for NaN,
and keeps the plan's reported method.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments._cuda_graph import WARM_CALLS, GraphCache, enabled, plain_key
from fastmoments._cuda_graph import graph_cache as plan_cache
from fastmoments.signal import CWT, GaussianFilter, MorletTransform

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_plain_key_separates_types_and_refuses_arrays():
    assert plain_key(1, 2.0) != plain_key(1.0, 2.0)
    assert plain_key(True) != plain_key(1)
    assert plain_key([1, 2], "reflect") == plain_key((1, 2), "reflect")
    assert plain_key(np.array([1.0])) is None
    assert plain_key([1, np.float32(2.0)]) is None
    assert plain_key(None, "x") == (("None", None), ("str", "x"))


@pytest.mark.parametrize(("value", "on"), [(None, True), ("1", True), ("0", False),
                                           ("off", False), (" False ", False), ("no", False)])
def test_the_switch(monkeypatch, value, on):
    if value is None:
        monkeypatch.delenv("FASTMOMENTS_CUDA_GRAPHS", raising=False)
    else:
        monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", value)
    assert enabled() is on


def test_cpu_calls_stay_eager_and_unchanged():
    rng = np.random.default_rng(0)
    x = torch.as_tensor(rng.standard_normal((3, 500)))
    plan = GaussianFilter(4.0)
    ref = plan(x)
    for _ in range(WARM_CALLS + 2):
        torch.testing.assert_close(plan(x), ref, rtol=0, atol=0)
    assert len(plan_cache(plan)) == 0


def test_cache_on_cpu_returns_none():
    cache = GraphCache()
    assert cache.call(torch.ones(4), ("k",), lambda t: t * 2, True, 32) is None
    assert len(cache) == 0


def test_plans_with_a_cache_pickle_without_graphs():
    plan = GaussianFilter(3.0)
    plan_cache(plan)
    back = pickle.loads(pickle.dumps(plan))
    assert isinstance(plan_cache(back), GraphCache)
    assert len(plan_cache(back)) == 0
    x = np.linspace(0.0, 1.0, 50)
    np.testing.assert_allclose(back(x), plan(x), rtol=1e-12, atol=1e-15)


def _calls(fn, x, n):
    return [fn(x) for _ in range(n)]


@cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("sigma", [1.5, 16.0, 300.0])
def test_gaussian_replay_matches_eager_bitwise(monkeypatch, dtype, sigma):
    rng = np.random.default_rng(1)
    x = torch.as_tensor(rng.standard_normal((2, 4096)), dtype=dtype, device="cuda")
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "0")
    eager = GaussianFilter(sigma, order=1)(x)
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "1")
    plan = GaussianFilter(sigma, order=1)
    ys = _calls(plan, x, WARM_CALLS + 3)
    assert len(plan_cache(plan)) == 1, plan_cache(plan).failures
    for y in ys:
        assert y.device == x.device and y.dtype == eager.dtype
        torch.testing.assert_close(y, eager, rtol=0, atol=0)  # the same kernels: bit-exact
    assert ys[-1].data_ptr() != ys[-2].data_ptr()  # every call gets its own result


@cuda
def test_one_call_functions_replay(monkeypatch):
    rng = np.random.default_rng(2)
    x = torch.as_tensor(rng.standard_normal(20000), dtype=torch.float32, device="cuda")
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "0")
    ref_g = fm.signal.gaussian_filter1d(x, 16.0)
    ref_m = fm.signal.morlet_transform(x, 20.0)
    ref_c = fm.signal.cwt(x, [4.0, 8.0, 16.0])[0]
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "1")
    for _ in range(WARM_CALLS + 2):
        torch.testing.assert_close(fm.signal.gaussian_filter1d(x, 16.0), ref_g, rtol=0, atol=0)
        torch.testing.assert_close(fm.signal.morlet_transform(x, 20.0), ref_m, rtol=0, atol=0)
        torch.testing.assert_close(fm.signal.cwt(x, [4.0, 8.0, 16.0])[0], ref_c, rtol=0,
                                   atol=0)
    # typed keys: an int σ, a derivative order, a list of axes replay their own calls
    from fastmoments.signal import gaussian_calls

    gaussian_calls._GRAPHS.clear()
    calls = [lambda: fm.signal.gaussian_filter1d(x, 16),
             lambda: fm.signal.gaussian_filter1d(x, 16.0),
             lambda: fm.signal.gaussian_filter1d(x, 16.0, order=1),
             lambda: fm.signal.gaussian_filter(x, 16.0, axes=[0])]
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "0")
    refs = [call() for call in calls]
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "1")
    for _ in range(WARM_CALLS + 2):
        for call, ref in zip(calls, refs, strict=True):
            torch.testing.assert_close(call(), ref, rtol=0, atol=0)
    assert len(gaussian_calls._GRAPHS) == 4, gaussian_calls._GRAPHS.failures


@cuda
@pytest.mark.parametrize("make", [lambda: GaussianFilter(8.0), lambda: MorletTransform(12.0),
                                  lambda: CWT([3.0, 9.0])])
def test_replayed_call_still_refuses_nan(make):
    plan = make()
    x = torch.linspace(0, 1, 3000, device="cuda")
    for _ in range(WARM_CALLS + 2):  # captured at the third call
        plan(x)
    assert len(plan_cache(plan)) == 1, plan_cache(plan).failures
    (entry,) = [e for e in plan_cache(plan)._entries.values() if hasattr(e, "graph")]
    assert entry.host is not None  # the graph copies its flag to pinned host memory
    bad = x.clone()
    bad[1234] = float("nan")
    with pytest.raises(ValueError, match="NaN or infinity"):
        plan(bad)
    bad[1234] = float("inf")
    with pytest.raises(ValueError, match="NaN or infinity"):
        plan(bad)
    y = plan(bad, check_finite=False)  # the documented opt-out: no error
    assert not torch.isfinite(y).all()
    assert torch.isfinite(plan(x)).all()  # the graph is still good afterwards


@cuda
def test_replay_keeps_method_and_separates_shapes():
    plan = GaussianFilter(2.0)
    short = torch.randn(64, device="cuda", dtype=torch.float64)
    long = torch.randn(200_000, device="cuda", dtype=torch.float64)
    for _ in range(WARM_CALLS + 1):
        plan(short)
        m_short = plan.method
        plan(long)
        m_long = plan.method
    plan(short)
    assert plan.method == m_short
    plan(long)
    assert plan.method == m_long
    assert len(plan_cache(plan)) == 2


@cuda
def test_not_captured_with_grad_or_noncontiguous():
    plan = GaussianFilter(5.0)
    x = torch.randn(4, 1000, device="cuda", requires_grad=True)
    for _ in range(WARM_CALLS + 2):
        y = plan(x)
    y.sum().backward()
    assert x.grad is not None
    xt = torch.randn(1000, 4, device="cuda").t()
    for _ in range(WARM_CALLS + 2):
        plan(xt)
    assert len(plan_cache(plan)) == 0


@cuda
def test_threads_calling_one_plan_get_eager_results():
    import threading

    plan = GaussianFilter(12.0)
    x = torch.randn(4, 5000, device="cuda")
    ref = GaussianFilter(12.0)(x)
    errors = []

    def work():
        try:
            for _ in range(WARM_CALLS + 6):
                torch.testing.assert_close(plan(x), ref, rtol=0, atol=0)
        except Exception as exc:  # reported below, from the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert len(plan_cache(plan)) == 1


@cuda
def test_graphs_switched_off(monkeypatch):
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "0")
    plan = GaussianFilter(8.0)
    x = torch.randn(3000, device="cuda")
    for _ in range(WARM_CALLS + 2):
        plan(x)
    assert len(plan_cache(plan)) == 0


def test_the_cache_counts_warm_calls_and_bounds_its_keys():
    """The bookkeeping of :meth:`GraphCache.call` without a GPU: a key runs eagerly for
    ``WARM_CALLS`` calls, then one caller captures it while the others stay eager; failed
    keys stay eager; the least recently used keys are dropped."""
    from fastmoments._cuda_graph import _CAPTURING, _FAILED

    cache = GraphCache(max_graphs=3)
    assert [cache._lookup("a") for _ in range(WARM_CALLS)] == [None] * WARM_CALLS
    assert cache._lookup("a") == WARM_CALLS  # this caller captures
    assert cache._entries["a"] == _CAPTURING and cache._lookup("a") is None
    cache._entries["a"] = _FAILED
    assert cache._lookup("a") is None and len(cache) == 0
    for key in ("b", "c", "d"):
        cache._lookup(key)
    assert "a" not in cache._entries and len(cache._entries) == 3
    assert cache._lookup(["unhashable"]) is None
