# ruff: noqa  (a scratch script, kept as it was run; run from the repository root)
"""Session 24 scratch: the folded first anchor, against float64 and against the old kernel."""
import json
import os
import shutil
import sys

sys.path.insert(0, "benchmarks")
shutil.copy(".variants/cuda_sft_old.py", "src/fastmoments/signal/_cuda_sft_old.py")
import numpy as np
import torch

from fastmoments.signal import GaussianFilter, MorletTransform, cuda_sft
from fastmoments.signal import _cuda_sft_old as old
from fastmoments.signal.chunked import chunked_apply
from signal_common import timer

dev = torch.device("cuda")
rng = np.random.default_rng(0)
MODES = ["reflect", "nearest", "mirror", "wrap", "constant"]
# correctness
for sigma, order in ((8192.0, 0), (1024.0, 2), (300.0, 0), (256.0, None), (1024.0, 1),
                     (8192.0, None)):
    bank = (MorletTransform(sigma, 6.0).bank if order is None
            else GaussianFilter(sigma, order=order, method="sft").bank)
    j = np.arange(-bank.pad, bank.pad + 1)
    scale = np.abs(bank.kernel(j)).sum(1).max()
    for n in (2049, 5000, 30000, 65536, 100000, 100001, 102400, 131072):
        x = torch.tensor(rng.standard_normal((3, n)), dtype=torch.float32, device=dev)
        x[2] = torch.cumsum(x[2], 0) / 30
        for mode in MODES:
            y = cuda_sft.apply(bank, x, mode, 0.5)
            yo = old.apply(bank, x, mode, 0.5)
            ref = chunked_apply(bank, x.double(), mode, 0.5)
            den = scale * float(x.abs().max())
            err = float((y.to(ref.dtype) - ref).abs().max()) / den
            erro = float((yo.to(ref.dtype) - ref).abs().max()) / den
            vt = cuda_sft._layout(bank).virtual(n, mode)
            print(json.dumps({"sigma": sigma, "order": order, "n": n, "mode": mode,
                              "fold": vt.fold, "nv": vt.nv, "err": err, "err_old": erro,
                              "ok": err < 4e-6}, default=lambda o: o.item()), flush=True)
        del x
# NaN flag through the folded tiles: a NaN only in the last samples
bank = GaussianFilter(8192.0).bank
x = torch.tensor(rng.standard_normal((300, 102400)), dtype=torch.float32, device=dev)
x[7, -3] = float("nan")
for mode in MODES:
    f = torch.ones((), dtype=torch.uint8, device=dev)
    cuda_sft.apply(bank, x, mode, 0.5, flag=f)
    print("nan flag", mode, int(f))
# timing: new vs old, alternating
N = 102400
x = torch.tensor(rng.standard_normal((1000, N)), dtype=torch.float32, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
for sigma, order in ((8192.0, 0), (1024.0, 0), (1024.0, None), (4096.0, 0), (256.0, 0),
                     (16.0, 0), (256.0, None)):
    plan = GaussianFilter(sigma, order=order) if order is not None else MorletTransform(sigma, 6.0)
    bank = plan.bank
    row = {"sigma": sigma, "order": order, "new": [], "old": []}
    for _ in range(3):
        for k, mod in (("new", cuda_sft), ("old", old)):
            row[k].append(round(timer(lambda m=mod: m.apply(bank, x, "reflect", flag=flag),
                                      warmup=2, repeat=15, device_only=True)[0], 4))
    for mode in ("nearest", "mirror"):
        row[mode] = [round(timer(lambda m=mod: m.apply(bank, x, mode, flag=flag), warmup=2,
                                 repeat=10, device_only=True)[0], 4) for mod in (cuda_sft, old)]
    print(json.dumps(row), flush=True)
    torch.cuda.empty_cache()
os.remove("src/fastmoments/signal/_cuda_sft_old.py")
