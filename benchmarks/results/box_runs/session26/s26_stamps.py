# ruff: noqa
"""Session 26 scratch: where the host time of the box job's forward and inverse goes (µs)."""
import statistics, time
from collections import defaultdict
import torch
import fastmoments._array as arr
from fastmoments.box import JacobiTransform, api, engine, triton_gemm
from fastmoments.box.phantom import phantom_tensor

dev = torch.device("cuda")
x = phantom_tensor((512,) * 3, device=dev, dtype=torch.float32)
plan = JacobiTransform((512,) * 3, 500, alpha=0.3, beta=0.3, k=23, device=dev, precision="fp16x3")
j = plan.forward(x).data
stamps = []

def wrap(mod, name):
    f = getattr(mod, name)
    def w(*a, **k):
        stamps.append((name + ">", time.perf_counter()))
        r = f(*a, **k)
        stamps.append(("<" + name, time.perf_counter()))
        return r
    setattr(mod, name, w)

for mod, name in [(arr, "_all_finite"), (api, "memory_budget"), (api, "analyze"), (api, "synthesize"),
                  (triton_gemm, "split_scaled"), (triton_gemm, "halves_product"),
                  (engine, "_analyze_halves"), (engine, "_synthesize_halves"), (arr, "largest_magnitude"),
                  (triton_gemm, "largest_magnitude")]:
    wrap(mod, name)
# engine imported names from triton_gemm as attribute access (triton_gemm.split_scaled) -> wrapped
runs = defaultdict(list)
for which, fn in [("forward", lambda: plan.forward(x)), ("inverse", lambda: plan.inverse(j))]:
    for rep in range(12):
        torch.cuda.synchronize()
        stamps.clear()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        if rep < 2:
            continue
        seq = [(n, 1e6 * (t - t0)) for n, t in stamps] + [("return", 1e6 * (t1 - t0)), ("gpu done", 1e6 * (t2 - t0))]
        runs[which].append(seq)
    print("==", which)
    seqs = runs[which]
    for i, (n, _) in enumerate(seqs[0]):
        vals = [s[i][1] for s in seqs if len(s) > i and s[i][0] == n]
        print(f"   {n:22s} {statistics.median(vals):9.1f}")
