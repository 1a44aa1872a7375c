# ruff: noqa
"""Session 26 scratch: parity classes on float16 halves (fp16x3) against the shipped default."""
import json, sys, time, os, statistics
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary, dense_forward, dense_inverse, rel
from fastmoments.box import JacobiTransform, engine
from fastmoments.box.phantom import phantom_tensor

dev = torch.device("cuda")
shape, order, k = (512,) * 3, 500, 23
x = phantom_tensor(shape, device=dev, dtype=torch.float32)
ref = JacobiTransform(shape, order, alpha=0.3, beta=0.3, k=k, dtype=torch.float64, device=dev)
j64 = dense_forward(x.double(), ref.analysis_matrices()).masked_fill(ref.outside(), 0.0)
r64 = dense_inverse(j64, ref.synthesis_matrices())
del ref
torch.cuda.empty_cache()
variants = [("default (no parity, 256)", {}),
            ("parity, 256", {"parity": True, "block": 256}),
            ("parity, 128", {"parity": True, "block": 128}),
            ("parity, 64", {"parity": True, "block": 64}),
            ("parity, none", {"parity": True, "block": 10**6})]
only = os.environ.get("ONLY")
plans = {}
for name, opts in variants:
    plan = JacobiTransform(shape, order, alpha=0.3, beta=0.3, k=k, device=dev,
                           precision="fp16x3", **opts)
    plans[name] = plan
    j = plan.forward(x).data
    r = plan.inverse(j)
    print(name, "sym", plan.symmetric, "block", plan.block, "err", f"{rel(j, j64):.2e}",
          f"{rel(r, r64):.2e}", flush=True)
    del j, r
rows = {}
for rnd in range(2):
    for name, plan in plans.items():
        fwd = lambda plan=plan: plan.forward(x).data
        j = fwd()
        inv = lambda plan=plan, j=j: plan.inverse(j)
        both = lambda plan=plan: plan.inverse(plan.forward(x).data)
        f = summary(bench(fwd, dev, 10))["median_ms"]
        i = summary(bench(inv, dev, 10))["median_ms"]
        b = summary(bench(both, dev, 10))["median_ms"]
        rows.setdefault(name, []).append((f, i, b))
        print(f"round {rnd} {name:28s} fwd {f:.3f} inv {i:.3f} both {b:.3f}", flush=True)
        del j
# host time of one both-call (no sync inside?)
for name in ("default (no parity, 256)", "parity, 256"):
    plan = plans[name]
    torch.cuda.synchronize()
    hs = []
    for _ in range(5):
        torch.cuda.synchronize(); t0 = time.perf_counter(); plan.inverse(plan.forward(x).data); t1 = time.perf_counter(); torch.cuda.synchronize(); hs.append(1e3*(t1-t0))
    print("host ms", name, [round(h, 2) for h in hs], flush=True)
# kernel breakdown
from torch.profiler import profile, ProfilerActivity
for name in ("default (no parity, 256)", "parity, 256"):
    plan = plans[name]
    plan.inverse(plan.forward(x).data); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            plan.inverse(plan.forward(x).data)
        torch.cuda.synchronize()
    agg = {}
    for e in prof.events():
        if e.device_type.name == "CUDA":
            key = e.name[:60]
            a = agg.setdefault(key, [0, 0.0]); a[0] += 1; a[1] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
    print("== kernels per both-call:", name)
    for key, (n, t) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:14]:
        print(f"   {t/3/1e3:8.3f} ms  {n//3:4d}x  {key}")
print(json.dumps({k: v for k, v in rows.items()}))
