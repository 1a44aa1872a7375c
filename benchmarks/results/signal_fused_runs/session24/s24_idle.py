# ruff: noqa  (a scratch script, kept as it was run; run from the repository root)
"""Session 24 scratch: where the public batch call's time goes beyond the kernel's."""
import json
import statistics
import sys
import time

sys.path.insert(0, "benchmarks")
import numpy as np
import torch

from fastmoments.signal import GaussianFilter, cuda_sft
from signal_common import timer

dev = torch.device("cuda")
rng = np.random.default_rng(0)
N = 102400
x = torch.tensor(rng.standard_normal((1000, N)), dtype=torch.float32, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
orig = cuda_sft.apply
marks = {}

def wrapped(*a, **k):
    marks["t_in"] = time.perf_counter()
    ev0 = torch.cuda.Event(enable_timing=True); ev1 = torch.cuda.Event(enable_timing=True)
    ev0.record()
    y = orig(*a, **k)
    ev1.record()
    marks["ev"] = (ev0, ev1)
    marks["t_out"] = time.perf_counter()
    return y

def med(v):
    return round(statistics.median(v), 4)

for sigma in (16.0, 256.0, 8192.0):
    plan = GaussianFilter(sigma)
    bank = plan.bank
    row = {"sigma": sigma}
    row["pub"] = timer(lambda: plan(x), warmup=3, repeat=30)[0]
    row["kernel_busy"] = timer(lambda: cuda_sft.apply(bank, x, "reflect", flag=flag), warmup=2,
                               repeat=30, device_only=True)[0]
    row["kernel_idle"] = timer(lambda: cuda_sft.apply(bank, x, "reflect", flag=flag), warmup=2,
                               repeat=30)[0]
    row["kernel_x2_idle"] = timer(lambda: (cuda_sft.apply(bank, x, "reflect", flag=flag),
                                           cuda_sft.apply(bank, x, "reflect", flag=flag)),
                                  warmup=2, repeat=30)[0]
    row["pub_prewarm"] = timer(lambda: (torch.cuda._sleep(100), plan(x)), warmup=3,
                               repeat=30)[0]
    out = torch.empty((1000, 1, N), device=dev)
    row["kernel_idle_out"] = timer(lambda: cuda_sft.apply(bank, x, "reflect", flag=flag, out=out),
                                   warmup=2, repeat=30)[0]
    # inside the public call
    cuda_sft.apply = wrapped
    pre, span, post, lead, total = [], [], [], [], []
    for i in range(33):
        torch.cuda.synchronize()
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record()
        t0 = time.perf_counter()
        plan(x)
        t1 = time.perf_counter()
        e.record()
        torch.cuda.synchronize()
        if i < 3:
            continue
        ev0, ev1 = marks["ev"]
        pre.append(1e3 * (marks["t_in"] - t0)); post.append(1e3 * (t1 - marks["t_out"]))
        span.append(ev0.elapsed_time(ev1)); lead.append(s.elapsed_time(ev0))
        total.append(s.elapsed_time(e))
    cuda_sft.apply = orig
    row.update({"host_before_apply_ms": med(pre), "host_after_launch_ms": med(post),
                "gpu_lead_ms": med(lead), "gpu_launch_span_ms": med(span),
                "total_ms": med(total)})
    print(json.dumps(row), flush=True)
    torch.cuda.empty_cache()
