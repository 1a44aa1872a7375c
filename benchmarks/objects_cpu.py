"""Per-object Zernike features of real nuclei on the CPU: fastmoments against centrosome (the
code CellProfiler's MeasureObjectSizeShape and MeasureObjectIntensityDistribution run) and
cp_measure, at degree 9.

The data are the nuclei image and label mask that the stardist package ships (2018 Data
Science Bowl, 512 x 512, 125 nuclei; ``benchmarks/build_nuclei_set.py`` extracts them from the
stardist wheel and tiles them to 5120 x 5120, 12,500 nuclei; stardist is BSD-3-licensed). Each
tool computes CellProfiler's 30 shape Zernike features of every object, then the intensity
Zernikes (30 magnitudes and 30 phases of the image scaled to [0, 1], as CellProfiler scales
it); each row gives the median time of the runs after a warm-up (at least a second of
them, :data:`MIN_SECONDS`), each tool with its defaults (``OMP_NUM_THREADS`` unset:
fastmoments takes the threads its work is worth, ``fastmoments._threads``: one at
512 x 512, up to two at 5120 x 5120 on this 2-core machine; the peers as they come), the
largest absolute difference from the reference's features (centrosome, CellProfiler's own
code, where it runs; cp_measure on the 5120 x 5120 image, where centrosome's memory, 2.6 GB
at 2048 x 2048, would grow past this machine's), and the peak resident memory of a fresh
process that ran only that tool. ``--data synthetic`` runs the former synthetic ellipses
instead.

Run from the repository root: ``python benchmarks/objects_cpu.py``
(``--quick`` for a smoke run). Writes ``benchmarks/results/objects_cpu.json`` and
``objects_cpu.md``.
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
NUCLEI = os.path.join(ROOT, "nuclei_set")


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


def dataset(data: str, size: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, intensity image in [0, 1])`` of the benchmark."""
    if data == "synthetic":
        lab = synthetic_labels(size, step)
        return lab, intensity_image(lab.shape)
    from build_nuclei_set import load_set

    lab, img = load_set(NUCLEI, size)
    return lab, img.astype(np.float64) / 65535.0


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
#: Each tool runs its ``--reps`` (fastmoments; the peers once) and then again until its
#: timed runs add up to this many seconds (at most :data:`MAX_REPS` runs): a call of a few
#: milliseconds is timed in its steady state, not in its first calls after the warm-up
#: (on the 512 x 512 image fastmoments' first five took 1.6-2.8 ms, the next fifteen
#: 0.9-1.6 ms).
MIN_SECONDS = 1.0
MAX_REPS = 1000


def one(tool: str, data: str, size: int, step: int, degree: int, reps: int,
        features: str) -> dict:
    """Time one tool in this process; its features go to a .npy file for the comparison."""
    import resource

    lab, img = dataset(data, size, step)
    img = img if features == "intensity" else None
    fn = TOOLS[tool]
    times = []
    feats = fn(lab, degree, img)  # warm-up (imports, first calls)
    while len(times) < reps or (sum(times) < MIN_SECONDS and len(times) < MAX_REPS):
        t = time.perf_counter()
        feats = fn(lab, degree, img)
        times.append(time.perf_counter() - t)
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                        f"objects_cpu_{tool}_{features}_{size}.npy")
    np.save(path, feats)
    return {"tool": tool, "features": features, "times_s": times,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "output": path}


