# ruff: noqa
"""Session 27 scratch: what the 512^3 job would take without its two host reads (the input
checks' largest magnitudes): the reads replaced by values known in advance (WRONG in general;
only to bound what removing the synchronisations could give)."""
import sys, time
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary, rel
import fastmoments._array as A
from fastmoments.box import JacobiTransform, engine, triton_gemm, parity_batch
from fastmoments.box.phantom import phantom_tensor
dev = torch.device("cuda")
shape = (512,) * 3
x = phantom_tensor(shape, device=dev, dtype=torch.float32)
KNOWN = {}
real_value = A.largest_magnitude_value
def fake_value(t):
    v = KNOWN.get(t.numel())
    return real_value(t) if v is None else v
real_all_finite = A._all_finite
MODE = {"fake": False}
def fake_all_finite(t):
    return True if MODE["fake"] else real_all_finite(t)
A._all_finite = fake_all_finite
for mod in (engine, triton_gemm, parity_batch):
    if hasattr(mod, "largest_magnitude_value"):
        setattr(mod, "largest_magnitude_value", lambda t: fake_value(t) if MODE["fake"] else real_value(t))
for name, opts in [("parity 256", {"parity": True, "block": 256}), ("default", {})]:
    plan = JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, device=dev, precision="fp16x3", **opts)
    j = plan.forward(x).data
    r = plan.inverse(j)
    KNOWN[x.numel()] = float(x.abs().max()); KNOWN[j.numel()] = float(j.abs().max())
    for rnd in range(3):
        for fake in (False, True):
            MODE["fake"] = fake
            j2 = plan.forward(x).data; r2 = plan.inverse(j2)
            same = torch.equal(j2, j) and torch.equal(r2, r)
            b = summary(bench(lambda: plan.inverse(plan.forward(x).data), dev, 21))
            print(f"{name:10s} round {rnd} no host reads={fake}: both median {b['median_ms']:.3f} min {b['min_ms']:.3f}  outputs identical {same}", flush=True)
    MODE["fake"] = False
    del plan, j, r
    torch.cuda.empty_cache()
