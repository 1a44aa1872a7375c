"""A Gaussian over a long real recording: one device in one process against Dask workers.

The signal is the PPG recording that heartpy ships (:func:`fastmoments.data.ppg_recording`),
tiled to ``--samples``, in float32 (``--dtype``). Set-ups:

* on GPUs: the plan :class:`fastmoments.signal.GaussianFilter` in this process on one GPU
  (host array in, host array out: the copies to and from the GPU included), and
  :func:`fastmoments.dask.gaussian_filter1d` (``device="cuda"``) on a
  ``dask_cuda.LocalCUDACluster`` (one worker per GPU, ``--gpus``), the recording persisted in
  the workers' host memory in chunks of ``--chunk`` samples and the result persisted there;
* on the CPU (``--cpu``, or no GPU): the plan with torch on every core against
  :func:`fastmoments.dask.local_cluster` (one worker process per core).

Medians of ``--repeat`` runs after a warm-up (plans built on every worker); the largest
difference from the one-process result, relative to its largest value, is recorded. Writes
``benchmarks/results/recording_gpu.json`` and ``.md`` (``recording_cpu.*`` on the CPU).

    python benchmarks/recording_gpu.py                       # 2 GPUs, 4e8 samples: ~2 minutes
    python benchmarks/recording_gpu.py --cpu --samples 4e6 --chunk 1e6 --repeat 2
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from disk_common import environment  # noqa: E402


def _median_time(fn, repeat: int, sync=None, release=None) -> tuple[float, list[float]]:
    """Median and runs of ``fn()`` after a warm-up; ``release(box)`` after each run empties
    ``box = [result]`` and waits until Dask has dropped it, so that the next run computes it
    again."""
    box = [fn()]  # warm-up
    runs = []
    for _ in range(repeat):
        if release:
            release(box)
        box.clear()
        if sync:
            sync()
        t0 = time.perf_counter()
        box.append(fn())
        if sync:
            sync()
        runs.append(time.perf_counter() - t0)
    if release:
        release(box)
    return statistics.median(runs), runs


def forget(client):
    """``release(out)`` for :func:`_median_time`: drop the persisted result and wait until the
    scheduler has forgotten its keys, so that the next run computes them again (a persist of
    keys still held returns at once)."""
    from distributed import futures_of

    def release(box: list) -> None:
        keys = {f.key for f in futures_of(box[0])}
        box.clear()  # the last reference: the futures are released
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 30 and client.run_on_scheduler(
                lambda dask_scheduler, keys=keys: any(k in dask_scheduler.tasks for k in keys)):
            time.sleep(0.01)

    return release


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=float, default=4e8)
    ap.add_argument("--chunk", type=float, default=2e7)
    ap.add_argument("--sigma", type=float, default=100.0)
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    samples, chunk = int(args.samples), int(args.chunk)

    import dask.array as da
    import distributed

    import fastmoments.dask as fmd
    from fastmoments.data import PPG_SAMPLING_RATE, ppg_recording
    from fastmoments.signal import GaussianFilter

    gpu = torch.cuda.is_available() and not args.cpu
    stem = args.out or str(HERE / "results" / ("recording_gpu" if gpu else "recording_cpu"))
    signal = ppg_recording(tiles=-(-samples // 68476))[:samples].astype(args.dtype)
    plan = GaussianFilter(args.sigma)
    rows: list[dict] = []

    if gpu:
        dev = torch.device("cuda:0")
        sync = torch.cuda.synchronize

        def one():
            y = plan(torch.from_numpy(signal).to(dev), progress=False)
            return y.cpu().numpy()

        where = "1 GPU, host -> host"
    else:
        dev = torch.device("cpu")
        sync = None
        cores = fmd._workers.available_cores()

        def one():
            torch.set_num_threads(cores)
            return plan(signal, progress=False)

        where = f"1 process, {cores} torch threads"
    ref = one()
    t1, runs1 = _median_time(one, args.repeat, sync)
    rows.append({"setup": where, "seconds": t1, "runs": runs1, "max_rel_diff": 0.0})
    print(rows[-1], flush=True)

    if gpu:
        from dask_cuda import LocalCUDACluster

        n = min(args.gpus, torch.cuda.device_count())
        cluster = LocalCUDACluster(n_workers=n, threads_per_worker=1, dashboard_address=":0",
                                   silence_logs=50)
        device, tag = "cuda", f"Dask LocalCUDACluster, {n} workers (1 GPU each)"
    else:
        cluster = fmd.local_cluster(dashboard_address=":0", silence_logs=50)
        device, tag = None, f"Dask LocalCluster, {cores} processes x 1 thread"
    client = distributed.Client(cluster)
    try:
        d = da.from_array(signal, chunks=chunk).persist()
        distributed.wait(d)

        def dask_run():
            out = fmd.gaussian_filter1d(d, args.sigma, device=device).persist()
            distributed.wait(out)
            return out

        td, runs = _median_time(dask_run, args.repeat, release=forget(client))
        got = fmd.gaussian_filter1d(d, args.sigma, device=device).compute()
        err = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
        rows.append({"setup": tag + ", workers -> workers", "seconds": td, "runs": runs,
                     "max_rel_diff": err})
        print(rows[-1], flush=True)
    finally:
        client.close()
        cluster.close()

    env = environment(dev, ("dask", "distributed"))
    env.update({"signal": f"fastmoments.data.ppg_recording (heartpy data3.csv, "
                          f"{PPG_SAMPLING_RATE} Hz) tiled, first {samples} samples, "
                          f"{args.dtype}",
                "sigma": args.sigma, "chunk": chunk, "load_average": os.getloadavg()})
    Path(stem + ".json").write_text(json.dumps({"environment": env, "results": rows},
                                               indent=2) + "\n")
    base = rows[0]["seconds"]
    lines = ["# A Gaussian over a long real recording: one device against Dask workers", "",
             f"{env['date']}, {env.get('gpu', env['cpu'])}, torch {env['torch']}, dask "
             f"{env['dask']}; {env['signal']}, sigma = {args.sigma}, Dask chunks of {chunk} "
             f"samples. Medians of {args.repeat} runs after a warm-up; samples per second "
             "include every copy between host and device.", "",
             "| set-up | time (s) | samples/s | vs one device | max rel. diff |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['setup']} | {r['seconds']:.3f} | {samples / r['seconds']:.3g} | "
                     f"{base / r['seconds']:.2f}x | {r['max_rel_diff']:.1e} |")
    Path(stem + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
