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
    python benchmarks/ball_moments.py --device cpu --proteins 10000   # with the peers

* Peers (``--peers``, the default where one is installed: ``pip install "fastmoments[bench]"``):
  the same 100^3 float64 density volume (made point-symmetric about the box's centre, so that
  every program's centroid is the box's centre and each ball is centred on our lattice), orders
  20 and 40: ZMPY3D (Lai, Burley and Duarte 2024; exact box integrals through geometric
  moments, NumPy) and Novotni and Klein's C++ code (``zernike-descriptors``, module
  ``pyzernike``). Each is timed per volume with its own ball, and ours on that same ball; the
  descriptor difference is against our float64 plan on that ball (voxel centres, k = 1, while
  the peers integrate each voxel box exactly: the difference at order 20 is the midpoint rule's
  error, not rounding; ``tests/ball/test_parity.py`` shows the same integral equal to 1e-9 or
  better). Both peers are GPL and used only here and in the tests.
* Proteins (``--proteins N``, e.g. 10000): a batch of N real protein volumes at 100^3 (the 15
  structures of Debian's ``mustang-testdata``, each rotated at random and its density rebuilt),
  order 20, float32: a pool of rotated volumes is built once and cycled through the plan in
  batches of ``--protein-batch`` until ``--protein-subset`` volumes are done (three timed rounds
  after a warm-up); the time for N volumes is extrapolated from that rate and said so.

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
from fastmoments.ball.moments import invariant_pairs

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


# ----------------------------------------------------------------------------- peers
def zmpy3d_invariants(vol: np.ndarray, order: int):
    """ZMPY3D's descriptor (columns of :func:`invariant_pairs`), its ball in our index
    coordinates (its voxel ``i`` spans ``[i, i + 1]``), or ``None`` where it has no
    coefficient tables for ``order`` (version 0.0.2 ships orders 6 and 20).

    Its radius is a multiple of the mass-weighted RMS radius, 1.8 by default; here the
    multiple is raised where needed so that every non-zero voxel lies whole in the ball
    (ZMPY3D integrates the polynomials outside the ball too, where they grow fast; we do not).
    """
    import pickle

    import ZMPY3D as z

    path = os.path.join(os.path.dirname(z.__file__), "cache_data",
                        f"LogG_CLMCache_MaxOrder{order:02d}.pkl")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as fh:
        c = pickle.load(fh)

    def run():
        edges = {key: np.arange(n + 1) for key, n in zip(("X_sample", "Y_sample", "Z_sample"),
                                                         vol.shape, strict=True)}
        mass, center, _ = z.calculate_bbox_moment(vol, 1, edges)
        rms, _ = z.calculate_molecular_radius(vol, center, mass, 1.0)
        far = np.abs(np.argwhere(vol != 0) + 0.5 - np.asarray(center)) + 0.5
        factor = max(1.8, float(np.sqrt((far**2).sum(axis=1)).max()) / rms * (1 + 1e-9))
        radius, _ = z.calculate_molecular_radius(vol, center, mass, factor)
        ball = z.get_bbox_moment_xyz_sample(center, radius, vol.shape)
        _, _, geo = z.calculate_bbox_moment(vol, order, ball)
        scaled, _ = z.calculate_bbox_moment_2_zm(
            order, c["GCache_complex"], c["GCache_pqr_linear"], c["GCache_complex_index"],
            c["CLMCache3D"], geo)
        table = z.get_3dzd_121_descriptor(scaled.copy())
        F = np.array([table[n, l] for n, l in invariant_pairs(order)])
        return F, np.asarray(center, dtype=np.float64) - 0.5, float(radius)

    return run


def novotni_klein_invariants(vol: np.ndarray, order: int):
    """Novotni and Klein's invariants and ball (our index coordinates): the centroid of the
    voxel boxes, and twice the RMS distance of the non-zero voxels' lower corners as their
    code measures it (the axis pairing of ``ComputeScale_RadiusVar``: ``tests/ball/
    test_parity.py``)."""
    from pyzernike._core import ZernikeDescriptorDouble

    def run():
        F = np.asarray(ZernikeDescriptorDouble(vol.copy(), order).get_descriptors())
        idx = np.indices(vol.shape).reshape(3, -1).T.astype(np.float64)
        f = vol.reshape(-1)
        centroid = (idx + 0.5).T @ f / f.sum()
        corner = idx[f != 0]
        radius = 2.0 * np.sqrt(np.mean(((corner - centroid[[2, 0, 1]]) ** 2).sum(axis=1)))
        return F, centroid - 0.5, float(radius)

    return run


PEERS = {"ZMPY3D": ("ZMPY3D", zmpy3d_invariants),
         "Novotni-Klein (pyzernike)": ("pyzernike._core", novotni_klein_invariants)}


def installed_peers() -> list[str]:
    import importlib.util

    return [name for name, (module, _fn) in PEERS.items()
            if importlib.util.find_spec(module.split(".")[0]) is not None]


def peer_rows(device: torch.device, quick: bool, reps: int) -> list[dict]:
    """Peers and ours on the same volume and the same ball, per order."""
    n = 32 if quick else 100
    f = densities(n, 1, seed=3)[0].astype(np.float64)
    vol = 0.5 * (f + f[::-1, ::-1, ::-1])  # centroid = the box's centre, every program
    vol[vol < 1e-6 * vol.max()] = 0.0  # the Gaussians' tails cut: a compact support
    rows = []
    for order in (20, 40):
        for name in installed_peers():
            make = PEERS[name][1](vol, order)
            row = {"peer": name, "order": order, "shape": [n, n, n]}
            if make is None:
                row["note"] = "no coefficient tables for this order in ZMPY3D 0.0.2 (6, 20)"
                rows.append(row)
                print(row, flush=True)
                continue
            times = timed(make, torch.device("cpu"), max(1, min(reps, 3)))
            F, center, radius = make()
            # their centroid is the box's centre to rounding: put ours on the lattice point
            center = tuple(round(2 * c) / 2 for c in center)
            plan32 = Zernike3DTransform(vol.shape, order, center=center, radius=radius,
                                        device=device)
            plan64 = Zernike3DTransform(vol.shape, order, center=center, radius=radius,
                                        dtype="float64", device=device)
            x32 = torch.from_numpy(vol.astype(np.float32)).to(device)
            x64 = torch.from_numpy(vol).to(device)
            t32 = timed(lambda p=plan32, x=x32: p.forward(x).invariants(), device, 2 * reps)
            t64 = timed(lambda p=plan64, x=x64: p.forward(x).invariants(), device, 2 * reps)
            ref = plan64.forward(x64).invariants().double().cpu().numpy()
            ours32 = plan32.forward(x32).invariants().double().cpu().numpy()
            finite = bool(np.isfinite(F).all())
            scale = float(ref.max())
            row.update({
                "ball_center": list(center), "ball_radius": radius,
                "peer_s": statistics.median(times), "peer_spread_s": [min(times), max(times)],
                "ours32_s": statistics.median(t32), "ours32_spread_s": [min(t32), max(t32)],
                "ours64_s": statistics.median(t64),
                "peer_vs_ours32": statistics.median(times) / statistics.median(t32),
                "peer_vs_ours64": statistics.median(times) / statistics.median(t64),
                "peer_finite": finite,
                "peer_difference": (float(np.max(np.abs(F - ref))) / scale if finite
                                    else None),
                "peer_nonfinite": int((~np.isfinite(F)).sum()),
                "ours32_error": float(np.max(np.abs(ours32 - ref))) / scale,
                "route": str(plan32.route)})
            rows.append(row)
            print(row, flush=True)
    return rows


# ----------------------------------------------------------------------------- proteins
def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniform random rotation matrix (a normalised Gaussian quaternion)."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def protein_rows(device: torch.device, quick: bool, total: int, subset: int, batch: int,
                 pool: int) -> dict | None:
    """Volumes per second over a batch of rotated protein densities, order 20."""
    from fastmoments.ball.proteins import protein_density, protein_files

    files = protein_files()
    if not files:
        print("no protein files (apt-get install mustang-testdata): proteins skipped")
        return None
    n = 32 if quick else 100
    order = 20
    rng = np.random.default_rng(5)
    vols = np.empty((pool, n, n, n), dtype=np.float32)
    build = []
    for i in range(pool):
        t = time.perf_counter()
        vols[i] = protein_density(files[i % len(files)], n, rotation=random_rotation(rng))
        build.append(time.perf_counter() - t)
    pool_t = torch.from_numpy(vols).to(device)
    t0 = time.perf_counter()
    plan = Zernike3DTransform((n, n, n), order, device=device)
    sync(device)
    plan_s = time.perf_counter() - t0
    starts = list(range(0, pool, batch))

    def run(count: int) -> float:
        done, j = 0, 0
        sync(device)
        t = time.perf_counter()
        while done < count:
            s = starts[j % len(starts)]
            plan.forward(pool_t[s:s + batch]).invariants()
            done += min(batch, pool - s)
            j += 1
        sync(device)
        return done / (time.perf_counter() - t)

    run(min(pool, per_round := max(batch, subset // 3)))  # warm-up
    rates = [run(per_round) for _ in range(3)]
    rate = statistics.median(rates)
    ref = Zernike3DTransform((n, n, n), order, dtype="float64", device=device)
    f64 = ref.forward(pool_t[0].double()).invariants()
    f32 = plan.forward(pool_t[0]).invariants().double()
    row = {"shape": [n, n, n], "order": order, "dtype": "float32", "route": str(plan.route),
           "total": total, "measured": 3 * per_round, "batch": batch, "pool": pool,
           "structures": len(files), "plan_s": plan_s,
           "volumes_per_s": rate, "volumes_per_s_rounds": rates,
           "extrapolated_total_s": total / rate,
           "density_s_median": statistics.median(build),
           "descriptor_error": float((f32 - f64).abs().max() / f64.abs().max())}
    print(row, flush=True)
    return row


def kind_of(device: torch.device) -> str:
    if device.type != "cuda":
        return "cpu"
    name = torch.cuda.get_device_name(device)
    match = re.search(r"([AHBL]\d{2,3}|V100|T4)", name)
    return (match.group(1) if match else re.sub(r"\W+", "_", name)).lower()


def markdown(meta: dict, speed: list[dict], high: list[dict], peers: list[dict],
             proteins: dict | None) -> str:
    lines = [f"# 3-D Zernike moments on {meta['device_name']}", "",
             f"{meta['date']}, torch {meta['torch']}, threads {meta['threads']}, "
             f"`python benchmarks/ball_moments.py {meta['args']}`", ""]
    if meta.get("load"):
        lines += [f"Load average at the start (1, 5, 15 min): {meta['load']}; the machine's "
                  f"cores were shared with other jobs, so times are pessimistic.", ""]
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
    if peers:
        n = peers[0]["shape"][0]
        lines += [f"## Peers: one {n}^3 float64 volume, the peer's ball", "",
                  "The same density volume (point-symmetric about the box's centre) for every "
                  "program, its Gaussians' tails below 1e-6 of the peak cut; ours on each peer's "
                  "ball (its centre and radius; ZMPY3D's radius raised from 1.8 times the RMS "
                  "radius to hold every non-zero voxel, as it integrates outside its ball too). "
                  "Times per volume, "
                  "median (min-max); *ratio*: peer time / ours. *difference*: the peer's "
                  "descriptor against our float64 plan on that ball, over the largest value: "
                  "the peers integrate every voxel box exactly, ours samples voxel centres "
                  "(k = 1), so at order 20 this is the midpoint rule's error, not rounding "
                  "(the same integral agrees to 1e-9 or better: `tests/ball/test_parity.py`). "
                  "*ours float32*: our float32 plan against float64.", "",
                  "| peer | order | ball radius | peer s | ours float32 s | ratio | ours float64 s "
                  "| ratio | difference | ours float32 err |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in peers:
            if "note" in r:
                lines.append(f"| {r['peer']} | {r['order']} | | {r['note']} | | | | | | |")
                continue
            lo, hi = r["peer_spread_s"]
            diff = (f"{r['peer_difference']:.1e}" if r["peer_finite"]
                    else f"{r['peer_nonfinite']} of the invariants inf or NaN")
            lines.append(
                f"| {r['peer']} | {r['order']} | {r['ball_radius']:.2f} | {r['peer_s']:.3f} "
                f"({lo:.3f}-{hi:.3f}) | {r['ours32_s']:.3f} | {r['peer_vs_ours32']:.1f}x | "
                f"{r['ours64_s']:.3f} | {r['peer_vs_ours64']:.1f}x | {diff} | "
                f"{r['ours32_error']:.1e} |")
        lines.append("")
    if proteins:
        p = proteins
        n = p["shape"][0]
        lines += [f"## A batch of {p['total']} protein volumes, {n}^3, order {p['order']}, "
                  f"float32", "",
                  f"{p['structures']} structures of Debian's mustang-testdata, each rotated at "
                  f"random (atoms rotated, density rebuilt): a pool of {p['pool']} volumes "
                  f"cycled through one plan (route {p['route']}, built in {p['plan_s']:.1f} s) "
                  f"in batches of {p['batch']}. Measured: {p['measured']} volumes in three "
                  f"rounds after a warm-up, "
                  f"{', '.join(f'{v:.1f}' for v in p['volumes_per_s_rounds'])} volumes/s; "
                  f"median **{p['volumes_per_s']:.1f} volumes/s**. The time for "
                  f"{p['total']} volumes, **{p['extrapolated_total_s'] / 60:.1f} min**, is an "
                  f"extrapolation from that rate (descriptors only; building a density took "
                  f"{p['density_s_median'] * 1e3:.0f} ms per volume more, median). float32 "
                  f"descriptor against float64: {p['descriptor_error']:.1e}.", ""]
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
    ap.add_argument("--speed", choices=("yes", "no"), default="yes",
                    help="the batch speed rows")
    ap.add_argument("--high", choices=("auto", "yes", "no"), default="auto")
    ap.add_argument("--high-orders", default="450")
    ap.add_argument("--k", default="1,2", help="sub-voxel k of the high-order runs, a list")
    ap.add_argument("--batch", type=int, default=None, help="batch of the speed rows")
    ap.add_argument("--peers", choices=("auto", "yes", "no"), default="auto",
                    help="ZMPY3D and Novotni-Klein where installed (auto), or not")
    ap.add_argument("--proteins", type=int, default=0,
                    help="a batch of this many protein volumes (0: none), e.g. 10000")
    ap.add_argument("--protein-subset", type=int, default=480,
                    help="volumes actually timed (three rounds); the rest is extrapolated")
    ap.add_argument("--protein-batch", type=int, default=16)
    ap.add_argument("--protein-pool", type=int, default=48,
                    help="rotated protein volumes built and cycled")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device(args.device)
    load = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    do_high = args.high == "yes" or (args.high == "auto" and device.type == "cuda")
    speed = speed_rows(device, args.quick, args.reps, args.batch) if args.speed == "yes" else []
    if args.peers == "yes" and not installed_peers():
        raise SystemExit("--peers yes: neither ZMPY3D nor zernike-descriptors is installed "
                         "(pip install 'fastmoments[bench]')")
    peers = peer_rows(device, args.quick, args.reps) if args.peers != "no" else []
    proteins = (protein_rows(device, args.quick, args.proteins, args.protein_subset,
                             args.protein_batch, args.protein_pool)
                if args.proteins > 0 else None)
    orders = [int(v) for v in args.high_orders.split(",")]
    high = high_rows(device, args.quick, [min(o, 30) for o in orders] if args.quick else orders,
                     [int(v) for v in args.k.split(",")]) if do_high else []
    versions = {}
    for name in ("ZMPY3D", "zernike-descriptors"):
        try:
            from importlib.metadata import version

            versions[name] = version(name)
        except Exception:  # not installed
            versions[name] = None
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "torch": torch.__version__, "numpy": np.__version__,
            "python": platform.python_version(), "threads": torch.get_num_threads(),
            "peers": versions, "load": load,
            "device_name": (torch.cuda.get_device_name(device) if device.type == "cuda"
                            else platform.processor() or platform.machine()),
            "args": " ".join(sys.argv[1:])}
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"ball_moments_{kind_of(device)}")
    with open(stem + ".json", "w") as fh:
        json.dump({"meta": meta, "speed": speed, "peers": peers, "proteins": proteins,
                   "high_order": high}, fh, indent=1)
    with open(stem + ".md", "w") as fh:
        fh.write(markdown(meta, speed, high, peers, proteins))
    print(f"wrote {stem}.json and .md")


if __name__ == "__main__":
    main()
