"""The routes of repeated large batches (:mod:`fastmoments.signal.batch_route`).

The bookkeeping runs on the CPU with a stand-in for the batch kernel: a first call is
watched, and the key keeps a route only when that call was one launch on the caller's
tensor whose result came back untouched. A routed call makes the same launch with the same
NaN/inf verdict. The real kernel's routes are tested on CUDA in ``test_signal_cuda_sft.py``.
"""

from __future__ import annotations

import pickle

import pytest
import torch

from fastmoments._array import clear_unless_finite
from fastmoments.signal import GaussianFilter
from fastmoments.signal import batch_route as br
from fastmoments.signal.graphs import MAX_GRAPHS, GraphCache, plan_cache
from fastmoments.signal.verdict import require_finite


@pytest.fixture(autouse=True)
def _no_cuda_capture(monkeypatch):
    """The routes ask whether a CUDA graph is being captured (they run on CUDA tensors
    only); a CPU build of torch cannot be asked, so the stand-ins answer no."""
    monkeypatch.setattr(br, "_capturing", lambda: False)


class Plan:
    """A stand-in plan: the routes live in its ``__dict__`` as a real plan's do."""

    method = "none"


def fake_launch(calls):
    """A stand-in kernel: ``2 x`` as ``(B, 1, N)``, clearing the verdict on NaN/inf."""

    def launch(bank, rows, mode, cval, flag=None):
        calls.append((bank, tuple(rows.shape), mode, cval))
        if flag is not None:
            clear_unless_finite(flag.device_flag(), rows)
        return (2 * rows + cval)[:, None]

    return launch


