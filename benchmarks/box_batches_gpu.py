"""Box moments of batches of images and volumes on one GPU: the batch-first engine against an
earlier engine (or other variants), measured in the same run.

The box engine keeps the batch axis first through every product since commit c94b29f (one
GEMM per item, one batched GEMM for a batch; before, the batch was folded into the rotated
axes and moved back to the front at the end). This script times forward and reconstruction
of several batch jobs with the working tree's package and with other ones (``--variant
LABEL=SRC``, a ``src`` folder exported from an earlier commit, say), each in its own process,
alternating ``--rounds`` times, and checks the working tree's results against float64.

Run on a CUDA machine from the repository root::

    git archive d8735c5 src | tar -x -C /tmp/old      # the engine before c94b29f
    python benchmarks/box_batches_gpu.py --variant "d8735c5=/tmp/old/src" --out benchmarks/results

Writes ``box_batches_gpu.json`` and ``.md``. Timings are medians of CUDA-event timings after
warm-up calls; the reported time of a variant is the median over rounds of those medians.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

#: (name, batch shape, shape, order, k, alpha, beta, precision)
JOBS = [
    ("5000 x 32^2, order 16", (5000,), (32, 32), 16, 1, 0.0, 0.0, "float32"),
    ("1000 x 64^2, order 20", (1000,), (64, 64), 20, 1, 0.0, 0.0, "float32"),
    ("1000 x 64^2, order 20, fp16x3", (1000,), (64, 64), 20, 1, 0.0, 0.0, "fp16x3"),
    ("100 x 256^2, order 100", (100,), (256, 256), 100, 3, 0.3, 0.7, "float32"),
    ("64 x 64^3, order 40", (64,), (64, 64, 64), 40, 1, 0.3, 0.3, "float32"),
    ("64 x 64^3, order 40, fp16x3", (64,), (64, 64, 64), 40, 1, 0.3, 0.3, "fp16x3"),
    ("8 x 128^3, order 100", (8,), (128, 128, 128), 100, 3, 0.0, 0.0, "float32"),
    ("1 x 512^3, order 500, k 23", (), (512, 512, 512), 500, 23, 0.3, 0.3, "float32"),
]


def worker(src: str, reps: int, check: bool, small: bool) -> None:
    """Time every job with the package under ``src``; print one JSON line per job."""
    sys.path.insert(0, src)
    import time

    import torch

    from fastmoments.box import JacobiTransform

    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cpu" if small else "cuda")
    jobs = JOBS
    if small:  # the same jobs shrunk: a batch of 2 (or none), 8 pixels per axis, order 3
        jobs = [(n, (2,) if b else (), (8,) * len(s), 3, 1, a, be, "float32")
                for n, b, s, _, _, a, be, _ in JOBS]
    gen = torch.Generator(device=dev).manual_seed(0)
    for name, batch, shape, order, k, alpha, beta, precision in jobs:
        x = torch.rand(*batch, *shape, device=dev, generator=gen)
        plan = JacobiTransform(shape, order, alpha=alpha, beta=beta, k=k, device=dev,
                               precision=precision)
        times = {}
        for what in ("forward", "inverse"):
            c = plan.forward(x)
            if what == "forward":
                def fn(plan=plan, x=x):
                    return plan.forward(x)
            else:
                def fn(plan=plan, c=c):
                    return plan.inverse(c)
            for _ in range(3):
                fn()
            ms = []
            for _ in range(reps):
                if small:
                    t0 = time.perf_counter()
                    fn()
                    ms.append(1e3 * (time.perf_counter() - t0))
                    continue
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                fn()
                e1.record()
                torch.cuda.synchronize()
                ms.append(e0.elapsed_time(e1))
            times[what] = statistics.median(ms)
        row = {"job": name, **times}
        if check:  # float64 on the same device, first items only
            n = min(4, batch[0]) if batch else None
            xs = x[:n] if n else x
            p64 = JacobiTransform(shape, order, alpha=alpha, beta=beta, k=k, device=dev,
                                  dtype=torch.float64)
            c32 = plan.forward(xs)
            c64 = p64.forward(xs.double())
            a, b = c32.data.double(), c64.data
            row["err_moments"] = float((a - b).norm() / b.norm())
            r32, r64 = plan.inverse(c32), p64.inverse(c64)
            row["err_recon"] = float((r32.double() - r64).norm() / r64.norm())
            if batch:  # batch equals loop: the first item alone
                one = plan.forward(xs[0]).data
                row["batch_vs_single"] = float((c32.data[0] - one).abs().max()
                                               / one.abs().max())
        print("ROW " + json.dumps(row), flush=True)
        del x, plan
        if not small:
            torch.cuda.empty_cache()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=SRC",
                    help="another package to time: its label and src folder (repeatable)")
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--check", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--small", action="store_true", help="tiny jobs on the CPU (a check)")
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.reps, args.check, args.small)
        return 0
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    variants = [("working tree", here)]
    variants += [tuple(v.split("=", 1)) for v in args.variant]
    runs: dict[str, list[dict]] = {v: [] for v, _ in variants}
    for r in range(args.rounds):
        for label, src in variants if r % 2 == 0 else variants[::-1]:
            src = os.path.abspath(src)
            cmd = [sys.executable, __file__, "--worker", src, "--reps", str(args.reps)]
            if args.small:
                cmd.append("--small")
            if r == 0 and label == "working tree":
                cmd.append("--check")
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if out.returncode:
                print(out.stdout, out.stderr, file=sys.stderr)
                raise SystemExit(f"{label} failed")
            rows = [json.loads(line[4:]) for line in out.stdout.splitlines()
                    if line.startswith("ROW ")]
            runs[label].append({row["job"]: row for row in rows})
            print(label, "round", r, [(x["job"], round(x["forward"], 3), round(x["inverse"], 3))
                                      for x in rows], flush=True)
    import torch

    table = []
    for job in [j[0] for j in JOBS]:
        row = {"job": job}
        for label, _ in variants:
            for what in ("forward", "inverse"):
                row[f"{label} {what} ms"] = statistics.median(
                    rnd[job][what] for rnd in runs[label])
            first = runs[label][0][job]
            for key in ("err_moments", "err_recon", "batch_vs_single"):
                if key in first:
                    row[key] = first[key]
        table.append(row)
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": "CPU (--small)" if args.small else torch.cuda.get_device_name(),
            "torch": torch.__version__,
            "cuda": torch.version.cuda, "python": platform.python_version(),
            "rounds": args.rounds, "reps": args.reps, "variants": dict(variants),
            "script": "benchmarks/box_batches_gpu.py"}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "box_batches_gpu.json"), "w") as f:
        json.dump({"meta": meta, "rows": table, "runs": runs}, f, indent=1)
    labels = [v for v, _ in variants]
    head = ["job"] + [f"{v} {w} ms" for v in labels for w in ("forward", "inverse")]
    lines = [f"# Box moments of batches on {meta['device']}", "",
             f"{meta['date']}; torch {meta['torch']}, CUDA {meta['cuda']}; float32, TF32 off. "
             f"Medians over {args.rounds} alternating rounds (each its own process) of the "
             f"median of {args.reps} CUDA-event timings after 3 warm-up calls. Errors: relative "
             "2-norm against float64 plans on the same device (first 4 items); *batch vs "
             "single*: max |first item of the batch - the item alone| / max |item alone|. "
             "Written by `benchmarks/box_batches_gpu.py`.", "",
             "| " + " | ".join([*head, "err moments", "err recon", "batch vs single"]) + " |",
             "|" + "---|" * (len(head) + 3)]
    for row in table:
        cells = [row["job"]] + [f"{row[h]:.3f}" for h in head[1:]]
        cells += [f"{row[k]:.1e}" if k in row else "-"
                  for k in ("err_moments", "err_recon", "batch_vs_single")]
        lines.append("| " + " | ".join(cells) + " |")
    with open(os.path.join(args.out, "box_batches_gpu.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
