"""Dask LocalCluster against one process on the same CPU jobs (issue 14: no slowdown beyond
10% on a 2-core machine).

Jobs:
* features: Zernike magnitudes (order T) of a stack of images, in memory
  (:func:`fastmoments.features.features`, torch on every core) against
  :func:`fastmoments.dask.features` on a :func:`fastmoments.dask.local_cluster` (one worker
  process per core, one thread each, one torch thread per task);
* gaussian: a Gaussian (sigma) of a long signal, one shot against
  :func:`fastmoments.dask.gaussian_filter` on the same signal in chunks.

Dask runs twice: with the input shipped from this process and the result gathered here, and
with input and result in the workers' memory. Medians of ``--repeat`` runs after one warm-up
(the warm-up builds the plans, once per worker), the two sides interleaved. Writes
``benchmarks/results/dask_cpu.json`` and ``.md``.

Run: ``PYTHONPATH=src python3 benchmarks/dask_cpu.py`` (``--quick`` for a smoke run).
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=40000)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--order", type=int, default=16)
    ap.add_argument("--image-chunk", type=int, default=5000)
    ap.add_argument("--samples", type=int, default=8_000_000)
    ap.add_argument("--signal-chunk", type=int, default=1_000_000)
    ap.add_argument("--sigma", type=float, default=100.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(RESULTS / "dask_cpu"))
    args = ap.parse_args()
    if args.quick:
        args.images, args.samples, args.repeat = 4000, 1_000_000, 2
        args.image_chunk, args.signal_chunk = 1000, 200_000

    import dask
    import dask.array as da
    import distributed

    import fastmoments.dask as fmd
    from fastmoments.features import features as features_in_memory
    from fastmoments.signal import gaussian_filter as gaussian_in_memory

    cores = fmd._workers.available_cores()
    rng = np.random.default_rng(0)
    images = rng.random((args.images, args.size, args.size))
    signal = rng.standard_normal(args.samples)
    rows: list[dict] = []
    builds: dict = {}

    def single_features():
        torch.set_num_threads(cores)  # one process: torch on every core
        return features_in_memory(images, family="zernike", orders=args.order,
                                  kind="magnitude", progress=False).matrix

    def single_gaussian():
        torch.set_num_threads(cores)
        return gaussian_in_memory(signal, args.sigma, progress=False)

    ref_feat, ref_gau = single_features(), single_gaussian()
    feat_what = (f"{args.images} images {args.size}x{args.size}, Zernike T={args.order} "
                 f"magnitudes, chunks of {args.image_chunk}")
    gau_what = f"{args.samples} samples, sigma={args.sigma}, chunks of {args.signal_chunk}"

    def run_dask(cluster, tag: str) -> None:
        client = distributed.Client(cluster)
        try:
            def feats(d):
                return fmd.features(d, "zernike", args.order, kind="magnitude")

            def gauss(d):
                return fmd.gaussian_filter(d, args.sigma)

            img_client = da.from_array(images, chunks=(args.image_chunk, args.size, args.size))
            sig_client = da.from_array(signal, chunks=args.signal_chunk)
            # the input already in the workers' memory (as when each task reads its chunk
            # from storage), persisted before the clock starts; the result stays there too
            # (persist), as before a to_zarr or a reduction
            img_workers = img_client.persist()
            sig_workers = sig_client.persist()
            distributed.wait([img_workers, sig_workers])

            def kept(arr):
                def fn():
                    out = arr().persist()
                    distributed.wait(out)
                    return out
                return fn

            jobs = [("features", feat_what, "client -> client (compute)",
                     lambda: feats(img_client).compute(), single_features, ref_feat,
                     lambda: feats(img_client).compute()),
                    ("features", feat_what, "workers -> workers (persist)",
                     kept(lambda: feats(img_workers)), single_features, ref_feat,
                     lambda: feats(img_workers).compute()),
                    ("gaussian", gau_what, "client -> client (compute)",
                     lambda: gauss(sig_client).compute(), single_gaussian, ref_gau,
                     lambda: gauss(sig_client).compute()),
                    ("gaussian", gau_what, "workers -> workers (persist)",
                     kept(lambda: gauss(sig_workers)), single_gaussian, ref_gau,
                     lambda: gauss(sig_workers).compute())]
            if tag != "sized":
                jobs = jobs[1:2]
            threads = sorted(set(client.run(lambda: (fmd.configure_threads(),
                                                     torch.get_num_threads())[1]).values()))
            for job, what, where, dask_fn, single_fn, ref, check in jobs:
                dask_fn()  # warm-up: plans built on every worker
                single_fn()
                t1, td = [], []
                for _ in range(args.repeat):  # interleaved: both see the same machine load
                    t0 = time.perf_counter()
                    single_fn()
                    t1.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    dask_fn()
                    td.append(time.perf_counter() - t0)
                err = float(np.max(np.abs(check() - ref)) / np.max(np.abs(ref)))
                m1, md = statistics.median(t1), statistics.median(td)
                rows.append({"job": job, "input": where, "workers": tag,
                             "worker_torch_threads": threads, "what": what,
                             "single_s": m1, "dask_s": md, "single_runs": t1, "dask_runs": td,
                             "ratio": md / m1, "max_rel_diff": err,
                             "load_average": os.getloadavg()})
                print(rows[-1], flush=True)
            builds[tag] = {str(k): v for k, v in client.run(fmd.plan_builds).items()}
        finally:
            client.close()
            cluster.close()

    run_dask(fmd.local_cluster(n_workers=cores, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=50), "sized")
    # the rule broken on purpose: every worker process with torch on every core
    over = str(cores)
    run_dask(distributed.LocalCluster(n_workers=cores, threads_per_worker=1, processes=True,
                                      dashboard_address=":0", silence_logs=50,
                                      env={fmd.THREADS_ENV: over, "OMP_NUM_THREADS": over}),
             "oversubscribed")

    env = environment(torch.device("cpu"), ("dask", "distributed"))
    env.update({"cores": cores, "dask_workers": cores, "threads_per_worker": 1,
                "single_process_torch_threads": cores,
                "plan_builds_per_worker": builds,
                "load_average_at_end": os.getloadavg(),
                "note": "shared machine: other engineers' jobs ran at the same time; the lead "
                        "reruns on a quiet machine"})
    out = {"environment": env, "repeat": args.repeat, "results": rows,
           "dask_version": dask.__version__}
    Path(args.out + ".json").write_text(json.dumps(out, indent=2) + "\n")
    lines = ["# Dask LocalCluster against one process (CPU)", "",
             f"{env['date']}, {env['cpu']}, {cores} cores, torch {env['torch']}, dask "
             f"{env['dask']}, distributed {env['distributed']}; Dask: {cores} worker processes x 1 "
             f"thread; one process: {cores} torch threads. Medians of {args.repeat} runs after "
             "a warm-up, the one-process and the Dask runs interleaved so that both see the same "
             "load. *client -> client*: a NumPy array of this process wrapped by "
             "`da.from_array` (shipped with the graph) and the result gathered here "
             "(`compute`); *workers -> workers*: input persisted in the workers before timing "
             "(as when tasks read their chunks from storage), result persisted there "
             "(as before `to_zarr` or a reduction). "
             "*oversubscribed*: the thread rule broken on purpose (torch on every core in every "
             "worker).", "",
             "**Shared machine**: other engineers' jobs ran at the same time (load average "
             f"{tuple(round(v, 1) for v in env['load_average_at_end'])} at the end); these "
             "numbers are noisy and are to be rerun on a quiet machine.", "",
             "| job | what | input | workers (torch threads) | one process (s) | Dask (s) | "
             "Dask / one | max rel. diff |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['job']} | {r['what']} | {r['input']} | {r['workers']} "
                     f"({r['worker_torch_threads']}) | {r['single_s']:.3f} | {r['dask_s']:.3f} | "
                     f"{r['ratio']:.2f} | {r['max_rel_diff']:.1e} |")
    Path(args.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
