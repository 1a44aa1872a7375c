# ruff: noqa
"""Session 27 scratch: wall time of forward + reconstruction (median of 21, CUDA events) and host time per call."""
import sys, time
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary
from fastmoments.box import JacobiTransform
from fastmoments.box.phantom import phantom_tensor
dev = torch.device("cuda")
shape = (512,) * 3
x = phantom_tensor(shape, device=dev, dtype=torch.float32)
for name, opts in [("parity 256", {"parity": True, "block": 256}), ("default", {})]:
    plan = JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, device=dev, precision="fp16x3", **opts)
    j = plan.forward(x).data
    for rnd in range(3):
        b = summary(bench(lambda: plan.inverse(plan.forward(x).data), dev, 21))["median_ms"]
        f = summary(bench(lambda: plan.forward(x).data, dev, 21))["median_ms"]
        i = summary(bench(lambda: plan.inverse(j), dev, 21))["median_ms"]
        print(f"{name:10s} round {rnd}: both {b:.3f} fwd {f:.3f} inv {i:.3f}", flush=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        plan.inverse(plan.forward(x).data)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    print(f"{name:10s} 20 calls back to back: {1e3*(t2-t0)/20:.3f} ms per call, host returned after {1e3*(t1-t0)/20:.3f} ms per call", flush=True)
    del plan, j
    torch.cuda.empty_cache()
