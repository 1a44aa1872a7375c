# ruff: noqa
"""Session 27 scratch: host microseconds per halves_product call (behind a GPU sleep), TMA and plain."""
import os, sys, time
import torch
from fastmoments.box import triton_gemm as tg
dev = torch.device("cuda")
M, K, F = 501, 512, 512 * 64
A = torch.randn(1, M, K, device=dev) / 30
x = torch.randn(1, F, K, device=dev)
data = tg.split_scaled(x)
const = tg.split_of(A)
rows = tg.table_exponents(A[0])[0]
for tma in ("1", "0", "1", "0"):
    os.environ["FASTMOMENTS_BOX_TMA"] = tma
    for _ in range(3):
        tg.halves_product(data, 2, const, data_first=False, out_exps=rows)
    torch.cuda.synchronize()
    torch.cuda._sleep(300_000_000)
    t0 = time.perf_counter()
    for _ in range(50):
        tg.halves_product(data, 2, const, data_first=False, out_exps=rows)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    print(f"TMA={tma}: {1e6*(t1-t0)/50:.1f} us of host per product", flush=True)
from fastmoments.box import halves_tma
os.environ["FASTMOMENTS_BOX_TMA"] = "1"
import cProfile, pstats, io
torch.cuda._sleep(300_000_000)
pr = cProfile.Profile(); pr.enable()
for _ in range(50):
    tg.halves_product(data, 2, const, data_first=False, out_exps=rows)
pr.disable(); torch.cuda.synchronize()
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(18)
print("\n".join(l for l in s.getvalue().splitlines() if l.strip())[:4000])
