"""Per-object Zernike features of a label image on the CPU: fastmoments against centrosome
(the code CellProfiler's MeasureObjectSizeShape runs) and cp_measure, at degree 9.

The label image is synthetic: a grid of random ellipses and disks (radii 4-18 pixels), a few
thousand objects. Each tool computes CellProfiler's 30 shape Zernike features of every
object; each row gives the median time of a few runs after a warm-up, the largest absolute
difference from centrosome's features (the reference: it is CellProfiler's own code), and
the peak resident memory of a fresh process that ran only that tool.

Run from the repository root: ``python benchmarks/objects_cpu.py`` (``--quick`` for a smoke
run). Writes ``benchmarks/results/objects_cpu.json`` and ``objects_cpu.md``.
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
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, os.path.join(ROOT, "src"))


def synthetic_labels(size: int, step: int, seed: int = 0) -> np.ndarray:
    """``size x size`` int32 labels: one random ellipse (or disk) per ``step x step`` cell."""
    rng = np.random.default_rng(seed)
    lab = np.zeros((size, size), np.int32)
    half = step // 2
    yy, xx = np.mgrid[-half:half, -half:half].astype(np.float64)
    label = 0
    for cy in range(half, size - half + 1, step):
        for cx in range(half, size - half + 1, step):
            label += 1
            a = rng.uniform(4, half - 2)
            b = a if rng.random() < 0.3 else rng.uniform(4, half - 2)
            t = rng.uniform(0, np.pi)
            dy, dx = yy - rng.uniform(-0.5, 0.5), xx - rng.uniform(-0.5, 0.5)
            u = dy * np.cos(t) + dx * np.sin(t)
            v = -dy * np.sin(t) + dx * np.cos(t)
            win = lab[cy - half : cy + half, cx - half : cx + half]
            win[(u / a) ** 2 + (v / b) ** 2 <= 1] = label
    return lab


def run_fastmoments(lab: np.ndarray, degree: int) -> np.ndarray:
    from fastmoments.disk.labels import object_moments

    return object_moments(lab, order=degree, convention="cellprofiler", progress=False).features


def run_centrosome(lab: np.ndarray, degree: int) -> np.ndarray:
    import centrosome.zernike as cz

    ids = np.unique(lab)[1:]
    return cz.zernike(cz.get_zernike_indexes(degree + 1), lab, ids)


def run_cp_measure(lab: np.ndarray, degree: int) -> np.ndarray:
    import centrosome.zernike as cz
    from cp_measure.bulk import get_core_measurements

    out = get_core_measurements()["zernike"](lab, np.zeros(lab.shape))
    names = [f"Zernike_{n}_{m}" for n, m in cz.get_zernike_indexes(degree + 1)]
    return np.stack([np.asarray(out[k], dtype=np.float64) for k in names], axis=1)


TOOLS = {"fastmoments": run_fastmoments, "centrosome": run_centrosome,
         "cp_measure": run_cp_measure}


def one(tool: str, size: int, step: int, degree: int, reps: int) -> dict:
    """Time one tool in this process; its features go to a .npy file for the comparison."""
    import resource

    lab = synthetic_labels(size, step)
    fn = TOOLS[tool]
    times = []
    feats = fn(lab, degree)  # warm-up (imports, first calls)
    for _ in range(reps):
        t = time.perf_counter()
        feats = fn(lab, degree)
        times.append(time.perf_counter() - t)
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"objects_cpu_{tool}.npy")
    np.save(path, feats)
    return {"tool": tool, "times_s": times,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "features": path}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--one", choices=tuple(TOOLS))
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--step", type=int, default=40)
    ap.add_argument("--degree", type=int, default=9)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    if args.quick:
        args.size, args.reps = 400, 1
    if args.one:
        print(json.dumps(one(args.one, args.size, args.step, args.degree, args.reps)))
        return
    lab = synthetic_labels(args.size, args.step)
    n_obj = len(np.unique(lab)) - 1
    rows = []
    for tool in TOOLS:
        reps = args.reps if tool == "fastmoments" else 1
        cmd = [sys.executable, __file__, "--one", tool, "--size", str(args.size), "--step",
               str(args.step), "--degree", str(args.degree), "--reps", str(reps)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            rows.append({"tool": tool, "error": proc.stderr.strip().splitlines()[-1]})
            continue
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    ref = np.load(next(r["features"] for r in rows if r["tool"] == "centrosome"))
    for r in rows:
        if "error" in r:
            continue
        f = np.load(r.pop("features"))
        ok = np.isfinite(ref)
        r["max_abs_diff_vs_centrosome"] = float(np.abs(f[ok] - ref[ok]).max())
        r["median_s"] = statistics.median(r["times_s"])
    base = next(r for r in rows if r["tool"] == "fastmoments")["median_s"]
    for r in rows:
        if "median_s" in r:
            r["ratio_to_fastmoments"] = r["median_s"] / base
    import torch

    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": platform.platform(), "cpu_count": os.cpu_count(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "python": platform.python_version(), "numpy": np.__version__,
            "torch": torch.__version__, "image": f"{args.size}x{args.size}",
            "objects": n_obj, "degree": args.degree,
            "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
            "note": "a shared CPU machine (2 cores, other jobs running): times are indicative"}
    out = {"meta": meta, "rows": rows}
    res = os.path.join(ROOT, "benchmarks", "results")
    os.makedirs(res, exist_ok=True)
    name = "objects_cpu_quick" if args.quick else "objects_cpu"
    with open(os.path.join(res, name + ".json"), "w") as fh:
        json.dump(out, fh, indent=1)
    lines = [f"# Per-object Zernike features, CPU ({meta['date']})", "",
             f"{n_obj} objects in a {meta['image']} label image, degree {args.degree} "
             f"(CellProfiler's 30 shape features); {meta['note']} (load average "
             f"{meta['load_average_1_5_15']} at the end of the run).", "",
             "| tool | median time (s) | x fastmoments | max abs diff vs centrosome "
             "| peak RSS (MiB) |", "|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['tool']} | not run: {r['error']} | | | |")
            continue
        lines.append(f"| {r['tool']} | {r['median_s']:.3f} | {r['ratio_to_fastmoments']:.1f} "
                     f"| {r['max_abs_diff_vs_centrosome']:.1e} | {r['peak_rss_mib']:.0f} |")
    with open(os.path.join(res, name + ".md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
