# ruff: noqa
"""Session 27 scratch: fewer, larger products (degree blocks) on a host-bound job."""
import sys
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary
from fastmoments.box import JacobiTransform
from fastmoments.box.phantom import phantom_tensor
from torch.profiler import profile, ProfilerActivity
dev = torch.device("cuda")
shape = (512,) * 3
x = phantom_tensor(shape, device=dev, dtype=torch.float32)
plans = {f"{'parity' if p else 'plain'} block {b}": JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, device=dev, precision="fp16x3", parity=p, block=b)
         for p, b in [(True, 256), (True, 384), (True, 10**6), (False, 256), (False, 10**6)]}
for rnd in range(3):
    for name, plan in plans.items():
        b = summary(bench(lambda: plan.inverse(plan.forward(x).data), dev, 21))
        msg = ""
        if rnd == 0:
            plan.inverse(plan.forward(x).data); torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                plan.inverse(plan.forward(x).data); torch.cuda.synchronize()
            ev = [e for e in prof.events() if e.device_type.name == "CUDA"]
            k = sum((e.time_range.end - e.time_range.start) / 1e3 for e in ev)
            n = sum(1 for e in ev if "halves" in e.name)
            msg = f"  kernels {k:.3f} ms, {n} products"
        print(f"round {rnd} {name:20s} both {b['median_ms']:.3f} (min {b['min_ms']:.3f}){msg}", flush=True)
