r"""Zernike / pseudo-Zernike on the CPU: against mahotas, and T = 100 on 512 x 512.

mahotas' ``zernike_moments(image, 256, degree=20)`` at its defaults: the disk of radius 256
pixels around the image's centre of mass, pixel centres inside it, magnitudes divided by the
image's sum there. fastmoments gives the same numbers with ``center="centroid"``,
``radius=256``, ``rule="centre"`` and ``|A_nm| / (pi A_00)`` (docs/disk.md, "Coming from
mahotas / scikit-image"; tests/disk/test_mahotas_suite.py). Both are timed in the same run on
the same image (camera, 512 x 512), and both are compared with a float64 direct sum over the
same pixels (radial polynomials from scipy's Jacobi polynomials,
:math:`R_{nl}(\rho) = (-1)^k \rho^l P_k^{(l, 0)}(1 - 2\rho^2)`, :math:`k = (n - l)/2`).
A centre of mass gives a plan of its own (not kept in the plan cache): "warm" is a repeated
call on the same image (its sampling cached), "cold" a call whose centre is new (sampling,
plan and radial tables built). This comparison runs on one thread, as mahotas does.

    PYTHONPATH=src python benchmarks/disk_cpu.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fastmoments as fm
from disk_common import environment, timeit, write_results
from fastmoments.disk import DiskTransform
from fastmoments.disk.sampling import placed_sampling
from fastmoments.disk.transform import _cached

RADIUS, DEGREE = 256, 20


def like_mahotas(img: np.ndarray) -> np.ndarray:
    """mahotas.features.zernike_moments(img, RADIUS, DEGREE) by fastmoments."""
    A = fm.zernike_moments(img, DEGREE, center="centroid", radius=RADIUS, rule="centre",
                           dtype="float64")
    return A.invariants() / (np.pi * A[0, 0].real)


def reference(img: np.ndarray) -> np.ndarray:
    """The same features by a float64 direct sum with scipy's Jacobi polynomials."""
    from scipy.special import eval_jacobi

    f = img.astype(np.float64)
    rows, cols = np.mgrid[:f.shape[0], :f.shape[1]]
    cr, cc = (f * rows).sum() / f.sum(), (f * cols).sum() / f.sum()
    dy, dx = rows - cr, cols - cc
    keep = (f > 0) & (np.hypot(dx, dy) <= RADIUS)
    v, rho, th = f[keep], np.hypot(dx, dy)[keep] / RADIUS, np.arctan2(dy, dx)[keep]
    out = []
    for n in range(DEGREE + 1):
        for l in range(n % 2, n + 1, 2):
            k = (n - l) // 2
            R = (-1) ** k * rho**l * eval_jacobi(k, l, 0, 1 - 2 * rho**2)
            out.append((n + 1) / np.pi * abs(np.sum(v * R * np.exp(-1j * l * th))) / v.sum())
    return np.array(out)


def cold(fn):
    _cached.cache_clear()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    cpu = torch.device("cpu")
    env = environment(cpu)
    img = fm.data.sample_image("camera", 512)
    rows = []
    ref = reference(img)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # mahotas runs on one core
    ours = like_mahotas(img)
    try:
        import mahotas.features

        mh = timeit(lambda: mahotas.features.zernike_moments(img, RADIUS, degree=DEGREE), cpu,
                    warmup=1, repeat=3)
        theirs = mahotas.features.zernike_moments(img, RADIUS, degree=DEGREE)
        env["mahotas"] = mahotas.__version__
    except ImportError:
        mh = theirs = None
    ours_warm = timeit(lambda: like_mahotas(img), cpu, warmup=1, repeat=5)

    def new_centre() -> None:
        placed_sampling.cache_clear()
        like_mahotas(img)

    ours_cold = timeit(new_centre, cpu, warmup=1, repeat=3)
    torch.set_num_threads(threads)
    row = {"job": f"mahotas' |Z_nl| at its defaults (centre of mass, radius {RADIUS}), "
                  f"n <= {DEGREE}, 512x512",
           "mahotas_s": mh and mh["median_s"],
           "fastmoments_warm_s": ours_warm["median_s"],
           "fastmoments_cold_s": ours_cold["median_s"], "threads": 1,
           "fastmoments_max_error": float(np.abs(ours - ref).max())}
    if mh:
        row["mahotas_max_error"] = float(np.abs(theirs - ref).max())
        row["fastmoments_minus_mahotas"] = float(np.abs(ours - theirs).max())
        row["speedup_warm"] = mh["median_s"] / ours_warm["median_s"]
        row["speedup_cold"] = mh["median_s"] / ours_cold["median_s"]
    rows.append(row)
    print(row, flush=True)
    for fam in ("zernike", "pseudo-zernike"):
        for dt in ("float32", "float64"):
            x = img.astype(np.float32 if dt == "float32" else np.float64)

            def job(fam=fam, x=x):
                return fm.DiskTransform(fam, 512, 100, dtype=x.dtype.name).forward(x)

            c = cold(job)
            plan = DiskTransform(fam, 512, 100, dtype=dt)
            plan.forward(x)
            w = timeit(lambda plan=plan, x=x: plan.forward(x), cpu, warmup=1, repeat=3)
            A = plan.forward(x)
            r = timeit(lambda A=A: A.reconstruct(), cpu, warmup=1, repeat=3)
            row = {"job": f"{fam} T=100 512x512 k=1 {dt}", "cold_s": c,
                   "forward_warm_s": w["median_s"], "reconstruct_warm_s": r["median_s"]}
            rows.append(row)
            print(row, flush=True)
    write_results("disk_cpu", {"environment": env, "rows": rows})


if __name__ == "__main__":
    main()
