"""CPU benchmark of the polar harmonic transforms (run on the 2-core CI-like machine).

A. The paper's real-patch job: 128 patches of 512 x 512, 1 <= n, l <= 25, every method
   (paper: 1.67-1.71 s on a GTX 1060; the CPU target: under 2 s).
B. The NUFFT against the direct sum at nmax = lmax = 100 on one 512 x 512 image (PCET,
   20301 stored moments): the direct O(P K) sum in float64 (separable: one complex BLAS
   product per image), the two-stage engine and the NUFFT at several eps, float32 and float64.

Every row has its relative error (2-norm over the moments) against a float64 reference (A: the
float64 engine on 4 patches; B: the direct sum). Writes ``benchmarks/results/pht_cpu.json``
and ``pht_cpu.md``.

Run: ``PYTHONPATH=src python benchmarks/pht_cpu.py``
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from disk_common import (
    PHT_PAPER,
    RESULTS,
    pht_environment,
    real_patches,
    rel_err,
    timeit,
    wall,
    write_json,
)
from fastmoments.disk.pht import PolarHarmonicTransform
from fastmoments.disk.sampling import sample_points

dev = torch.device("cpu")
log = print
REPEAT = int(os.environ.get("PHT_REPEAT", "3"))


def job_a(rows: list[dict]) -> None:
    x = torch.from_numpy(real_patches(128, 512))
    for kind in ("pcet", "pct", "pst"):
        ref_plan = PolarHarmonicTransform(kind, 512, 25, 25, nmin=1, lmin=1, method="engine",
                                          dtype="float64")
        ref = ref_plan.forward(x[:4].double()).values()
        for method in ("gemm", "nufft", "engine"):
            plan = PolarHarmonicTransform(kind, 512, 25, 25, nmin=1, lmin=1, method=method)
            _, build = wall(lambda p=plan: p.forward(x[:1]), dev)
            err = rel_err(plan.forward(x[:4]).values(), ref)
            t = timeit(lambda p=plan: p.forward(x), dev, warmup=0, repeat=REPEAT)
            paper = PHT_PAPER["patches_512"][kind]
            rows.append({"job": "patches_512", "kind": kind, "method": method, "dtype": "float32",
                         "batch": 128, "moments": plan.index.size, "first_call_s": build, **t,
                         "rel_err": err, "reference": "float64 engine, 4 patches",
                         "paper_gpu_s": paper, "ratio_vs_paper_gpu": paper / t["median_s"]})
            log(f"A {kind:5s} {method:7s} {t['median_s']:7.3f} s [{t['min_s']:.3f}, "
                f"{t['max_s']:.3f}] first call {build:6.2f} s err {err:.1e}", flush=True)


def direct_pcet(img: np.ndarray, nmax: int, lmax: int) -> np.ndarray:
    """float64 direct sum (all points, all moments), (lmax+1, 2 nmax+1) [l, n + nmax]."""
    r, th, w, pix = sample_points(img.shape[-1], 1, "midpoint", "inscribed")
    f = img.reshape(-1)[pix] * w
    En = np.exp(-2j * np.pi * np.arange(-nmax, nmax + 1)[:, None] * r[None, :] ** 2)
    G = np.exp(-1j * np.arange(0, lmax + 1)[:, None] * th[None, :]) * f[None, :]
    return (G @ En.T) / np.pi


def job_b(rows: list[dict]) -> None:
    T = 100
    img = real_patches(1, 512, seed=1)[0].astype(np.float64)
    t0 = time.perf_counter()
    D = direct_pcet(img, T, T)
    t_direct = time.perf_counter() - t0
    ref = torch.from_numpy(D)  # [l, n + T]: the plan's dense layout for the full set
    rows.append({"job": "pcet_512_T100", "method": "direct sum (float64 BLAS)",
                 "dtype": "float64", "median_s": t_direct, "repeat": 1, "rel_err": 0.0,
                 "moments": int(D.size)})
    log(f"B direct {t_direct:.2f} s", flush=True)
    cases = [("engine", "float64", None), ("engine", "float32", None),
             ("nufft", "float32", 1e-6), ("nufft", "float64", 1e-6),
             ("nufft", "float64", 1e-9), ("nufft", "float64", 1e-12)]
    for method, dtype, eps in cases:
        plan = PolarHarmonicTransform("pcet", 512, T, T, method=method, dtype=dtype, eps=eps)
        assert plan.index.ms == tuple(range(T + 1)) and plan.index.ns[0] == tuple(range(-T, T + 1))
        xin = torch.from_numpy(img).to(plan.dtype)
        M, first = wall(lambda p=plan, xi=xin: p.forward(xi), dev)
        err = rel_err(M.data, ref)
        rep = 1 if method == "engine" else 5
        t = timeit(lambda p=plan, xi=xin: p.forward(xi), dev, warmup=0, repeat=rep)
        rows.append({"job": "pcet_512_T100", "method": method, "dtype": dtype, "eps": eps,
                     "moments": plan.index.size, "first_call_s": first, **t, "rel_err": err,
                     "speedup_vs_direct": t_direct / t["median_s"]})
        log(f"B {method:6s} {dtype} eps={eps} {t['median_s']:.3f} s err {err:.1e} "
            f"x{t_direct / t['median_s']:.1f} vs direct", flush=True)


def markdown(env: dict, rows: list[dict]) -> str:
    out = [f"# Polar harmonic transforms, CPU ({env['cpu_threads']} threads, {env['date']})",
           "", f"torch {env['torch']}, numpy {env['numpy']}, finufft {env['finufft']}; "
           f"load average at start {env['loadavg']}", "",
           "## 128 real 512x512 patches, 1 <= n, l <= 25 (625 moments), float32", "",
           "| kind | method | median s | min..max s | first call s | rel. err vs f64 "
           "| paper GTX 1060 s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["job"] == "patches_512":
            out.append(f"| {r['kind']} | {r['method']} | {r['median_s']:.3f} | "
                       f"{r['min_s']:.3f}..{r['max_s']:.3f} | {r['first_call_s']:.2f} | "
                       f"{r['rel_err']:.1e} | {r['paper_gpu_s']:.2f} |")
    out += ["", "## PCET, nmax = lmax = 100 on one 512x512 image (20301 moments)", "",
            "| method | dtype | eps | median s | speed-up vs direct | rel. err vs direct |",
            "|---|---|---|---|---|---|"]
    for r in rows:
        if r["job"] == "pcet_512_T100":
            out.append(f"| {r['method']} | {r['dtype']} | {r.get('eps') or '-'} | "
                       f"{r['median_s']:.3f} | {r.get('speedup_vs_direct', 1.0):.1f} | "
                       f"{r['rel_err']:.1e} |")
    return "\n".join(out) + "\n"


def main() -> None:
    env = pht_environment(dev)
    env["loadavg"] = os.getloadavg()
    rows: list[dict] = []
    job_b(rows)
    job_a(rows)
    write_json(RESULTS / "pht_cpu.json", {"environment": env, "rows": rows})
    (RESULTS / "pht_cpu.md").write_text(markdown(env, rows))
    log(markdown(env, rows))


if __name__ == "__main__":
    main()
