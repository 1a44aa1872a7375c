"""First-call times in fresh processes.

Each case runs in a new Python process (``sys.executable``), so imports, plan building and
fits are all paid, as a user pays them. As in a user's installation, the processes load
fastmoments from bytecode (kept in :data:`PYCACHE`; an untimed run of every case fills it
and numba's on-disk caches first). The Morlet fits are cached on disk
(:mod:`fastmoments.signal.fit_cache`), so the transforms are timed three ways:

* ``cold``: an empty cache folder and an empty numba cache (``NUMBA_CACHE_DIR``): the very
  first call on a new installation, numba's kernels compiled;
* ``warm``: a fresh process after a cold one filled both (every later first call);
* ``off``: the cache turned off (``FASTMOMENTS_CACHE_DIR=off``; the time before the cache).

Cases: ``import fastmoments``; ``import torch`` after it (the floor of every first call that
computes: ``import fastmoments`` itself loads no torch); :func:`fastmoments.gaussian_filter`
of a 512² image at σ = 4 and :func:`fastmoments.gaussian_filter1d` of 10⁵ samples at σ = 16
(cold and warm); a 64-scale
:func:`fastmoments.signal.cwt` of 16384 samples (scales log-spaced from 2 to 1024);
``fastmoments scalogram chirp`` end to end (the command line, figure written);
:func:`fastmoments.zernike_moments` of a 256² image, T = 100, k = 3;
:func:`fastmoments.features` of three 64² images (defaults). Each process reports its own
times (``time.perf_counter``; the command line is timed from outside, process start
included). Every case is repeated ``--repeats`` times (default 3) and the median and range
are written. The second, warm call in the same process is listed too.

Run on a quiet machine::

    taskset -c 0,1 python benchmarks/first_calls.py   # about 3-6 minutes on 2 cores

writes ``benchmarks/results/first_calls.json`` and ``.md`` (device, versions, date).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from disk_common import cpu_name

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

# each snippet prints one JSON line: {"import": s, "first": s, "second": s}
PRELUDE = """
import json, time
t0 = time.perf_counter()
import numpy as np
import fastmoments as fm
t1 = time.perf_counter()
"""

CASES = {
    "import fastmoments": """
print(json.dumps({"import": t1 - t0}))
""",
    # the floor of every first call that computes: the torch import (numpy already loaded)
    "import torch": """
t2 = time.perf_counter(); import torch; t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t3 - t2}))
""",
    # each case: the statement that makes the function available (timed: it imports torch),
    # then the first and second calls
    "cwt, 64 scales, 16384 samples": """
ta = time.perf_counter(); from fastmoments.signal import cwt; tb = time.perf_counter()
x = np.random.default_rng(0).standard_normal(16384)
scales = np.geomspace(2.0, 1024.0, 64)
t2 = time.perf_counter(); cwt(x, scales); t3 = time.perf_counter()
cwt(x, scales); t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "function_import": tb - ta, "first": t3 - t2,
                  "second": t4 - t3, "in_process": t1 - t0 + tb - ta + t3 - t2}))
""",
    "gaussian_filter 512^2, sigma=4": """
ta = time.perf_counter(); from fastmoments import gaussian_filter; tb = time.perf_counter()
img = np.random.default_rng(0).random((512, 512))
t2 = time.perf_counter(); gaussian_filter(img, 4.0); t3 = time.perf_counter()
gaussian_filter(img, 4.0); t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "function_import": tb - ta, "first": t3 - t2,
                  "second": t4 - t3, "in_process": t1 - t0 + tb - ta + t3 - t2}))
""",
    "gaussian_filter1d 10^5, sigma=16": """
ta = time.perf_counter(); from fastmoments import gaussian_filter1d; tb = time.perf_counter()
x = np.random.default_rng(0).standard_normal(100_000)
t2 = time.perf_counter(); gaussian_filter1d(x, 16.0); t3 = time.perf_counter()
gaussian_filter1d(x, 16.0); t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "function_import": tb - ta, "first": t3 - t2,
                  "second": t4 - t3, "in_process": t1 - t0 + tb - ta + t3 - t2}))
""",
    "zernike_moments 256^2, T=100, k=3": """
ta = time.perf_counter(); from fastmoments import zernike_moments; tb = time.perf_counter()
img = np.random.default_rng(0).random((256, 256))
t2 = time.perf_counter(); zernike_moments(img, 100, k=3); t3 = time.perf_counter()
zernike_moments(img, 100, k=3); t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "function_import": tb - ta, "first": t3 - t2,
                  "second": t4 - t3, "in_process": t1 - t0 + tb - ta + t3 - t2}))
""",
    "features, three 64^2 images": """
ta = time.perf_counter(); from fastmoments import features; tb = time.perf_counter()
imgs = np.random.default_rng(0).random((3, 64, 64))
t2 = time.perf_counter(); features(imgs); t3 = time.perf_counter()
features(imgs); t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "function_import": tb - ta, "first": t3 - t2,
                  "second": t4 - t3, "in_process": t1 - t0 + tb - ta + t3 - t2}))
