"""Session 30 scratch: single-signal calls (102400 float32 samples) replayed from their recorded
Triton launches, each launch made by the driver from a parameter block built once
(``_triton.DriverLaunch``, new) against Triton's compiled launcher (before), in alternating
rounds in one process. Per call as ``benchmarks/signal_latency.py`` times it: the wall clock
of ``plan(x)`` and a device synchronisation, median, µs; the floor is ``torch.neg(x)`` timed
the same way. Every replay is checked bit-equal to the eager call, and the NaN/inf error."""
import json
import os
import statistics
import time

import numpy as np
import torch

from fastmoments.signal import CWT, GaussianFilter, MorletTransform
from fastmoments.signal import graphs as fg
from fastmoments.signal.graphs import plan_cache

dev = torch.device("cuda")
N = 102400
x = torch.tensor(np.random.default_rng(0).standard_normal(N), dtype=torch.float32, device=dev)
ROUNDS, CALLS = 6, 50
PLANS = [("gauss s=1", GaussianFilter(1.0)), ("gauss s=16", GaussianFilter(16.0)),
         ("gauss s=256 o1", GaussianFilter(256.0, order=1)),
         ("gauss s=8192 o2", GaussianFilter(8192.0, order=2)),
         ("morlet s=64", MorletTransform(64.0, 6.0)),
         ("cwt 64 scales", CWT(np.geomspace(2.0, 1024.0, 64)))]


def per_call(fn):
    ts = []
    for _ in range(CALLS):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return ts


def programs(plan):
    return [e.program for e in plan_cache(plan)._entries.values()
            if type(e).__name__ == "_Launches"]


out = {"device": torch.cuda.get_device_name(), "rows": []}
for name, plan in PLANS:
    os.environ[fg.ENV] = "0"
    eager = plan(x)
    del os.environ[fg.ENV]
    for _ in range(5):
        plan(x)
    progs = programs(plan)
    row = {"call": name, "programs": len(progs),
           "driver": [p._drivers is not None for p in progs]}
    kept = [p._drivers for p in progs]
    variants = {"driver": kept, "triton": [None] * len(progs)}
    for key, drivers in variants.items():
        for p, d in zip(progs, drivers, strict=True):
            p._drivers = d
        assert torch.equal(plan(x), eager), (name, key)
        xb = x.clone()
        xb[N // 3] = float("nan")
        try:
            plan(xb)
            raise AssertionError("no NaN error")
        except ValueError:
            pass
    times = {k: [] for k in variants}
    for _ in range(ROUNDS):
        for key, drivers in variants.items():
            for p, d in zip(progs, drivers, strict=True):
                p._drivers = d
            times[key] += per_call(lambda plan=plan: plan(x))
    for p, d in zip(progs, kept, strict=True):
        p._drivers = d
    for key, ts in times.items():
        row[key + "_us"] = 1e6 * statistics.median(ts)
    row["floor_us"] = 1e6 * statistics.median(per_call(lambda: torch.neg(x)))
    print(json.dumps(row), flush=True)
    out["rows"].append(row)
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "driver_replay_ab.json"), "w"),
          indent=1)
