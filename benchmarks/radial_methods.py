"""Speed and accuracy of the radial-polynomial methods (deng, kintner, q-recursive, direct,
jacobi) at orders 50..1000, in float64 and float32 arithmetic, on the CPU.

Accuracy: the largest absolute error of R_nm(r) over a sample of (n, m) pairs of the highest
order (all of them for order <= 100, else 25 spread over m) at 16 radii spread over (0, 1],
against exact rational coefficients evaluated in mpmath with more digits than the sum cancels
(|R_nm| <= 1, so absolute error is the relevant measure). Speed: the time to produce every
R_nm with n <= T at the 14,898 distinct radii of a 512 x 512 image (k = 1).

Where each method breaks, at the moment level (this is where the geometric-moments method of
thesis Eq. 3.1-3.9, which has no radial table, enters): the Zernike and pseudo-Zernike moments
of the 64 x 64 camera image (k = 1, float64) by every method, float64 geometric included,
against the exact rational moments of ``method="geometric-exact"``; the error is the largest
|A - A_exact| relative to the largest |A_exact|, and a method *breaks* at the first order of
the grid where it passes 1e-6. ``--breakdown-only`` reruns only this part and keeps the R_nm
rows of the previous results file.

    PYTHONPATH=src python benchmarks/radial_methods.py [--breakdown-only]
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.reference_disk import radial_exact

from disk_common import environment, write_results
from fastmoments._progress import progress
from fastmoments.data import sample_image
from fastmoments.disk import DiskTransform, disk_sampling, get_family
from fastmoments.disk.geometric import geometric_moments
from fastmoments.disk.radial import radial_steps

ORDERS = [50, 100, 200, 500, 1000]
METHODS = {"zernike": ["deng", "kintner", "q-recursive", "direct", "jacobi"],
           "pseudo-zernike": ["deng", "direct", "jacobi"]}


BREAK_AT = 1e-6
BREAK_SIZE = 64
BREAK_ORDERS = {"zernike": list(range(4, 65, 4)), "pseudo-zernike": list(range(2, 49, 2))}
BREAK_METHODS = {"zernike": ["deng", "kintner", "q-recursive", "direct", "jacobi", "geometric"],
                 "pseudo-zernike": ["deng", "direct", "jacobi", "geometric"]}


def breakdown() -> list[dict]:
    """Moment error of every method against exact arithmetic, per order (float64, CPU)."""
    img = sample_image("camera", BREAK_SIZE)
    rows = []
    for family, methods in BREAK_METHODS.items():
        for T in progress(BREAK_ORDERS[family], desc=f"{family} breakdown"):
            plan = DiskTransform(family, BREAK_SIZE, T, dtype="float64")
            exact = geometric_moments(plan, img, exact=True).data.numpy()
            scale = float(np.abs(exact).max())
            for method in methods:
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if method == "geometric":
                        A = geometric_moments(plan, img)
                    else:
                        A = DiskTransform(family, BREAK_SIZE, T, method=method,
                                          dtype="float64").forward(img)
                secs = time.perf_counter() - t0
                got = A.data.numpy()
                err = (float(np.abs(got - exact).max()) / scale if np.isfinite(got).all()
                       else float("inf"))
                rows.append({"family": family, "method": method, "T": T,
                             "rel_error": err, "seconds": secs})
    return rows


def breakdown_table(rows: list[dict]) -> str:
    lines = [f"| family | method | breaks at order (error > {BREAK_AT:g}) | "
             "error at the last order below | error where it breaks |",
             "|---|---|---|---|---|"]
    for family, methods in BREAK_METHODS.items():
        for method in methods:
            mine = sorted((r for r in rows if r["family"] == family and r["method"] == method),
                          key=lambda r: r["T"])
            bad = [r for r in mine if r["rel_error"] > BREAK_AT]
            first = bad[0] if bad else None
            good = [r for r in mine if first is None or r["T"] < first["T"]]
            last = good[-1] if good else None
            lines.append(
                f"| {family} | {method} | "
                + (f"{first['T']}" if first else f"> {mine[-1]['T']}") + " | "
                + (f"{last['rel_error']:.1e} (T={last['T']})" if last else "-") + " | "
                + (f"{first['rel_error']:.1e} (T={first['T']})" if first else "-") + " |")
        lines.append(f"| {family} | geometric-exact | never (the exact reference itself) | - "
                     "| - |")
    return "\n".join(lines)


def sample_pairs(family: str, T: int) -> list[tuple[int, int]]:
    fam = get_family(family)
    ms = [m for m in range(T + 1) if fam.is_valid(T, m)]
    if len(ms) > 25:
        ms = sorted({ms[int(i)] for i in np.linspace(0, len(ms) - 1, 25)})
    return [(T, m) for m in ms]


def run_method(family, method, r, index, wanted):
    got = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        if not wanted:  # timing only: produce every block, touch nothing else
            for _step in radial_steps(family, method, r, index.ms, index.ns):
                pass
            return time.perf_counter() - t0, got
        for cols, rows, vals in radial_steps(family, method, r, index.ms, index.ns):
            cols = np.arange(index.n_cols)[cols] if isinstance(cols, slice) else cols.numpy()
            for c, j, v in zip(cols, rows.numpy(), vals, strict=True):
                key = (index.ns[c][j], index.ms[c])
                if key in wanted:
                    got[key] = v.double().numpy()
        return time.perf_counter() - t0, got


def main() -> None:
    env = environment(torch.device("cpu"))
    env["note"] = ("Run on a CPU shared by several concurrent jobs (2 cores, 8 users): "
                   "timings are noisy")
    result_file = Path(__file__).resolve().parent / "results" / "radial_methods.json"
    if "--breakdown-only" in sys.argv[1:]:
        old = json.loads(result_file.read_text())
        env["radial_rows_from"] = old["environment"].get("radial_rows_from",
                                                         old["environment"]["date"])
        finish(env, old["rows"], breakdown())
        return
    radii_img = torch.as_tensor(disk_sampling(512, 1).radius)
    r_acc = np.concatenate([[1e-3, 0.02], np.linspace(0.1, 0.9, 10), [0.95, 0.99, 0.999, 1.0]])
    rows = []
    for family, methods in METHODS.items():
        fam = get_family(family)
        for T in ORDERS:
            wanted = set(sample_pairs(family, T))
            exact = {p: radial_exact(family, p[0], p[1], r_acc) for p in wanted}
            index = fam.full(T)
            for method in methods:
                for dtype in (torch.float64, torch.float32):
                    if method == "direct" and T > 200:
                        continue  # meaningless (overflowing coefficients) and slow
                    _t, got = run_method(family, method,
                                         torch.tensor(r_acc, dtype=dtype), index, wanted)
                    err = max(float(np.nanmax(np.abs(got[p] - exact[p]))) if np.all(
                        np.isfinite(got[p])) else float("inf") for p in wanted)
                    secs = None
                    if dtype == torch.float64 and not (family == "pseudo-zernike" and T > 500
                                                       and method != "deng"):
                        secs, _ = run_method(family, method, radii_img, index, set())
                    rows.append({"family": family, "method": method, "T": T,
                                 "dtype": str(dtype).replace("torch.", ""),
                                 "max_abs_error": err, "seconds_512_radii": secs})
                    print(rows[-1], flush=True)
    finish(env, rows, breakdown())


def finish(env: dict, rows: list[dict], brows: list[dict]) -> None:
    write_results("radial_methods", {"environment": env, "orders": ORDERS, "rows": rows,
                                     "breakdown_size": BREAK_SIZE, "breakdown_at": BREAK_AT,
                                     "breakdown_rows": brows})
    lines = ["| family | method | dtype | " + " | ".join(f"T={t}" for t in ORDERS) + " |",
             "|---" * (3 + len(ORDERS)) + "|"]
    for family, methods in METHODS.items():
        for method in methods:
            for dt in ("float64", "float32"):
                cells = []
                for T in ORDERS:
                    hit = [r for r in rows if r["family"] == family and r["method"] == method
                           and r["T"] == T and r["dtype"] == dt]
                    if not hit:
                        cells.append("-")
                        continue
                    h = hit[0]
                    s = f"{h['max_abs_error']:.1e}"
                    if h["seconds_512_radii"] is not None:
                        s += f" ({h['seconds_512_radii']:.2f} s)"
                    cells.append(s)
                lines.append(f"| {family} | {method} | {dt} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    btable = breakdown_table(brows)
    since = env.get("radial_rows_from")
    rerun = (f" (these rows from the run of {since}; the breakdown below rerun on "
             f"{env['date']})" if since else "")
    (Path(__file__).resolve().parent / "results" / "radial_methods.md").write_text(
        "Max |error| of R_nm against exact arithmetic (and seconds for all R_nm, n <= T, at "
        "the 14,898 radii of a 512x512 image, float64, CPU)" + rerun + "\n\n" + table
        + "\n\nWhere each method breaks: moments of the " f"{BREAK_SIZE}x{BREAK_SIZE} "
        "camera image (k = 1, float64) against exact rational arithmetic "
        "(method='geometric-exact'); error = max |A - A_exact| / max |A_exact|; orders "
        + ", ".join(f"{fam} {o[0]}..{o[-1]} step {o[1] - o[0]}"
                    for fam, o in BREAK_ORDERS.items())
        + ". " + env["note"] + ".\n\n" + btable + "\n")
    print(table)
    print(btable)


if __name__ == "__main__":
    main()
