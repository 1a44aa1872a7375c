"""Where the box engine's time goes: every product of one forward plus reconstruction, timed
on its own (CUDA events around :func:`fastmoments.box.engine._product`), with its shapes and
strides, and the GPU kernels of the whole call from the torch profiler; for the 512^3,
order-500, k = 23 job (issue 16) with each precision, with and without parity.

Run from the repository root on a CUDA machine: ``PYTHONPATH=src python
benchmarks/box_product_times.py --out benchmarks/results/box_runs``. Writes
``box_product_times.{json,md}`` (a diagnostic run: kept beside the results, off the docs page).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, os.path.dirname(__file__))

from box_gpu import bench, summary
from fastmoments.box import JacobiTransform, engine
from fastmoments.box.phantom import phantom_tensor

VARIANTS = [("float32", True, 256), ("fp16x3", False, 128), ("fp16x3", True, 256)]


def kernel_table(fn, top: int = 12) -> list[tuple[str, float, int]]:
    """(kernel, total ms, calls) of one call of ``fn``, the ``top`` longest."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    rows = []
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0)
        if t:
            rows.append((ev.key[:70], round(t / 1e3, 4), ev.count))
    return sorted(rows, key=lambda r: -r[1])[:top]


def product_times(fn) -> list[dict]:
    """Each product of one call of ``fn``: shapes, strides and CUDA-event milliseconds."""
    orig = engine._product
    log: list[dict] = []

    def timed(data, op, j0, j1, mat_first):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = orig(data, op, j0, j1, mat_first)
        stop.record()
        log.append({"data": list(data.shape), "strides": list(data.stride()),
                    "mat": list(op.full[j0:j1].shape), "mat_first": mat_first,
                    "out_strides": list(out.stride()), "events": (start, stop)})
        return out

    engine._product = timed
    try:
        fn()
    finally:
        engine._product = orig
    torch.cuda.synchronize()
    for r in log:
        start, stop = r.pop("events")
        r["ms"] = start.elapsed_time(stop)
    return log


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "box_runs"))
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    shape = (512,) * 3
    x = phantom_tensor(shape, device=dev, dtype=torch.float32)
    rows = []
    for precision, parity, block in VARIANTS:
        plan = JacobiTransform(shape, 500, alpha=0.3, beta=0.3, k=23, device=dev,
                               precision=precision, parity=parity, block=block)

        def both(plan=plan):
            return plan.inverse(plan.forward(x).data)

        both()
        prods = product_times(both)
        row = {"precision": precision, "parity": parity, "block": block,
               "both": summary(bench(both, dev, 7)), "products": prods,
               "products_ms": sum(p["ms"] for p in prods), "kernels": kernel_table(both, 14)}
        rows.append(row)
        print(precision, parity, block, row["both"]["median_ms"], row["products_ms"],
              flush=True)
        del plan
        torch.cuda.empty_cache()
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": torch.cuda.get_device_name(dev), "torch": torch.__version__,
            "cuda": torch.version.cuda}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "box_product_times.json").write_text(json.dumps({"meta": meta, "rows": rows},
                                                           indent=1))
    lines = ["# Box engine: where the time of the 512^3, order-500 job goes", "",
             f"{meta['date']}; {meta['device']}; torch {meta['torch']}, CUDA {meta['cuda']}. "
             "Written by `benchmarks/box_product_times.py`. *both*: median of 7 forward + "
             "reconstruction calls; *products*: the sum of each product's own CUDA-event time "
             "(one call).", ""]
    for r in rows:
        lines += [f"## {r['precision']}, parity {'on' if r['parity'] else 'off'}, blocks of "
                  f"{r['block']}: {r['both']['median_ms']:.2f} ms, products "
                  f"{r['products_ms']:.2f} ms", "",
                  "| data | strides | table | table first | out strides | ms |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {p['data']} | {p['strides']} | {p['mat']} | {p['mat_first']} | "
                  f"{p['out_strides']} | {p['ms']:.3f} |" for p in r["products"]]
        lines += ["", "| kernel | ms | calls |", "|---|---|---|"]
        lines += [f"| `{k}` | {t:.3f} | {c} |" for k, t, c in r["kernels"]]
        lines.append("")
    (out / "box_product_times.md").write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
