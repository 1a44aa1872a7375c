# ruff: noqa
"""Session 27 scratch: the 512^3 job with the input checks after the work (scales chosen on the
GPU, the new default) against the checks first (host reads), alternating in one process."""
import sys
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary, dense_forward, dense_inverse, rel
from fastmoments.box import JacobiTransform, engine
from fastmoments.box.api import JacobiTransform as JT
from fastmoments.box.phantom import phantom_tensor

dev = torch.device("cuda")
shape = (512,) * 3
x = phantom_tensor(shape, device=dev, dtype=torch.float32)
ref = JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, dtype=torch.float64, device=dev)
j64 = dense_forward(x.double(), ref.analysis_matrices()).masked_fill(ref.outside(), 0.0)
r64 = dense_inverse(j64, ref.synthesis_matrices())
del ref
torch.cuda.empty_cache()
real_defers, real_api = engine._defers, JT._defers_checks
def mode(deferred):
    engine._defers = real_defers if deferred else (lambda t, ops: False)
    JT._defers_checks = real_api if deferred else (lambda self: False)
for name, opts in [("parity 256", {"parity": True, "block": 256}), ("default", {})]:
    plan = JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, device=dev, precision="fp16x3", **opts)
    outs = {}
    for rnd in range(3):
        for deferred in (False, True):
            mode(deferred)
            j = plan.forward(x).data
            r = plan.inverse(j)
            if rnd == 0:
                outs[deferred] = (j[::5, ::5, ::5].clone(), r[::5, ::5, ::5].clone())
            ej, er = rel(j, j64), rel(r, r64)
            del r
            b = summary(bench(lambda: plan.inverse(plan.forward(x).data), dev, 21))
            f = summary(bench(lambda: plan.forward(x).data, dev, 21))["median_ms"]
            i = summary(bench(lambda: plan.inverse(j), dev, 21))["median_ms"]
            print(f"round {rnd} {name:10s} checks {'after' if deferred else 'first'}: both {b['median_ms']:.3f} (min {b['min_ms']:.3f}) fwd {f:.3f} inv {i:.3f}  err {ej:.2e} / {er:.2e}", flush=True)
    print(f"   {name}: identical outputs: {torch.equal(outs[False][0], outs[True][0]) and torch.equal(outs[False][1], outs[True][1])}", flush=True)
    mode(True)
    torch.cuda.synchronize()
    y = x.clone(); y[100, 200, 300] = float("nan")
    try:
        plan.forward(y); print("   NaN NOT caught!")
    except ValueError as e:
        print("   NaN caught:", e)
    del plan, j, y
    torch.cuda.empty_cache()
