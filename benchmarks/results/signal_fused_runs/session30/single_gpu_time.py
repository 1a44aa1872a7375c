"""Session 30 scratch: the GPU time of one replayed one-signal call (102400 float32 samples),
by σ and order: the recorded program's launches (grid, kernel) and its kernels' time alone
(``plan(x, check_finite=False)`` queued behind a sleep kernel, CUDA events), µs; and the whole
call with a device synchronisation (wall clock), as ``signal_latency.py`` times it."""
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from disk_common import time_samples
from fastmoments.signal import GaussianFilter
from fastmoments.signal.graphs import plan_cache

dev = torch.device("cuda")
x = torch.randn(102400, device=dev)
rows = []
for sigma in (4.0, 16.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 8192.0):
    for order in (0, 1):
        plan = GaussianFilter(sigma, order=order)
        for _ in range(6):
            plan(x)
        progs = [e.program for e in plan_cache(plan)._entries.values()
                 if type(e).__name__ == "_Launches"]
        steps = [(k.name, g) for p in progs for k, g, _, _ in p._steps]
        gpu = statistics.median(time_samples(lambda p=plan: p(x, check_finite=False), dev,
                                             warmup=3, repeat=30, device_only=True))
        ts = []
        for _ in range(200):
            t0 = time.perf_counter()
            plan(x)
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
        row = {"sigma": sigma, "order": order, "method": plan.method, "steps": steps,
               "gpu_us": 1e6 * gpu, "call_us": 1e6 * statistics.median(ts)}
        print(json.dumps(row), flush=True)
        rows.append(row)
json.dump(rows, open(os.path.join(os.environ.get("OUT", "/tmp"), "single_gpu_time.json"), "w"),
          indent=1)
