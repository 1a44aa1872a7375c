# ruff: noqa
"""Session 27 scratch: the 512^3 box job, TMA policies for the float32-output products."""
import os, sys
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary, dense_forward, dense_inverse, rel
from fastmoments.box import JacobiTransform, halves_tma, triton_gemm
from fastmoments.box.phantom import phantom_tensor
from torch.profiler import profile, ProfilerActivity

VARIANT = {"name": "plain"}
_orig = halves_tma.launch
def _launch(lay, x, y, batch, sx, sy, m, n, k, tail, flags, tile, interp):
    v = VARIANT["name"]
    if not flags["HALVES"] and v.startswith("tma f32 "):
        tile = tuple(int(t) for t in v.split()[-1].split(","))
    return _orig(lay, x, y, batch, sx, sy, m, n, k, tail, flags, tile, interp)
halves_tma.launch = _launch
_orig_hp = triton_gemm.halves_product
def _hp(data, k_axis, const, **kw):
    v = VARIANT["name"]
    off = v == "plain" or (v == "tma halves only" and kw.get("out_exps") is None)
    os.environ["FASTMOMENTS_BOX_TMA"] = "0" if off else "1"
    return _orig_hp(data, k_axis, const, **kw)
triton_gemm.halves_product = _hp

dev = torch.device("cuda")
shape = (512,) * 3
x = phantom_tensor(shape, device=dev, dtype=torch.float32)
ref = JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, dtype=torch.float64, device=dev)
j64 = dense_forward(x.double(), ref.analysis_matrices()).masked_fill(ref.outside(), 0.0)
r64 = dense_inverse(j64, ref.synthesis_matrices())
del ref
torch.cuda.empty_cache()
variants = ["plain", "tma", "tma halves only", "tma f32 128,128,32,8,3", "tma f32 128,128,32,8,4", "tma f32 128,64,64,4,3"]
for name, opts in [("default", {}), ("parity 256", {"parity": True, "block": 256})]:
    plan = JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, device=dev, precision="fp16x3", **opts)
    for rnd in range(2):
        for v in variants:
            VARIANT["name"] = v
            try:
                j = plan.forward(x).data
                r = plan.inverse(j)
            except Exception as exc:
                print(name, v, "failed", type(exc).__name__, str(exc)[:200]); continue
            ej, er = rel(j, j64), rel(r, r64)
            del r
            b = summary(bench(lambda: plan.inverse(plan.forward(x).data), dev, 15))["median_ms"]
            msg = ""
            if rnd == 0:
                plan.inverse(plan.forward(x).data); torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    plan.inverse(plan.forward(x).data); torch.cuda.synchronize()
                ev = sorted((e for e in prof.events() if e.device_type.name == "CUDA"), key=lambda e: e.time_range.start)
                pr = [(e.time_range.end - e.time_range.start) / 1e3 for e in ev if "halves" in e.name]
                allk = sum((e.time_range.end - e.time_range.start) / 1e3 for e in ev)
                msg = f" | products {sum(pr):.3f} of kernels {allk:.3f}: " + " ".join(f"{p:.3f}" for p in pr)
            print(f"round {rnd} {name:10s} {v:24s} both {b:.3f}  err {ej:.2e} / {er:.2e}{msg}", flush=True)
    del plan, j
    torch.cuda.empty_cache()
