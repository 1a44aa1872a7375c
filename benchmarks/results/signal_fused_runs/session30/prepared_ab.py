"""Session 30 scratch: the public batch call (1000 x 102400 float32) with the route's prepared
launch against the session-29 route, in alternating rounds in one process, CUDA events from
an idle GPU (as ``benchmarks/signal_batch_cuda.py`` times the public call), ms:

* ``prepared``: ``plan(x)``, the route keeping its :class:`cuda_sft.Prepared` launch (new);
* ``route``: ``plan(x)``, the route without it (``cuda_sft.apply`` with its layout), the
  driver launch through CuPy's ``launchKernel`` (new);
* ``route_ctypes``: the same with session 29's ``cuLaunchKernel`` through ctypes (the code
  before this session);
* ``route_direct``: the route object called directly (no plan layers above it);
* ``minimal``: the prepared launch alone, then the verdict;
* ``floor``: torch's own pass over the same bytes (``torch.neg``, or ``x.to(complex64)`` for
  the Morlet transform's output), a stream synchronisation inside;
* ``kernel``: the kernel alone, behind a sleep kernel.

Every variant's result is checked bit-equal to the first call's."""
import ctypes
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, "benchmarks")
from disk_common import time_samples
from fastmoments._triton import libcuda
from fastmoments.signal import GaussianFilter, MorletTransform, cuda_sft
from fastmoments.signal.graphs import plan_cache
from fastmoments.signal.verdict import require_finite

dev = torch.device("cuda")
N = 102400
x = torch.randn(1000, N, device=dev)
index = x.device.index
ROUNDS = 6
JOBS = [(16.0, 0), (1024.0, 0), (256.0, 1), (16.0, 2), (256.0, None)]

proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p,
                         ctypes.c_void_p, ctypes.c_void_p)
_launch_ctypes = proto(("cuLaunchKernel", libcuda()))


class CtypesDriver:
    """Session 29's driver launch (ctypes), with this session's call signature."""

    def __init__(self, function, threads):
        self.function, self.threads = function, threads

    def __call__(self, blocks, stream, *values):
        args = cuda_sft._ARGS.pack(*values)
        data = (ctypes.c_char * len(args)).from_buffer_copy(args)
        params = (ctypes.c_void_p * 1)(ctypes.addressof(data))
        return _launch_ctypes(self.function, blocks, 1, 1, self.threads, 1, 1, 0, stream,
                              params, None) == 0


def sync_after(fn):
    def call():
        fn()
        torch.cuda.current_stream().synchronize()
    return call


def run_job(sigma, order):
    plan = GaussianFilter(sigma, order=order) if order is not None else MorletTransform(
        sigma, 6.0)
    first = plan(x)
    plan(x)
    (route,) = plan_cache(plan).routes.values()
    prep = route.prepared
    assert isinstance(prep, cuda_sft.Prepared), route.prepared
    lay = route.launch.layout
    new_drv = lay.launcher(index)
    old_drv = CtypesDriver(new_drv.function, new_drv.threads)

    def setup(name):
        route.prepared = prep if name == "prepared" else None
        lay._drivers[index] = old_drv if name == "route_ctypes" else new_drv

    def direct():
        q = route(x, True)
        require_finite(q[1])
        return q[0]

    def minimal():
        q = prep(x, True)
        require_finite(q[1])
        return q[0]

    floor_fn = (lambda: torch.neg(x)) if order is not None else (
        lambda: x.to(torch.complex64))
    variants = {"prepared": lambda: plan(x), "route": lambda: plan(x),
                "route_ctypes": lambda: plan(x), "route_direct": direct, "minimal": minimal,
                "floor": sync_after(floor_fn)}
    for name, fn in variants.items():  # the same bits everywhere
        setup(name)
        if name != "floor":
            assert torch.equal(fn(), first), name
    times = {k: [] for k in variants}
    for _ in range(ROUNDS):
        for name, fn in variants.items():
            setup(name)
            times[name] += time_samples(fn, dev, warmup=2, repeat=10)
    setup("prepared")
    row = {"sigma": sigma, "order": order}
    for name, ts in times.items():
        row[name + "_ms"] = 1e3 * statistics.median(ts)
        row[name + "_min_ms"] = 1e3 * min(ts)
    row["kernel_ms"] = 1e3 * statistics.median(time_samples(
        lambda: cuda_sft.apply(plan.bank, x, "reflect", layout=lay), dev, warmup=2, repeat=15,
        device_only=True))
    del first
    torch.cuda.empty_cache()
    print(json.dumps(row), flush=True)
    return row


out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "jobs": []}
for sigma, order in JOBS:
    out["jobs"].append(run_job(sigma, order))
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "prepared_ab.json"), "w"),
          indent=1)
