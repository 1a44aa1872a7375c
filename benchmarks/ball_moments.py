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
    python benchmarks/ball_moments.py --device cuda --high no --keep-high --proteins 10000 \
        --protein-subset 30000 --protein-batch 256 --protein-pool 512 --protein-workers 14

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
* GPU peer (with ``--peers``, on CUDA where ``ZMPY3D_CP`` and CuPy are installed): ZMPY3D's
  CuPy version on the same GPU and the same float64 volume, timed per structure, its tables
  moved to the GPU before the timing as its authors' batch program does; ours on its ball one
  volume per call and in batches of ``--peer-batch`` (time per volume), with the same accuracy
  columns. Its package ships tables for orders 6 and 20 only (order 40: a note).
* The azimuthal stage the route table did not choose (``--other-stage``, by default on CUDA):
  the largest batch and one volume again with ``RING_PHASES_CACHE`` switched, the rows marked,
  for that crossover in ``fastmoments/ball/routes.py``.
* Proteins (``--proteins N``, e.g. 10000): a batch of N real protein volumes at 100^3 (the 15
  structures of Debian's ``mustang-testdata``, each rotated at random and its density rebuilt),
  order 20, float32: a pool of ``--protein-pool`` rotated volumes is built once (in
  ``--protein-workers`` processes) and cycled through the plan in batches of
  ``--protein-batch`` until ``--protein-subset`` volumes are done (three timed rounds after a
  warm-up); where a round is smaller than N, the time for N volumes is extrapolated from that
  rate and said so.

``--high no --keep-high`` carries the high-order rows of the existing result file over (with
the date of their run) instead of measuring them again.

``--quick`` makes a small smoke run (written under ``--out``, default ``benchmarks/results``).
Writes ``ball_moments_<kind>.json`` and ``.md`` (kind ``cpu`` or the GPU's name).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import re
import statistics
import sys
import time
from importlib.metadata import version

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
    """Seconds of ``reps`` calls after a warm-up (CUDA events on a GPU; three warm-up calls
    there, so that a call that a plan replays as a CUDA graph, captured on its third call, is
    timed as replayed)."""
    for _ in range(3 if device.type == "cuda" else 1):
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


def speed_jobs(device: torch.device, quick: bool, batch: int | None) -> list[tuple[int, list]]:
    """``(order, batches)`` of the speed rows: on CUDA one volume at a time and batched."""
    if quick:
        jobs = [(20, [2]), (40, [1])]
    elif device.type == "cuda":
        jobs = [(20, [1, 64, 256]), (40, [1, 16, 64])]
    else:
        jobs = [(20, [4]), (40, [1])]
    if batch is not None:
        jobs = [(order, [batch]) for order, _b in jobs]
    return jobs


def speed_rows(device: torch.device, quick: bool, reps: int, batch: int | None,
               other: bool = False) -> list[dict]:
    """The speed rows; with ``other``, after each order's rows, the largest batch and one
    volume again on the azimuthal stage that the route table did not choose
    (:data:`fastmoments.ball.routes.RING_PHASES_CACHE` switched), for its crossover."""
    n = 32 if quick else 100
    rows = []
    for order, batches in speed_jobs(device, quick, batch):
        rows += _speed_rows_of(device, n, order, batches, reps)
        if other:
            from fastmoments.ball import routes

            kind = device.type
            saved = routes.RING_PHASES_CACHE.get(kind)
            chosen = "ring-phases" in rows[-1]["route"]
            routes.RING_PHASES_CACHE[kind] = 0 if chosen else 2**40
            try:
                more = _speed_rows_of(device, n, order, sorted({1, max(batches)}), reps)
            finally:
                routes.RING_PHASES_CACHE[kind] = saved
            for r in more:
                r["other_stage"] = True
            rows += more
    return rows


def _speed_rows_of(device: torch.device, n: int, order: int, batches: list[int], reps: int
                   ) -> list[dict]:
    """One plan of ``order`` (and its float64 reference), timed on each batch size."""
    rows = []
    vols = densities(n, min(64, max(batches)))  # distinct volumes, tiled to the batch
    x_all = torch.from_numpy(vols).to(device)
    x_all = x_all.repeat(-(-max(batches) // len(vols)), 1, 1, 1)[:max(batches)]
    t0 = time.perf_counter()
    plan = Zernike3DTransform((n, n, n), order, device=device)
    sync(device)
    build = time.perf_counter() - t0
    ref = Zernike3DTransform((n, n, n), order, dtype="float64", device=device)
    a64 = ref.forward(x_all[0].double())
    a32 = plan.forward(x_all[0])
    v64, v32 = a64.values(), a32.values().to(torch.complex128)
    f64, f32 = a64.invariants(), a32.invariants().double()
    for b in batches:
        x = x_all[:b]
        times = timed(lambda plan=plan, x=x: plan.forward(x), device,
                      reps if b > 1 or device.type != "cuda" else 4 * reps)
        med = statistics.median(times)
        rows.append({
            "shape": [n, n, n], "order": order, "batch": b, "dtype": "float32",
            "route": str(plan.route), "points": plan.sampling.n_points,
            "rings": plan.sampling.n_rings, "radii": plan.sampling.n_groups,
            "build_s": build, "forward_median_s": med,
            "forward_spread_s": [min(times), max(times)], "reps": len(times),
            "volumes_per_s": b / med, "per_volume_s": med / b,
            "moment_error": float((v32 - v64).abs().max() / v64.abs().max()),
            "descriptor_error": float((f32 - f64).abs().max() / f64.abs().max()),
        })
        print(rows[-1], flush=True)
    del plan, ref, x_all
    if device.type == "cuda":
        torch.cuda.empty_cache()
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


def zmpy3d_cupy_invariants(vol: np.ndarray, order: int):
    """ZMPY3D's CuPy version (``ZMPY3D_CP``) as :func:`zmpy3d_invariants` (same ball and
    radius rule) on a float64 volume already on the GPU: ``(run, result)``, or ``None`` without
    tables for ``order``. Done once, outside the timing, as its authors' batch program does:
    the tables read and moved to the GPU; and the radius multiple. ``run`` is the part per
    structure: mass, centre, radius, sample edges, geometric moments, Zernike moments, 3DZD."""
    import pickle

    import cupy as cp
    import ZMPY3D_CP as z

    path = os.path.join(os.path.dirname(z.__file__), "cache_data",
                        f"LogG_CLMCache_MaxOrder{order:02d}.pkl")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as fh:
        c = pickle.load(fh)
    tabs = (cp.array(c["GCache_complex"], dtype=cp.complex128),
            cp.array(c["GCache_pqr_linear"], dtype=cp.int32),
            cp.array(c["GCache_complex_index"], dtype=cp.int32),
            cp.array(c["CLMCache3D"], dtype=cp.complex128))
    v = cp.asarray(vol, dtype=cp.float64)
    dims = cp.array(v.shape, dtype=cp.int32)
    max_order = cp.array(order, dtype=cp.int64)
    edges = [cp.arange(n + 1, dtype=cp.float64) for n in vol.shape]

    def ball(multiple):
        mass, center, _ = z.calculate_bbox_moment(v, 1, *edges)
        radius, _ = z.calculate_molecular_radius(v, center, mass,
                                                 cp.array(multiple, dtype=cp.float64))
        return center, radius

    center, rms = ball(1.0)
    far = np.abs(np.argwhere(vol != 0) + 0.5 - cp.asnumpy(center)) + 0.5
    factor = max(1.8, float(np.sqrt((far**2).sum(axis=1)).max()) / float(rms) * (1 + 1e-9))

    def run():
        center, radius = ball(factor)
        sample = z.get_bbox_moment_xyz_sample(center, radius, dims)
        _, _, geo = z.calculate_bbox_moment(v, max_order, *sample)
        scaled, _ = z.calculate_bbox_moment_2_zm(max_order, *tabs, geo)
        return z.get_3dzd_121_descriptor(scaled), center, radius

    def result():
        table, center, radius = (cp.asnumpy(v) for v in run())
        F = np.array([table[n, l] for n, l in invariant_pairs(order)])
        return F, center.astype(np.float64) - 0.5, float(radius)

    return run, result


PEERS = {"ZMPY3D": ("ZMPY3D", zmpy3d_invariants),
         "Novotni-Klein (pyzernike)": ("pyzernike._core", novotni_klein_invariants)}


def installed_peers() -> list[str]:
    import importlib.util

    return [name for name, (module, _fn) in PEERS.items()
            if importlib.util.find_spec(module.split(".")[0]) is not None]


def peer_volume(n: int) -> np.ndarray:
    """The peers' float64 volume: point-symmetric (its centroid the box's centre in every
    program), the Gaussians' tails below 1e-6 of the peak cut (a compact support)."""
    f = densities(n, 1, seed=3)[0].astype(np.float64)
    vol = 0.5 * (f + f[::-1, ::-1, ::-1])
    vol[vol < 1e-6 * vol.max()] = 0.0
    return vol


def peer_rows(device: torch.device, quick: bool, reps: int) -> list[dict]:
    """Peers and ours on the same volume and the same ball, per order."""
    n = 32 if quick else 100
    vol = peer_volume(n)
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


def timed_host(fn, sync_fn, reps: int) -> list[float]:
    """Seconds of ``reps`` calls after one warm-up, host clock with ``sync_fn`` after each
    call (for a peer on its own GPU streams)."""
    fn()
    sync_fn()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync_fn()
        out.append(time.perf_counter() - t)
    return out


def gpu_peer_rows(device: torch.device, quick: bool, reps: int, batch: int) -> list[dict]:
    """ZMPY3D's CuPy version and ours on one GPU, volume and ball: time per structure."""
    if device.type != "cuda" or importlib.util.find_spec("ZMPY3D_CP") is None:
        return []
    import cupy as cp

    n = 32 if quick else 100
    vol = peer_volume(n)
    rows = []
    for order in (20, 40):
        row = {"peer": "ZMPY3D (CuPy)", "order": order, "shape": [n, n, n], "batch": batch}
        made = zmpy3d_cupy_invariants(vol, order)
        if made is None:
            row["note"] = ("no coefficient tables for this order in ZMPY3D_CP 0.0.2 (6, 20; its "
                           "order-40 table is a separate 1.3 GB download)")
            rows.append(row)
            print(row, flush=True)
            continue
        run, result = made
        times = timed_host(run, cp.cuda.Device().synchronize, 4 * reps)
        F, center, radius = result()
        center = tuple(round(2 * c) / 2 for c in center)
        plan32 = Zernike3DTransform(vol.shape, order, center=center, radius=radius,
                                    device=device)
        plan64 = Zernike3DTransform(vol.shape, order, center=center, radius=radius,
                                    dtype="float64", device=device)
        x32 = torch.from_numpy(vol.astype(np.float32)).to(device)
        x64 = torch.from_numpy(vol).to(device)
        xb = x32.expand(batch, *vol.shape).contiguous()
        t1 = timed(lambda p=plan32, x=x32: p.forward(x).invariants(), device, 4 * reps)
        tb = timed(lambda p=plan32, x=xb: p.forward(x).invariants(), device, reps)
        t64 = timed(lambda p=plan64, x=x64: p.forward(x).invariants(), device, 4 * reps)
        ref = plan64.forward(x64).invariants().double().cpu().numpy()
        ours32 = plan32.forward(x32).invariants().double().cpu().numpy()
        finite = bool(np.isfinite(F).all())
        scale = float(ref.max())
        peer = statistics.median(times)
        one, each = statistics.median(t1), statistics.median(tb) / batch
        row.update({
            "ball_center": list(center), "ball_radius": radius,
            "peer_s": peer, "peer_spread_s": [min(times), max(times)],
            "ours32_one_s": one, "ours32_one_spread_s": [min(t1), max(t1)],
            "ours32_batched_s": each, "ours64_one_s": statistics.median(t64),
            "peer_vs_ours32_one": peer / one, "peer_vs_ours32_batched": peer / each,
            "peer_vs_ours64_one": peer / statistics.median(t64),
            "peer_finite": finite,
            "peer_difference": (float(np.max(np.abs(F - ref))) / scale if finite else None),
            "peer_nonfinite": int((~np.isfinite(F)).sum()),
            "ours32_error": float(np.max(np.abs(ours32 - ref))) / scale,
            "route": str(plan32.route)})
        rows.append(row)
        print(row, flush=True)
        del plan32, plan64, xb
        torch.cuda.empty_cache()
    return rows


# ----------------------------------------------------------------------------- proteins
def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniform random rotation matrix (a normalised Gaussian quaternion)."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _timed_density(job: tuple) -> tuple[np.ndarray, float]:
    """One rotated protein density (float32) and the seconds it took."""
    from fastmoments.ball.proteins import protein_density

    path, n, rotation = job
    t = time.perf_counter()
    vol = protein_density(path, n, rotation=rotation).astype(np.float32)
    return vol, time.perf_counter() - t


def protein_rows(device: torch.device, quick: bool, total: int, subset: int, batch: int,
                 pool: int, workers: int = 1) -> dict | None:
    """Volumes per second over a batch of rotated protein densities, order 20."""
    from fastmoments.ball.proteins import protein_files

    files = protein_files()
    if not files:
        print("no protein files (apt-get install mustang-testdata): proteins skipped")
        return None
    n = 32 if quick else 100
    order = 20
    rng = np.random.default_rng(5)
    jobs = [(str(files[i % len(files)]), n, random_rotation(rng)) for i in range(pool)]
    workers = min(workers, pool)
    if workers > 1:  # the pool's densities built in processes, each timed alone
        import concurrent.futures
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as ex:
            built = list(ex.map(_timed_density, jobs, chunksize=max(1, pool // (4 * workers))))
    else:
        built = [_timed_density(job) for job in jobs]
    vols = np.stack([v for v, _t in built])
    build = [t for _v, t in built]
    pool_t = torch.from_numpy(vols).to(device)
    t0 = time.perf_counter()
    plan = Zernike3DTransform((n, n, n), order, device=device)
    sync(device)
    plan_s = time.perf_counter() - t0
    starts = list(range(0, pool, batch))

    counts = []

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
        counts.append(done)
        return done / (time.perf_counter() - t)

    run(min(pool, per_round := max(batch, subset // 3)))  # warm-up
    rates = [run(per_round) for _ in range(3)]
    rate = statistics.median(rates)
    ref = Zernike3DTransform((n, n, n), order, dtype="float64", device=device)
    f64 = ref.forward(pool_t[0].double()).invariants()
    f32 = plan.forward(pool_t[0]).invariants().double()
    row = {"shape": [n, n, n], "order": order, "dtype": "float32", "route": str(plan.route),
           "total": total, "measured": sum(counts[1:]), "per_round": counts[1:],
           "batch": batch, "pool": pool,
           "structures": len(files), "plan_s": plan_s,
           "memory": "GPU memory" if device.type == "cuda" else "memory",
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
             proteins: dict | None, gpu_peers: list[dict] | None = None) -> str:
    lines = [f"# 3-D Zernike moments on {meta['device_name']}", "",
             f"{meta['date']}, torch {meta['torch']}, threads {meta['threads']}, "
             f"`python benchmarks/ball_moments.py {meta['args']}`", ""]
    if meta.get("load") and meta["load"][0] >= 1:
        lines += [f"Load average at the start (1, 5, 15 min): {meta['load']}; the machine's "
                  f"cores were shared with other jobs, so times are pessimistic.", ""]
    if speed:
        n = speed[0]["shape"][0]
        lines += [f"## Batches of {n}^3 densities, float32", "",
                  "| order | batch | route | build s | forward s (median, min-max) | ms per volume "
                  "| volumes/s | moment err | descriptor err |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in speed:
            lo, hi = r["forward_spread_s"]
            route = r["route"] + (" *(not chosen)*" if r.get("other_stage") else "")
            lines.append(f"| {r['order']} | {r['batch']} | {route} | {r['build_s']:.2f} | "
                         f"{r['forward_median_s']:.4f} ({lo:.4f}-{hi:.4f}) | "
                         f"{1e3 * r['forward_median_s'] / r['batch']:.3f} | "
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
        if any(r.get("other_stage") for r in speed):
            lines += ["", "Rows marked *(not chosen)*: the same plan on the azimuthal stage that "
                      "the route table does not choose for it (`RING_PHASES_CACHE` of "
                      "`fastmoments.ball.routes` switched), for that crossover."]
        lines.append("")
    if gpu_peers:
        g = gpu_peers[0]
        n, b = g["shape"][0], g["batch"]
        lines += [f"## ZMPY3D's CuPy version on the same GPU: one {n}^3 float64 volume, its "
                  f"ball", "",
                  "The volume, ball and columns of the CPU peers' table (`ball_moments_cpu.md`): "
                  "ZMPY3D_CP from a float64 volume already on the GPU, timed per structure "
                  "(host clock, the device synchronised after each call); its coefficient "
                  "tables are read and moved to the GPU once, outside the timing, as its "
                  "authors' batch program does, and so is the radius multiple that holds every "
                  "non-zero voxel. Ours in float32 on that ball, one volume per call and in "
                  f"batches of {b} (time per volume), and in float64 one at a time. "
                  "*difference*: its descriptor against our float64 plan (voxel centres "
                  "against exact box integrals: the midpoint rule's error at this order); "
                  "*ours float32 err*: against our float64 plan.", "",
                  "| peer | order | ball radius | peer s (median, min-max) | ours float32 s, "
                  "one | ratio | ours float32 s per volume, batched | ratio | ours float64 s, "
                  "one | ratio | difference | ours float32 err |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in gpu_peers:
            if "note" in r:
                lines.append(f"| {r['peer']} | {r['order']} | | {r['note']} "
                             f"| | | | | | | | |")
                continue
            lo, hi = r["peer_spread_s"]
            diff = (f"{r['peer_difference']:.1e}" if r["peer_finite"]
                    else f"{r['peer_nonfinite']} of the invariants inf or NaN")
            lines.append(
                f"| {r['peer']} | {r['order']} | {r['ball_radius']:.2f} | {r['peer_s']:.4f} "
                f"({lo:.4f}-{hi:.4f}) | {r['ours32_one_s']:.5f} | "
                f"{r['peer_vs_ours32_one']:.0f}x | {r['ours32_batched_s']:.6f} | "
                f"{r['peer_vs_ours32_batched']:.0f}x | {r['ours64_one_s']:.5f} | "
                f"{r['peer_vs_ours64_one']:.0f}x | {diff} | {r['ours32_error']:.1e} |")
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
                  f"median **{p['volumes_per_s']:.1f} volumes/s**. " + (
                      f"Each round ran all {p['total']} volumes (whole batches: "
                      f"{min(p.get('per_round') or [p['measured'] // 3])}): **"
                      f"{p['extrapolated_total_s']:.2f} s** for {p['total']} at the median rate"
                      if p["measured"] >= 3 * p["total"] else
                      f"The time for {p['total']} volumes, **"
                      f"{p['extrapolated_total_s'] / 60:.1f} min**, is an extrapolation from "
                      f"that rate") +
                  f" (descriptors of volumes already in {p.get('memory', 'memory')}; building "
                  f"a density took {p['density_s_median'] * 1e3:.0f} ms per volume more on "
                  f"the CPU, median). float32 descriptor against float64: "
                  f"{p['descriptor_error']:.1e}.", ""]
    if high and meta.get("high_from"):
        lines += [f"The high-order rows below are carried over from the run of "
                  f"{meta['high_from']} (this run did not repeat them).", ""]
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
    ap.add_argument("--other-stage", choices=("auto", "yes", "no"), default="auto",
                    help="speed rows on the azimuthal stage the route table does not choose "
                         "(auto: on CUDA)")
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
    ap.add_argument("--protein-workers", type=int, default=1,
                    help="processes that build the pool's densities")
    ap.add_argument("--peer-batch", type=int, default=256,
                    help="our batch beside the GPU peer (time per volume)")
    ap.add_argument("--keep-high", action="store_true",
                    help="without --high: carry the high-order rows of the result file over")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device(args.device)
    load = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    do_high = args.high == "yes" or (args.high == "auto" and device.type == "cuda")
    other = args.other_stage == "yes" or (args.other_stage == "auto" and device.type == "cuda")
    speed = (speed_rows(device, args.quick, args.reps, args.batch, other)
             if args.speed == "yes" else [])
    gpu_peer = device.type == "cuda" and importlib.util.find_spec("ZMPY3D_CP") is not None
    if args.peers == "yes" and not installed_peers() and not gpu_peer:
        raise SystemExit("--peers yes: neither ZMPY3D nor zernike-descriptors is installed "
                         "(pip install 'fastmoments[bench]'), nor ZMPY3D_CP with a GPU")
    peers = peer_rows(device, args.quick, args.reps) if args.peers != "no" else []
    gpu_peers = (gpu_peer_rows(device, args.quick, args.reps, args.peer_batch)
                 if args.peers != "no" else [])
    proteins = (protein_rows(device, args.quick, args.proteins, args.protein_subset,
                             args.protein_batch, args.protein_pool, args.protein_workers)
                if args.proteins > 0 else None)
    orders = [int(v) for v in args.high_orders.split(",")]
    high = high_rows(device, args.quick, [min(o, 30) for o in orders] if args.quick else orders,
                     [int(v) for v in args.k.split(",")]) if do_high else []
    stem = os.path.join(args.out, f"ball_moments_{kind_of(device)}")
    high_from = None
    if not do_high and args.keep_high and os.path.exists(stem + ".json"):
        with open(stem + ".json") as fh:
            old = json.load(fh)
        high = old.get("high_order") or []
        high_from = old["meta"].get("high_from") or (
            f"{old['meta']['date']} (`python benchmarks/ball_moments.py {old['meta']['args']}`)")
    versions = {}
    for name in ("ZMPY3D", "zernike-descriptors"):
        try:
            versions[name] = version(name)
        except Exception:  # not installed
            versions[name] = None
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "torch": torch.__version__, "numpy": np.__version__,
            "python": platform.python_version(), "threads": torch.get_num_threads(),
            "peers": versions, "load": load,
            "device_name": (torch.cuda.get_device_name(device) if device.type == "cuda"
                            else platform.processor() or platform.machine()),
            "args": " ".join(sys.argv[1:]), "high_from": high_from}
    for name in ("ZMPY3D_CP", "cupy-cuda13x", "cupy-cuda12x"):
        try:
            versions[name] = version(name)
        except Exception:  # not installed
            pass
    os.makedirs(args.out, exist_ok=True)
    with open(stem + ".json", "w") as fh:
        json.dump({"meta": meta, "speed": speed, "peers": peers, "gpu_peers": gpu_peers,
                   "proteins": proteins, "high_order": high}, fh, indent=1)
    with open(stem + ".md", "w") as fh:
        fh.write(markdown(meta, speed, high, peers, proteins, gpu_peers))
    print(f"wrote {stem}.json and .md")


if __name__ == "__main__":
    main()
