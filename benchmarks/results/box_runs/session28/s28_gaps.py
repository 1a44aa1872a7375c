# ruff: noqa
"""Session 28 scratch: where the GPU waits in one replayed forward + reconstruction of the
512^3 job (kernel start/end times from the profiler), and the host time of each phase."""
import time, statistics
import torch
from torch.profiler import profile, ProfilerActivity, record_function
from fastmoments.box import JacobiTransform
from fastmoments.box.phantom import phantom_tensor

x = phantom_tensor((512,) * 3, device="cuda", dtype=torch.float32)
plan = JacobiTransform((512,) * 3, 500, alpha=0.3, beta=0.3, k=23, device="cuda")
for _ in range(6):
    plan.inverse(plan.forward(x))
torch.cuda.synchronize()
# host time per phase (the GPU kept busy by a sleep first, so no phase waits for it... except syncs)
ph = {"forward": [], "inverse": [], "both": []}
for _ in range(15):
    torch.cuda.synchronize()
    t0 = time.perf_counter(); j = plan.forward(x); t1 = time.perf_counter()
    r = plan.inverse(j); t2 = time.perf_counter(); torch.cuda.synchronize(); t3 = time.perf_counter()
    ph["forward"].append(1e3 * (t1 - t0)); ph["inverse"].append(1e3 * (t2 - t1)); ph["both"].append(1e3 * (t3 - t0))
print({k: round(statistics.median(v), 3) for k, v in ph.items()})
with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
    with record_function("forward"):
        j = plan.forward(x)
    with record_function("inverse"):
        r = plan.inverse(j)
    torch.cuda.synchronize()
ev = [e for e in prof.events() if e.device_type.name == "CUDA"]
ev.sort(key=lambda e: e.time_range.start)
t0 = min(e.time_range.start for e in prof.events())
prev = None
for e in ev:
    s, d = e.time_range.start, e.time_range.end
    gap = "" if prev is None else f"gap {s - prev:7.1f} us"
    print(f"{(s - t0) / 1e3:8.3f} ms  {(d - s) / 1e3:7.3f} ms  {gap}  {e.name[:50]}")
    prev = d
cpu = [e for e in prof.events() if e.name in ("forward", "inverse")]
for e in cpu:
    print(f"CPU {e.name}: {(e.time_range.start - t0) / 1e3:.3f} -> {(e.time_range.end - t0) / 1e3:.3f} ms")
