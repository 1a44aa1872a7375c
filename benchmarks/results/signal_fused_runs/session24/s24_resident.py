# ruff: noqa  (a scratch script, kept as it was run; run from the repository root)
"""Session 24 scratch: blocks resident per SM and block size for the batch kernel."""
import json
import os
import sys

sys.path.insert(0, "benchmarks")
import numpy as np
import torch

from fastmoments.signal import GaussianFilter, MorletTransform, cuda_sft
from fastmoments.signal.chunked import chunked_apply
from signal_common import timer

dev = torch.device("cuda")
rng = np.random.default_rng(0)
N = 102400
x = torch.tensor(rng.standard_normal((1000, N)), dtype=torch.float32, device=dev)
xs = torch.tensor(np.cumsum(rng.standard_normal((3, N)), 1), dtype=torch.float32, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
jobs = [(8192.0, 0), (1024.0, 0), (256.0, 0), (16.0, 0), (16.0, None), (256.0, None)]
configs = sys.argv[1].split(";")
for sigma, order in jobs:
    plan = GaussianFilter(sigma, order=order) if order is not None else MorletTransform(sigma, 6.0)
    bank = plan.bank
    ref = chunked_apply(bank, xs.double(), "reflect", 0.0)
    for cfg in configs:
        if cfg:
            os.environ[cuda_sft.TUNE_ENV] = cfg
        else:
            os.environ.pop(cuda_sft.TUNE_ENV, None)
        try:
            y = cuda_sft.apply(bank, xs.repeat(100, 1)[:300], "reflect")[:3]
            err = float((y.to(ref.dtype) - ref).abs().max() / ref.abs().max())
            lay = cuda_sft._layout(bank, cfg or None)
            ms = [timer(lambda: cuda_sft.apply(bank, x, "reflect", flag=flag), warmup=2,
                        repeat=15, device_only=True)[0] for _ in range(2)]
            print(json.dumps({"sigma": sigma, "order": order, "cfg": cfg, "ms": ms,
                              "err": err, "shared": lay.shared}), flush=True)
        except Exception as e:
            print(json.dumps({"sigma": sigma, "order": order, "cfg": cfg,
                              "fail": repr(e)[:300]}), flush=True)
        torch.cuda.empty_cache()