""",
}
#: the cases that read Morlet fits (timed cold, warm and with the cache off)
CACHED = ("cwt, 64 scales, 16384 samples", "fastmoments scalogram chirp")


SRC = HERE.parent / "src"


#: Where the timed processes keep their bytecode: a user's installation has its ``.pyc``
#: files, so the processes must not recompile fastmoments from source each time (this
#: machine may set ``PYTHONDONTWRITEBYTECODE=1``); filled by an untimed first run.
PYCACHE = Path(tempfile.gettempdir()) / "fastmoments-first-calls-pycache"


#: numba's on-disk cache of compiled kernels for the timed processes (set per run: emptied
#: for a ``cold`` case, filled for a ``warm`` one)
NUMBA_CACHE: str | None = None


def _env(cache: str | None) -> dict:
    env = dict(os.environ)
    if NUMBA_CACHE is not None:
        env["NUMBA_CACHE_DIR"] = NUMBA_CACHE
    src = str(SRC)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("MPLBACKEND", "Agg")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    if cache is not None:
        env["FASTMOMENTS_CACHE_DIR"] = cache
    return env


def _run_snippet(code: str, cache: str | None) -> dict:
    out = subprocess.run([sys.executable, "-c", PRELUDE + code], env=_env(cache), check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _run_cli(cache: str | None, workdir: str) -> dict:
    cmd = [sys.executable, "-c", "import sys; from fastmoments.cli.main import main; "
           "sys.exit(main())", "scalogram", "chirp", "--out", os.path.join(workdir, "sc")]
    t0 = time.perf_counter()
    subprocess.run(cmd, env=_env(cache), check=True, capture_output=True, text=True)
    return {"total": time.perf_counter() - t0}


def _one(name: str, cache_mode: str, workdir: str) -> dict:
    """One fresh-process measurement; ``cache_mode`` is cold, warm or off."""
    if cache_mode == "off":
        cache = "off"
    else:
        cache = os.path.join(workdir, "cache")
        if cache_mode == "cold":
            subprocess.run(["rm", "-rf", cache, str(NUMBA_CACHE)], check=True)
        else:  # warm: fill the folder in a process of its own first (not timed)
            _run_cli(cache, workdir) if name.startswith("fastmoments") else _run_snippet(
                CASES[name], cache)
    if name.startswith("fastmoments"):
        return _run_cli(cache, workdir)
    return _run_snippet(CASES[name], cache)


def _summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default=None, help="run the cases whose name contains this")
    ap.add_argument("--src", default=None,
                    help="another source tree to time (e.g. an older checkout's src/); the "
                         "results then go to first_calls_<name>.json/.md")
    ap.add_argument("--name", default=None, help="suffix of the result files with --src")
    args = ap.parse_args()
    global SRC
    stem = "first_calls"
    if args.src:
        SRC = Path(args.src).resolve()
        stem += f"_{args.name or SRC.parent.name}"
    names = [*CASES, "fastmoments scalogram chirp"]
    if args.only:
        names = [n for n in names if args.only in n]
    rows = []
    global NUMBA_CACHE
    with tempfile.TemporaryDirectory() as workdir:
        NUMBA_CACHE = os.path.join(workdir, "numba")
        for name in names:  # untimed: bytecode written, numba's caches filled
            _one(name, "warm", workdir)
        for name in names:
            modes = (("cold", "warm", "off") if name in CACHED else
                     ("warm",) if name.startswith("import") else ("cold", "warm"))
            for mode in modes:
                runs = [_one(name, mode, workdir) for _ in range(args.repeats)]
                row = {"case": name, "cache": "-" if name.startswith("import") else mode}
                for key in runs[0]:
                    row[key] = _summary([r[key] for r in runs])
                rows.append(row)
                print(name, row["cache"], {k: round(v["median"], 3) for k, v in row.items()
                                            if isinstance(v, dict)}, flush=True)
    import numpy as np
    import torch

    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "machine": cpu_name(), "cpu_count": len(os.sched_getaffinity(0)),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "python": platform.python_version(), "numpy": np.__version__,
            "torch": torch.__version__, "device": "cpu", "repeats": args.repeats,
            "src": str(SRC), "load_average_at_end": list(os.getloadavg())}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps({"meta": meta, "rows": rows},
                                                         indent=1))
    lines = ["# First calls in fresh processes", "",
             f"{meta['date']}, {meta['machine']}, {meta['cpu_count']} cores, "
             f"OMP_NUM_THREADS={meta['omp_num_threads']}, Python {meta['python']}, "
             f"numpy {meta['numpy']}, torch {meta['torch']}; median [min..max] of "
             f"{args.repeats} fresh processes; load average at the end "
             f"{meta['load_average_at_end'][0]:.1f}. Written by `benchmarks/first_calls.py`.",
             "",
             "| case | fit cache | import fastmoments s | import of the function s | "
             "first call s | second call s | import + first call s | process total s |",
             "|---|---|---|---|---|---|---|---|"]

    def cell(row: dict, key: str) -> str:
        if key not in row:
            return ""
        v = row[key]
        return f"{v['median']:.2f} [{v['min']:.2f}..{v['max']:.2f}]"

    for row in rows:
        lines.append(f"| {row['case']} | {row['cache']} | {cell(row, 'import')} | "
                     f"{cell(row, 'function_import')} | {cell(row, 'first')} | "
                     f"{cell(row, 'second')} | {cell(row, 'in_process')} | "
                     f"{cell(row, 'total')} |")
    lines += ["", "cold: empty caches (the Morlet fits and numba's compiled kernels: the first "
              "call on a new installation); warm: a fresh process after one that filled them; "
              "off: `FASTMOMENTS_CACHE_DIR=off`. Targets (quiet 2-core machine): "
              "first 64-scale cwt <= 0.5 s, Zernike 256^2 T=100 <= 1.5 s, "
              "`fastmoments scalogram chirp` <= 3 s end to end. *import of the function*: "
              "the `from fastmoments... import f` statement, which loads torch (row `import "
              "torch`: torch alone, after numpy); *first call*: the call after it; *import + "
              "first call*: everything in the process after the interpreter started. "
              "`fastmoments scalogram chirp` is timed from outside, interpreter start "
              "included; on two cores or more it draws its figure in a helper process that "
              "imports matplotlib meanwhile."]
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
