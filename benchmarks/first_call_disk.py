"""First calls of the disk transforms in a fresh process (issue 15): ``import fastmoments``,
the first ``zernike_moments`` on a 256 x 256 image at T = 100, k = 3, and the first
``features`` on three 64 x 64 images, each in its own new interpreter, as a new user meets them.

Run: ``python benchmarks/first_call_disk.py`` (about 1-2 minutes on 2 cores) writes
``benchmarks/results/first_call_disk.json`` and ``.md``. ``--src DIR`` times another copy of the
package (e.g. an older checkout's ``src``) for a before/after comparison; ``--repeat R`` sets
the number of fresh processes per case (default 5; the median is reported).

Each row gives the wall time from the start of the child's script (imports included: what the
user waits for after ``python`` has started), the wall time of the interpreter process as seen
from outside, the CPU time of the child, the next (warm) calls, and whether numba was imported
(it must not be). The accuracy column is the relative 2-norm error of the first call's float32
result against a float64 computation of the same quantity.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from disk_common import RESULTS, environment, out_dir, write_results

CHILD = r'''
import time, sys
t0 = time.perf_counter(); c0 = time.process_time()
case = sys.argv[1]
import numpy as np
import fastmoments as fm
t_import = time.perf_counter() - t0
if case == "import":
    first = t_import
    warm, err = [], 0.0
elif case == "zernike":
    img = np.random.default_rng(0).random((256, 256)).astype(np.float32)
    A = fm.zernike_moments(img, 100, k=3, progress=False)
    first = time.perf_counter() - t0
    cpu = time.process_time() - c0
    warm = []
    for _ in range(2):
        t = time.perf_counter(); fm.zernike_moments(img, 100, k=3, progress=False)
        warm.append(time.perf_counter() - t)
    ref = fm.zernike_moments(img.astype(np.float64), 100, k=3, progress=False).values()
    err = float(np.linalg.norm(A.values() - ref) / np.linalg.norm(ref))
else:
    imgs = np.random.default_rng(0).random((3, 64, 64)).astype(np.float32)
    F = fm.features(imgs)
    first = time.perf_counter() - t0
    cpu = time.process_time() - c0
    warm = []
    for _ in range(2):
        t = time.perf_counter(); fm.features(imgs)
        warm.append(time.perf_counter() - t)
    ref = fm.features(imgs.astype(np.float64)).matrix
    err = float(np.linalg.norm(F.matrix - ref) / np.linalg.norm(ref))
if case == "import":
    cpu = time.process_time() - c0
import json
print(json.dumps({"first_s": first, "import_s": t_import, "cpu_s": cpu, "warm_s": warm,
                  "rel_err_vs_float64": err, "numba": "numba" in sys.modules,
                  "torch_imported": "torch" in sys.modules}))
'''

CASES = {
    "import": "import fastmoments",
    "zernike": "zernike_moments(256 x 256 float32, T=100, k=3)",
    "features": "features(three 64 x 64 float32 images) (pseudo-Zernike, orders 5)",
}


def run_case(case: str, src: Path, repeat: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD, case], env=env, check=True,
                             capture_output=True, text=True)
        wall = time.perf_counter() - t
        res = json.loads(out.stdout.strip().splitlines()[-1])
        res["process_wall_s"] = wall
        runs.append(res)

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    return {"case": case, "what": CASES[case], "repeat": repeat,
            "first_s": med("first_s"), "first_min_s": min(r["first_s"] for r in runs),
            "first_max_s": max(r["first_s"] for r in runs), "import_s": med("import_s"),
            "process_wall_s": med("process_wall_s"), "cpu_s": med("cpu_s"),
            "warm_s": statistics.median(w for r in runs for w in r["warm_s"])
            if runs[0]["warm_s"] else None,
            "rel_err_vs_float64": max(r["rel_err_vs_float64"] for r in runs),
            "numba_imported": any(r["numba"] for r in runs),
            "torch_imported": any(r["torch_imported"] for r in runs)}


def markdown(payload: dict) -> str:
    env = payload["environment"]
    lines = [f"# First calls of the disk transforms ({env['date']})", "",
             f"{env['cpu']}, {env['cpu_threads']} torch threads, torch {env['torch']}, "
             f"package from `{payload['src']}`; median of {payload['repeat']} fresh "
             "processes each.", "",
             "| first call | from script start (s) | min-max (s) | process wall (s) | CPU (s) "
             "| warm (s) | rel. error vs float64 | numba imported |",
             "|---|---|---|---|---|---|---|---|"]
    for r in payload["rows"]:
        warm = f"{r['warm_s']:.3f}" if r["warm_s"] is not None else "-"
        lines.append(f"| {r['what']} | {r['first_s']:.2f} | {r['first_min_s']:.2f}-"
                     f"{r['first_max_s']:.2f} | {r['process_wall_s']:.2f} | {r['cpu_s']:.2f} | "
                     f"{warm} | {r['rel_err_vs_float64']:.1e} | {r['numba_imported']} |")
    lines += ["", "Targets (issue 15, quiet 2-core machine): the first Zernike 256², T = 100 "
              "within 1.5 s.", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=str(Path(__file__).resolve().parents[1] / "src"),
                    help="the package's src directory to time (default: this checkout)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--name", default="first_call_disk", help="result file name")
    args = ap.parse_args()
    rows = []
    for case in CASES:
        rows.append(run_case(case, Path(args.src), args.repeat))
        print(json.dumps(rows[-1]), flush=True)
    payload = {"environment": environment(torch.device("cpu")), "src": args.src,
               "repeat": args.repeat, "rows": rows}
    path = write_results(args.name, payload, out_dir())
    path.with_suffix(".md").write_text(markdown(payload))
    print(f"wrote {path} and {path.with_suffix('.md').name} ({RESULTS})")


if __name__ == "__main__":
    main()
