"""Zernike / pseudo-Zernike on the CPU: against mahotas, and T = 100 on 512 x 512.

mahotas's ``zernike_moments(image, radius, degree)`` returns |A_nm| for n <= degree; the same
magnitudes come from ``fastmoments.zernike_moments(image, degree).invariants()``. Both are
timed in the same run on the same image (camera, 512 x 512). "warm" reuses the cached plan
(as repeated one-call use does); "cold" builds the plan (sampling, radial tables) too.

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
from fastmoments.disk.transform import _cached


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
    try:
        import mahotas.features

        mh = timeit(lambda: mahotas.features.zernike_moments(img, 256, degree=20), cpu,
                    warmup=1, repeat=3)
        env["mahotas"] = mahotas.__version__
    except ImportError:
        mh = None
    ours_warm = timeit(lambda: fm.zernike_moments(img, 20).invariants(), cpu, warmup=1,
                       repeat=5)
    ours_cold = cold(lambda: fm.zernike_moments(img, 20).invariants())
    row = {"job": "|A_nm|, n <= 20, 512x512", "mahotas_s": mh and mh["median_s"],
           "fastmoments_warm_s": ours_warm["median_s"], "fastmoments_cold_s": ours_cold}
    if mh:
        row["speedup_warm"] = mh["median_s"] / ours_warm["median_s"]
        row["speedup_cold"] = mh["median_s"] / ours_cold
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
