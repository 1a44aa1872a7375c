"""Per-object Zernike features of a label image on the CPU: fastmoments against centrosome
(the code CellProfiler's MeasureObjectSizeShape and MeasureObjectIntensityDistribution run)
and cp_measure, at degree 9.

The label image is synthetic: a grid of random ellipses and disks (radii 4-18 pixels), a few
thousand objects. Each tool computes CellProfiler's 30 shape Zernike features of every
object, then the intensity Zernikes (30 magnitudes and 30 phases); each row gives the
median time of a few runs after a warm-up, the largest absolute difference from centrosome's
features (the reference: it is CellProfiler's own code), and the peak resident memory of a
fresh process that ran only that tool.

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


def intensity_image(shape: tuple[int, int], seed: int = 1) -> np.ndarray:
    """A smooth random intensity image in [0, 1] (CellProfiler scales images so)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[: shape[0], : shape[1]]
    img = 0.5 + 0.25 * np.sin(yy / 7.0 + rng.uniform(0, 6)) * np.cos(xx / 5.0)
    return img + 0.2 * rng.random(shape)


def run_fastmoments(lab: np.ndarray, degree: int, img: np.ndarray | None) -> np.ndarray:
    from fastmoments.disk.labels import object_moments

    return object_moments(lab, img, order=degree, convention="cellprofiler",
                          progress=False).features


def run_centrosome(lab: np.ndarray, degree: int, img: np.ndarray | None) -> np.ndarray:
    import centrosome.zernike as cz

    ids = np.unique(lab)[1:]
    indexes = cz.get_zernike_indexes(degree + 1)
    if img is None:  # MeasureObjectSizeShape
        return cz.zernike(indexes, lab, ids)
    # MeasureObjectIntensityDistribution's steps, with centrosome's functions
    import scipy.ndimage
    from centrosome.cpmorphology import minimum_enclosing_circle

    centres, radii = minimum_enclosing_circle(lab, ids)
    rows, cols = np.nonzero(lab)
    lab_px = lab[rows, cols]
    k = np.searchsorted(ids, lab_px)
    yx = (np.stack([rows, cols], 1) - centres[k]) / radii[k][:, None]
    z = cz.construct_zernike_polynomials(yx[:, 1], yx[:, 0], indexes)
    area = scipy.ndimage.sum(np.ones(len(lab_px)), labels=lab_px, index=ids)
    mags, phases = [], []
    for i in range(len(indexes)):
        vr = scipy.ndimage.sum(img[rows, cols] * z[:, i].real, labels=lab_px, index=ids)
        vi = scipy.ndimage.sum(img[rows, cols] * z[:, i].imag, labels=lab_px, index=ids)
        mags.append(np.sqrt(vr * vr + vi * vi) / area)
        phases.append(np.arctan2(vr, vi))
    return np.stack(mags + phases, axis=1)


def run_cp_measure(lab: np.ndarray, degree: int, img: np.ndarray | None) -> np.ndarray:
    import centrosome.zernike as cz
    from cp_measure.bulk import get_core_measurements

    pairs = cz.get_zernike_indexes(degree + 1)
    if img is None:
        out = get_core_measurements()["zernike"](lab, np.zeros(lab.shape))
        names = [f"Zernike_{n}_{m}" for n, m in pairs]
    else:
        out = get_core_measurements()["radial_zernikes"](lab, img)
        names = [k for k in out if "ZernikeMagnitude" in k] + [k for k in out if "Phase" in k]
    return np.stack([np.asarray(out[k], dtype=np.float64) for k in names], axis=1)


TOOLS = {"fastmoments": run_fastmoments, "centrosome": run_centrosome,
         "cp_measure": run_cp_measure}


def one(tool: str, size: int, step: int, degree: int, reps: int, features: str) -> dict:
    """Time one tool in this process; its features go to a .npy file for the comparison."""
    import resource

    lab = synthetic_labels(size, step)
    img = intensity_image(lab.shape) if features == "intensity" else None
    fn = TOOLS[tool]
    times = []
    feats = fn(lab, degree, img)  # warm-up (imports, first calls)
    for _ in range(reps):
        t = time.perf_counter()
        feats = fn(lab, degree, img)
        times.append(time.perf_counter() - t)
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"objects_cpu_{tool}_{features}.npy")
    np.save(path, feats)
    return {"tool": tool, "features": features, "times_s": times,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "output": path}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--one", choices=tuple(TOOLS))
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--step", type=int, default=40)
    ap.add_argument("--degree", type=int, default=9)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--features", choices=("shape", "intensity"), default="shape")
    args = ap.parse_args()
    if args.quick:
        args.size, args.reps = 400, 1
    if args.one:
        print(json.dumps(one(args.one, args.size, args.step, args.degree, args.reps,
                             args.features)))
        return
    lab = synthetic_labels(args.size, args.step)
    n_obj = len(np.unique(lab)) - 1
    rows = []
    for features in ("shape", "intensity"):
        part = []
        for tool in TOOLS:
            reps = args.reps if tool == "fastmoments" else 1
            cmd = [sys.executable, __file__, "--one", tool, "--size", str(args.size),
                   "--step", str(args.step), "--degree", str(args.degree), "--reps",
                   str(reps), "--features", features]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                part.append({"tool": tool, "features": features,
                             "error": proc.stderr.strip().splitlines()[-1]})
                continue
            part.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        ref = np.load(next(r["output"] for r in part if r["tool"] == "centrosome"))
        K = ref.shape[1] // 2
        for r in part:
            if "error" in r:
                continue
            f = np.load(r.pop("output"))
            ok = np.isfinite(ref)
            if features == "intensity":  # phases: where the sum is not ~0, modulo 2 pi
                mag = ref[:, :K]
                ok[:, K:] &= mag > 1e-9
                d = np.abs(f - ref)
                d[:, K:] = np.abs(np.angle(np.exp(1j * (f[:, K:] - ref[:, K:]))))
            else:
                d = np.abs(f - ref)
            r["max_abs_diff_vs_centrosome"] = float(d[ok].max())
            r["median_s"] = statistics.median(r["times_s"])
        base = next(r for r in part if r["tool"] == "fastmoments")["median_s"]
        for r in part:
            if "median_s" in r:
                r["ratio_to_fastmoments"] = r["median_s"] / base
        rows += part
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
             "Shape: MeasureObjectSizeShape's 30 features. Intensity: "
             "MeasureObjectIntensityDistribution's 30 magnitudes and 30 phases of a smooth "
             "random image (centrosome row: that module's steps with centrosome's functions; "
             "phase differences modulo 2 pi where the magnitude is above 1e-9).", "",
             "| features | tool | median time (s) | x fastmoments | max abs diff vs centrosome "
             "| peak RSS (MiB) |", "|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['features']} | {r['tool']} | not run: {r['error']} | | | |")
            continue
        lines.append(f"| {r['features']} | {r['tool']} | {r['median_s']:.3f} "
                     f"| {r['ratio_to_fastmoments']:.1f} "
                     f"| {r['max_abs_diff_vs_centrosome']:.1e} | {r['peak_rss_mib']:.0f} |")
    with open(os.path.join(res, name + ".md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
