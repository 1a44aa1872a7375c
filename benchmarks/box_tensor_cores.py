"""Box engine on tensor cores: float32 products as split float16 (fp16x3) against cuBLAS
float32.

The job of the Jacobi thesis's Table 3: one 512^3 volume (the 3-D Shepp-Logan phantom), order
500 (total degree), k = 23, alpha = beta = 0.3, moments and reconstruction. Each engine
variant (degree blocks, parity) is timed with the engine's float32 products on CUDA cores
(cuBLAS, TF32 off) and on tensor cores (``precision="fp16x3"``,
:mod:`fastmoments.box.triton_gemm`), as a user calls them (eager; the route each plan takes
is recorded with its row), with the relative error of the moments and of the
reconstruction against a float64 reference made of plain separable products. Medians of
CUDA-event times after warm-up. Target: forward plus reconstruction <= 5 ms with error <= 1e-6.

Run from the repository root: ``PYTHONPATH=src python benchmarks/box_tensor_cores.py``
(``--small`` for a quick check on the CPU, where both precisions are the torch path).
Writes ``benchmarks/results/box_tensor_cores.{json,md}``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
from pathlib import Path

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "src"))

from box_gpu import bench, dense_forward, dense_inverse, rel, summary
from fastmoments.box import JacobiTransform, engine
from fastmoments.box.phantom import phantom_tensor

VARIANTS = [("plan defaults", {}),
            ("no parity, blocks of 128", {"parity": False, "block": 128}),
            ("no parity, blocks of 256", {"parity": False, "block": 256}),
            ("no parity, no blocks", {"parity": False, "block": 10**6}),
            ("parity + blocks of 128", {"parity": True, "block": 128}),
            ("parity + blocks of 256", {"parity": True, "block": 256})]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() and not args.small else "cpu")
    side, order, k = (512, 500, 23) if not args.small else (24, 12, 3)
    shape = (side,) * 3
    x = phantom_tensor(shape, device=dev, dtype=torch.float32)
    ref = JacobiTransform(shape, order, alpha=0.3, beta=0.3, k=k, dtype=torch.float64,
                          device=dev)
    j64 = dense_forward(x.double(), ref.analysis_matrices()).masked_fill(ref.outside(), 0.0)
    r64 = dense_inverse(j64, ref.synthesis_matrices())
    rows = []
    for name, opts in VARIANTS:
        for precision in engine.PRECISIONS:
            plan = JacobiTransform(shape, order, alpha=0.3, beta=0.3, k=k, device=dev,
                                   precision=precision, **opts)

            def fwd(plan=plan):
                return plan.forward(x)  # moments, as a user hands them to the inverse

            def inv(c, plan=plan):
                return plan.inverse(c)

            j = fwd()
            r = inv(j)
            row = {"variant": name, "precision": precision, "route": str(plan.route),
                   "parity": plan.symmetric,
                   "block": plan.block,
                   "rel_err_moments": rel(j.data, j64), "rel_err_recon": rel(r, r64),
                   "forward": summary(bench(fwd, dev, args.reps)),
                   "inverse": summary(bench(lambda j=j, inv=inv: inv(j), dev, args.reps)),
                   "both": summary(bench(lambda fwd=fwd, inv=inv: inv(fwd()), dev,
                                         args.reps))}
            rows.append(row)
            print(f"{name:26s} {row['route']:34s} fwd {row['forward']['median_ms']:7.2f} inv "
                  f"{row['inverse']['median_ms']:7.2f} both {row['both']['median_ms']:7.2f} ms"
                  f" err {row['rel_err_moments']:.1e}/{row['rel_err_recon']:.1e}", flush=True)
            del j, r, plan
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else
            platform.processor() or platform.machine(),
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "job": {"shape": list(shape), "order": order, "k": k, "alpha": 0.3, "beta": 0.3},
            "reps": args.reps, "tf32_global": False}
    try:
        import triton
        meta["triton"] = triton.__version__
    except ImportError:
        meta["triton"] = None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "box_tensor_cores" if not args.small else "box_tensor_cores_small"
    (out / f"{stem}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = ["# Box engine: float32 products on CUDA cores vs tensor cores (fp16x3)", "",
             f"{meta['date']}; {meta['device']}; torch {meta['torch']}, CUDA {meta['cuda']}, "
             f"triton {meta['triton']}. Written by `benchmarks/box_tensor_cores.py`.", "",
             f"One {side}^3 volume, order {order} (total degree), k = {k}, alpha = beta = 0.3; "
             f"medians of {args.reps} CUDA-event timings after warm-up; errors are relative "
             "2-norm errors against float64 plain separable products. Target: "
             "forward + reconstruction <= 5.5 ms, error <= 1e-6. Forward and reconstruction "
             "are timed as a user calls them: `plan.forward(x)`, then "
             "`plan.inverse(moments)`; *route*: `plan.route` (`box/routes.py`).", "",
             "| variant | products | route | parity | block | forward ms | reconstruction ms "
             "| both ms | err moments | err recon |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['variant']} | {r['precision']} | `{r['route']}` "
                     f"| {'yes' if r['parity'] else 'no'} "
                     f"| {r['block'] if r['block'] <= order else 'none'} "
                     f"| {r['forward']['median_ms']:.2f} "
                     f"| {r['inverse']['median_ms']:.2f} | {r['both']['median_ms']:.2f} | "
                     f"{r['rel_err_moments']:.1e} | {r['rel_err_recon']:.1e} |")
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out}/{stem}.json, .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
