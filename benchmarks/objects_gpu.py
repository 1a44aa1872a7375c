"""Per-object moments of a 5120² label image of 12,500 real nuclei on one GPU.

The 5120² tiling of stardist's nuclei mask (``benchmarks/build_nuclei_set.py``; the 512²
files of the set suffice, the tiling is made in memory) on the GPU, through
:func:`fastmoments.disk.labels.object_moments` at degree 9 (CellProfiler's convention and the
standard one) and degree 20: the whole call, the geometry alone as the call computes it (the
standard convention: all on the GPU, ``label_geometry._device_geometry``; CellProfiler's:
counts, sums, column extremes, each object's convex hull and the circles whose steps are
clear on the GPU, the others by the host's compiled steps, all with CellProfiler's bits;
the share of circles solved on the GPU is reported), the moment sums alone
(``labels._kernel_sums``), objects per second, the peak GPU memory, the largest difference
from the CPU's result (features; for the standard convention, also the radii), and the same
call by the torch route (``method="torch"``: torch passes over row blocks, the geometry of
the standard convention in torch too) as the peer. Best of five calls after one warm-up.

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
from fastmoments.disk.label_geometry import memory_budget_bytes
from fastmoments.disk.labels import (
    _kernel_sums,
    _moment_plan,
    _route_geometry,
    choose_route,
    object_moments,
)

RESULTS = Path(__file__).resolve().parent / "results"


def markdown(data: dict) -> str:
    m = data["meta"]
    lines = [f"# Per-object moments on one GPU ({m['device']})", "",
             f"{m['date']}, torch {m['torch']}, triton {m.get('triton', '–')}; a 5120² "
             f"label image with {data['rows'][0]['objects']} objects (the tiling of "
             "stardist's nuclei mask, `benchmarks/build_nuclei_set.py`), shape features "
             "(float32 sums in the standard convention, float64 in CellProfiler's). "
             "*geometry*: the centres and radii as the call computes them (standard "
             "convention: all on the GPU, Triton kernels: counts, sums and boxes run by run, "
             "then each object's minimum enclosing circle in one program; CellProfiler's: "
             "counts, sums, column extremes, convex hulls and the circles whose steps are "
             "clear by the Triton kernels, the other circles (ties, right angles) by the "
             f"host's compiled steps, CellProfiler's bits: {data['meta']['device_circles']} "
             "of the circles on the GPU); *sums*: the moment "
             "sums alone (one Triton program per object's box); *total*: the whole call; *torch "
             "route*: the same call with `method=\"torch\"` (torch passes over row blocks); "
             "*from the host*: the whole call on NumPy labels with `device=\"cuda\"` (the "
             "labels cross to the GPU once, NumPy features come back); "
             "*difference*: the largest absolute difference of the float64 features (and of "
             "the radii) from the CPU's.", "",
             "| degree | convention | total ms | geometry ms | sums ms | objects/s "
             "| from the host ms "
             "| torch route ms | × | peak GPU MiB | largest difference from the CPU |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        diff = (f"{r['max_diff_vs_cpu']:.1e} (radii "
                f"{r.get('max_radius_diff_vs_cpu', float('nan')):.1e})")
        lines.append(f"| {r['order']} | {r['convention']} | {r['total_ms']:.1f} | "
                     f"{r['geometry_ms']:.1f} | {r['sums_ms']:.1f} | "
                     f"{r['objects_per_s']:.0f} | {r.get('host_labels_ms', float('nan')):.1f} | "
                     f"{r['torch_route_ms']:.0f} | "
                     f"{r['torch_route_ms'] / r['total_ms']:.1f} | "
                     f"{r['peak_MiB']:.0f} | {diff} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    lab_np, _img = load_set(str(Path(__file__).resolve().parent.parent / "nuclei_set"), 5120)
    lab = torch.from_numpy(lab_np).cuda()
    dev = torch.device("cuda")
    budget = memory_budget_bytes(dev, None)
    route = choose_route("zernike", dev, "auto")
    rows = []
    for order, conv in [(9, "cellprofiler"), (9, "standard"), (20, "standard")]:
        kw = dict(order=order, convention=conv, progress=False)
        cpu = object_moments(lab_np, dtype="float64", **kw)
        object_moments(lab, **kw)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        times = []
        for _ in range(5):
            t = time.perf_counter()
            om = object_moments(lab, **kw)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
        peak = torch.cuda.max_memory_allocated() / 2**20
        host = []
        for _ in range(5):
            t = time.perf_counter()
            object_moments(lab_np, device=dev, **kw)
            torch.cuda.synchronize()
            host.append(time.perf_counter() - t)
        geometry = []
        for _ in range(5):
            t = time.perf_counter()
            geo, _ = _route_geometry(lab, "enclosing", conv, dev, budget, route)
            torch.cuda.synchronize()
            geometry.append(time.perf_counter() - t)
        plan = _moment_plan("zernike", order)
        dt = torch.float64 if conv == "cellprofiler" else torch.float32
        sums = []
        for _ in range(5):
            t = time.perf_counter()
            _kernel_sums(lab, None, geo, plan, conv, dt, dev, budget, False, route=route)
            torch.cuda.synchronize()
            sums.append(time.perf_counter() - t)
        peer = []
        for _ in range(3):
            t = time.perf_counter()
            object_moments(lab, method="torch", **kw)
            torch.cuda.synchronize()
            peer.append(time.perf_counter() - t)
        n_obj = len(om)
        om = object_moments(lab, dtype="float64", **kw)
        feats = om.features.cpu().numpy()
        diff = float(np.abs(feats - cpu.features).max())
        rdiff = float(np.abs(om.geometry.radius - cpu.geometry.radius).max())
        rows.append(dict(order=order, convention=conv, objects=n_obj,
                         total_ms=1e3 * min(times), geometry_ms=1e3 * min(geometry),
                         sums_ms=1e3 * min(sums), host_labels_ms=1e3 * min(host),
                         torch_route_ms=1e3 * min(peer),
                         max_radius_diff_vs_cpu=rdiff,
                         objects_per_s=n_obj / min(times),
                         peak_MiB=peak,
                         max_diff_vs_cpu=diff, route=str(om.route)))
        print(rows[-1], flush=True)
    from fastmoments.disk import _triton_labels as tk
    from fastmoments.disk.label_geometry import _triton_hulls

    *_, pts, counts = _triton_hulls(lab, dev, budget)
    settled = int(tk.settled_circles(pts, counts)[2].sum())
    name = torch.cuda.get_device_name()
    try:
        import triton

        tver = triton.__version__
    except ImportError:
        tver = None
    data = {"meta": {"device": name, "torch": torch.__version__, "triton": tver,
                     "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                         timespec="seconds"),
                     "device_circles": f"{settled:,} of {len(counts):,}"}, "rows": rows}
    stem = f"objects_gpu_{name.split()[-1].lower()}"
    (RESULTS / f"{stem}.json").write_text(json.dumps(data, indent=1))
    (RESULTS / f"{stem}.md").write_text(markdown(data))


if __name__ == "__main__":
    main()
