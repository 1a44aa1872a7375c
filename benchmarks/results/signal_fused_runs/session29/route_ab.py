"""Session 29 scratch: A/B in one process of the public batch call (1000 x 102400 float32):
the plan's route with the driver launch (default), the route with CuPy's launcher
(FASTMOMENTS_SFT_CUDA_TUNE=driver=0), and the general path (FASTMOMENTS_CUDA_GRAPHS=0);
alternating rounds, CUDA events from an idle GPU as signal_batch_cuda.py times them."""
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, "benchmarks")
from disk_common import time_samples
from fastmoments.signal import GaussianFilter, MorletTransform, cuda_sft

dev = torch.device("cuda")
x = torch.randn(1000, 102400, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
VARIANTS = {"route+driver": {}, "route+cupy": {"FASTMOMENTS_SFT_CUDA_TUNE": "driver=0"},
            "general+driver": {"FASTMOMENTS_CUDA_GRAPHS": "0"},
            "general+cupy": {"FASTMOMENTS_CUDA_GRAPHS": "0",
                             "FASTMOMENTS_SFT_CUDA_TUNE": "driver=0"}}
out = []
for sigma, order in ((16.0, 0), (256.0, 0), (1024.0, 0), (8192.0, 0), (256.0, None)):
    plan = GaussianFilter(sigma, order=order) if order is not None else MorletTransform(sigma,
                                                                                       6.0)
    ref = None
    times = {k: [] for k in VARIANTS}
    for _rnd in range(5):
        for name, env in VARIANTS.items():
            os.environ.update(env)
            try:
                y = plan(x)
                if ref is None:
                    ref = y
                assert torch.equal(y, ref), name
                del y
                times[name] += time_samples(lambda p=plan: p(x), dev, warmup=2, repeat=10)
            finally:
                for k in env:
                    del os.environ[k]
    kern = time_samples(lambda plan=plan: cuda_sft.apply(plan.bank, x, "reflect", flag=flag), dev,
                        warmup=2, repeat=20, device_only=True)
    row = {"sigma": sigma, "order": order, "kernel_ms": 1e3 * statistics.median(kern)}
    row.update({k: 1e3 * statistics.median(v) for k, v in times.items()})
    print(json.dumps(row), flush=True)
    out.append(row)
    del ref
    torch.cuda.empty_cache()
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "route_ab.json"), "w"), indent=1)
