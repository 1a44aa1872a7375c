# ruff: noqa
"""Session 27 scratch: GPU idle gaps in one forward + reconstruction of the 512^3 job (parity + 256, TMA)."""
import sys, time
import torch
from fastmoments.box import JacobiTransform
from fastmoments.box.phantom import phantom_tensor
from torch.profiler import profile, ProfilerActivity

dev = torch.device("cuda")
shape = (512,) * 3
x = phantom_tensor(shape, device=dev, dtype=torch.float32)
for name, opts in [("parity 256", {"parity": True, "block": 256}), ("default", {})]:
    plan = JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, device=dev, precision="fp16x3", **opts)
    for _ in range(3):
        plan.inverse(plan.forward(x).data)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for _ in range(2):
            plan.inverse(plan.forward(x).data)
        torch.cuda.synchronize()
    ev = sorted((e for e in prof.events() if e.device_type.name == "CUDA"), key=lambda e: e.time_range.start)
    half = len(ev) // 2
    ev = ev[half:]
    t0 = ev[0].time_range.start
    busy = sum(e.time_range.end - e.time_range.start for e in ev)
    span = ev[-1].time_range.end - t0
    print(f"== {name}: span {span/1e3:.3f} ms, busy {busy/1e3:.3f} ms, {len(ev)} kernels", flush=True)
    prev = None
    for e in ev:
        gap = e.time_range.start - (prev.time_range.end if prev else e.time_range.start)
        print(f"   at {(e.time_range.start - t0)/1e3:7.3f}  gap {gap/1e3:6.3f}  dur {(e.time_range.end - e.time_range.start)/1e3:6.3f}  {e.name[:50]}")
        prev = e
    cpu = sorted((e for e in prof.events() if e.device_type.name == "CPU" and ("Synchronize" in e.name or "Memcpy" in e.name or "item" in e.name or "local_scalar" in e.name)), key=lambda e: e.time_range.start)
    print("   host syncs/reads:", [(e.name[:30], round((e.time_range.end - e.time_range.start)/1e3, 3)) for e in cpu[-12:]])
    del plan
    torch.cuda.empty_cache()
