"""Session 30 scratch: one-signal calls (``GaussianFilter(256)``, 102400 float32 samples, a
device synchronisation after each call) with the process pinned to one CPU, for several CPUs,
in alternating blocks of 50 calls (the CPU changed between blocks with
``os.sched_setaffinity``), and unpinned: median µs per placement. The GPU's CPU affinity
(``nvidia-smi topo -m``) is printed first by the command that runs this."""
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
allowed = sorted(os.sched_getaffinity(0))
cpus = [allowed[0], allowed[len(allowed) // 4], allowed[len(allowed) // 2],
        allowed[3 * len(allowed) // 4], allowed[-1]]
placements = {f"cpu{c}": {c} for c in cpus}
placements["unpinned"] = set(allowed)
times = {k: [] for k in placements}
for _ in range(10):
    for key, mask in placements.items():
        os.sched_setaffinity(0, mask)
        for _ in range(5):
            plan(x)
        torch.cuda.synchronize()
        for _ in range(50):
            t0 = time.perf_counter()
            plan(x)
            torch.cuda.synchronize()
            times[key].append(time.perf_counter() - t0)
os.sched_setaffinity(0, set(allowed))
rows = [{"placement": k, "call_us": 1e6 * statistics.median(v),
         "p10_us": 1e6 * sorted(v)[len(v) // 10], "p90_us": 1e6 * sorted(v)[9 * len(v) // 10]}
        for k, v in times.items()]
for r in rows:
    print(json.dumps(r), flush=True)
json.dump({"cpus": allowed, "rows": rows},
          open(os.path.join(os.environ.get("OUT", "/tmp"), "pinning.json"), "w"), indent=1)
