"""3-D Zernike moments of volumes: speed on batches, and reconstruction error at high order.

* Speed: 100^3 density volumes (chains of Gaussian blobs, a mock protein density), orders 20
  and 40, float32, a batch at a time; volumes per second, build time, median and spread of
  the forward time after a warm-up, and the error of each float32 result against a float64
  plan on the same volume (largest moment error / largest moment, and the same for the
  descriptor).
* High order (``--high``, the default on CUDA): a 150^3 volume, order 450 (then the orders of
  ``--high-orders``), float64, with ``k = 1`` and ``k = 2`` sub-voxels (``--k``): the forward
  time, the peak device memory, and the reconstruction NMSE over the voxels inside the ball
  for partial orders. With ``k = 1`` the discrete moments stop being orthogonal at high order
  and the NMSE turns up again past some order; with more sub-voxels it keeps falling.

Run from the repository root, once per device kind::

    python benchmarks/ball_moments.py --device cpu
    python benchmarks/ball_moments.py --device cuda
    python benchmarks/ball_moments.py --device cuda --high-orders 450,500,550 --k 1
    python benchmarks/ball_moments.py --device cuda --high no --batch 256

``--quick`` makes a small smoke run (written under ``--out``, default ``benchmarks/results``).
Writes ``ball_moments_<kind>.json`` and ``.md`` (kind ``cpu`` or the GPU's name).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from fastmoments.ball import Zernike3DTransform, nmse

ROOT = os.path.join(os.path.dirname(__file__), "..")


def densities(n: int, count: int, seed: int = 0) -> np.ndarray:
    """``count`` mock protein densities on an ``n^3`` grid: 30 Gaussian blobs on a random
    walk inside the ball of radius 0.7, float32."""
    rng = np.random.default_rng(seed)
    g = ((np.arange(n) - (n - 1) / 2) / (n / 2)).astype(np.float32)
    out = np.zeros((count, n, n, n), dtype=np.float32)
    for i in range(count):
        steps = rng.normal(size=(30, 3))
        atoms = np.cumsum(0.12 * steps / np.linalg.norm(steps, axis=1, keepdims=True), axis=0)
        atoms -= atoms.mean(axis=0)
        atoms *= min(1.0, 0.6 / np.linalg.norm(atoms, axis=1).max())
        for ax, ay, az in atoms:
            gx = np.exp(-((g - ax) ** 2) / (2 * 0.05**2))
            gy = np.exp(-((g - ay) ** 2) / (2 * 0.05**2))
            gz = np.exp(-((g - az) ** 2) / (2 * 0.05**2))
            out[i] += gz[:, None, None] * gy[None, :, None] * gx[None, None, :]
    return out


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, device: torch.device, reps: int) -> list[float]:
    """Seconds of ``reps`` calls after one warm-up (CUDA events on a GPU)."""
    fn()
    sync(device)
    out = []
    for _ in range(reps):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            out.append(start.elapsed_time(end) / 1e3)
        else:
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return out


def speed_rows(device: torch.device, quick: bool, reps: int, batch: int | None) -> list[dict]:
    n = 32 if quick else 100
    jobs = [(20, 2 if quick else (64 if device.type == "cuda" else 4)),
            (40, 1 if quick else (16 if device.type == "cuda" else 1))]
    if batch is not None:
        jobs = [(order, batch) for order, _b in jobs]
    rows = []
    for order, batch in jobs:
        vols = densities(n, batch)
        x = torch.from_numpy(vols).to(device)
        t0 = time.perf_counter()
        plan = Zernike3DTransform((n, n, n), order, device=device)
        sync(device)
        build = time.perf_counter() - t0
        times = timed(lambda plan=plan, x=x: plan.forward(x), device, reps)
        ref = Zernike3DTransform((n, n, n), order, dtype="float64", device=device)
        a64 = ref.forward(x[0].double())
        a32 = plan.forward(x[0])
        v64, v32 = a64.values(), a32.values().to(torch.complex128)
        f64, f32 = a64.invariants(), a32.invariants().double()
        med = statistics.median(times)
        rows.append({
            "shape": [n, n, n], "order": order, "batch": batch, "dtype": "float32",
            "route": str(plan.route), "points": plan.sampling.n_points,
            "rings": plan.sampling.n_rings, "radii": plan.sampling.n_groups,
            "build_s": build, "forward_median_s": med,
            "forward_spread_s": [min(times), max(times)], "reps": len(times),
            "volumes_per_s": batch / med,
            "moment_error": float((v32 - v64).abs().max() / v64.abs().max()),
            "descriptor_error": float((f32 - f64).abs().max() / f64.abs().max()),
        })
        print(rows[-1], flush=True)
    return rows


def high_rows(device: torch.device, quick: bool, orders: list[int], ks: list[int]
              ) -> list[dict]:
    n = 24 if quick else 150
    vol = torch.from_numpy(densities(n, 1, seed=1)[0]).double().to(device)
    rows = []
    for order, k in ((o, k) for k in ks for o in orders):
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        t0 = time.perf_counter()
        plan = Zernike3DTransform((n, n, n), order, k=k, dtype="float64", device=device)
        sync(device)
        build = time.perf_counter() - t0
        t0 = time.perf_counter()
        Om = plan.forward(vol)
        sync(device)
        fwd = time.perf_counter() - t0
        mask = plan.reconstruction_mask
        errors = {}
        t0 = time.perf_counter()
        for T in sorted({*(t for t in (10, 25, 50, 100, 200, 300, 400) if t < order), order}):
            errors[T] = float(nmse(vol, Om.reconstruct(orders=T), mask=mask))
        sync(device)
        rec = (time.perf_counter() - t0) / len(errors)
        peak = (torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None)
        rows.append({
            "shape": [n, n, n], "order": order, "k": k, "dtype": "float64",
            "route": str(plan.route), "points": plan.sampling.n_points,
            "rings": plan.sampling.n_rings, "radii": plan.sampling.n_groups,
            "moments": plan.index.size, "build_s": build, "forward_s": fwd,
            "reconstruct_s_each": rec, "peak_device_bytes": peak,
            "nmse_by_order": errors,
        })
        print(rows[-1], flush=True)
        del plan, Om
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return rows


def kind_of(device: torch.device) -> str:
    if device.type != "cuda":
        return "cpu"
    name = torch.cuda.get_device_name(device)
    match = re.search(r"([AHBL]\d{2,3}|V100|T4)", name)
    return (match.group(1) if match else re.sub(r"\W+", "_", name)).lower()


def markdown(meta: dict, speed: list[dict], high: list[dict]) -> str:
    lines = [f"# 3-D Zernike moments on {meta['device_name']}", "",
             f"{meta['date']}, torch {meta['torch']}, threads {meta['threads']}, "
             f"`python benchmarks/ball_moments.py {meta['args']}`", ""]
    if speed:
        n = speed[0]["shape"][0]
        lines += [f"## Batches of {n}^3 densities, float32", "",
                  "| order | batch | route | build s | forward s (median, min-max) | volumes/s "
                  "| moment err | descriptor err |", "|---|---|---|---|---|---|---|---|"]
        for r in speed:
            lo, hi = r["forward_spread_s"]
            lines.append(f"| {r['order']} | {r['batch']} | {r['route']} | {r['build_s']:.2f} | "
                         f"{r['forward_median_s']:.4f} ({lo:.4f}-{hi:.4f}) | "
                         f"{r['volumes_per_s']:.1f} | {r['moment_error']:.1e} | "
                         f"{r['descriptor_error']:.1e} |")
        lines.append("")
    for r in high:
        n = r["shape"][0]
        lines += [f"## Order {r['order']} on {n}^3, k = {r['k']}, float64", "",
                  f"{r['points']} points, {r['rings']} rings, {r['radii']} radii, "
                  f"{r['moments']} moments (m >= 0); route {r['route']}; build "
                  f"{r['build_s']:.1f} s, forward {r['forward_s']:.1f} s, one reconstruction "
                  f"{r['reconstruct_s_each']:.1f} s" + (
                      f", peak device memory {r['peak_device_bytes'] / 2**30:.1f} GiB"
                      if r["peak_device_bytes"] else "") + ".", "",
                  "| orders 0..T | NMSE |", "|---|---|"]
        lines += [f"| {T} | {e:.3e} |" for T, e in r["nmse_by_order"].items()]
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--high", choices=("auto", "yes", "no"), default="auto")
    ap.add_argument("--high-orders", default="450")
    ap.add_argument("--k", default="1,2", help="sub-voxel k of the high-order runs, a list")
    ap.add_argument("--batch", type=int, default=None, help="batch of the speed rows")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device(args.device)
    do_high = args.high == "yes" or (args.high == "auto" and device.type == "cuda")
    speed = speed_rows(device, args.quick, args.reps, args.batch)
    orders = [int(v) for v in args.high_orders.split(",")]
    high = high_rows(device, args.quick, [min(o, 30) for o in orders] if args.quick else orders,
                     [int(v) for v in args.k.split(",")]) if do_high else []
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "torch": torch.__version__, "numpy": np.__version__,
            "python": platform.python_version(), "threads": torch.get_num_threads(),
            "device_name": (torch.cuda.get_device_name(device) if device.type == "cuda"
                            else platform.processor() or platform.machine()),
            "args": " ".join(sys.argv[1:])}
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"ball_moments_{kind_of(device)}")
    with open(stem + ".json", "w") as fh:
        json.dump({"meta": meta, "speed": speed, "high_order": high}, fh, indent=1)
    with open(stem + ".md", "w") as fh:
        fh.write(markdown(meta, speed, high))
    print(f"wrote {stem}.json and .md")


if __name__ == "__main__":
    main()
