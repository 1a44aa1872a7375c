"""The public plan call on a batch of signals on one GPU (issue 16: batch bandwidth), the working
tree's package against other ones (``--variant LABEL=SRC``, a ``src`` folder exported from an
earlier commit), each in its own process, alternating ``--rounds`` times.

Jobs: ``GaussianFilter`` (σ = 16, 256, 8192) and ``MorletTransform`` (σ = 256) on 1000 × 102400
float32 signals, ``plan(x)`` as a user writes it (NaN/inf check included; the batch is too
large for the replayed graphs). Also the two fused kernels alone (``fused_apply``), so that
the public call's own cost shows. Effective bandwidth: (input + output bytes) / time, against
the card's copy bandwidth. Each process also checks that NaN or infinity in the batch (first
sample, last sample) is still an error.

Run on a CUDA machine from the repository root::

    git archive HEAD src | tar -x -C /tmp/head
    python benchmarks/signal_batch_public.py --variant "HEAD=/tmp/head/src" --out DIR

Writes ``signal_batch_public.json`` and ``.md``. Times are medians of CUDA-event timings after
warm-up calls; a variant's time is the median over rounds.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

JOBS = [("gaussian", 16.0), ("gaussian", 256.0), ("gaussian", 8192.0), ("morlet", 256.0)]


def child() -> None:
    import numpy as np
    import torch

    sys.path.insert(0, os.path.dirname(__file__))
    from fastmoments.signal import GaussianFilter, MorletTransform
    from fastmoments.signal.triton_sft import fused_apply
    from signal_common import timer
    from signal_fused import copy_bandwidth

    dev = torch.device("cuda")
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((1000, 102400)), dtype=torch.float32, device=dev)
    res = {"copy_GBps": copy_bandwidth(dev)}
    for kind, sigma in JOBS:
        plan = GaussianFilter(sigma) if kind == "gaussian" else MorletTransform(sigma, 6.0)
        name = f"{kind} σ={sigma:g}"
        res[name] = {"public_ms": timer(lambda p=plan: p(x), warmup=2, repeat=9)[0],
                     "kernels_ms": timer(lambda b=plan.bank: fused_apply(b, x, "reflect"),
                                         warmup=2, repeat=9)[0]}
        flag = torch.ones((), dtype=torch.uint8, device=dev)
        try:  # the kernels with the NaN/inf flag (packages that have it)
            res[name]["kernels_flag_ms"] = timer(
                lambda b=plan.bank, f=flag: fused_apply(b, x, "reflect", flag=f), warmup=2,
                repeat=9)[0]
        except TypeError:
            pass
    refused = 0
    plan = GaussianFilter(16.0)
    for pos in ((0, 0), (999, 102399)):
        for bad in (float("nan"), float("inf")):
            xb = x.clone()
            xb[pos] = bad
            try:
                plan(xb)
            except ValueError:
                refused += 1
    res["nan_refused"] = f"{refused} of 4"
    print(json.dumps(res))


def summary(runs: dict[str, list[dict]]) -> list[dict]:
    """One row per job and variant: the medians over the rounds."""
    copy = statistics.median(r["copy_GBps"] for rs in runs.values() for r in rs)
    rows = []
    for kind, sigma in JOBS:
        name = f"{kind} σ={sigma:g}"
        for label, rs in runs.items():
            pub = statistics.median(r[name]["public_ms"] for r in rs)
            flagged = [r[name]["kernels_flag_ms"] for r in rs if "kernels_flag_ms" in r[name]]
            moved = 1000 * 102400 * (4 + (8 if kind == "morlet" else 4))  # bytes in + out
            rows.append({"job": name, "variant": label, "public_ms": pub,
                         "bandwidth_fraction": moved / pub / 1e6 / copy,
                         "kernels_ms": statistics.median(r[name]["kernels_ms"] for r in rs),
                         "kernels_flag_ms": statistics.median(flagged) if flagged else None,
                         "nan_refused": rs[-1]["nan_refused"]})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", action="append", default=[], help="LABEL=SRC")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        child()
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    variants = [("working tree", os.path.join(here, "..", "src"))]
    variants += [tuple(v.split("=", 1)) for v in args.variant]
    runs: dict[str, list[dict]] = {label: [] for label, _ in variants}
    for _ in range(args.rounds):
        for label, src in variants:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [os.path.abspath(src), *filter(None, [os.environ.get("PYTHONPATH")])]))
            out = subprocess.run([sys.executable, __file__, "--child"], env=env, check=True,
                                 capture_output=True, text=True).stdout
            runs[label].append(json.loads(out.strip().splitlines()[-1]))
            print(label, runs[label][-1], flush=True)
    import torch

    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "rounds": args.rounds,
            "variants": {label: src for label, src in variants}}
    os.makedirs(args.out, exist_ok=True)
    rows = summary(runs)
    with open(os.path.join(args.out, "signal_batch_public.json"), "w") as fh:
        json.dump({"meta": meta, "rows": rows, "runs": runs}, fh, indent=1)
    copy = statistics.median(r["copy_GBps"] for rs in runs.values() for r in rs)
    lines = [f"# Public plan calls on a batch of 1000 × 102400 float32 signals ({meta['device']})",
             "", f"{meta['date']}; torch {meta['torch']}, CUDA {meta['cuda']}; copy bandwidth "
             f"{copy:.0f} GB/s (read + write). Medians over {args.rounds} alternating rounds "
             "(one process each) of the median of 9 CUDA-event timings after 2 warm-up calls. "
             "Written by `benchmarks/signal_batch_public.py`.", "",
             "| job | variant | public call ms | fraction of copy bandwidth | kernels ms | "
             "kernels with the NaN/inf flag ms | NaN/inf refused |",
             "|---|---|---|---|---|---|---|"]
    for kind, sigma in JOBS:
        name = f"{kind} σ={sigma:g}"
        out_bytes = 8 if kind == "morlet" else 4
        for label, _ in variants:
            pub = statistics.median(r[name]["public_ms"] for r in runs[label])
            ker = statistics.median(r[name]["kernels_ms"] for r in runs[label])
            flagged = [r[name]["kernels_flag_ms"] for r in runs[label]
                       if "kernels_flag_ms" in r[name]]
            kf = f"{statistics.median(flagged):.3f}" if flagged else ""
            frac = 1000 * 102400 * (4 + out_bytes) / pub / 1e6 / copy
            lines.append(f"| {name} | {label} | {pub:.3f} | {frac:.1%} | {ker:.3f} | {kf} | "
                         f"{runs[label][-1]['nan_refused']} |")
    with open(os.path.join(args.out, "signal_batch_public.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
