# ruff: noqa
"""Session 27 scratch: where a halves product's host time goes (timed pieces, behind a GPU sleep)."""
import os, sys, time
import torch
from fastmoments.box import triton_gemm as tg, halves_tma as ht
from fastmoments import _triton
dev = torch.device("cuda")
M, K, F = 501, 512, 512 * 64
A = torch.randn(1, M, K, device=dev) / 30
x = torch.randn(1, F, K, device=dev)
data = tg.split_scaled(x)
const = tg.split_of(A)
rows = tg.table_exponents(A[0])[0]
REC = {}
orig_launch = ht._LAUNCH
class Rec:
    def __call__(self, grid, *a, **k):
        REC["tma"] = (grid, a, k)
        return orig_launch(grid, *a, **k)
ht._LAUNCH = Rec()
orig_plain = tg._HALVES_LAUNCH
class Rec2:
    def __call__(self, grid, *a, **k):
        REC["plain"] = (grid, a, k)
        return orig_plain(grid, *a, **k)
tg._HALVES_LAUNCH = Rec2()
os.environ["FASTMOMENTS_BOX_TMA"] = "1"; tg.halves_product(data, 2, const, data_first=False, out_exps=rows)
os.environ["FASTMOMENTS_BOX_TMA"] = "0"; tg.halves_product(data, 2, const, data_first=False, out_exps=rows)
torch.cuda.synchronize()

def timeit(name, fn, n=300):
    torch.cuda._sleep(400_000_000)
    for _ in range(5): fn()
    t0 = time.perf_counter_ns()
    for _ in range(n): fn()
    t1 = time.perf_counter_ns()
    torch.cuda.synchronize()
    print(f"{name:50s} {(t1 - t0) / n / 1e3:8.1f} us", flush=True)

for rnd in range(2):
    os.environ["FASTMOMENTS_BOX_TMA"] = "1"
    timeit("halves_product, TMA", lambda: tg.halves_product(data, 2, const, data_first=False, out_exps=rows), 100)
    os.environ["FASTMOMENTS_BOX_TMA"] = "0"
    timeit("halves_product, plain", lambda: tg.halves_product(data, 2, const, data_first=False, out_exps=rows), 100)
    g, a, k = REC["plain"]
    timeit("  plain FastLaunch call (key + launch)", lambda: orig_plain(g, *a, **k), 100)
    g, a, k = REC["tma"]
    timeit("  TMA FastLaunch call (key + launch)", lambda: orig_launch(g, *a, **k), 100)
    key = (torch.cuda.current_device(), tuple(k.items()), tuple([_triton._specialization(v) for v in a]))
    timeit("    FastLaunch key only", lambda: (torch.cuda.current_device(), tuple(k.items()), tuple([_triton._specialization(v) for v in a])))
    kern = orig_launch._kernels[key]
    vals = [v.data_ptr() if type(v) is torch.Tensor else v for v in a] + [k[nm] for nm in orig_launch.fn.arg_names[len(a):]]
    run = kern.run
    stream = torch._C._cuda_getCurrentRawStream(0)
    timeit("    compiled launcher only (with 4 descriptors)", lambda: run.launch(g[0], 1, 1, stream, kern.function, run.launch_cooperative_grid, run.launch_pdl, None, None, kern.packed_metadata, None, None, None, *vals), 100)
    d = a[0]
    timeit("  one TensorDescriptor()", lambda: ht.TensorDescriptor(d.base, d.shape, d.strides, d.block_shape))
    timeit("  halves_tma.enabled", lambda: ht.enabled(dev))
    timeit("  os.environ.get", lambda: os.environ.get("TRITON_INTERPRET", ""))
    timeit("  torch.empty((1, 501, 32768), f16)", lambda: torch.empty((1, 501, 32768), dtype=torch.float16, device=dev))
    timeit("  torch.cuda.current_device()", lambda: torch.cuda.current_device())
    timeit("  tensor.view + mT", lambda: data.hi.reshape(1, -1, K).mT)
