"""Session 29 scratch: the batch call's launch (CuPy's Function call against ctypes
cuLaunchKernel) and its wait (stream synchronisation against a Python loop on a pinned word
that a one-thread kernel writes after the batch kernel), 1000 x 102400 float32."""
import ctypes
import statistics
import sys
import threading
import time

import cupy
import numpy as np
import torch

sys.path.insert(0, "benchmarks")
from disk_common import time_samples
from fastmoments._launches import libcuda
from fastmoments.signal import GaussianFilter, cuda_sft

print("threads:", [t.name for t in threading.enumerate()])
dev = torch.device("cuda")
N = 102400
x = torch.randn(1000, N, device=dev)
cu = libcuda()
cu.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
cu.cuLaunchKernel.restype = ctypes.c_int
word = torch.zeros(4, dtype=torch.int32, pin_memory=True)
wv = word.numpy()
hflag = torch.ones(1, dtype=torch.uint8, pin_memory=True)
hv = hflag.numpy()
mark_src = r'''extern "C" __global__ void mark(unsigned int* p, unsigned int v)
{ __threadfence_system(); *(volatile unsigned int*)p = v; }'''
mark = cupy.RawKernel(mark_src, "mark")
mark.compile()
mark_fn = mark.kernel.ptr
mark_p = ctypes.c_uint64(word.data_ptr())
mark_v = ctypes.c_uint(0)
mark_params = (ctypes.c_void_p * 2)(ctypes.addressof(mark_p), ctypes.addressof(mark_v))
seq = [0]
ARGS = cuda_sft._ARGS
buf = ctypes.create_string_buffer(ARGS.size)
params = (ctypes.c_void_p * 1)(ctypes.addressof(buf))


def prep(bank):
    lay = cuda_sft._layout(bank, cuda_sft._options()[1])
    fn = lay.kernel.kernel.ptr
    return lay, fn


def run(bank, lay, fn, launcher, waiter):
    n = N
    out = torch.empty((1000, 1, n), device=dev)
    _g, tile = lay.g, lay.tile
    nt = -(-n // tile)
    vt = cuda_sft._NO_VIRTUAL if lay.exact else lay.virtual(n, "reflect")
    hv[0] = 1
    fields = (x.data_ptr(), x.stride(0), n, out.data_ptr(), out.stride(0), hflag.data_ptr(),
              nt, vt.nv, 0, 0.0, vt.fold, vt.kx, vt.a, vt.lo, vt.base)
    s = torch.cuda.current_stream().cuda_stream
    if launcher == "cupy":
        args = np.frombuffer(ARGS.pack(*fields), dtype=cuda_sft._ARGS_DTYPE)
        with cupy.cuda.Device(0):
            lay.kernel.kernel((1000, 1, 1), (lay.threads, 1, 1), (args,),
                              stream=cuda_sft._stream(0))
    else:
        ARGS.pack_into(buf, 0, *fields)
        st = cu.cuLaunchKernel(fn, 1000, 1, 1, lay.threads, 1, 1, 0, s, params, None)
        assert st == 0, st
    if waiter == "sync":
        cuda_sft._stream(0).synchronize()
    else:
        seq[0] += 1
        mark_v.value = seq[0]
        st = cu.cuLaunchKernel(mark_fn, 1, 1, 1, 1, 1, 1, 0, s, mark_params, None)
        assert st == 0, st
        v = seq[0]
        if waiter == "poll":
            while wv[0] != v:
                pass
        else:
            while wv[0] != v:
                time.sleep(0)
    assert hv[0] == 1
    return out


VARIANTS = [("cupy", "sync"), ("ctypes", "sync"), ("cupy", "poll"), ("ctypes", "poll"),
            ("ctypes", "poll_sleep0")]
for sigma in (16.0, 1024.0):
    plan = GaussianFilter(sigma)
    bank = plan.bank
    lay, fn = prep(bank)
    ref = cuda_sft.apply(bank, x, "reflect")
    for v in VARIANTS:
        y = run(bank, lay, fn, *v)
        torch.cuda.synchronize()
        assert torch.equal(y, ref), v
    for _ in range(3):
        plan(x)
    print("sigma", sigma, flush=True)
    res = {v: {"public": [], "loop": [], "host": []} for v in [*VARIANTS, "plan"]}
    for _rnd in range(4):
        for v in [*VARIANTS, "plan"]:
            f = (lambda p=plan: p(x)) if v == "plan" else (
                lambda v=v, b=bank, lay=lay, fn=fn: run(b, lay, fn, *v))
            res[v]["public"].append(statistics.median(time_samples(f, dev, warmup=2,
                                                                   repeat=15)))
            ts = []
            for _ in range(3):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(10):
                    f()
                torch.cuda.synchronize()
                ts.append((time.perf_counter() - t0) / 10)
            res[v]["loop"].append(statistics.median(ts))
    for v, r in res.items():
        print(f"  {v!s:28s} public {1e3 * statistics.median(r['public']):.3f} ms "
              f"[{1e3 * min(r['public']):.3f}-{1e3 * max(r['public']):.3f}]  loop "
              f"{1e3 * statistics.median(r['loop']):.3f} ms", flush=True)
    # host time of a launch alone, after a short wait (small grid: 8 rows)
    for launcher in ("cupy", "ctypes"):
        ts = []
        xs = x[:8]
        out = torch.empty((8, 1, N), device=dev)
        fields = (xs.data_ptr(), xs.stride(0), N, out.data_ptr(), out.stride(0), 0,
                  -(-N // lay.tile), 0, 0, 0.0, 0, 0, 0, 0, 0)
        vt = cuda_sft._NO_VIRTUAL if lay.exact else lay.virtual(N, "reflect")
        fields = (*fields[:7], vt.nv, 0, 0.0, vt.fold, vt.kx, vt.a, vt.lo, vt.base)
        s = torch.cuda.current_stream().cuda_stream
        for _ in range(200):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            if launcher == "cupy":
                args = np.frombuffer(ARGS.pack(*fields), dtype=cuda_sft._ARGS_DTYPE)
                with cupy.cuda.Device(0):
                    lay.kernel.kernel((8, 1, 1), (lay.threads, 1, 1), (args,),
                                      stream=cuda_sft._stream(0))
            else:
                ARGS.pack_into(buf, 0, *fields)
                cu.cuLaunchKernel(fn, 8, 1, 1, lay.threads, 1, 1, 0, s, params, None)
            ts.append(time.perf_counter() - t0)
        print(f"  launch host {launcher}: {1e6 * statistics.median(ts):.1f} us", flush=True)
    torch.cuda.empty_cache()
