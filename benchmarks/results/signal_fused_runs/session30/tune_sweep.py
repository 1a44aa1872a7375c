"""Session 30 scratch: the batch kernel alone (1000 x 102400 float32, behind a sleep kernel)
under launch-shape overrides (FASTMOMENTS_SFT_CUDA_TUNE): more blocks per multiprocessor
(fewer registers), fewer (more registers), 64-thread blocks, 32 samples per thread. Each
variant's registers, local (spill) bytes and shared memory from CuPy's kernel attributes,
its time in alternating rounds against the default, and its float32 error against float64
(largest error / largest output; three white-noise signals and a random walk).

Also the "floor" of the public call on this host: torch's own memory-bound operation with
the same bytes (``torch.neg`` of the batch; ``x.to(complex64)`` for the Morlet's output),
timed as the public call is (from an idle GPU, a stream synchronisation inside)."""
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
JOBS = [(16.0, 0), (256.0, 0), (1024.0, 0), (4096.0, 0), (8192.0, 0), (16.0, 2), (256.0, 1),
        (16.0, None), (256.0, None)]
COMMON = {"default": None, "b10": "blocks=10", "b12": "blocks=12", "t64b16": "threads=64,blocks=16",
          "t64b20": "threads=64,blocks=20", "s32t64b12": "seg=32,threads=64,blocks=12",
          "s32t32b24": "seg=32,threads=32,blocks=24"}
MORLET = {"default": None, "b6": "blocks=6", "b7": "blocks=7", "t64b12": "threads=64,blocks=12",
          "t64b14": "threads=64,blocks=14", "s32t64b8": "seg=32,threads=64,blocks=8"}
ROUNDS = 4
out = {"device": torch.cuda.get_device_name(), "jobs": []}


def sync_after(fn):
    def call():
        fn()
        torch.cuda.current_stream().synchronize()
    return call


# the floor: torch's own pass over the same bytes, timed like the public call
floor = {}
for name, fn in (("neg", lambda: torch.neg(x)), ("to_complex64", lambda: x.to(torch.complex64))):
    ts = []
    for _ in range(ROUNDS):
        ts += time_samples(sync_after(fn), dev, warmup=2, repeat=10)
    floor[name + "_ms"] = 1e3 * statistics.median(ts)
    floor[name + "_min_ms"] = 1e3 * min(ts)
    ts = time_samples(fn, dev, warmup=2, repeat=15, device_only=True)
    floor[name + "_kernel_ms"] = 1e3 * statistics.median(ts)
    torch.cuda.empty_cache()
print(json.dumps(floor), flush=True)
out["floor"] = floor

for sigma, order in JOBS:
    plan = GaussianFilter(sigma, order=order) if order is not None else MorletTransform(
        sigma, 6.0)
    bank = plan.bank
    refs = [chunked_apply(bank, t[None].double(), "reflect") for t in tests]
    row = {"sigma": sigma, "order": order}
    lays = {}
    for key, tune in (MORLET if order is None else COMMON).items():
        try:
            lay = cuda_sft._layout(bank, tune)
            k = lay.kernel if lay.eligible else None
        except Exception as exc:  # a variant that does not compile
            row[key + "_fail"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            continue
        if k is None:
            row[key + "_fail"] = "not eligible or no kernel"
            continue
        lays[key] = lay
        row[key + "_regs"] = int(k.num_regs)
        row[key + "_local"] = int(k.local_size_bytes)
        row[key + "_shared"] = int(k.shared_size_bytes)
        err = 0.0
        for t, ref in zip(tests, refs, strict=True):
            y = cuda_sft.apply(bank, t[None], "reflect", layout=lay)
            err = max(err, float((y.to(ref.dtype) - ref).abs().max() / ref.abs().max()))
        row[key + "_err"] = err
    times = {k: [] for k in lays}
    for _ in range(ROUNDS):
        for key, lay in lays.items():
            times[key] += time_samples(
                lambda b=bank, lay=lay: cuda_sft.apply(b, x, "reflect", flag=flag, layout=lay),
                dev, warmup=1, repeat=8, device_only=True)
    for key, ts in times.items():
        row[key + "_ms"] = 1e3 * statistics.median(ts)
    # the public call (routed) in the same run, for the floor's comparison
    ts = []
    for _ in range(ROUNDS):
        ts += time_samples(lambda p=plan: p(x), dev, warmup=2, repeat=10)
    row["public_ms"] = 1e3 * statistics.median(ts)
    torch.cuda.empty_cache()
    print(json.dumps(row), flush=True)
    out["jobs"].append(row)
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "tune_sweep.json"), "w"),
          indent=1)
