# ruff: noqa
"""Session 27 scratch: the 512^3 box job with the TMA kernel on and off (FASTMOMENTS_BOX_TMA),
alternating in one process, errors against float64; per-kernel times from the profiler."""
import os, sys
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary, dense_forward, dense_inverse, rel
from fastmoments.box import JacobiTransform
from fastmoments.box.phantom import phantom_tensor
from fastmoments.box import halves_tma, triton_gemm
SEEN = []
_orig = halves_tma.launch
def _rec(lay, x, y, batch, sx, sy, m, n, k, tail, flags, tile, interp):
    SEEN.append((batch, m, n, k, lay[0][0], lay[1][0], flags["HALVES"], flags["SPLITN"], tile))
    return _orig(lay, x, y, batch, sx, sy, m, n, k, tail, flags, tile, interp)
halves_tma.launch = _rec
_orig_hp = triton_gemm.halves_product
def _hp(data, k_axis, const, **kw):
    SEEN.append(("product", tuple(data.hi.shape), k_axis, kw.get("data_first"), data.hi.stride()))
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
for name, opts in [("default", {}), ("parity 256", {"parity": True, "block": 256})]:
    plan = JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, device=dev, precision="fp16x3", **opts)
    for rnd in range(0):
        for tma in ("0", "1"):
            os.environ["FASTMOMENTS_BOX_TMA"] = tma
            j = plan.forward(x).data
            r = plan.inverse(j)
            ej, er = rel(j, j64), rel(r, r64)
            del r
            f = summary(bench(lambda: plan.forward(x).data, dev, 15))["median_ms"]
            i = summary(bench(lambda: plan.inverse(j), dev, 15))["median_ms"]
            b = summary(bench(lambda: plan.inverse(plan.forward(x).data), dev, 15))["median_ms"]
            print(f"round {rnd} {name:10s} TMA={tma}: fwd {f:.3f} inv {i:.3f} both {b:.3f}  err {ej:.2e} / {er:.2e}", flush=True)
    from torch.profiler import profile, ProfilerActivity
    for tma in ("0", "1"):
        os.environ["FASTMOMENTS_BOX_TMA"] = tma
        plan.inverse(plan.forward(x).data); torch.cuda.synchronize()
        SEEN.clear()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            plan.inverse(plan.forward(x).data); torch.cuda.synchronize()
        ev = [e for e in prof.events() if e.device_type.name == "CUDA"]
        ev.sort(key=lambda e: e.time_range.start)
        tot = {}
        for e in ev:
            d = (e.time_range.end - e.time_range.start) / 1e3
            key = e.name[:28]
            tot[key] = tot.get(key, 0.0) + d
        print(f"== {name} TMA={tma}: kernels " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(tot.items(), key=lambda kv: -kv[1])[:8]), flush=True)
        if tma == "1":
            for e in SEEN: print("     ", e)
        print("   products in order: " + " ".join(f"{(e.time_range.end - e.time_range.start) / 1e3:.3f}{'T' if 'tma' in e.name else ''}" for e in ev if "halves" in e.name), flush=True)
    del plan, j
    torch.cuda.empty_cache()
