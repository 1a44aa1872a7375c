"""End-to-end throughput of ``fastmoments features`` over the Zarr glyph collection.

Runs what ``fastmoments features glyphs.zarr --array images --out F.zarr`` runs
(:func:`fastmoments.collections.run_features`), reads from disk and writes to disk included, in
these set-ups:

* on GPUs: in-process on 1 GPU, in-process on 2 GPUs (``device=["cuda:0", "cuda:1"]``), and Dask
  with ``dask_cuda.LocalCUDACluster`` (2 workers, one per GPU) when ``dask_cuda`` imports;
* on the CPU (``--cpu`` or no GPU): in-process, and Dask ``LocalCluster`` with 2 worker
  processes of 1 thread each (a tiny collection, to check the script and the CPU overhead).

Each set-up first computes one chunk per process (plans built and cached, as in a long job),
then times the whole collection into a fresh output. The features of every set-up are compared
with the first one's. Results: ``benchmarks/results/collection_gpu.json`` and ``.md`` (or
``collection_cpu.*`` on the CPU).

    python benchmarks/collection_gpu.py --store /data/glyphs.zarr          # builds it if absent
    python benchmarks/collection_gpu.py --cpu --limit 10 --rotations 0:360:90 --orders 10
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _versions() -> dict:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    try:  # a source tree on the path (not installed): its commit
        import subprocess

        out["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                                       capture_output=True, text=True).stdout.strip() or None
    except OSError:
        out["commit"] = None
    for pkg in ("fastmoments", "torch", "numpy", "zarr", "dask", "distributed", "dask-cuda"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = None
    return out


def _device_name() -> str:
    import torch

    if torch.cuda.is_available():
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        return f"{len(names)} x {names[0]}"
    return f"CPU {platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def _warm_local(src, opts: dict, batch: int) -> None:
    from fastmoments.collections import compute_chunk

    compute_chunk(src.task(0, min(batch, src.n)), opts)


def _warm_client(client, src, opts: dict, batch: int) -> None:
    from fastmoments.collections import compute_chunk

    # a task on each worker (client.run would run it on the worker's event loop, where the
    # Zarr reads, which drive their own event loop, can block)
    spec = src.task(0, min(batch, src.n))
    futs = [client.submit(compute_chunk, spec, opts, workers=[w], pure=False)
            for w in client.scheduler_info()["workers"]]
    client.gather(futs)


def _time(src, out: Path, params: dict, device, client=None) -> tuple[float, np.ndarray]:
    from fastmoments.collections import read_features, run_features

    if out.exists():
        shutil.rmtree(out)
    t0 = time.perf_counter()
    rep = run_features(src, out, device=device, client=client, progress=False, **params)
    dt = time.perf_counter() - t0
    assert rep.computed == rep.n_chunks
    return dt, read_features(out)[0]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--store", default=None, help="the glyph store (built if absent; default: a "
                                                 "temporary one)")
    p.add_argument("--fonts", nargs="+", default=None, help="font files for a new store")
    p.add_argument("--limit", type=int, default=None, help="characters of a new store")
    p.add_argument("--rotations", default="0:360:15", help="angles of a new store")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="processes building a new store")
    p.add_argument("--family", default="zernike")
    p.add_argument("--orders", type=int, default=100)
    p.add_argument("--kind", default="magnitude")
    p.add_argument("--k", type=int, default=1)
    p.add_argument("--batch", type=int, default=2048, help="images per chunk (task)")
    p.add_argument("--threads-per-worker", type=int, default=4,
                   help="Dask GPU worker threads (on 2 x H200: 25,600 images/s with 4, "
                        "20,100 with 2, where tasks read and checksum while one computes)")
    p.add_argument("--cpu", action="store_true", help="CPU set-ups even if a GPU is present")
    p.add_argument("--results", default=str(HERE / "results"))
    a = p.parse_args(argv)

    import torch
    import zarr

    import build_glyph_store as gs
    from fastmoments.collections import open_images

    on_gpu = torch.cuda.is_available() and not a.cpu
    tmp = Path(tempfile.mkdtemp(prefix="fm-collection-"))
    store = Path(a.store) if a.store else tmp / "glyphs.zarr"
    t0 = time.perf_counter()
    built = not store.exists()
    gs.build(store, fonts=a.fonts, limit=a.limit, angles=gs.parse_angles(a.rotations),
             jobs=a.jobs)
    build_s = time.perf_counter() - t0
    src = open_images(store, array="images")
    attrs = dict(zarr.open_group(str(store), mode="r").attrs["glyph_store"])
    zarr_chunk = int(zarr.open_group(str(store), mode="r")["images"].chunks[0])
    params = {"family": a.family, "orders": a.orders, "kind": a.kind, "k": a.k,
              "dtype": "float32", "batch": a.batch}
    opts = {k: params[k] for k in ("family", "orders", "kind", "k", "dtype")}

    runs: list[dict] = []
    ref = None

    def record(name: str, seconds: float | None, mat: np.ndarray | None, note: str = "") -> None:
        nonlocal ref
        row = {"setup": name, "seconds": seconds, "note": note,
               "images_per_s": None if seconds is None else src.n / seconds}
        if mat is not None:
            if ref is None:
                ref = mat
            row["max_rel_diff_vs_first"] = float(np.abs(mat - ref).max() / np.abs(ref).max())
        runs.append(row)
        print(json.dumps(row), flush=True)

    def local(name: str, device) -> None:
        try:
            _warm_local(src, {**opts, "device": device}, a.batch)
        except (ValueError, TypeError, RuntimeError) as exc:
            record(name, None, None, f"not run: {exc}")
            return
        record(name, *_time(src, tmp / "out.zarr", params, device))

    def dask(name: str, cluster, device) -> None:
        from distributed import Client

        with Client(cluster) as client:
            if not on_gpu:
                client.run(torch.set_num_threads, 1)
            _warm_client(client, src, {**opts, "device": device}, a.batch)
            record(name, *_time(src, tmp / "out.zarr", params, device, client))
        cluster.close()

    try:
        if on_gpu:
            n_gpu = torch.cuda.device_count()
            local("in-process, 1 GPU", "cuda:0")
            if n_gpu >= 2:
                local("in-process, 2 GPUs", ["cuda:0", "cuda:1"])
                try:
                    from dask_cuda import LocalCUDACluster
                except ImportError:
                    record("Dask LocalCUDACluster, 2 workers", None, None,
                           "not run: dask_cuda is not installed")
                else:
                    cluster = LocalCUDACluster(CUDA_VISIBLE_DEVICES="0,1", n_workers=2,
                                               threads_per_worker=a.threads_per_worker,
                                               dashboard_address=":0")
                    dask(f"Dask LocalCUDACluster, 2 workers x {a.threads_per_worker} threads",
                         cluster, "cuda")
        else:
            from distributed import LocalCluster

            local(f"in-process, CPU, {torch.get_num_threads()} torch threads", "cpu")
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=":0")
            dask("Dask LocalCluster, 2 workers x 1 thread, 1 torch thread each", cluster, "cpu")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    by = {r["setup"]: r for r in runs}
    ratio = None
    two = by.get("in-process, 2 GPUs", {}).get("images_per_s")
    dask_row = next((r for r in runs if r["setup"].startswith("Dask")), None)
    base = two if on_gpu else runs[0]["images_per_s"]
    if base and dask_row and dask_row["images_per_s"]:
        ratio = dask_row["images_per_s"] / base
    result = {
        "device": _device_name(), "versions": _versions(), "date": time.strftime("%Y-%m-%d"),
        "store": {"path": str(store), "built_now": built, "build_seconds": build_s if built
                  else None, "n_images": src.n, "size": src.side,
                  "fonts": [f["family"] for f in attrs["fonts"]],
                  "characters": len(attrs["characters"]), "angles": attrs["angles_degrees"],
                  "zarr_chunk": zarr_chunk},
        "params": params, "runs": runs,
        "dask_over_baseline": ratio,
        "baseline": "in-process, 2 GPUs" if on_gpu else runs[0]["setup"],
        "target": ">= 0.80" if on_gpu else "no slowdown beyond 10%",
        "notes": "wall time of run_features over the whole store after one warm-up chunk per "
                 "process: reads from disk, features, writes of a Zarr output included",
    }
    stem = "collection_gpu" if on_gpu else "collection_cpu"
    res = Path(a.results)
    res.mkdir(parents=True, exist_ok=True)
    (res / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"# `fastmoments features` over the glyph store ({result['device']})", "",
             f"{src.n} images of {src.side}x{src.side} uint8 from {store.name} "
             f"({len(attrs['fonts'])} fonts, {len(attrs['characters'])} characters, "
             f"{len(attrs['angles_degrees'])} angles); {a.family} orders 0..{a.orders}, "
             f"kind={a.kind}, k={a.k}, float32, {a.batch} images per chunk. "
             "Reads from disk and the Zarr output included.", "",
             "| set-up | seconds | images/s | max rel. diff vs first |", "|---|---|---|---|"]
    for r in runs:
        s = "-" if r["seconds"] is None else f"{r['seconds']:.2f}"
        ips = "-" if r["images_per_s"] is None else f"{r['images_per_s']:.0f}"
        d = r.get("max_rel_diff_vs_first")
        lines.append(f"| {r['setup']} | {s} | {ips} | {'-' if d is None else f'{d:.1e}'} |"
                     + (f" {r['note']}" if r["note"] else ""))
    if ratio is not None:
        lines += ["", f"Dask / {result['baseline']}: **{ratio:.2f}** (target {result['target']})."]
    lines += ["", "Versions: " + ", ".join(f"{k} {v}" for k, v in result["versions"].items()), ""]
    (res / f"{stem}.md").write_text("\n".join(lines))
    print(f"wrote {res / stem}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
