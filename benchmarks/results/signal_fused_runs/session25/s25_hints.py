# ruff: noqa  (a scratch script, kept as it was run; run from the repository root)
"""Session 25 scratch: L2 cache hints in the batch kernel (FASTMOMENTS_SFT_CUDA_TUNE=hints=k:
1 streaming stores of the output, 2 evict-first loads of the second read, 3 both)."""
import json
import os
import sys

sys.path.insert(0, "benchmarks")
import numpy as np
import torch

from fastmoments.signal import GaussianFilter, MorletTransform, cuda_sft
from signal_common import timer

dev = torch.device("cuda")
rng = np.random.default_rng(0)
TUNE = "FASTMOMENTS_SFT_CUDA_TUNE"


def run(bank, x, h, **kw):
    os.environ[TUNE] = f"hints={h}"
    return cuda_sft.apply(bank, x, "reflect", **kw)


N = 102400
x = torch.tensor(rng.standard_normal((1000, N)), dtype=torch.float32, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
HS = (0, 1, 2, 3)
for sigma, order in ((8192.0, 0), (4096.0, 0), (1024.0, 0), (256.0, 0), (16.0, 0),
                     (1024.0, 2), (16.0, None), (256.0, None)):
    plan = MorletTransform(sigma, 6.0) if order is None else GaussianFilter(sigma, order=order)
    bank = plan.bank
    ys = [run(bank, x[:300], h) for h in HS]
    same = all(torch.equal(ys[0], y) for y in ys[1:])
    del ys
    row = {"sigma": sigma, "order": order, "bit_identical": same, **{f"h{h}": [] for h in HS}}
    for _ in range(3):
        for h in HS:
            row[f"h{h}"].append(round(timer(lambda: run(bank, x, h, flag=flag), warmup=2,
                                            repeat=15, device_only=True)[0], 4))
    print(json.dumps(row), flush=True)
    torch.cuda.empty_cache()
