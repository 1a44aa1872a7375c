# ruff: noqa
"""Session 26 scratch: Triton's launch path against the compiled launcher, for the box product."""
import statistics, time
import torch
from fastmoments._launches import _launcher_values
from fastmoments.box import JacobiTransform, engine, triton_gemm

dev = torch.device("cuda")
plan = JacobiTransform((512,) * 3, 500, alpha=0.3, beta=0.3, device=dev, precision="fp16x3")
x = torch.rand((1, 64, 512, 512), device=dev)
op = plan._analysis[512]
mat = engine._split3(op.full[:501])
rows = triton_gemm.table_exponents(op.full)[0][:501]
data = triton_gemm.split_scaled(x)
real = triton_gemm._halves_kernel
seen = []

class Spy:
    def __getitem__(self, grid):
        def call(*a, **k):
            kern = real[grid](*a, **k)
            seen.append((grid, a, k, kern))
            return kern
        return call

triton_gemm._halves_kernel = Spy()
triton_gemm.halves_product(data, 3, mat, data_first=False, out_exps=rows)
triton_gemm._halves_kernel = real
grid, a, k, kern = seen[0]
torch.cuda.synchronize()

def host(fn, reps=300):
    ts = []
    for r in range(reps):
        if r % 10 == 0:
            torch.cuda.synchronize()
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    return round(1e6 * statistics.median(ts), 1)

vals = _launcher_values(real, a, k)
vals = [v.data_ptr() if type(v) is torch.Tensor else v for v in vals]
stream = torch.cuda.current_stream().cuda_stream
g = tuple(grid) + (1,) * (3 - len(grid))
run = kern.run
def direct():
    run.launch(g[0], g[1], g[2], stream, kern.function, run.launch_cooperative_grid, run.launch_pdl,
               None, None, kern.packed_metadata, None, None, None, *vals)
def via_run():
    kern.run(g[0], g[1], g[2], stream, kern.function, kern.packed_metadata, None, None, None, *vals)
print("jit launch   ", host(lambda: real[grid](*a, **k)))
print("kernel.run   ", host(via_run))
print("run.launch   ", host(direct))
print("halves_product", host(lambda: triton_gemm.halves_product(data, 3, mat, data_first=False, out_exps=rows)))
print("n args", len(vals), "constexpr kwargs", sorted(k))
