"""How the feature job scales to 8 GPUs and to many machines: an estimate on paper.

Nothing here is timed. The script reads two committed measurements, both from two H200 GPUs of
one host:

* ``results/multigpu.json``: Zernike T = 100 invariants of 10^5 images of 128^2 on one GPU with
  the images already on it (the compute rate of one GPU);
* ``results/collection_gpu.json``: the same features over the real glyph store, end to end
  (Zarr reads, features, Zarr writes) on 1 GPU, 2 GPUs in one process and a Dask
  ``LocalCUDACluster`` with one worker per GPU.

From them it derives the bytes each task moves, how many tasks per second the scheduler must
dispatch, and the read and write bandwidth a host or a cluster needs, and writes
``results/scaling_estimate.{json,md}``. The one figure that is not ours is Dask's per-task
overhead of the scheduler, about 1 ms (Dask's documentation, "Dask best practices": "each task
comes with about 1ms of overhead"), used as an assumption and named as such.

    python benchmarks/scaling_estimate.py
"""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

#: Dask's scheduler overhead per task (seconds): an assumption from Dask's documentation.
TASK_OVERHEAD_S = 1e-3


def _zernike_pairs(order: int) -> int:
    """Stored Zernike moments (n <= T, 0 <= m <= n, n - m even): the feature columns."""
    return sum(n // 2 + 1 for n in range(order + 1))


def estimate() -> dict:
    mg = json.loads((RESULTS / "multigpu.json").read_text())
    col = json.loads((RESULTS / "collection_gpu.json").read_text())
    on_gpu = next(r for r in mg["rows"] if r["job"] == "a" and "tensor on GPU" in r["what"])
    n_img = mg["config"]["n_img"]
    compute_rate = n_img / (on_gpu["ms_1gpu"] / 1e3)  # images/s of one GPU, data resident
    runs = {r["setup"]: r["images_per_s"] for r in col["runs"]}
    e2e_1 = runs["in-process, 1 GPU"]
    dask_2 = next(v for k, v in runs.items() if k.startswith("Dask"))
    per_worker = dask_2 / 2  # one Dask worker per GPU, reads included
    p = col["params"]
    side = col["store"]["size"]
    batch = p["batch"]
    cols = _zernike_pairs(p["orders"]) if p["family"] == "zernike" else None
    bytes_in = side * side  # uint8 images
    bytes_out = (cols or 0) * 4  # float32 magnitudes
    out: dict = {
        "inputs": {
            "compute_images_per_s_per_gpu": compute_rate,
            "end_to_end_images_per_s_1gpu_in_process": e2e_1,
            "end_to_end_images_per_s_per_dask_worker": per_worker,
            "images_per_task": batch,
            "bytes_in_per_image": bytes_in,
            "bytes_out_per_image": bytes_out,
            "feature_columns": cols,
            "task_overhead_s_assumed": TASK_OVERHEAD_S,
            "device": col["device"],
            "date": col["date"],
        },
        "rows": [],
    }
    for gpus in (1, 2, 8, 64, 512):
        # workers are independent (each reads and computes its chunks) until the scheduler
        # dispatches one task per TASK_OVERHEAD_S (the client's writes: see the notes)
        rate = min(gpus * per_worker, batch / TASK_OVERHEAD_S)
        tasks = rate / batch
        out["rows"].append({
            "gpus": gpus,
            "scheduler_bound": gpus * per_worker > batch / TASK_OVERHEAD_S,
            "images_per_s": rate,
            "tasks_per_s": tasks,
            "scheduler_busy_fraction": tasks * TASK_OVERHEAD_S,
            "read_GB_per_s": rate * bytes_in / 1e9,
            "write_GB_per_s": rate * bytes_out / 1e9,
            "hours_for_1e9_images": 1e9 / rate / 3600,
        })
    # where the scheduler saturates: one task per TASK_OVERHEAD_S
    out["scheduler_limit_gpus"] = (batch / TASK_OVERHEAD_S) / per_worker
    out["gpu_idle_fraction_end_to_end"] = 1 - per_worker / compute_rate
    return out


def _markdown(est: dict) -> str:
    i = est["inputs"]
    lines = [
        "# Scaling the feature job beyond two GPUs: an estimate from measurements",
        "",
        f"Derived by `benchmarks/scaling_estimate.py` from `multigpu.json` and "
        f"`collection_gpu.json` ({i['device']}, {i['date']}). Nothing here was timed on 8 GPUs "
        "or on several machines.",
        "",
        "| input | value | source |",
        "|---|---|---|",
        f"| compute rate of one GPU, images resident | {i['compute_images_per_s_per_gpu']:,.0f} "
        "images/s | multigpu.json, job a |",
        f"| end to end per Dask worker (one GPU; Zarr reads and writes) | "
        f"{i['end_to_end_images_per_s_per_dask_worker']:,.0f} images/s | collection_gpu.json |",
        f"| images per task | {i['images_per_task']} | collection_gpu.json |",
        f"| bytes read / written per image | {i['bytes_in_per_image']:,} / "
        f"{i['bytes_out_per_image']:,} ({i['feature_columns']} float32 columns) | store, order |",
        f"| scheduler overhead per task | {i['task_overhead_s_assumed'] * 1e3:.0f} ms | "
        "**assumed** (Dask's documentation) |",
        "",
        "| GPUs | images/s | tasks/s | scheduler busy | read GB/s | write GB/s | "
        "hours for 10^9 images |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in est["rows"]:
        lines.append(
            f"| {r['gpus']} | {r['images_per_s']:,.0f}{' (scheduler-bound)' * r['scheduler_bound']}"
            f" | {r['tasks_per_s']:.1f} | "
            f"{100 * r['scheduler_busy_fraction']:.1f}% | {r['read_GB_per_s']:.2f} | "
            f"{r['write_GB_per_s']:.2f} | {r['hours_for_1e9_images']:.2f} |")
    lines += [
        "",
        "What follows from these numbers:",
        "",
        f"* End to end, a GPU is idle {100 * est['gpu_idle_fraction_end_to_end']:.0f}% of the "
        "time: each worker is bound by reading and decoding its Zarr chunks and writing the "
        "features, not by the moments. Workers are independent (one task reads and computes "
        "its own chunk), so throughput grows with the number of workers until storage "
        "bandwidth or the scheduler runs out.",
        "* `run_features` with a client (`fastmoments features --scheduler`) writes every chunk "
        "from the client, up to four at once: the client's write rate is one more limit, "
        "measured only as far as the 2-GPU run took it "
        f"({2 * i['end_to_end_images_per_s_per_dask_worker']:,.0f} images/s, "
        f"{2 * i['end_to_end_images_per_s_per_dask_worker'] * i['bytes_out_per_image'] / 1e9:.2f}"
        " GB/s). Through Dask arrays (`fastmoments.dask.features(...).to_zarr(...)`) the "
        "workers write their own chunks.",
        f"* The scheduler saturates (one task per {i['task_overhead_s_assumed'] * 1e3:.0f} ms) "
        f"at about {est['scheduler_limit_gpus']:,.0f} GPUs with tasks of "
        f"{i['images_per_task']} images; larger tasks push that further.",
        "* The output is not small: at order 100 the features are "
        f"{i['bytes_out_per_image'] / i['bytes_in_per_image']:.0%} of the input's bytes, so the "
        "store written to needs about as much bandwidth as the store read from.",
        "* On 8 GPUs of one host the reads come from one machine's disks: the read and write "
        "columns are what its storage must sustain. Across machines, each worker should read "
        "from storage close to it (a parallel file system or object store) rather than through "
        "the client; shipping arrays through the client was measured far slower on the CPU "
        "(see dask_cpu.md).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    est = estimate()
    (RESULTS / "scaling_estimate.json").write_text(json.dumps(est, indent=1) + "\n")
    (RESULTS / "scaling_estimate.md").write_text(_markdown(est))
    print(_markdown(est))


if __name__ == "__main__":
    main()
