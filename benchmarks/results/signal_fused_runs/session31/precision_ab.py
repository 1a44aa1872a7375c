"""Session 31 scratch: one float32 signal of 102400 samples through the one-launch SFT kernel
with other product settings, in one process (H200): the kernel's GPU time alone (the call
queued behind a sleep kernel, CUDA events) and the whole checked call with a synchronisation
(wall clock, alternating rounds), and each variant's error against the float64 kernels.

Variants: *tf32x3* (the default for float32), *ieee* (float32 products on the CUDA cores),
*tf32* (one TF32 product: less accurate, for the time only), *bc16* (tiles of 16 chunks),
*f64* (the float64 kernels on the signal cast to float64: the time a float32 signal would take
if it ran the float64 kernels)."""
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from disk_common import time_samples
from fastmoments.signal import GaussianFilter, MorletTransform

dev = torch.device("cuda")
gen = torch.Generator(dev).manual_seed(0)
x32 = torch.randn(102400, device=dev, generator=gen)
x64 = x32.double()
VARIANTS = {"tf32x3": {}, "ieee": {"FASTMOMENTS_SFT_PRECISION": "ieee"},
            "tf32": {"FASTMOMENTS_SFT_PRECISION": "tf32"}, "bc16": {"FASTMOMENTS_SFT_BC": "16"},
            "f64": {}}
JOBS = [("gauss", 4.0, 0), ("gauss", 256.0, 0), ("gauss", 256.0, 2), ("gauss", 8192.0, 1),
        ("morlet", 64.0, None)]


def make(kind, sigma, order):
    return GaussianFilter(sigma, order=order) if kind == "gauss" else MorletTransform(sigma)


rows = []
for job in JOBS:
    plans, inputs, outs = {}, {}, {}
    for name, env in VARIANTS.items():
        os.environ.update(env)
        try:
            p = make(*job)
            x = x64 if name == "f64" else x32
            for _ in range(6):  # eager, recorded, replayed
                y = p(x)
            plans[name], inputs[name], outs[name] = p, x, y
        finally:
            for k in env:
                os.environ.pop(k)
    ref = outs["f64"]
    gpu = {}
    for n in VARIANTS:
        ts = time_samples(lambda p=plans[n], x=inputs[n]: p(x, check_finite=False), dev,
                          warmup=3, repeat=40, device_only=True)
        gpu[n] = 1e6 * statistics.median(ts)
    calls = {n: [] for n in VARIANTS}
    for _ in range(6):
        for n in VARIANTS:
            p, x = plans[n], inputs[n]
            for _ in range(5):
                p(x)
            torch.cuda.synchronize()
            for _ in range(100):
                t0 = time.perf_counter()
                p(x)
                torch.cuda.synchronize()
                calls[n].append(time.perf_counter() - t0)
    err = {n: float((outs[n].to(ref.dtype) - ref).abs().max() / ref.abs().max())
           for n in VARIANTS}
    row = {"job": job, "gpu_us": gpu,
           "call_us": {n: 1e6 * statistics.median(v) for n, v in calls.items()},
           "max_err_vs_f64": err}
    print(json.dumps(row), flush=True)
    rows.append(row)
floor = []
for _ in range(6):
    for _ in range(100):
        t0 = time.perf_counter()
        torch.neg(x32)
        torch.cuda.synchronize()
        floor.append(time.perf_counter() - t0)
meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
        "floor_us": 1e6 * statistics.median(floor)}
print(json.dumps(meta))
json.dump({"meta": meta, "rows": rows},
          open(os.path.join(os.environ.get("OUT", "/tmp"), "precision_ab.json"), "w"), indent=1)
