# ruff: noqa
"""Session 26 scratch: tiles of the batched parity classes, per-launch times, host profile."""
import cProfile, io, os, pstats, sys, time
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary, rel
from fastmoments.box import JacobiTransform
from fastmoments.box.phantom import phantom_tensor

dev = torch.device("cuda")
shape, order, k = (512,) * 3, 500, 23
x = phantom_tensor(shape, device=dev, dtype=torch.float32)
plans = {n: JacobiTransform(shape, order, alpha=0.3, beta=0.3, k=k, device=dev, precision="fp16x3", **o)
         for n, o in [("default", {}), ("parity 256", {"parity": True, "block": 256}),
                      ("parity none", {"parity": True, "block": 10**6})]}
tiles = [None, "128,128,64,8,3", "128,128,32,8,4", "128,64,64,4,3"]
for rnd in range(2):
    for name, plan in plans.items():
        for tile in tiles:
            if tile is None:
                os.environ.pop("FASTMOMENTS_BOX_TILE", None)
            else:
                os.environ["FASTMOMENTS_BOX_TILE"] = tile
            j = plan.forward(x).data
            f = summary(bench(lambda: plan.forward(x).data, dev, 7))["median_ms"]
            i = summary(bench(lambda: plan.inverse(j), dev, 7))["median_ms"]
            print(f"round {rnd} {name:12s} tile {tile}: fwd {f:.3f} inv {i:.3f} sum {f+i:.3f}", flush=True)
os.environ.pop("FASTMOMENTS_BOX_TILE", None)
from torch.profiler import profile, ProfilerActivity
for name in ("default", "parity 256", "parity none"):
    plan = plans[name]
    j = plan.forward(x).data
    plan.inverse(j); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        plan.inverse(plan.forward(x).data); torch.cuda.synchronize()
    ev = [e for e in prof.events() if e.device_type.name == "CUDA"]
    ev.sort(key=lambda e: e.time_range.start)
    print("== launches in order:", name)
    t0 = ev[0].time_range.start
    for e in ev:
        d = e.time_range.end - e.time_range.start
        if d > 20:
            print(f"   at {(e.time_range.start - t0)/1e3:7.3f} ms  {d/1e3:6.3f} ms  {e.name[:40]}")
    pr = cProfile.Profile()
    torch.cuda.synchronize()
    pr.enable()
    for _ in range(3):
        plan.inverse(plan.forward(x).data)
    torch.cuda.synchronize()
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(14)
    print("== host profile (3 calls):", name)
    print("\n".join(l for l in s.getvalue().splitlines() if l.strip())[:3500])