def general(calls, runs, after=None, twice=False, copy=False):
    """A stand-in general path that takes the batch kernel as ``_batch_kernel`` does
    (``after``: work on the result; ``twice``: two launches; ``copy``: on a copy of x)."""
    launch = fake_launch(calls)

    def run(x, *, axis, mode, cval, engine, memory_budget, check_finite, out, progress):
        runs.append(1)
        t = x.clone() if copy else x
        n = t.shape[-1]
        rows = (t.numel() // n, n)
        for _ in range(2 if twice else 1):
            y, flag = br.launch_queued(launch, "bank", t.view(rows), mode, float(cval),
                                       check_finite, t.shape)
            require_finite(flag)
            br.note_launch(launch, "bank", t, rows, mode, float(cval), y)
        return after(y) if after is not None else y

    return run


def call(plan, x, run, check_finite=True, **kw):
    opts = dict(axis=-1, mode="reflect", cval=0.5, engine="auto")
    opts.update(kw)
    return br.routed_batch(plan, x, run, opts["axis"], opts["mode"], opts["cval"], opts["engine"],
                      check_finite, lambda: "sft", lambda m: setattr(plan, "method", m))


def test_first_call_is_watched_then_routed():
    plan, calls, runs = Plan(), [], []
    run = general(calls, runs)
    x = torch.arange(12.0).reshape(3, 4)
    y1 = call(plan, x, run)
    assert runs == [1] and len(calls) == 1 and plan.method == "none"
    (route,) = plan_cache(plan).routes.values()
    assert isinstance(route, br.BatchRoute) and route.rows == (3, 4)
    assert route.remembered == "sft"
    y2 = call(plan, x.clone(), run)
    assert runs == [1] and len(calls) == 2  # the launch alone
    assert plan.method == "sft"  # the plan hears what the first call chose
    assert torch.equal(y1, y2) and torch.equal(y2, 2 * x + 0.5)
    assert calls[1] == ("bank", (3, 4), "reflect", 0.5)


def test_a_routed_call_keeps_the_verdict():
    plan, calls, runs = Plan(), [], []
    run = general(calls, runs)
    x = torch.ones(2, 5)
    call(plan, x, run)
    for bad in (float("nan"), float("inf")):
        xb = x.clone()
        xb[1, 3] = bad
        with pytest.raises(ValueError, match="x contains NaN or infinity"):
            call(plan, xb, run)
        assert torch.isfinite(call(plan, xb, run, check_finite=False)[0]).all()
    assert runs == [1]


@pytest.mark.parametrize("kind", ["work on the result", "in place", "two launches", "a copy"])
def test_first_calls_that_did_more_keep_the_general_path(kind):
    plan, calls, runs = Plan(), [], []
    opts = {"work on the result": dict(after=lambda y: y + 1),
            "in place": dict(after=lambda y: y.mul_(3)),
            "two launches": dict(twice=True), "a copy": dict(copy=True)}[kind]
    run = general(calls, runs, **opts)
    x = torch.arange(6.0).reshape(2, 3)
    first = call(plan, x, run)
    assert list(plan_cache(plan).routes.values()) == [False]
    again = call(plan, x, run)
    assert runs == [1, 1] and torch.equal(first, again)


def test_a_call_that_never_launched_keeps_the_general_path():
    plan, runs = Plan(), []

    def run(x, **kw):
        runs.append(1)
        return x + 1

    x = torch.zeros(2, 3)
    call(plan, x, run)
    call(plan, x, run)
    assert runs == [1, 1] and list(plan_cache(plan).routes.values()) == [False]


def test_input_that_cannot_take_the_route_runs_the_general_path():
    plan, calls, runs = Plan(), [], []
    run = general(calls, runs)
    x = torch.arange(16.0).reshape(4, 4)
    call(plan, x, run)
    t = x.t()  # same key (shape, dtype, device), not C-contiguous
    (route,) = plan_cache(plan).routes.values()
    assert route(t, True) is None
    runs.clear()
    assert torch.equal(call(plan, t, general(calls, runs)), 2 * t + 0.5)
    assert runs == [1]
    g = x.clone().requires_grad_()
    assert route(g, True) is None


def test_keys_tell_option_types_apart():
    plan, calls, runs = Plan(), [], []
    run = general(calls, runs)
    x = torch.ones(2, 3)
    for cval in (0.0, 0, False):
        call(plan, x, run, cval=cval)
    call(plan, x, run, axis=1)  # axis 1 and -1: two keys (the first call decides each)
    assert runs == [1, 1, 1, 1] and len(plan_cache(plan).routes) == 4
    # an unhashable option: the general path runs (and reports it, in a real plan)
    call(plan, x, run, mode=["reflect"])
    assert runs == [1, 1, 1, 1, 1] and len(plan_cache(plan).routes) == 4


def test_routes_are_bounded_cleared_and_do_not_travel():
    plan, calls, runs = Plan(), [], []
    run = general(calls, runs)
    for n in range(1, MAX_GRAPHS + 3):
        call(plan, torch.ones(1, n), run)
    routes = plan_cache(plan).routes
    assert len(routes) == MAX_GRAPHS
    assert [k[0][1] for k in routes] == list(range(3, MAX_GRAPHS + 3))  # the oldest went
    cache = plan_cache(plan)
    assert len(pickle.loads(pickle.dumps(cache)).routes) == 0
    cache.clear()
    assert len(routes) == 0
    assert len(GraphCache().routes) == 0


def test_cpu_and_small_calls_do_not_touch_the_routes():
    plan = GaussianFilter(4.0)
    x = torch.randn(3, 500, dtype=torch.float64)
    y = plan(x)
    assert len(plan_cache(plan).routes) == 0
    assert torch.allclose(plan(x), y, rtol=0, atol=1e-12)


def test_a_first_call_under_inference_mode_decides_nothing():
    """Under inference mode the result has no version counter, so nothing tells it
    untouched: the key is decided on its next call."""
    plan, calls, runs = Plan(), [], []
    run = general(calls, runs)
    x = torch.ones(2, 3)
    with torch.inference_mode():
        y = call(plan, x, run)
    assert y.is_inference() and len(plan_cache(plan).routes) == 0
    call(plan, x, run)
    (route,) = plan_cache(plan).routes.values()
    assert isinstance(route, br.BatchRoute)
    with torch.inference_mode():  # a routed call under inference mode
        assert torch.equal(call(plan, x, run), 2 * x + 0.5)
    assert runs == [1, 1]


class Prepared:
    """A stand-in prepared launch: ``2 x + cval`` in ``x``'s shape with the stand-in verdict,
    or ``None`` (cannot launch now) while ``refuse`` is set."""

    def __init__(self, mode, cval, calls):
        self.mode, self.cval, self.calls, self.refuse = mode, cval, calls, False

    def __call__(self, x, check_finite):
        if self.refuse:
            return None
        self.calls.append("prepared")
        rows = x.reshape(-1, x.shape[-1])
        y, flag = br.launch_queued(fake_launch([]), "bank", rows, self.mode, self.cval,
                                   check_finite, x.shape)
        return y, flag


def test_routes_keep_a_prepared_launch():
    """A launch that prepares itself (``prepare(bank, x, mode, cval)``) is kept prepared by
    the route: later calls make it, with its verdict, and take the plain launch again when
    it cannot launch now."""
    plan, calls, runs = Plan(), [], []
    launch = fake_launch(calls)
    made = []

    def prepare(bank, x, mode, cval):
        made.append((bank, tuple(x.shape), mode, cval))
        return Prepared(mode, cval, calls)

    launch.prepare = prepare

    def run(x, *, axis, mode, cval, engine, memory_budget, check_finite, out, progress):
        runs.append(1)
        n = x.shape[-1]
        rows = (x.numel() // n, n)
        y, flag = br.launch_queued(launch, "bank", x.view(rows), mode, float(cval),
                                   check_finite, x.shape)
        require_finite(flag)
        br.note_launch(launch, "bank", x, rows, mode, float(cval), y)
        return y

    x = torch.arange(12.0).reshape(3, 4)
    y1 = call(plan, x, run)
    assert made == [("bank", (3, 4), "reflect", 0.5)] and len(calls) == 1
    (route,) = plan_cache(plan).routes.values()
    assert torch.equal(call(plan, x, run), y1) and calls[-1] == "prepared" and runs == [1]
    bad = x.clone()
    bad[1, 2] = float("nan")
    with pytest.raises(ValueError, match="NaN or infinity"):
        call(plan, bad, run)
    route.prepared.refuse = True
    assert torch.equal(call(plan, x, run), y1) and calls[-1] == ("bank", (3, 4), "reflect", 0.5)
    assert runs == [1]
