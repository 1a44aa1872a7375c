"""Volumes on a GPU: the box plans' products with cuBLAS float32 against the default
``precision="fp16x3"`` (float16 halves on tensor cores), measured in the same run.

For each job (a batch of volumes, an order, ``k``; alpha = beta = 0.3), one plan with
``precision="float32"`` (its defaults then: parity, degree blocks) and one with the default
precision, which is ``"fp16x3"`` for float32 volumes on CUDA (no parity, blocks of 256): the
time of one public forward plus reconstruction call, ``plan.inverse(plan.forward(x).data)``
(CUDA events around the call, so the input checks' host reads are included; median of 10
after 3 warm-up calls), and the relative 2-norm errors of the first item's moments and
reconstruction against a float64 plan.

    PYTHONPATH=src python benchmarks/box_default_precision.py

Writes ``benchmarks/results/box_runs/default_precision.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

import torch

RESULTS = Path(__file__).resolve().parent / "results" / "box_runs"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from disk_common import time_samples  # noqa: E402 - after the path

JOBS = [((8,), (128,) * 3, 100, 1), ((64,), (64,) * 3, 40, 1), ((1,), (256,) * 3, 200, 7),
        ((4,), (256,) * 3, 100, 1), ((1,), (512,) * 3, 500, 23)]


def timed(fn, reps: int = 10) -> float:
    """Median milliseconds of ``reps`` calls after 3 warm-up calls (the benchmarks' timer)."""
    return 1e3 * statistics.median(time_samples(fn, torch.device("cuda"), warmup=3,
                                                repeat=reps))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(RESULTS / "default_precision"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("box_default_precision.py needs a CUDA GPU")
    import triton

    from fastmoments.box import JacobiTransform

    g = torch.Generator(device="cuda").manual_seed(0)
    rows = []
    for batch, shape, order, k in JOBS:
        x = torch.rand(*batch, *shape, device="cuda", generator=g)
        ref = JacobiTransform(shape, order, alpha=0.3, beta=0.3, k=k, device="cuda",
                              dtype=torch.float64)
        j64 = ref.forward(x[:1].double()).data
        r64 = ref.inverse(j64)
        for prec in ("float32", None):
            p = JacobiTransform(shape, order, alpha=0.3, beta=0.3, k=k, device="cuda",
                                precision=prec)
            j = p.forward(x).data
            r = p.inverse(j)
            row = dict(job=f"{batch[0]} x {shape[0]}^3, order {order}, k {k}",
                       asked=prec or "default", precision=p.precision, parity=p.symmetric,
                       block=p.block,
                       ms=timed(lambda p=p, x=x: p.inverse(p.forward(x).data)),
                       err_moments=float((j[:1].double() - j64).norm() / j64.norm()),
                       err_recon=float((r[:1].double() - r64).norm() / r64.norm()))
            rows.append(row)
            print(row, flush=True)
    meta = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                device=torch.cuda.get_device_name(), torch=torch.__version__,
                cuda=torch.version.cuda, triton=triton.__version__)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    lines = [f"# Box volumes: cuBLAS float32 against the default fp16x3 ({meta['device']})", "",
             f"{meta['date']}; torch {meta['torch']}, CUDA {meta['cuda']}, triton "
             f"{meta['triton']}. One forward plus reconstruction call (CUDA events around it, "
             "the input checks' host reads included), median of 10 after 3 warm-up calls; "
             "errors of the first item against float64. Written by "
             "`benchmarks/box_default_precision.py`.", "",
             "| job | precision | parity | block | ms | err moments | err recon |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['job']} | {r['precision']} ({r['asked']}) | "
                     f"{'yes' if r['parity'] else 'no'} | {r['block']} | {r['ms']:.2f} | "
                     f"{r['err_moments']:.1e} | {r['err_recon']:.1e} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
