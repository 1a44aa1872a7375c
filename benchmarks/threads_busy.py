"""Public CPU calls on an idle and on a busy machine, with the default threads and with one.

A machine is rarely idle. This benchmark runs each public CPU call of the table below in a
fresh process restricted (by CPU affinity) to ``--cpus`` CPUs, four ways:

* ``idle``: nothing else runs on those CPUs; the process's default threads;
* ``idle, 1 thread``: the same with ``OMP_NUM_THREADS=1`` and ``NUMBA_NUM_THREADS=1``;
* ``busy`` and ``busy, 1 thread``: the same while another process keeps one of those CPUs
  busy (a Python loop pinned to the last of them).

The targets of the thread policy (:mod:`fastmoments._threads`) are: busy with the default
threads at most 1.5x the busy one-thread time, and idle with the default threads not slower
than idle with one thread (within the run's spread). Each process warms the call up (plans,
tables, compiled kernels), then reports the median of ``--repeats`` calls
(``time.perf_counter``). Inputs are the same in every process (fixed seeds, the camera
image).

Run::

    python benchmarks/threads_busy.py --cpus 2            # about 3 minutes

writes ``benchmarks/results/threads_busy_<cpus>cpu.json`` and ``.md`` (device, versions,
date, the git commit). ``--label before`` keeps another commit's run beside it in the same
files, so that a change's effect is read in one table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from disk_common import cpu_name

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

PRELUDE = """
import json, statistics, sys, time
import numpy as np
import fastmoments as fm
from fastmoments.data import sample_image
rng = np.random.default_rng(0)
img = sample_image("camera").astype(np.float64)
sig = rng.standard_normal(100_000)
vol = rng.standard_normal((64, 64, 64))
img256 = img[::2, ::2].copy()
"""

#: name -> the statement timed (the inputs come from PRELUDE)
CASES = {
    "zernike_moments 512², T=20": "fm.zernike_moments(img, 20)",
    "pseudo_zernike_moments 256², T=20": "fm.pseudo_zernike_moments(img256, 20)",
    "pcet 512², orders 10": "fm.pcet(img, 10, 10)",
    "legendre_moments 512², order 100": "fm.legendre_moments(img, 100)",
    "jacobi_moments 64³, order 30": "fm.jacobi_moments(vol, 30, alpha=1.0, beta=1.0, ndim=3)",
    "zernike3d_moments 64³, order 20": "fm.zernike3d_moments(vol, 20)",
    "gaussian_filter1d 10⁵, σ=16": "fm.gaussian_filter1d(sig, 16.0)",
    "gaussian_filter1d 10⁵, σ=1000": "fm.gaussian_filter1d(sig, 1000.0)",
    "gaussian_filter 512², σ=4": "fm.gaussian_filter(img, 4.0)",
    "cwt 10⁵, 32 scales": "fm.cwt(sig, np.geomspace(2, 512, 32))",
}

RUN = """
stmt = compile(sys.argv[1], "<case>", "eval")
for _ in range(2):
    eval(stmt)
times = []
deadline = time.perf_counter() + float(sys.argv[3])
while len(times) < int(sys.argv[2]) or (time.perf_counter() < deadline and len(times) < 200):
    t = time.perf_counter(); eval(stmt); times.append(time.perf_counter() - t)
print(json.dumps({"median": statistics.median(times), "min": min(times),
                  "max": max(times), "n": len(times)}))
