"""Session 29 scratch: where the public batch call's time goes (1000 x 102400 float32).

For each job: the kernel alone (behind a sleep kernel), the public call from an idle GPU (as
signal_batch_cuda.py times it), the public call behind a sleep kernel (host work hidden), the
host time until an unchecked call returns, and a profiler timeline of public calls: call start
-> kernel start, kernel duration, kernel end -> call end (CUPTI, via torch.profiler).
"""
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from disk_common import time_samples
from fastmoments.signal import GaussianFilter, MorletTransform, cuda_sft

out = os.environ.get("OUT", "/tmp")
dev = torch.device("cuda")
N = 102400
x = torch.randn(1000, N, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
res = []


def med(ts):
    return 1e3 * statistics.median(ts)


for sigma, order in [(16.0, 0), (1024.0, 0), (8192.0, 0), (256.0, None)]:
    plan = GaussianFilter(sigma, order=order) if order is not None else MorletTransform(sigma, 6.0)
    bank = plan.bank
    row = {"sigma": sigma, "order": order}
    row["public_idle"] = med(time_samples(lambda plan=plan: plan(x), dev, warmup=3, repeat=30))
    row["public_busy"] = med(time_samples(lambda plan=plan: plan(x), dev, warmup=3, repeat=30,
                                          device_only=True))
    row["unchecked_idle"] = med(time_samples(lambda plan=plan: plan(x, check_finite=False), dev,
                                             warmup=3, repeat=30))
    row["kernel_busy"] = med(time_samples(
        lambda bank=bank: cuda_sft.apply(bank, x, "reflect", flag=flag), dev,
        warmup=3, repeat=30, device_only=True))
    row["kernel_idle"] = med(time_samples(
        lambda bank=bank: cuda_sft.apply(bank, x, "reflect", flag=flag), dev, warmup=3, repeat=30))
    hs = []
    for _ in range(30):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        plan(x, check_finite=False)
        hs.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    row["host_unchecked_us"] = 1e6 * statistics.median(hs)
    # same, for the low-level launch alone
    hs = []
    for _ in range(30):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        cuda_sft.apply(bank, x, "reflect", flag=flag)
        hs.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    row["host_apply_us"] = 1e6 * statistics.median(hs)
    # profiler timeline
    from torch.profiler import ProfilerActivity, profile, record_function
    for _ in range(3):
        plan(x)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(12):
            torch.cuda.synchronize()
            time.sleep(0.001)
            with record_function("pub"):
                plan(x)
            torch.cuda.synchronize()
        for _ in range(12):
            torch.cuda._sleep(1_000_000)
            cuda_sft.apply(bank, x, "reflect", flag=flag)
        torch.cuda.synchronize()
    path = os.path.join(out, f"trace_{int(sigma)}_{order}.json")
    prof.export_chrome_trace(path)
    ev = json.load(open(path))["traceEvents"]
    pubs = sorted([e for e in ev if e.get("name") == "pub" and e.get("cat") == "user_annotation"],
                  key=lambda e: e["ts"])
    kers = sorted([e for e in ev if e.get("cat") == "kernel" and "sleep" not in e["name"]],
                  key=lambda e: e["ts"])
    pre, dur, post, launch = [], [], [], []
    rt = sorted([e for e in ev if e.get("cat") == "cuda_runtime" or e.get("cat") == "cuda_driver"],
                key=lambda e: e["ts"])
    for p in pubs[2:]:
        ks = [k for k in kers if p["ts"] <= k["ts"] <= p["ts"] + p["dur"] + 2000]
        if not ks:
            continue
        k = ks[0]
        pre.append(k["ts"] - p["ts"])
        dur.append(k["dur"])
        post.append(p["ts"] + p["dur"] - (k["ts"] + k["dur"]))
        ls = [r for r in rt if p["ts"] <= r["ts"] <= k["ts"] and "aunch" in r["name"]]
        if ls:
            launch.append(ls[-1]["ts"] - p["ts"])
    alone = [k["dur"] for k in kers if not any(p["ts"] <= k["ts"] <= p["ts"] + p["dur"] + 2000
                                                for p in pubs)]
    row["tl_call_to_kernel_us"] = statistics.median(pre)
    row["tl_call_to_launch_api_us"] = statistics.median(launch) if launch else None
    row["tl_kernel_in_call_us"] = statistics.median(dur)
    row["tl_kernel_end_to_return_us"] = statistics.median(post)
    row["tl_kernel_alone_us"] = statistics.median(alone[2:]) if len(alone) > 2 else None
    row["names"] = sorted({k["name"][:40] for k in kers})
    os.remove(path)
    print(json.dumps(row), flush=True)
    res.append(row)
    torch.cuda.empty_cache()
json.dump(res, open(os.path.join(out, "batch_timeline.json"), "w"), indent=1)
