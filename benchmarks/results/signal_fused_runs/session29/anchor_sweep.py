"""Session 29 scratch: the batch kernel alone (1000 x 102400 float32, behind a sleep kernel)
with exact anchors (the default for windows shorter than a tile), exact anchors every k tiles
only (FASTMOMENTS_SFT_CUDA_TUNE=every=k) and carried ones (exact=0), over σ, with the float32
error against float64 (largest error / largest output; three white-noise signals and a
random walk). ``--tunes`` picks the variants."""
import json
import os
import statistics
import sys

import numpy as np
import torch

sys.path.insert(0, "benchmarks")
from disk_common import time_samples
from fastmoments.signal import GaussianFilter, MorletTransform, cuda_sft
from fastmoments.signal.chunked import chunked_apply

dev = torch.device("cuda")
N = 102400
x = torch.randn(1000, N, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
rng = np.random.default_rng(0)
tests = torch.tensor(np.concatenate([rng.standard_normal((3, N)),
                                     np.cumsum(rng.standard_normal((1, N)), axis=1)]),
                     dtype=torch.float32, device=dev)
JOBS = [(s, 0) for s in (16.0, 40.0, 64.0, 100.0, 160.0, 240.0, 300.0)] + [
    (16.0, 2), (64.0, 2), (64.0, 1), (16.0, None), (64.0, None)]
TUNES = {"exact": None, "carried": "exact=0"}
if len(sys.argv) > 1:  # e.g. every2,every4,carried
    names = sys.argv[1].split(",")
    TUNES = {k: (None if k == "exact" else "exact=0" if k == "carried" else
                 "every=" + k.removeprefix("every")) for k in names}
    JOBS = [j for j in JOBS if j[0] <= 240.0]
if len(sys.argv) > 2 and sys.argv[2] == "morlet":  # Morlet transforms with short windows
    JOBS = [(s, None) for s in (3.0, 6.0, 10.0, 16.0, 32.0, 48.0)]
out = []
for sigma, order in JOBS:
    plan = GaussianFilter(sigma, order=order) if order is not None else MorletTransform(
        sigma, 6.0)
    bank = plan.bank
    refs = [chunked_apply(bank, t[None].double(), "reflect") for t in tests]
    row = {"sigma": sigma, "order": order}
    for key, tune in TUNES.items():
        lay = cuda_sft._layout(bank, tune)
        if not lay.eligible:
            continue
        ts = time_samples(lambda b=bank, lay=lay: cuda_sft.apply(b, x, "reflect", flag=flag,
                                                                  layout=lay),
                          dev, warmup=2, repeat=20, device_only=True)
        err = 0.0
        for t, ref in zip(tests, refs, strict=True):
            y = cuda_sft.apply(bank, t[None], "reflect", layout=lay)
            err = max(err, float((y.to(ref.dtype) - ref).abs().max() / ref.abs().max()))
        row[key + "_is_exact"] = bool(lay.exact)
        row[key + "_ms"] = 1e3 * statistics.median(ts)
        row[key + "_err"] = err
    print(json.dumps(row), flush=True)
    out.append(row)
name = ("anchor_sweep.json" if len(sys.argv) == 1 else "anchor_sweep_every.json"
        if len(sys.argv) == 2 else f"anchor_sweep_{sys.argv[2]}.json")
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), name), "w"), indent=1)