"""

SPIN = "while True:\n    pass\n"


def _env(one_thread: bool) -> dict[str, str]:
    env = dict(os.environ)
    for key in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "MKL_NUM_THREADS",
                "FASTMOMENTS_TORCH_THREADS"):
        env.pop(key, None)
    if one_thread:
        env.update(OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def _run_case(stmt: str, cpus: list[int], one_thread: bool, repeats: int,
              seconds: float) -> dict:
    def pin() -> None:
        os.sched_setaffinity(0, cpus)

    out = subprocess.run([sys.executable, "-c", PRELUDE + RUN, stmt, str(repeats), str(seconds)],
                         env=_env(one_thread), capture_output=True, text=True, preexec_fn=pin,
                         check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{stmt} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, text=True,
                              capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def measure(cpus: list[int], repeats: int, seconds: float, cases: list[str]) -> dict:
    rows = {}
    for name in cases:
        row = {}
        for busy in (False, True):
            spinner = None
            if busy:
                spinner = subprocess.Popen([sys.executable, "-c", SPIN],
                                           preexec_fn=lambda: os.sched_setaffinity(0, cpus[-1:]))
                time.sleep(0.5)  # let the spinner start before the measured process
            try:
                for one in (False, True):
                    key = ("busy" if busy else "idle") + (", 1 thread" if one else "")
                    row[key] = _run_case(CASES[name], cpus, one, repeats, seconds)
            finally:
                if spinner is not None:
                    spinner.kill()
                    spinner.wait()
        rows[name] = row
        print(_line(name, row), flush=True)
    return rows


def _ms(r: dict) -> float:
    return 1e3 * r["median"]


def _line(name: str, row: dict) -> str:
    busy = row["busy"]["median"] / row["busy, 1 thread"]["median"]
    idle = row["idle"]["median"] / row["idle, 1 thread"]["median"]
    if "commit" in row:
        name += f" (commit {row['commit']})"
    return (f"| {name} | {_ms(row['idle']):.2f} | {_ms(row['idle, 1 thread']):.2f} | "
            f"{idle:.2f} | {_ms(row['busy']):.2f} | {_ms(row['busy, 1 thread']):.2f} | "
            f"{busy:.2f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cpus", type=int, default=2, help="CPUs the processes may use")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--seconds", type=float, default=1.0,
                   help="keep calling for at least this long (more samples for short calls)")
    p.add_argument("--label", default="now", help="name of this run in the result files")
    p.add_argument("--commit", default=None, help="the commit measured (default: git's HEAD)")
    p.add_argument("--cases", nargs="*", default=list(CASES))
    p.add_argument("--update", action="store_true",
                   help="replace only the rows of --cases in the run --label (each then "
                        "records its own commit)")
    args = p.parse_args()
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < args.cpus:
        raise SystemExit(f"--cpus {args.cpus}: this process may use only {len(allowed)} CPUs")
    cpus = allowed[: args.cpus]

    import numba
    import numpy
    import torch

    import fastmoments

    stem = RESULTS / f"threads_busy_{args.cpus}cpu"
    old = json.loads(stem.with_suffix(".json").read_text()) if stem.with_suffix(
        ".json").exists() else {}
    runs = old.get("runs", {})
    commit = args.commit or _git_commit()
    rows = measure(cpus, args.repeats, args.seconds, args.cases)
    if args.update and args.label in runs:  # re-measure some rows of an earlier run
        for row in rows.values():
            row["commit"] = commit
        runs[args.label]["rows"].update(rows)
    else:
        runs[args.label] = {
            "commit": commit,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{cpu_name()}, {os.cpu_count()} CPUs, {args.cpus} used",
            "versions": {"python": platform.python_version(), "torch": torch.__version__,
                         "numba": numba.__version__, "numpy": numpy.__version__,
                         "fastmoments": fastmoments.__version__},
            "rows": rows,
        }
    data = {"benchmark": "threads_busy", "cpus": args.cpus, "runs": runs}
    RESULTS.mkdir(exist_ok=True)
    stem.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    lines = [f"# Public CPU calls on {args.cpus} CPUs, idle and with one of them busy", "",
             "Median ms per call in a warm process. *ratio* = default threads / one thread "
             "(target: busy ≤ 1.5, idle ≤ 1 within the spread).", ""]
    for label, run in runs.items():
        lines += [f"## {label}: commit {run['commit']}, {run['date']}", "",
                  f"{run['machine']}; " + ", ".join(f"{k} {v}" for k, v in
                                                   run["versions"].items()), "",
                  "| call | idle | idle, 1 thread | ratio | busy | busy, 1 thread | ratio |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        lines += [_line(name, row) for name, row in run["rows"].items()]
        lines.append("")
    stem.with_suffix(".md").write_text("\n".join(lines))
    print(f"wrote {stem}.json and .md")


if __name__ == "__main__":
    main()
