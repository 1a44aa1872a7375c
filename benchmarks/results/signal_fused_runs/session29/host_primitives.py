"""Session 29 scratch: host µs of each step on the routed batch call's way to its launch,
timed one after another right after a wait for a 0.45 ms kernel (as in a loop of calls),
in the order the call takes them, and the same steps repeated at once (warm)."""
import statistics
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from fastmoments._launches import recording
from fastmoments.signal import GaussianFilter, cuda_sft
from fastmoments.signal.graphs import _capturing, enabled, plan_cache
from fastmoments.signal.verdict import Verdict

dev = torch.device("cuda")
x = torch.randn(1000, 102400, device=dev)
plan = GaussianFilter(64.0)
for _ in range(3):
    plan(x)
torch.cuda.synchronize()
lay = cuda_sft._layout(plan.bank, None)
flag = torch.ones((), dtype=torch.uint8, device=dev)
out = torch.empty((1000, 1, 102400), device=dev)
STEPS = [
    ("size test", lambda: type(x) is torch.Tensor and x.is_cuda
     and (x.element_size() + 8) * x.numel() > 1),
    ("enabled() env", enabled),
    ("plan_cache", lambda: plan_cache(plan).routes),
    ("_options() env", cuda_sft._options),
    ("key tuple", lambda: (x.shape, x.dtype, x.device, int, -1, str, "reflect", float, 0.0,
                           str, "auto", (None, None))),
    ("x.is_contiguous", x.is_contiguous),
    ("x.requires_grad/is_neg", lambda: x.requires_grad or x.is_neg()),
    ("recording()", recording),
    ("_capturing()", _capturing),
    ("x.view", lambda: x.view(1000, 102400)),
    ("Verdict()+pointer", lambda: Verdict(dev).host_pointer(lambda: None)),
    ("torch.empty 410MB", lambda: torch.empty((1000, 1, 102400), device=dev)),
    ("rows.device.index", lambda: x.device.index),
    ("_stream", lambda: cuda_sft._stream(0)),
    ("pack", lambda: cuda_sft._ARGS.pack(0, 1, 2, 3, 4, 5, 6, 7, 0, 0.0, 0, 0, 0, 0, 0)),
    ("lay.launcher", lambda: lay.launcher(0)),
    ("current_device", torch.cuda.current_device),
]
cold = {n: [] for n, _ in STEPS}
warm = {n: [] for n, _ in STEPS}
for _ in range(60):
    cuda_sft.apply(plan.bank, x, "reflect", out=out, flag=flag, layout=lay)
    torch.cuda.synchronize()  # waits ~0.45 ms
    for name, fn in STEPS:
        t0 = time.perf_counter()
        fn()
        cold[name].append(time.perf_counter() - t0)
    for name, fn in STEPS:
        t0 = time.perf_counter()
        fn()
        warm[name].append(time.perf_counter() - t0)
tc = tw = 0.0
for name, _ in STEPS:
    c, w = 1e6 * statistics.median(cold[name]), 1e6 * statistics.median(warm[name])
    tc, tw = tc + c, tw + w
    print(f"{name:24s} after the wait {c:6.2f} us   again {w:6.2f} us")
print(f"{'sum':24s} after the wait {tc:6.2f} us   again {tw:6.2f} us")
