# ruff: noqa
"""Session 26 scratch: what makes the reconstruction's coefficient split slow (mask, padding)."""
import math, sys
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary
from fastmoments.box import JacobiTransform, triton_gemm

dev = torch.device("cuda")
plan = JacobiTransform((512,) * 3, 500, alpha=0.3, beta=0.3, device=dev, precision="fp16x3")
c = torch.randn((1, 501, 501, 501), device=dev)
mask = plan.outside().to(dev)
top = float(c.abs().max())
c512 = torch.randn((1, 501, 501, 512), device=dev)
m512 = torch.zeros((501, 501, 512), dtype=torch.bool, device=dev)
for rnd in range(2):
    r = {}
    r["masked, padded"] = summary(bench(lambda: triton_gemm.split_scaled(c, mask, top), dev, 15))["median_ms"]
    r["no mask, padded"] = summary(bench(lambda: triton_gemm.split_scaled(c, None, top), dev, 15))["median_ms"]
    r["masked, rows of 512"] = summary(bench(lambda: triton_gemm.split_scaled(c512, m512, top), dev, 15))["median_ms"]
    r["no mask, rows of 512"] = summary(bench(lambda: triton_gemm.split_scaled(c512, None, top), dev, 15))["median_ms"]
    r["copy of c"] = summary(bench(lambda: c.clone(), dev, 15))["median_ms"]
    print(rnd, r, flush=True)
