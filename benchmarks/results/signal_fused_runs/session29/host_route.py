"""Session 29 scratch: host time from the call to the driver launch, for a routed public
batch call (1000 x 102400 float32, σ = 64) and for the layers under it, each call after the
previous call's wait for its kernel (as in a loop of calls): plan(x), the route itself,
cuda_sft.apply with a verdict, and the launch alone."""
import statistics
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from fastmoments.signal import GaussianFilter, cuda_sft
from fastmoments.signal.graphs import plan_cache
from fastmoments.signal.verdict import Verdict, require_finite

dev = torch.device("cuda")
x = torch.randn(1000, 102400, device=dev)
plan = GaussianFilter(64.0)
for _ in range(3):
    plan(x)
torch.cuda.synchronize()
(route,) = plan_cache(plan).routes.values()
lay = cuda_sft._layout(plan.bank, None)
stamp = []
real = cuda_sft._Driver.__call__


def marked(self, blocks, args, stream):
    stamp.append(time.perf_counter())
    return real(self, blocks, args, stream)


cuda_sft._Driver.__call__ = marked


def via_route():
    _y, flag = route(x, True)
    require_finite(flag)


def via_apply():
    v = Verdict(dev)
    cuda_sft.apply(plan.bank, x, "reflect", 0.0, flag=v, layout=lay)
    require_finite(v)


CASES = {"plan(x)": lambda: plan(x), "route(x)": via_route, "apply + verdict": via_apply}
res = {k: [] for k in CASES}
after = {k: [] for k in CASES}
for _ in range(6):
    for name, fn in CASES.items():
        for _ in range(20):
            stamp.clear()
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            res[name].append(stamp[0] - t0)
            after[name].append(t1 - stamp[0])
for name in CASES:
    print(f"{name:18s} call -> driver launch {1e6 * statistics.median(res[name]):6.1f} us; "
          f"launch -> return {1e6 * statistics.median(after[name]):6.1f} us", flush=True)
# the same, with the GPU idle for 1 ms before each call (no kernel to wait for just before)
for name, fn in CASES.items():
    ts = []
    for _ in range(40):
        torch.cuda.synchronize()
        time.sleep(0.001)
        stamp.clear()
        t0 = time.perf_counter()
        fn()
        ts.append(stamp[0] - t0)
    print(f"{name:18s} after 1 ms idle: call -> driver launch "
          f"{1e6 * statistics.median(ts):6.1f} us", flush=True)
