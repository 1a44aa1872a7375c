"""Session 30 scratch: are the slow spells of one-signal calls the host's or the GPU clock's?
One warm plan (``GaussianFilter(256)``, 102400 float32 samples) called in 40 blocks of 50
calls, each call followed by a device synchronisation (as ``signal_latency.py`` times it).
Per block: the median call (µs), the median host time of a trivial Python loop of the same
length run just before (µs per 1000 iterations: the host's speed), and the SM clock read
through NVML right after the block (MHz)."""
import json
import os
import statistics
import time

import torch

from fastmoments.signal import GaussianFilter

dev = torch.device("cuda")
x = torch.randn(102400, device=dev)
plan = GaussianFilter(256.0)
for _ in range(10):
    plan(x)
torch.cuda.synchronize()
rows = []
for block in range(40):
    t0 = time.perf_counter()
    acc = 0
    for i in range(1000):
        acc += i
    py = 1e6 * (time.perf_counter() - t0)
    ts = []
    for _ in range(50):
        t0 = time.perf_counter()
        plan(x)
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    clock = torch.cuda.clock_rate()
    rows.append({"block": block, "call_us": 1e6 * statistics.median(ts), "python_us": py,
                 "sm_mhz": clock})
    print(json.dumps(rows[-1]), flush=True)
json.dump(rows, open(os.path.join(os.environ.get("OUT", "/tmp"), "spells.json"), "w"),
          indent=1)