def compare(part: list[dict], features: str) -> None:
    """Adds the difference from the reference (centrosome where it ran, else cp_measure)
    and the time ratios to the rows of one image and feature set."""
    ran = [r for r in part if "error" not in r]
    ref_row = next((r for r in ran if r["tool"] == "centrosome"),
                   next((r for r in ran if r["tool"] == "cp_measure"), None))
    ref = np.load(ref_row["output"]) if ref_row else None
    for r in ran:
        f = np.load(r["output"])
        r["median_s"] = statistics.median(r["times_s"])
        if ref is None:
            continue
        K = ref.shape[1] // 2
        ok = np.isfinite(ref)
        if features == "intensity":  # phases: where the sum is not ~0, modulo 2 pi
            ok[:, K:] &= ref[:, :K] > 1e-9
            d = np.abs(f - ref)
            d[:, K:] = np.abs(np.angle(np.exp(1j * (f[:, K:] - ref[:, K:]))))
        else:
            d = np.abs(f - ref)
        r["reference"] = ref_row["tool"]
        r["max_abs_diff"] = float(d[ok].max())
    base = next(r for r in ran if r["tool"] == "fastmoments")["median_s"]
    for r in ran:
        r["ratio_to_fastmoments"] = r["median_s"] / base
        os.remove(r.pop("output"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--one", choices=tuple(TOOLS))
    ap.add_argument("--data", choices=("nuclei", "synthetic"), default="nuclei")
    ap.add_argument("--size", type=int, default=None,
                    help="one image size (default: 512 and 5120 for the nuclei, 2048 for "
                         "the synthetic labels)")
    ap.add_argument("--step", type=int, default=40)
    ap.add_argument("--degree", type=int, default=9)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--features", choices=("shape", "intensity"), default="shape")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.data, args.size, args.step, args.degree,
                             args.reps, args.features)))
        return
    if args.size is not None:
        sizes = [args.size]
    elif args.quick:
        sizes = [512] if args.data == "nuclei" else [400]
    else:
        sizes = [512, 5120] if args.data == "nuclei" else [2048]
    if args.quick:
        args.reps = 1
    rows, objects = [], {}
    load_start = [round(x, 2) for x in os.getloadavg()]
    for size in sizes:
        lab, _img = dataset(args.data, size, args.step)
        objects[size] = int(len(np.unique(lab)) - 1)
        for features in ("shape", "intensity"):
            part = []
            for tool in TOOLS:
                if tool == "centrosome" and size > 2048:
                    part.append({"tool": tool, "features": features, "size": size,
                                 "error": "not run: its memory grows past this machine's "
                                          "(2.6 GB at 2048 x 2048)"})
                    continue
                reps = args.reps if tool == "fastmoments" else 1
                cmd = [sys.executable, __file__, "--one", tool, "--data", args.data,
                       "--size", str(size), "--step", str(args.step), "--degree",
                       str(args.degree), "--reps", str(reps), "--features", features]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    part.append({"tool": tool, "features": features, "size": size,
                                 "error": proc.stderr.strip().splitlines()[-1]})
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                r["size"] = size
                part.append(r)
                print(tool, features, size, statistics.median(r["times_s"]), flush=True)
            compare(part, features)
            rows += part
    import numba
    import torch

    from fastmoments._threads import thread_limit

    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": platform.platform(), "cpu_count": os.cpu_count(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "python": platform.python_version(), "numpy": np.__version__,
            "torch": torch.__version__, "numba": numba.__version__,
            "torch_threads": torch.get_num_threads(), "thread_limit": thread_limit(),
            "data": args.data, "objects": objects, "degree": args.degree,
            "load_average_start_1_5_15": load_start,
            "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
            "note": "a shared CPU machine (2 cores, other jobs running): times are indicative"}
    out = {"meta": meta, "rows": rows}
    res = os.path.join(ROOT, "benchmarks", "results")
    os.makedirs(res, exist_ok=True)
    name = "objects_cpu_quick" if args.quick else "objects_cpu"
    with open(os.path.join(res, name + ".json"), "w") as fh:
        json.dump(out, fh, indent=1)
    what = ("stardist's nuclei image and mask (Data Science Bowl 2018; 512 x 512 and its "
            "5120 x 5120 tiling)" if args.data == "nuclei" else "synthetic ellipses")
    lines = [f"# Per-object Zernike features, CPU ({meta['date']})", "",
             f"{what}; objects per image size: "
             + ", ".join(f"{s} x {s}: {n}" for s, n in objects.items())
             + f"; degree {args.degree}; {meta['note']} (load average "
             f"{meta['load_average_start_1_5_15']} at the start of the run, "
             f"{meta['load_average_1_5_15']} at its end; "
             f"OMP_NUM_THREADS={meta['omp_num_threads']}: each tool's defaults, "
             f"fastmoments on up to {meta['thread_limit']} threads where its work is worth "
             "them).", "",
             "Shape: MeasureObjectSizeShape's 30 features. Intensity: "
             "MeasureObjectIntensityDistribution's 30 magnitudes and 30 phases of the image "
             "scaled to [0, 1] (centrosome row: that module's steps with centrosome's "
             "functions; phase differences modulo 2 pi where the magnitude is above 1e-9). "
             "Differences are from centrosome where it ran, else from cp_measure.", "",
             "| image | features | tool | median time (s) | x fastmoments | max abs diff "
             "| reference | peak RSS (MiB) |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        img = f"{r['size']}²"
        if "error" in r:
            lines.append(f"| {img} | {r['features']} | {r['tool']} | {r['error']} "
                         "| | | | |")
            continue
        diff = f"{r['max_abs_diff']:.1e}" if "max_abs_diff" in r else "–"
        lines.append(f"| {img} | {r['features']} | {r['tool']} | {r['median_s']:.3f} "
                     f"| {r['ratio_to_fastmoments']:.1f} | {diff} "
                     f"| {r.get('reference', '–')} | {r['peak_rss_mib']:.0f} |")
    with open(os.path.join(res, name + ".md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
