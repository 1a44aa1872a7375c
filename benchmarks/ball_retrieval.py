"""Shape retrieval on real proteins: each structure, rotated at random, finds itself first.

The database is the offline protein set (:func:`fastmoments.ball.proteins.protein_set`:
Debian's ``mustang-testdata``, 15 zinc-finger domains of similar size and fold, so the
structures differ in detail rather than in gross shape). Each structure is rotated at random
``--rotations`` times (uniform rotations; the *atom coordinates* are rotated about their
centroid and the density rebuilt, so the query is resampled, not a voxel rotation), and each
query's 3-D Zernike descriptor (order ``--order``, :meth:`Zernike3DMoments.invariants`) is
compared with the database's by Euclidean distance, raw and with every descriptor divided by
its norm. Reported: the precision (share of queries whose nearest database entry is their own
structure), the distance to their own entry against the nearest other one, and the time per
query (median and quartiles over the queries) for its three steps: the density volume, the
descriptor (one volume at a time), the search; plus the float32 descriptors' error against a
float64 plan on the database volumes.

Run from the repository root::

    python benchmarks/ball_retrieval.py --device cpu
    python benchmarks/ball_retrieval.py --device cuda

Writes ``ball_retrieval_<kind>.json`` and ``.md`` in ``benchmarks/results`` (or ``$OUT``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

import fastmoments
from disk_common import environment, sync
from fastmoments.ball import Zernike3DTransform
from fastmoments.ball.density import read_pdb_atoms
from fastmoments.ball.proteins import protein_density, protein_files

RESULTS = Path(__file__).resolve().parent / "results"


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniform random rotation matrix (a normalised Gaussian quaternion)."""
    a, b, c, d = (q := rng.normal(size=4)) / np.linalg.norm(q)
    return np.array([[a*a + b*b - c*c - d*d, 2*(b*c - a*d), 2*(b*d + a*c)],
                     [2*(b*c + a*d), a*a - b*b + c*c - d*d, 2*(c*d - a*b)],
                     [2*(b*d - a*c), 2*(c*d + a*b), a*a - b*b - c*c + d*d]])


def quartiles(xs: list[float]) -> dict:
    q = statistics.quantiles(xs, n=4)
    return {"median": statistics.median(xs), "q1": q[0], "q3": q[2]}


def run(args: argparse.Namespace) -> dict:
    device = torch.device(args.device)
    load = os.getloadavg()
    files = protein_files()
    if not files:
        raise SystemExit("no PDB files: install Debian's mustang-testdata")
    atoms = [read_pdb_atoms(f) for f in files]
    names = [f.stem for f in files]
    opts = {"sigma": args.sigma, "margin": args.margin, "weights": "mass"}
    size = args.size
    db_vols = np.stack([protein_density(a, size, **opts) for a in atoms])
    plan = Zernike3DTransform((size,) * 3, args.order, k=args.k, device=device)
    ref = Zernike3DTransform((size,) * 3, args.order, k=args.k, dtype="float64", device=device)
    plan.forward(db_vols[:1].astype(np.float32))  # warm-up
    db = np.asarray(plan.forward(db_vols.astype(np.float32)).invariants(), dtype=np.float64)
    db64 = np.asarray(ref.forward(db_vols).invariants())
    err32 = float(np.abs(db - db64).max() / np.abs(db64).max())
    db_unit = db / np.linalg.norm(db, axis=1, keepdims=True)

    rng = np.random.default_rng(args.seed)
    t_density, t_desc, t_search = [], [], []
    hits = {"raw": 0, "normalised": 0}
    own_over_other = {"raw": [], "normalised": []}
    confusions: dict[str, int] = {}
    for i, a in enumerate(atoms):
        for _ in range(args.rotations):
            rot = random_rotation(rng)
            t0 = time.perf_counter()
            vol = protein_density(a, size, rotation=rot, **opts).astype(np.float32)
            t1 = time.perf_counter()
            f = np.asarray(plan.forward(vol).invariants(), dtype=np.float64)
            sync(device)
            t2 = time.perf_counter()
            for mode, base, q in (("raw", db, f), ("normalised", db_unit,
                                                    f / np.linalg.norm(f))):
                d = np.linalg.norm(base - q, axis=1)
                best = int(np.argmin(d))
                hits[mode] += best == i
                own_over_other[mode].append(float(d[i] / np.delete(d, i).min()))
                if mode == "normalised" and best != i:
                    key = f"{names[i]}->{names[best]}"
                    confusions[key] = confusions.get(key, 0) + 1
            t3 = time.perf_counter()
            t_density.append(t1 - t0)
            t_desc.append(t2 - t1)
            t_search.append((t3 - t2) / 2)
    n_q = len(atoms) * args.rotations
    return {
        "environment": {**environment(device), "fastmoments": fastmoments.__version__,
                        "note": args.note,
                        "load_average_1_5_15min_at_start": [round(x, 2) for x in load]},
        "set": {"source": "Debian mustang-testdata", "structures": names,
                "atoms": [len(a[0]) for a in atoms]},
        "parameters": {"size": size, "order": args.order, "k": args.k, "dtype": "float32",
                       "rotations": args.rotations, "seed": args.seed, **opts,
                       "descriptors": len(db[0]), "route": str(plan.route)},
        "queries": n_q,
        "precision_top1": {m: hits[m] / n_q for m in hits},
        "own_over_nearest_other": {m: {"median": statistics.median(v), "max": max(v)}
                                   for m, v in own_over_other.items()},
        "confusions_normalised": confusions,
        "time_per_query_s": {"density": quartiles(t_density), "descriptor": quartiles(t_desc),
                             "search": quartiles(t_search),
                             "total_median": statistics.median(
                                 [a + b + c for a, b, c in zip(t_density, t_desc, t_search,
                                                               strict=True)])},
        "float32_vs_float64_descriptor_error": err32,
    }


