"""Replayed CUDA graphs of repeated signal calls (fastmoments.signal.graphs).

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
from fastmoments.signal import CWT, GaussianFilter, MorletTransform
from fastmoments.signal.graphs import WARM_CALLS, GraphCache, eligible, plain_key, plan_cache

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_plain_key_separates_types_and_refuses_arrays():
    assert plain_key(1, 2.0) != plain_key(1.0, 2.0)
    assert plain_key(True) != plain_key(1)
    assert plain_key([1, 2], "reflect") == plain_key((1, 2), "reflect")
    assert plain_key(np.array([1.0])) is None
    assert plain_key([1, np.float32(2.0)]) is None
    assert plain_key(None, "x") == (("NoneType", None), ("str", "x"))


def test_eligible_only_cuda_tensors_without_options():
    x = torch.zeros(8)
    assert not eligible(x, None, None, None)  # a CPU tensor
    assert not eligible(x.numpy(), None, None, None)


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


def test_the_wait_for_an_early_verdict(monkeypatch):
    """``_await_verdict`` (a replay whose kernel writes the NaN/inf verdict before it ends):
    reads the host byte while it is pending, then waits for the stream; a stream that ends
    without the write is an error, never a silent pass."""
    from fastmoments.signal import graphs

    class Stream:  # the kernel's write lands when the stream is waited for, or never
        def __init__(self, view, lands):
            self.view, self.lands, self.waits = view, lands, 0

        def synchronize(self):
            self.waits += 1
            if self.lands is not None:
                self.view[()] = self.lands

    view = np.full((), 1, dtype=np.uint8)  # written already: no wait
    stream = Stream(view, None)
    graphs._await_verdict(view, stream)
    assert stream.waits == 0
    for reads in (0, 5):
        monkeypatch.setattr(graphs, "SPIN_READS", reads)
        for verdict in (0, 1):
            view[()] = graphs._PENDING
            stream = Stream(view, verdict)
            graphs._await_verdict(view, stream)
            assert stream.waits == 1 and view[()] == verdict
        view[()] = graphs._PENDING
        with pytest.raises(RuntimeError, match="did not report"):
            graphs._await_verdict(view, Stream(view, None))


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
    # the exact-type key of gaussian_filter1d and the typed key of other spellings: an int σ,
    # a derivative order, a list of axes, replay their own calls
    from fastmoments.signal import gaussian

    gaussian._GRAPHS.clear()
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
    keys = [k[0] for k in gaussian._GRAPHS._entries]
    assert sum(k[0] == "1d" for k in keys) == 2, keys  # σ = 16.0, orders 0 and 1
    assert len(keys) == 4, keys


@cuda
@pytest.mark.parametrize("make", [lambda: GaussianFilter(8.0), lambda: MorletTransform(12.0),
                                  lambda: CWT([3.0, 9.0])])
def test_replayed_call_still_refuses_nan(make):
    plan = make()
    x = torch.linspace(0, 1, 3000, device="cuda")
    for _ in range(WARM_CALLS + 2):  # recorded at the third call, or captured at the fourth
        plan(x)
    assert len(plan_cache(plan)) == 1, plan_cache(plan).failures
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


# ------------------------------------------------------------------ recorded launches
def _three_inputs(n, dtype=torch.float32, seed=5):
    rng = np.random.default_rng(seed)
    return [torch.as_tensor(rng.standard_normal(n), dtype=dtype, device="cuda")
            for _ in range(3)]


@cuda
@pytest.mark.parametrize("make", [
    lambda: GaussianFilter(1.5), lambda: GaussianFilter(16.0, order=1),
    lambda: GaussianFilter(300.0, order=2), lambda: MorletTransform(20.0)],
    ids=["fir", "sft-order1", "sft-order2", "morlet"])
def test_single_signals_replay_their_launches_bitwise(monkeypatch, make):
    xs = _three_inputs(20000)
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "0")
    eager = [make()(x) for x in xs]
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "1")
    plan = make()
    for k in range(WARM_CALLS + 6):  # a new input each call: the pointers are remapped
        y = plan(xs[k % 3])
        torch.testing.assert_close(y, eager[k % 3], rtol=0, atol=0)
    assert plan_cache(plan).kinds() == ["launches"], plan_cache(plan).failures
    # the SFT's one-launch kernel writes its NaN/inf verdict early; the FIR's at its end
    prog = _programs(plan)[0]
    assert prog.signals == (not isinstance(make(), GaussianFilter) or make().sigma > 2)
    assert len(prog._steps) == 1  # one launch per call: the FIR, or the one-launch SFT
    a, b = plan(xs[0]), plan(xs[0])
    assert a.data_ptr() != b.data_ptr()  # a fresh result each call
    torch.testing.assert_close(plan(xs[1], check_finite=False), eager[1], rtol=0, atol=0)
    for x in xs:
        assert torch.isfinite(x).all()  # the input is left alone


@cuda
@pytest.mark.parametrize("make", [lambda: GaussianFilter(16.0, order=2),
                                  lambda: CWT([3.0, 40.0])], ids=["sft-order2", "cwt"])
def test_driver_replays_give_tritons_bits_and_fall_back(monkeypatch, make):
    """With CuPy and a checked Triton, each replayed launch is made by the driver from its
    parameter block (:class:`fastmoments._triton.DriverLaunch`): the bits of the launches
    through Triton's launcher, the NaN/inf error, and Triton's launcher again for a launch
    the driver refuses."""
    pytest.importorskip("cupy")
    from fastmoments import _triton

    if not _triton._driver_abi():
        pytest.skip("the driver launches are not enabled for this Triton")
    xs = _three_inputs(20000)
    plan = make()
    for _ in range(WARM_CALLS + 2):
        plan(xs[0])
    progs = _programs(plan)
    assert progs and all(p._drivers is not None for p in progs)
    driven = [plan(x) for x in xs]
    kept = [p._drivers for p in progs]
    for p in progs:
        p._drivers = None  # Triton's launcher
    for x, y in zip(xs, driven, strict=True):
        torch.testing.assert_close(plan(x), y, rtol=0, atol=0)
    for p, d in zip(progs, kept, strict=True):
        p._drivers = d
    bad = xs[1].clone()
    bad[123] = float("inf")
    with pytest.raises(ValueError, match="NaN or infinity"):
        plan(bad)
    refused = []
    first = kept[0][0][0]

    def refuse(*args):
        refused.append(1)
        raise first._error(1)

    monkeypatch.setattr(first, "_launch", refuse)
    torch.testing.assert_close(plan(xs[2]), driven[2], rtol=0, atol=0)
    assert refused == [1]


@cuda
@pytest.mark.parametrize("make", [lambda: GaussianFilter(1.5), lambda: GaussianFilter(40.0),
                                  lambda: MorletTransform(12.0)], ids=["fir", "sft", "morlet"])
def test_replayed_launches_refuse_nan_and_recover(make):
    plan = make()
    x = torch.linspace(0, 1, 5000, device="cuda")
    for _ in range(WARM_CALLS + 1):
        good = plan(x)
    assert plan_cache(plan).kinds() == ["launches"], plan_cache(plan).failures
    for where in (0, 2500, 4999):
        for value in (float("nan"), float("inf"), -float("inf")):
            bad = x.clone()
            bad[where] = value
            with pytest.raises(ValueError, match="NaN or infinity"):
                plan(bad)
            # unchecked: the kernels write their flag to a byte nobody reads, so the next
            # checked call on finite input is not refused by a late write
            assert not torch.isfinite(plan(bad, check_finite=False)).all()
            torch.testing.assert_close(plan(x), good, rtol=0, atol=0)


def _programs(plan):
    from fastmoments.signal.graphs import _Launches

    return [e.program for e in plan_cache(plan)._entries.values() if type(e) is _Launches]


@cuda
@pytest.mark.parametrize("spin_reads", [0, 400])
def test_a_signalling_replay_returns_at_the_verdict(monkeypatch, spin_reads):
    """A checked replay whose kernel writes the verdict at its barrier returns once the host
    byte holds it (the output tiles may still be running: later work is ordered after them);
    with no reads left, or behind a long queue, it waits for the stream instead."""
    from fastmoments.signal import graphs

    monkeypatch.setattr(graphs, "SPIN_READS", spin_reads)
    plan = GaussianFilter(64.0)
    xs = _three_inputs(102400)
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "0")
    eager = [plan(x) for x in xs]
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "1")
    for k in range(WARM_CALLS + 1):
        plan(xs[k % 3])
    assert _programs(plan)[0].signals
    a = torch.randn(4096, 4096, device="cuda")
    for k in range(12):
        if k % 4 == 0:
            (a @ a).sum()  # a long kernel queued before the call
        torch.testing.assert_close(plan(xs[k % 3]), eager[k % 3], rtol=0, atol=0)
    bad = xs[0].clone()
    bad[-1] = float("inf")
    with pytest.raises(ValueError, match="NaN or infinity"):
        plan(bad)
    torch.testing.assert_close(plan(xs[2]), eager[2], rtol=0, atol=0)


@cuda
def test_replayed_launches_on_unaligned_views_and_the_one_call_function(monkeypatch):
    from fastmoments.signal import gaussian

    big = torch.randn(20001, device="cuda")
    aligned, shifted = big[:20000], big[1:]  # the second starts 4 bytes in
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "0")
    ref_a = fm.signal.gaussian_filter1d(aligned, 16.0)
    ref_s = fm.signal.gaussian_filter1d(shifted, 16.0)
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "1")
    gaussian._GRAPHS.clear()
    for _ in range(WARM_CALLS + 2):
        torch.testing.assert_close(fm.signal.gaussian_filter1d(aligned, 16.0), ref_a,
                                   rtol=0, atol=0)
        torch.testing.assert_close(fm.signal.gaussian_filter1d(shifted, 16.0), ref_s,
                                   rtol=0, atol=0)
    assert gaussian._GRAPHS.kinds() == ["launches", "launches"], gaussian._GRAPHS.failures


@cuda
def test_calls_with_torch_work_fall_back_to_graphs():
    # float64 with a constant boundary value that is not a float32 number: the torch engine
    # (or the torch convolution), never the fused kernels (triton_sft.takes)
    plan = GaussianFilter(16.0)
    x = torch.randn(3000, device="cuda", dtype=torch.float64)
    ref = plan(x, mode="constant", cval=0.1)
    for _ in range(WARM_CALLS + 2):
        torch.testing.assert_close(plan(x, mode="constant", cval=0.1), ref, rtol=0, atol=0)
    cache = plan_cache(plan)
    assert cache.kinds() == ["graph"]
    assert any("not replayed launch by launch" in m for m in cache.failures.values())


@cuda
def test_launch_replay_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("FASTMOMENTS_LAUNCH_REPLAY", "0")
    plan = GaussianFilter(16.0)
    x = torch.randn(3000, device="cuda")
    for _ in range(WARM_CALLS + 1):
        plan(x)
    assert plan_cache(plan).kinds() == ["graph"]
