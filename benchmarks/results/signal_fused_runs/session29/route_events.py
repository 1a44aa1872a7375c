"""Session 29 scratch: where a routed public batch call spends its time (1000 x 102400
float32), from CUDA events recorded on an idle GPU: A at the call, B just before the launch,
C just after it (so C marks the kernel's end), D after the call returned. B - A: host work
before the launch; C - B: the launch and the kernel; D - C: the wait for the verdict, the
return, and the last event's own launch. Also the kernel alone (behind a sleep kernel) and
launched from an idle GPU with events around it."""
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, "benchmarks")
from disk_common import time_samples
from fastmoments.signal import GaussianFilter, cuda_sft

dev = torch.device("cuda")
x = torch.randn(1000, 102400, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
marks = []
real = cuda_sft._Driver.__call__


def marked(self, blocks, args, stream):
    b, c = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    b.record()
    ok = real(self, blocks, args, stream)
    c.record()
    marks.append((b, c))
    return ok


out = []
SIGMAS = [float(a) for a in sys.argv[1:]] or [16.0, 1024.0, 8192.0]
for sigma in SIGMAS:
    plan = GaussianFilter(sigma)
    bank = plan.bank
    for _ in range(3):
        plan(x)
    cuda_sft._Driver.__call__ = marked
    rows = []
    for _ in range(40):
        torch.cuda.synchronize()
        marks.clear()
        a, d = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        plan(x)
        d.record()
        torch.cuda.synchronize()
        (b, c), = marks
        rows.append((a.elapsed_time(b), b.elapsed_time(c), c.elapsed_time(d), a.elapsed_time(d)))
    cuda_sft._Driver.__call__ = real
    med = [1e3 * statistics.median(r[i] for r in rows) for i in range(4)]
    # the kernel alone, from an idle GPU with events right around it, and behind a sleep
    idle = []
    for _ in range(40):
        torch.cuda.synchronize()
        b, c = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        lay = cuda_sft._layout(bank, None)
        b.record()
        cuda_sft.apply(bank, x, "reflect", flag=flag, layout=lay)
        c.record()
        torch.cuda.synchronize()
        idle.append(b.elapsed_time(c))
    busy = time_samples(lambda b=bank: cuda_sft.apply(b, x, "reflect", flag=flag), dev,
                        warmup=2, repeat=30, device_only=True)
    spread = [1e3 * min(r[3] for r in rows), 1e3 * max(r[3] for r in rows)]
    row = {"sigma": sigma, "total_min_max_us": spread, "pre_launch_us": med[0],
           "launch_and_kernel_us": med[1],
           "after_kernel_us": med[2], "total_us": med[3],
           "kernel_idle_events_us": 1e3 * statistics.median(idle),
           "kernel_busy_us": 1e6 * statistics.median(busy)}
    print(json.dumps(row), flush=True)
    out.append(row)
    torch.cuda.empty_cache()
name = "route_events.json" if len(sys.argv) == 1 else "route_events_more.json"
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), name), "w"), indent=1)