def markdown(r: dict) -> str:
    env, p, t = r["environment"], r["parameters"], r["time_per_query_s"]
    dev = env.get("gpu") or f"CPU {env['cpu']}, {env['cpu_threads']} threads"
    ms = {k: {q: 1e3 * v for q, v in t[k].items()} for k in ("density", "descriptor", "search")}
    lines = [
        "# Shape retrieval on real proteins (3-D Zernike descriptors)", "",
        f"{dev}; {env['date']}; torch {env['torch']}, numpy {env['numpy']}, fastmoments "
        f"{env['fastmoments']}. Written by `benchmarks/ball_retrieval.py`.", "",
        f"{env['note']} Load average at the start (1, 5, 15 min): "
        f"{env['load_average_1_5_15min_at_start']}.", "",
        f"{len(r['set']['structures'])} structures of Debian's mustang-testdata (zinc-finger "
        f"domains, {min(r['set']['atoms'])}-{max(r['set']['atoms'])} atoms), densities "
        f"{p['size']}^3 (sigma {p['sigma']} A, mass weights), each rotated at random "
        f"{p['rotations']} times (atom coordinates rotated, density rebuilt): {r['queries']} "
        f"queries. Descriptor: order {p['order']}, k = {p['k']}, {p['descriptors']} values "
        f"||Om_nl||, float32, route `{p['route']}`.", "",
        "| distance | top-1 precision | own / nearest other (median) | (max) |",
        "|---|---|---|---|",
    ]
    for m in ("raw", "normalised"):
        o = r["own_over_nearest_other"][m]
        lines.append(f"| Euclidean, {m} | {r['precision_top1'][m]:.3f} | {o['median']:.2e} | "
                     f"{o['max']:.2e} |")
    lines += ["", "| step per query | median (ms) | quartiles (ms) |", "|---|---|---|"]
    for k in ("density", "descriptor", "search"):
        lines.append(f"| {k} | {ms[k]['median']:.2f} | {ms[k]['q1']:.2f}-{ms[k]['q3']:.2f} |")
    lines += ["", f"Median total per query: {1e3 * t['total_median']:.2f} ms. float32 "
              f"descriptors against a float64 plan (largest error / largest value): "
              f"{r['float32_vs_float64_descriptor_error']:.1e}."]
    if r["confusions_normalised"]:
        lines += ["", "Misses (normalised): " + ", ".join(
            f"{k} x{v}" for k, v in sorted(r["confusions_normalised"].items())) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--order", type=int, default=20)
    ap.add_argument("--k", type=int, default=1)
    ap.add_argument("--rotations", type=int, default=20)
    ap.add_argument("--sigma", type=float, default=1.5)
    ap.add_argument("--margin", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--note", default="", help="a line written into the results")
    ap.add_argument("--out", default=os.environ.get("OUT") or str(RESULTS))
    args = ap.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    r = run(args)
    kind = "cpu" if args.device == "cpu" else "cuda"
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, f"ball_retrieval_{kind}")
    with open(base + ".json", "w") as fh:
        json.dump(r, fh, indent=1)
    with open(base + ".md", "w") as fh:
        fh.write(markdown(r))
    print(markdown(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
