# ruff: noqa
"""Session 26 scratch: the box job with one version of the code (PYTHONPATH), saving outputs."""
import sys, time, statistics
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary
import fastmoments
from fastmoments.box import JacobiTransform
from fastmoments.box.phantom import phantom_tensor

tag = sys.argv[1]
dev = torch.device("cuda")
x = phantom_tensor((512,) * 3, device=dev, dtype=torch.float32)
res = {}
for name, opts in [("default", {}), ("parity", {"parity": True})]:
    plan = JacobiTransform((512,) * 3, 500, alpha=0.3, beta=0.3, k=23, device=dev, precision="fp16x3", **opts)
    j = plan.forward(x).data
    r = plan.inverse(j)
    torch.save({"j": j[::7, ::7, ::7].cpu(), "r": r[::7, ::7, ::7].cpu()}, f"/tmp/ab_{tag}_{name}.pt")
    f = summary(bench(lambda: plan.forward(x).data, dev, 21))["median_ms"]
    i = summary(bench(lambda: plan.inverse(j), dev, 21))["median_ms"]
    b = summary(bench(lambda: plan.inverse(plan.forward(x).data), dev, 21))["median_ms"]
    print(f"{tag:4s} {name:8s} fwd {f:.3f} inv {i:.3f} both {b:.3f}   ({fastmoments.__file__.split('/src/')[0][-20:]})", flush=True)
    del plan, j, r
    torch.cuda.empty_cache()
