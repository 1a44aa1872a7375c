"""Session 30 scratch: the batch kernel's segment totals as float64 tensor-core products
(``mma=1``: ``mma.sync.m8n8k4.f64``, then the recursion once from the true state with no
fix-up) against the recursion from zero and the fix-up (``mma=0``), kernel alone (1000 x
102400 float32, behind a sleep kernel) in alternating rounds, with each variant's registers,
local (spill) bytes and shared memory, and its float32 error against float64 (largest error /
largest output; three white-noise signals and a random walk)."""
import json
import os
import statistics
import sys

import numpy as np
import torch

sys.path.insert(0, "benchmarks")
from disk_common import time_samples
from fastmoments.signal import GaussianFilter, MorletTransform, cuda_sft
from fastmoments.signal.chunked import chunked_apply

dev = torch.device("cuda")
N = 102400
x = torch.randn(1000, N, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
rng = np.random.default_rng(0)
tests = torch.tensor(np.concatenate([rng.standard_normal((3, N)),
                                     np.cumsum(rng.standard_normal((1, N)), axis=1)]),
                     dtype=torch.float32, device=dev)
JOBS = [(16.0, None), (64.0, None), (256.0, None), (1024.0, None), (3.0, None), (16.0, 0),
        (256.0, 0), (8192.0, 0), (16.0, 2), (256.0, 1)]
COMMON = {"recursion": "mma=0", "mma": "mma=1"}
MORLET = COMMON
ROUNDS = 5
out = {"device": torch.cuda.get_device_name(), "jobs": []}


for sigma, order in JOBS:
    plan = GaussianFilter(sigma, order=order) if order is not None else MorletTransform(
        sigma, 6.0)
    bank = plan.bank
    refs = [chunked_apply(bank, t[None].double(), "reflect") for t in tests]
    row = {"sigma": sigma, "order": order}
    lays = {}
    for key, tune in (MORLET if order is None else COMMON).items():
        try:
            lay = cuda_sft._layout(bank, tune)
            k = lay.kernel if lay.eligible else None
        except Exception as exc:  # a variant that does not compile
            row[key + "_fail"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            continue
        if k is None:
            row[key + "_fail"] = "not eligible or no kernel"
            continue
        lays[key] = lay
        row[key + "_regs"] = int(k.num_regs)
        row[key + "_local"] = int(k.local_size_bytes)
        row[key + "_shared"] = int(k.shared_size_bytes)
        err = 0.0
        for t, ref in zip(tests, refs, strict=True):
            y = cuda_sft.apply(bank, t[None], "reflect", layout=lay)
            err = max(err, float((y.to(ref.dtype) - ref).abs().max() / ref.abs().max()))
        row[key + "_err"] = err
    times = {k: [] for k in lays}
    for _ in range(ROUNDS):
        for key, lay in lays.items():
            times[key] += time_samples(
                lambda b=bank, lay=lay: cuda_sft.apply(b, x, "reflect", flag=flag, layout=lay),
                dev, warmup=1, repeat=8, device_only=True)
    for key, ts in times.items():
        row[key + "_ms"] = 1e3 * statistics.median(ts)
    torch.cuda.empty_cache()
    print(json.dumps(row), flush=True)
    out["jobs"].append(row)
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "mma_ab.json"), "w"),
          indent=1)
