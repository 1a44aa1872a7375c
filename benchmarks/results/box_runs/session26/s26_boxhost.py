# ruff: noqa
"""Session 26 scratch: host cost of one halves product and its pieces (µs), and the box job."""
import statistics, sys, time
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary
from fastmoments.box import JacobiTransform, engine, triton_gemm
from fastmoments.box.phantom import phantom_tensor

dev = torch.device("cuda")
shape, order, k = (512,) * 3, 500, 23
x = phantom_tensor(shape, device=dev, dtype=torch.float32)
plan = JacobiTransform(shape, order, alpha=0.3, beta=0.3, k=k, device=dev, precision="fp16x3")
j = plan.forward(x).data
for rnd in range(3):
    f = summary(bench(lambda: plan.forward(x).data, dev, 9))["median_ms"]
    i = summary(bench(lambda: plan.inverse(j), dev, 9))["median_ms"]
    print(f"round {rnd}: fwd {f:.3f} inv {i:.3f} sum {f + i:.3f}", flush=True)

def host(fn, reps=200):
    ts = []
    for r in range(reps):
        if r % 10 == 0:
            torch.cuda.synchronize()
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    return round(1e6 * statistics.median(ts), 1)

ops = [plan._analysis[n] for n in shape]
data = triton_gemm.split_scaled(x[None])
op = ops[2]
n = 501
mat = engine._split3(op.full[:n])
rows = triton_gemm.table_exponents(op.full)[0][:n]
small = triton_gemm.split_scaled(x[None, :64])
print("halves_product, halves out (64-slice input):",
      host(lambda: triton_gemm.halves_product(small, 3, mat, data_first=False, out_exps=rows)))
print("halves_product, float32 out (64-slice input):",
      host(lambda: triton_gemm.halves_product(small, 3, mat, data_first=False, out_exps=None)))
print("exp2(rows).mul_:", host(lambda: torch.exp2(rows).mul_(mat.inv_scale)))
print("data.exponents + exp2:", host(lambda: small.exponents(range(1, 3))))
print("torch.empty x2:", host(lambda: (torch.empty((1, 501, 64, 512), dtype=torch.float16, device=dev), torch.empty((1, 501, 64, 512), dtype=torch.float16, device=dev))))
print("split3 (cached):", host(lambda: engine._split3(op.full[:n])))
print("table_exponents (cached):", host(lambda: triton_gemm.table_exponents(op.full)))
# host time of a whole forward / inverse (no sync at the end)
def fwd_host():
    torch.cuda.synchronize(); t0 = time.perf_counter(); plan.forward(x); t1 = time.perf_counter(); torch.cuda.synchronize(); return t1 - t0
def inv_host():
    torch.cuda.synchronize(); t0 = time.perf_counter(); plan.inverse(j); t1 = time.perf_counter(); torch.cuda.synchronize(); return t1 - t0
print("forward host ms:", round(1e3 * statistics.median([fwd_host() for _ in range(15)]), 3))
print("inverse host ms:", round(1e3 * statistics.median([inv_host() for _ in range(15)]), 3))
