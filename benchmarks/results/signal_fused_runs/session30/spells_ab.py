"""Session 30 scratch: one-signal calls of several σ in alternating blocks of 50 calls (each
call followed by a device synchronisation), to tell a difference between the σ from the
machine's spells: median µs per σ, with whether the replayed program waits for an early
verdict (``signals``) and its launches."""
import json
import os
import statistics
import time

import torch

from fastmoments.signal import GaussianFilter
from fastmoments.signal import graphs as fg
from fastmoments.signal.graphs import plan_cache

dev = torch.device("cuda")
x = torch.randn(102400, device=dev)
plans = {s: GaussianFilter(s) for s in (16.0, 64.0, 128.0, 192.0, 256.0, 1024.0)}
for p in plans.values():
    for _ in range(10):
        p(x)
torch.cuda.synchronize()
info = {}
for s, p in plans.items():
    progs = [e.program for e in plan_cache(p)._entries.values()
             if type(e).__name__ == "_Launches"]
    info[s] = {"signals": [pr.signals for pr in progs],
               "steps": [(k.name, g) for pr in progs for k, g, _, _ in pr._steps]}
times = {s: [] for s in plans}
unchecked = {s: [] for s in plans}
for _ in range(12):
    for s, p in plans.items():
        for _ in range(50):
            t0 = time.perf_counter()
            p(x)
            torch.cuda.synchronize()
            times[s].append(time.perf_counter() - t0)
        for _ in range(20):
            t0 = time.perf_counter()
            p(x, check_finite=False)
            torch.cuda.synchronize()
            unchecked[s].append(time.perf_counter() - t0)
rows = []
for s in plans:
    rows.append({"sigma": s, "call_us": 1e6 * statistics.median(times[s]),
                 "unchecked_us": 1e6 * statistics.median(unchecked[s]),
                 "spin_reads": fg.SPIN_READS, **info[s]})
    print(json.dumps(rows[-1]), flush=True)
json.dump(rows, open(os.path.join(os.environ.get("OUT", "/tmp"), "spells_ab.json"), "w"),
          indent=1)
