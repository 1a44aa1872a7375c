"""Dask LocalCluster against one process on the same CPU jobs (target: no slowdown beyond
10% on a 2-core machine).

Jobs (``--jobs``, default both):

* features: Zernike magnitudes (order T) of a stack of images, in memory
  (:func:`fastmoments.features`, torch on every core) against
  :func:`fastmoments.dask.features` on a :func:`fastmoments.dask.local_cluster` (one worker
  process per core, one thread each, one torch thread per task);
* gaussian: a Gaussian (sigma) of a long real recording (the PPG that heartpy ships,
  :func:`fastmoments.data.ppg_recording`, tiled to ``--samples``), one shot (the plan
  :class:`fastmoments.signal.GaussianFilter`, torch on every core) against
  :func:`fastmoments.dask.gaussian_filter1d` on the same signal in chunks of
  ``--signal-chunks`` samples (``auto``: chosen from the cluster's measured per-task overhead
  and the filter's measured cost per sample, :func:`chosen_chunk`), on two cluster shapes:
  one worker process per core (1 thread) and one worker process with one thread per core (no
  transfers between processes).

Dask runs with input and result in the workers' memory (*workers -> workers*: input persisted
before the clock starts, as when each task reads its chunk from storage; result persisted, as
before a ``to_zarr`` or a reduction) and, for the first cluster shape, with the input shipped
from this process and the result gathered here (*client -> client*). Medians of ``--repeat``
runs after one warm-up (which builds the plans, once per worker), the two sides interleaved so
that both see the same load. Each cluster's per-task overhead is measured too (the wall time of
``--noop-tasks`` empty tasks, per task and per worker thread), to choose the chunk size: a task
should compute for much longer than that.

Writes ``benchmarks/results/dask_cpu.json`` and ``.md``; ``--out`` changes the stem.

Run: ``PYTHONPATH=src python3 benchmarks/dask_cpu.py`` (about 6 minutes on 2 quiet cores);
the Gaussian alone: ``PYTHONPATH=src python3 benchmarks/dask_cpu.py --jobs gaussian`` (about
3 minutes); ``--quick`` for a smoke run. Needs ``heartpy`` for the recording
(``pip install heartpy``).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from disk_common import environment

RESULTS = Path(__file__).resolve().parent / "results"


def _noop(i: int) -> int:
    return i


def task_overhead(client, n: int) -> float:
    """Seconds of scheduling per task: the wall time of ``n`` empty tasks x worker threads / n
    (what each task costs a worker thread beyond its own work)."""
    import distributed

    threads = sum(client.nthreads().values())
    distributed.wait(client.map(_noop, range(n // 4), pure=False))  # warm-up
    t0 = time.perf_counter()
    distributed.wait(client.map(_noop, range(n), pure=False))
    return (time.perf_counter() - t0) * threads / n


#: Tasks per chunk of :func:`fastmoments.dask.gaussian_filter1d` (one copies the chunk's edges,
#: one filters it).
TASKS_PER_CHUNK = 2


#: glibc maps every buffer of this size or more from the OS afresh, whatever its settings (its
#: largest mmap threshold, which the preload :mod:`fastmoments.dask.memory` sets).
MMAP_CEILING = 32 << 20


def chosen_chunk(overhead: float, sample_cost: float, samples: int, threads: int,
                 depth: int = 0, itemsize: int = 8) -> int:
    """Chunk length from the measured costs: each chunk's filter computes for at least 20 times
    the overhead of its tasks (so the overhead is at most ~5%), and every worker thread gets the
    same whole number of chunks, at least two (so the work is shared evenly: 7 chunks on 2
    threads would leave one thread idle for a seventh of the job). A chunk with its ``depth``
    samples of overlap on both sides also stays below :data:`MMAP_CEILING` bytes, so that its
    buffers are reused from task to task instead of being mapped and page-faulted afresh."""
    want = 20.0 * overhead * TASKS_PER_CHUNK / max(sample_cost, 1e-12)
    per_thread = max(2, int(samples / threads // max(want, 1.0)))
    cap = max(1, MMAP_CEILING // itemsize - 1 - 2 * depth)
    per_thread = max(per_thread, -(-samples // (threads * cap)))
    return max(1, -(-samples // (threads * per_thread)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", default="features,gaussian",
                    help="comma-separated: features, gaussian")
    ap.add_argument("--images", type=int, default=160000)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--order", type=int, default=16)
    ap.add_argument("--image-chunk", type=int, default=5000)
    ap.add_argument("--samples", type=int, default=32_000_000)
    ap.add_argument("--signal-chunks", default="auto,1000000,4000000",
                    help="comma-separated chunk lengths of the signal; auto: from the "
                         "cluster's measured per-task overhead (see chosen_chunk)")
    ap.add_argument("--sigma", type=float, default=100.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--noop-tasks", type=int, default=2000)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(RESULTS / "dask_cpu"))
    args = ap.parse_args()
    jobs = [j.strip() for j in args.jobs.split(",") if j.strip()]
    if not jobs or set(jobs) - {"features", "gaussian"}:
        ap.error(f"--jobs must name features and/or gaussian, got {args.jobs!r}")
    signal_chunks: list = [c.strip() if c.strip() == "auto" else int(float(c))
                           for c in args.signal_chunks.split(",")]
    if args.quick:
        args.images, args.samples, args.repeat, args.noop_tasks = 4000, 1_000_000, 2, 200
        args.image_chunk, signal_chunks = 1000, ["auto", 200_000]

    import dask
    import dask.array as da
    import distributed

    import fastmoments.dask as fmd
    from fastmoments.data import PPG_SAMPLING_RATE, ppg_recording
    from fastmoments.recognition import features as features_in_memory
    from fastmoments.signal import GaussianFilter

    cores = fmd._workers.available_cores()
    rng = np.random.default_rng(0)
    images = rng.random((args.images, args.size, args.size)) if "features" in jobs else None
    signal = None
    if "gaussian" in jobs:
        tiles = -(-args.samples // 68476)
        signal = ppg_recording(tiles=tiles)[:args.samples]
    plan = GaussianFilter(args.sigma)
    rows: list[dict] = []
    overheads: dict = {}
    chosen: dict = {}
    builds: dict = {}

    def single_features():
        torch.set_num_threads(cores)  # one process: torch on every core
        return features_in_memory(images, family="zernike", orders=args.order,
                                  kind="magnitude", progress=False).matrix

    def single_gaussian():
        torch.set_num_threads(cores)
        return plan(signal, progress=False)

    refs = {}
    if "features" in jobs:
        refs["features"] = single_features()
    sample_cost = None
    if "gaussian" in jobs:
        refs["gaussian"] = single_gaussian()
        t0 = time.perf_counter()
        single_gaussian()
        # core-seconds per sample of the filter itself (one process, every core busy)
        sample_cost = (time.perf_counter() - t0) * cores / args.samples
    feat_what = (f"{args.images} images {args.size}x{args.size}, Zernike T={args.order} "
                 f"magnitudes, chunks of {args.image_chunk}")

    def gau_what(chunk: int) -> str:
        tag = " (auto)" if chunk in chosen.values() else ""
        return (f"PPG recording tiled to {args.samples} samples, sigma={args.sigma}, chunks of "
                f"{chunk}{tag}")

    def run_dask(cluster, tag: str, with_client_rows: bool, which: list[str]) -> None:
        client = distributed.Client(cluster)
        try:
            overheads[tag] = task_overhead(client, args.noop_tasks)

            def kept(make):
                def fn():
                    out = make().persist()
                    distributed.wait(out)
                    return out
                return fn

            todo = []
            if "features" in which:
                def feats(d):
                    return fmd.features(d, "zernike", args.order, kind="magnitude")

                img_client = da.from_array(images,
                                           chunks=(args.image_chunk, args.size, args.size))
                img_workers = img_client.persist()
                distributed.wait(img_workers)
                if with_client_rows:
                    todo.append(("features", feat_what, "client -> client (compute)",
                                 lambda: feats(img_client).compute(), single_features,
                                 lambda: feats(img_client).compute()))
                todo.append(("features", feat_what, "workers -> workers (persist)",
                             kept(lambda: feats(img_workers)), single_features,
                             lambda: feats(img_workers).compute()))
            if "gaussian" in which:
                def gauss(d):
                    return fmd.gaussian_filter1d(d, args.sigma)

                n_threads = sum(client.nthreads().values())
                client_row = with_client_rows
                for chunk in signal_chunks:
                    auto = chunk == "auto"
                    if auto:
                        chunk = chosen_chunk(overheads[tag], sample_cost, args.samples,
                                             n_threads, fmd.depth_of(plan))
                        chosen[tag] = chunk
                    if auto and chunk in signal_chunks:
                        continue  # timed anyway
                    sig_client = da.from_array(signal, chunks=chunk)
                    sig_workers = sig_client.persist()
                    distributed.wait(sig_workers)
                    if client_row:  # the first chunk length only
                        client_row = False
                        todo.append(("gaussian", gau_what(chunk), "client -> client (compute)",
                                     lambda s=sig_client: gauss(s).compute(), single_gaussian,
                                     lambda s=sig_client: gauss(s).compute()))
                    todo.append(("gaussian", gau_what(chunk), "workers -> workers (persist)",
                                 kept(lambda s=sig_workers: gauss(s)), single_gaussian,
                                 lambda s=sig_workers: gauss(s).compute()))
            threads = sorted(set(client.run(lambda: (fmd.configure_threads(),
                                                     torch.get_num_threads())[1]).values()))
            for job, what, where, dask_fn, single_fn, check in todo:
                dask_fn()  # warm-up: plans built on every worker
                single_fn()
                t1, td = [], []
                for _ in range(args.repeat):  # interleaved: both see the same machine load
                    t0 = time.perf_counter()
                    single_fn()
                    t1.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    out = dask_fn()
                    td.append(time.perf_counter() - t0)
                    del out
                ref = refs[job]
                err = float(np.max(np.abs(check() - ref)) / np.max(np.abs(ref)))
                m1, md = statistics.median(t1), statistics.median(td)
                # each Dask run against the one-process run just before it: the load of a
                # shared machine drifts slowly, so a pair sees about the same load
                paired = statistics.median(b / a for a, b in zip(t1, td, strict=True))
                rows.append({"job": job, "input": where, "workers": tag,
                             "worker_torch_threads": threads, "what": what,
                             "single_s": m1, "dask_s": md, "single_runs": t1, "dask_runs": td,
                             "ratio": md / m1, "paired_ratio": paired, "max_rel_diff": err,
                             "task_overhead_s": overheads[tag],
                             "load_average": os.getloadavg()})
                print({k: v for k, v in rows[-1].items() if not k.endswith("_runs")},
                      flush=True)
            builds[tag] = {str(k): v for k, v in client.run(fmd.plan_builds).items()}
        finally:
            client.close()
            cluster.close()

    quiet = {"dashboard_address": None, "silence_logs": 50}
    run_dask(fmd.local_cluster(n_workers=cores, threads_per_worker=1, processes=True, **quiet),
             f"{cores} processes x 1 thread", True, jobs)
    if "gaussian" in jobs:
        run_dask(fmd.local_cluster(n_workers=1, threads_per_worker=cores, processes=True,
                                   **quiet),
                 f"1 process x {cores} threads", False, ["gaussian"])
    if "features" in jobs:
        # Dask's own allocator settings in the workers (every large buffer mapped afresh)
        run_dask(fmd.local_cluster(n_workers=cores, threads_per_worker=1, processes=True,
                                   reuse_memory=False, **quiet),
                 f"{cores} processes x 1 thread, Dask's allocator settings "
                 "(reuse_memory=False)", False, ["features"])
        # the rule broken on purpose: every worker process with torch on every core (the
        # allocator settings of local_cluster, so that only the threads differ)
        over = str(cores)
        run_dask(distributed.LocalCluster(n_workers=cores, threads_per_worker=1,
                                          processes=True,
                                          env={fmd.THREADS_ENV: over, "OMP_NUM_THREADS": over},
                                          preload=[fmd.MEMORY_PRELOAD], **quiet),
                 f"oversubscribed: {cores} processes x 1 thread x {cores} torch threads",
                 False, ["features"])

    env = environment(torch.device("cpu"), ("dask", "distributed"))
    env.update({"cores": cores, "single_process_torch_threads": cores,
                "plan_builds_per_worker": builds, "task_overhead_s": overheads,
                "auto_signal_chunk": chosen, "gaussian_core_seconds_per_sample": sample_cost,
                "load_average_at_end": os.getloadavg(),
                "signal": (f"fastmoments.data.ppg_recording (heartpy data3.csv, "
                           f"{PPG_SAMPLING_RATE} Hz), tiled, first {args.samples} samples"),
                "note": "shared machine: other engineers' jobs may have run at the same time; "
                        "see the load averages"})
    out = {"environment": env, "repeat": args.repeat, "jobs": jobs, "results": rows,
           "dask_version": dask.__version__}
    Path(args.out + ".json").write_text(json.dumps(out, indent=2) + "\n")
    load = tuple(round(v, 1) for v in env["load_average_at_end"])
    lines = ["# Dask LocalCluster against one process (CPU)", "",
             f"{env['date']}, {env['cpu']}, {cores} cores, torch {env['torch']}, dask "
             f"{env['dask']}, distributed {env['distributed']}; one process: {cores} torch "
             f"threads; every Dask task: 1 torch thread. Medians of {args.repeat} runs after a "
             "warm-up, the one-process and the Dask runs interleaved so that both see the same "
             "load (load average at the end: " f"{load}; on a shared machine the numbers are "
             "noisy). *client -> client*: a NumPy array of this process wrapped by "
             "`da.from_array` (shipped with the graph) and the result gathered here "
             "(`compute`); *workers -> workers*: input persisted in the workers before timing "
             "(as when tasks read their chunks from storage), result persisted there "
             "(as before `to_zarr` or a reduction). *oversubscribed*: the thread rule broken on "
             "purpose (torch on every core in every worker). Workers are started by "
             "`fastmoments.dask.local_cluster`, whose worker processes keep freed buffers for "
             "the next task (`reuse_memory=True`, the preload `fastmoments.dask.memory`) except in "
             "the row marked "
             "*Dask's allocator settings*. The signal is "
             f"{env['signal']}. *task overhead*: wall time of {args.noop_tasks} empty tasks x "
             "worker threads / tasks. The *auto* chunk of each cluster "
             f"({chosen or '-'}) makes every chunk's filter compute for 20 x the "
             "overhead of its two tasks at the measured cost per sample of the one-process "
             f"filter ({(sample_cost or 0) * 1e9:.1f} core-ns), with the same whole number of "
             "chunks, at least two, per worker thread, and each chunk with its overlap below "
             "32 MiB (glibc maps larger buffers afresh at every task). Dask's worker profiler "
             "is off (`local_cluster(profile=False)`, the default).", "",
             "*Dask / one*: ratio of the medians; *paired*: median over the runs of each Dask "
             "run's time / the one-process run just before it (the machine's load drifts, a "
             "pair sees about the same).", "",
             "| job | what | input | workers (torch threads) | task overhead (ms) | "
             "one process (s) | Dask (s) | Dask / one | paired | max rel. diff |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['job']} | {r['what']} | {r['input']} | {r['workers']} "
                     f"({r['worker_torch_threads']}) | {1e3 * r['task_overhead_s']:.2f} | "
                     f"{r['single_s']:.3f} | {r['dask_s']:.3f} | {r['ratio']:.2f} | "
                     f"{r['paired_ratio']:.2f} | {r['max_rel_diff']:.1e} |")
    Path(args.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
