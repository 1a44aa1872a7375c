# ruff: noqa  (a scratch script, kept as it was run; run from the repository root)
"""Session 24 scratch: the batch public call's host work, step by step (µs, median)."""
import json
import statistics
import time

import cupy
import numpy as np
import torch

from fastmoments.signal import GaussianFilter, _apply, cuda_sft
from fastmoments.signal.graphs import _capturing, _raw_stream, env_value
from fastmoments.signal.verdict import Verdict

dev = torch.device("cuda")
N = 102400
x = torch.randn((1000, N), device=dev)
plan = GaussianFilter(16.0)
bank = plan.bank
plan(x); torch.cuda.synchronize()
rows = x.view(-1, N)
lay = cuda_sft.eligible_layout(bank, rows, "reflect")
flag = torch.ones((), dtype=torch.uint8, device=dev)
out = torch.empty((1000, 1, N), device=dev)

def t(fn, reps=400, sync_every=0):
    ts = []
    for i in range(reps):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
        if sync_every and i % sync_every == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return round(1e6 * statistics.median(ts), 2)

res = {}
res["plan(x) + sync"] = t(lambda: (plan(x), torch.cuda.synchronize()), 100)
res["apply(out=), no flag"] = t(lambda: cuda_sft.apply(bank, rows, "reflect", out=out, layout=lay), 200, 20)
res["apply(), device flag"] = t(lambda: cuda_sft.apply(bank, rows, "reflect", flag=flag, layout=lay), 200, 20)
res["torch.empty result"] = t(lambda: torch.empty((1000, 1, N), device=dev))
res["x checks of _batch_kernel"] = t(lambda: (x.dtype is not torch.float32 or x.requires_grad or x.is_neg() or x.ndim == 0 or not x.is_contiguous()))
res["x.view(-1, n)"] = t(lambda: x.view(-1, N))
res["x.shape[-1], numel"] = t(lambda: (x.shape[-1], x.numel(), x.element_size()))
res["x.device"] = t(lambda: x.device)
res["x.is_cuda"] = t(lambda: x.is_cuda)
res["_cuda_kernel"] = t(lambda: _apply._cuda_kernel(bank, rows, "reflect"))
res["eligible_layout"] = t(lambda: cuda_sft.eligible_layout(bank, rows, "reflect"))
res["env_value"] = t(lambda: env_value(cuda_sft.ENV))
res["_capturing"] = t(_capturing)
res["Verdict(x.device)"] = t(lambda: Verdict(x.device))
res["_raw_stream"] = t(lambda: _raw_stream(0))
res["cuda_sft._stream"] = t(lambda: cuda_sft._stream(0))
def dev_ctx():
    with cupy.cuda.Device(0):
        pass
res["with cupy.cuda.Device"] = t(dev_ctx)
res["rows.contiguous()"] = t(lambda: rows.contiguous())
res["rows.data_ptr, stride"] = t(lambda: (rows.data_ptr(), rows.stride(0)))
res["pack args"] = t(lambda: np.frombuffer(cuda_sft._ARGS.pack(1, 2, 3, 4, 5, 6, 7, 8, 0, 0.0, 0, 0, 0, 0, 0), dtype=cuda_sft._ARGS_DTYPE))
v = Verdict(dev)
s = cuda_sft._stream(0)
def verdict_cycle():
    v2 = Verdict(dev); v2.host_pointer(s.synchronize); v2.finite()
res["Verdict host byte set + finite (idle)"] = t(verdict_cycle)
res["stream.synchronize (idle)"] = t(s.synchronize)
print(json.dumps(res, indent=1))
