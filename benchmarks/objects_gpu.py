"""Per-object moments of a 5120² label image of 12,500 real nuclei on one GPU.

The 5120² tiling of stardist's nuclei mask (``benchmarks/build_nuclei_set.py``; the 512²
files of the set suffice, the tiling is made in memory) on the GPU, through
:func:`fastmoments.disk.labels.object_moments` at degree 9 (CellProfiler's convention and the
standard one) and degree 20: the whole call (geometry on the host, moments on the GPU), the
geometry alone (:func:`~fastmoments.disk.labels.label_geometry`), objects per second, the
peak GPU memory, and the largest difference from the CPU's result under CellProfiler's
convention. Best of three calls after one warm-up.

Run on a CUDA machine from the repository root (with the folder ``nuclei_set`` made by
``python benchmarks/build_nuclei_set.py``)::

    PYTHONPATH=src python benchmarks/objects_gpu.py

Writes ``benchmarks/results/objects_gpu_<device>.json`` and ``.md``.
"""

from __future__ import annotations

import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_nuclei_set import load_set
from fastmoments.disk.labels import label_geometry, object_moments

RESULTS = Path(__file__).resolve().parent / "results"


def markdown(data: dict) -> str:
    m = data["meta"]
    lines = [f"# Per-object moments on one GPU ({m['device']})", "",
             f"{m['date']}, torch {m['torch']}; a 5120² label image with "
             f"{data['rows'][0]['objects']} objects (the tiling of stardist's nuclei mask, "
             "`benchmarks/build_nuclei_set.py`). *geometry*: `label_geometry`, the pass over the "
             "pixels on the GPU, hulls and minimum enclosing circles on the host; *total*: "
             "the whole call (the standard convention solves the circles on the GPU).", "",
             "| degree | convention | total ms | geometry ms | objects/s | peak GPU MiB "
             "| largest difference from the CPU |", "|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        diff = "–" if r["max_diff_vs_cpu"] != r["max_diff_vs_cpu"] else \
            f"{r['max_diff_vs_cpu']:.1e}"
        lines.append(f"| {r['order']} | {r['convention']} | {r['total_ms']:.0f} | "
                     f"{r['geometry_ms']:.0f} | {r['objects_per_s']:.0f} | "
                     f"{r['peak_MiB']:.0f} | {diff} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    lab_np, _img = load_set(str(Path(__file__).resolve().parent.parent / "nuclei_set"), 5120)
    lab = torch.from_numpy(lab_np).cuda()
    ref = object_moments(lab_np, convention="cellprofiler").features
    rows = []
    for order, conv in [(9, "cellprofiler"), (9, "standard"), (20, "standard")]:
        kw = dict(order=order, convention=conv, progress=False)
        object_moments(lab, **kw)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        times = []
        for _ in range(3):
            t = time.perf_counter()
            om = object_moments(lab, **kw)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
        t = time.perf_counter()
        label_geometry(lab)
        torch.cuda.synchronize()
        geometry = time.perf_counter() - t
        feats = om.features.cpu().numpy() if hasattr(om.features, "cpu") else om.features
        diff = float(np.abs(feats - ref).max()) if conv == "cellprofiler" else float("nan")
        rows.append(dict(order=order, convention=conv, objects=len(om),
                         total_ms=1e3 * min(times), geometry_ms=1e3 * geometry,
                         objects_per_s=len(om) / min(times),
                         peak_MiB=torch.cuda.max_memory_allocated() / 2**20,
                         max_diff_vs_cpu=diff, route=str(om.route)))
        print(rows[-1], flush=True)
    name = torch.cuda.get_device_name()
    data = {"meta": {"device": name, "torch": torch.__version__,
                     "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                         timespec="seconds")}, "rows": rows}
    stem = f"objects_gpu_{name.split()[-1].lower()}"
    (RESULTS / f"{stem}.json").write_text(json.dumps(data, indent=1))
    (RESULTS / f"{stem}.md").write_text(markdown(data))


if __name__ == "__main__":
    main()
