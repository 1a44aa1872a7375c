"""Session 30 scratch: the batch kernel's virtual tiles (the first carried anchor) as segment
totals with the powers compiled in (``AGG_V``, new) against the recursion ``S = q S + x_A``
over each segment (``STEP_V``, session 22), in alternating rounds in one process: the kernel
alone (1000 x 102400 float32, behind a sleep kernel), ms, and the float32 error against
float64 (largest error / largest output; three white-noise signals and a random walk)."""
import json
import os
import statistics
import sys

import cupy
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
JOBS = [(256.0, 1), (512.0, 0), (1024.0, 0), (4096.0, 0), (8192.0, 0), (1024.0, None)]
ROUNDS = 5
OLD_BLOCK = """        if (virt) {  // the first anchor only
#pragma unroll
            for (int s = SEG - 1; s >= 0; --s) {
                const float va = ra[s];
                STEP_V
            }
        } else"""


def step_v(q, real_rows):
    """Session 22's virtual step S = q S + x_A (the generator before this session)."""
    lines = []
    for r in range(len(q)):
        if real_rows[r]:
            lines.append(f"sr[{r}] = {cuda_sft._sum([(q[r].real, f'sr[{r}]')], 'va')};")
        else:
            re = cuda_sft._sum([(q[r].real, f"sr[{r}]"), (-q[r].imag, f"si[{r}]")], "va")
            im = cuda_sft._sum([(q[r].real, f"si[{r}]"), (q[r].imag, f"sr[{r}]")])
            lines.append(f"{{ const float nr = {re}, ni = {im}; sr[{r}] = nr; si[{r}] = ni; }}")
    return " \\\n            ".join(lines)


def old_layout(bank):
    """A layout whose kernel runs the virtual tiles as before."""
    lay = cuda_sft._Layout(bank, "exact=1")  # (a key of its own: not the default's cache)
    src = cuda_sft._source(bank, lay.seg, lay.threads, lay.blocks, lay.exact, lay.every,
                           lay.strided)
    start = src.index("        if (virt) {  // the first anchor only")
    end = src.index("        } else", start) + len("        } else")
    k = cuda_sft.constants(bank)
    q, ql = k["q"], k["ql"]
    real_rows = (np.float32(q.imag) == 0) & (np.float32(ql.imag) == 0)
    src = src[:start] + OLD_BLOCK + src[end:]
    src = src.replace("#define AGG_V ", "#define STEP_V " + step_v(q, real_rows)
                      + "\n#define AGG_V_UNUSED ")
    lay._kernel = cupy.RawModule(code=src, options=("--std=c++17",)).get_function("sft_rows")
    return lay


def run_job(sigma, order):
    plan = GaussianFilter(sigma, order=order) if order is not None else MorletTransform(
        sigma, 6.0)
    bank = plan.bank
    refs = [chunked_apply(bank, t[None].double(), "reflect") for t in tests]
    lays = {"agg_v": cuda_sft._layout(bank, None), "step_v": old_layout(bank)}
    row = {"sigma": sigma, "order": order,
           "virtual_tiles": lays["agg_v"].virtual(N, "reflect").nv,
           "exact": bool(lays["agg_v"].exact)}
    for key, lay in lays.items():
        err = 0.0
        for t, ref in zip(tests, refs, strict=True):
            y = cuda_sft.apply(bank, t[None], "reflect", layout=lay)
            err = max(err, float((y.to(ref.dtype) - ref).abs().max() / ref.abs().max()))
        row[key + "_err"] = err
        row[key + "_regs"] = int(lay.kernel.num_regs)
        row[key + "_local"] = int(lay.kernel.local_size_bytes)
    times = {k: [] for k in lays}
    for _ in range(ROUNDS):
        for key, lay in lays.items():
            times[key] += time_samples(
                lambda lay=lay: cuda_sft.apply(bank, x, "reflect", flag=flag, layout=lay),
                dev, warmup=1, repeat=8, device_only=True)
    for key, ts in times.items():
        row[key + "_ms"] = 1e3 * statistics.median(ts)
    print(json.dumps(row), flush=True)
    return row


out = {"device": torch.cuda.get_device_name(), "jobs": [run_job(*j) for j in JOBS]}
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "virtual_ab.json"), "w"),
          indent=1)
