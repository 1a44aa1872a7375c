# ruff: noqa
"""Session 28 scratch: the 512^3 job (order 500, k = 23) eager against replayed launches,
same process, alternating rounds; bits compared; refusals printed."""
import os, statistics, sys, time
import torch
from fastmoments.box import JacobiTransform, replay
from fastmoments.box.phantom import phantom_tensor

orig = replay.JobProgram.build.__func__


def build(cls, rec, x, out):
    p = orig(cls, rec, x, out)
    print("  build:", f"ok, {p.launches} launches, {len(p._slots)} slots" if p else rec.refused[:8],
          flush=True)
    return p


replay.JobProgram.build = classmethod(build)
reps = int(os.environ.get("REPS", "21"))
x = phantom_tensor((512,) * 3, device="cuda", dtype=torch.float32)


def timed(fn, n):
    ts = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(ts), min(ts)


for name, opts in [("default", {}), ("noparity", {"parity": False})]:
    plan = JacobiTransform((512,) * 3, 500, alpha=0.3, beta=0.3, k=23, device="cuda", **opts)
    print(name, "precision", plan.precision, "parity", plan.symmetric, flush=True)
    os.environ["FASTMOMENTS_BOX_REPLAY"] = "0"
    j0 = plan.forward(x).data
    r0 = plan.inverse(j0)
    del os.environ["FASTMOMENTS_BOX_REPLAY"]
    for i in range(4):
        j = plan.forward(x).data
        r = plan.inverse(j)
    print("  programs:", [(k[0], type(v).__name__ if not isinstance(v, int) else v)
                          for k, v in plan._replays.items()])
    print("  bits equal: moments", torch.equal(j, j0), "recon", torch.equal(r, r0), flush=True)
    del j, r
    for rnd in range(3):
        for mode in ("0", "1"):
            os.environ["FASTMOMENTS_BOX_REPLAY"] = mode
            f = timed(lambda: plan.forward(x), reps)
            b = timed(lambda: plan.inverse(plan.forward(x)), reps)
            print(f"  round {rnd} replay={mode}: forward {f[0]:.3f} (min {f[1]:.3f}) both "
                  f"{b[0]:.3f} (min {b[1]:.3f}) ms", flush=True)
    os.environ.pop("FASTMOMENTS_BOX_REPLAY", None)
    # kernel time of one replayed call (profiler)
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        plan.inverse(plan.forward(x))
        torch.cuda.synchronize()
    ka = prof.key_averages()
    tot = sum(e.device_time_total for e in ka) / 1e3
    print(f"  kernels of one call (profiler): {tot:.3f} ms", flush=True)
    for e in sorted(ka, key=lambda e: -e.device_time_total)[:12]:
        print(f"    {e.device_time_total / 1e3:7.3f} ms x{e.count:3d} {e.key[:70]}")
    del plan, j0, r0
    torch.cuda.empty_cache()
