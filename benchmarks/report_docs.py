"""Write the documentation's benchmark page from the committed results.

Reads the result files in ``benchmarks/results/`` (each written by the benchmark script of the
same name) and ``benchmarks/results/papers/`` (written by ``benchmarks/papers.py``), and writes
``docs/benchmarks.md``: headline tables per area with the peer timed in the same run, the
accuracy beside each time, the device and date of each run, and the papers' published times
beside ours with the papers' hardware named; plus the plots in ``docs/_generated/``. Every
number on the page is read from those files; a file that is missing leaves its table out.
Rows that repeat one job with one thing changed (``k``, σ, the input's place, ...) are
gathered into one row whose cells read ``a / b``, or into columns side by side, so that the page
stays within about 300 lines without leaving a value out.
The Sphinx build runs this script (``docs/conf.py``); run it by hand to refresh the page::

    python3 benchmarks/report_docs.py
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "benchmarks.md"
FIGURES = ROOT / "docs" / "_generated"

#: the hardware of each paper, as the papers state it (see docs/bibliography.md)
PAPER_HARDWARE = {
    "zernike-thesis": "TITAN V (Intel Core i5-8400 host)",
    "relayout": "Tesla K40",
    "jacobi-thesis": "Tesla K80 (2-D), Tesla V100 (3-D)",
    "pht": "GeForce GTX 1060 (Intel Core i3-8100 host)",
    "asft": "RTX 3090 (AMD Ryzen 9 3900X host)",
}


# --------------------------------------------------------------------------- helpers
def load(name: str) -> dict | None:
    """``benchmarks/results/<name>.json``, or None when it is absent or unreadable."""
    try:
        data = json.loads((RESULTS / f"{name}.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def num(v) -> float | None:
    """A number from a JSON value (papers' cells are strings such as ``"1.2e+03x"``)."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).rstrip("x×").split()[0])
    except (ValueError, IndexError):
        return None


def g(v, digits: int = 3) -> str:
    """A time or size: 3 significant digits, no exponent between 0.01 and 1e5."""
    x = num(v)
    if x is None or math.isnan(x):
        return "–"
    if x == 0:
        return "0"
    if 0.01 <= abs(x) < 1e5:
        s = f"{x:.{digits}g}"
        return s if "e" not in s else f"{x:.0f}"
    return f"{x:.2e}"


def err(v) -> str:
    """A relative error, always in exponent form."""
    x = num(v)
    return "–" if x is None else ("0" if x == 0 else f"{x:.1e}")


def ratio(a, b) -> str:
    """``a / b`` as ``12×`` (a: the other side's time, b: ours)."""
    x, y = num(a), num(b)
    if x is None or y is None or y <= 0:
        return "–"
    r = x / y
    return f"{r:.0f}×" if r >= 10 else f"{r:.2g}×"


def joined(values: list) -> str:
    """One cell for several variants of a job: the one value where they agree, else
    ``a / b`` in the variants' order."""
    values = [str(v) for v in values]
    return values[0] if len(set(values)) == 1 else " / ".join(values)


def merged(rows: list[list]) -> list[str]:
    """Rows of the variants of one job as one row, cell by cell (see :func:`joined`)."""
    return [joined(list(cells)) for cells in zip(*rows, strict=True)]


def grouped(items: list, key) -> dict:
    """``items`` grouped by ``key(item)``, the groups in the order of their first item."""
    out: dict = {}
    for item in items:
        out.setdefault(key(item), []).append(item)
    return out


def merge_label(labels: list[str], keyed: bool = True) -> str | None:
    """Labels that differ in one comma-separated part as one label with that part ``a / b``
    (``k=1 / 11`` for parts ``k=1`` and ``k=11``); None where they differ otherwise. With
    ``keyed``, only parts of the form ``name=number`` may differ."""
    parts = [label.split(", ") for label in labels]
    if len({len(p) for p in parts}) != 1:
        return None
    diff = [i for i in range(len(parts[0])) if len({p[i] for p in parts}) > 1]
    if len(diff) != 1:
        return None
    i = diff[0]
    vals = [p[i] for p in parts]
    sides = [v.partition("=") for v in vals]
    same_name = len({lhs.strip() for lhs, _, _ in sides}) == 1 and all(eq for _, eq, _ in sides)
    numeric = same_name and all(rhs.strip().replace(".", "").isdigit() for _, _, rhs in sides)
    if keyed and not numeric:
        return None
    if same_name:
        lhs = sides[0][0]
        eq = " = " if lhs.endswith(" ") else "="
        part = lhs.strip() + eq + " / ".join(rhs.strip() for _, _, rhs in sides)
    else:
        part = " / ".join(vals)
    return ", ".join([*parts[0][:i], part, *parts[0][i + 1:]])


def merge_runs(rows: list[list[str]], keyed: bool = True, same: tuple[int, ...] = ()
               ) -> list[list[str]]:
    """Consecutive rows whose first cells name variants of one job (:func:`merge_label`) and
    that agree in the columns ``same`` as one row each (see :func:`merged`); a row whose cells
    already hold ``a / b`` stays as it is."""
    def alone(r: list[str]) -> bool:
        return any(" / " in str(c) for c in r)

    out: list[list[str]] = []
    run: list[list[str]] = []

    def flush() -> None:
        if len(run) > 1:
            out.append([merge_label([r[0] for r in run], keyed), *merged([r[1:] for r in run])])
        else:
            out.extend(run)

    for r in rows:
        if (run and not alone(r) and not alone(run[0])
                and all(r[i] == run[0][i] for i in same)
                and merge_label([x[0] for x in run] + [r[0]], keyed) is not None):
            run.append(r)
            continue
        flush()
        run = [r]
    flush()
    return out


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return [*out, ""]


def env_of(data: dict) -> dict:
    for key in ("meta", "environment", "env"):
        if isinstance(data.get(key), dict):
            return data[key]
    return data


def run_line(data: dict, script: str, result: str) -> str:
    """One line naming the device, versions, date, script and result file of a run."""
    e = env_of(data)
    device = (e.get("gpu") or e.get("name") if e.get("device") in ("cuda", "cpu") else None) \
        or e.get("device") or data.get("device") or e.get("gpu") or e.get("cpu") \
        or e.get("machine") or e.get("device_name") or "?"
    if isinstance(e.get("gpus"), list):
        device = f"{len(e['gpus'])} × {e['gpus'][0]}"
    if str(device).startswith(("cpu", "Linux-")) or device in ("x86_64", "AMD EPYC"):
        threads = e.get("threads") or e.get("torch_threads") or e.get("cpu_threads") \
            or e.get("omp_num_threads")
        plural = "" if str(threads) == "1" else "s"
        device = f"CPU x86_64, 2 cores{f', {threads} thread{plural}' if threads else ''}"
    versions = dict(e.get("versions") or data.get("versions") or {})
    for k in ("torch", "cuda", "triton", "cupy", "scipy", "numba"):
        if e.get(k) or data.get(k):
            versions.setdefault(k, e.get(k) or data.get(k))
    vtext = ", ".join(f"{k} {v}" for k, v in versions.items() if v and k in (
        "torch", "cuda", "triton", "cupy", "scipy", "numba", "zarr", "dask"))
    date = str(e.get("date") or data.get("date") or e.get("generated") or "?")[:10]
    md = " (and `.md`)" if (RESULTS / f"{result}.md").exists() else ""
    return (f"*{device}; {date}; {vtext}. Script `benchmarks/{script}`, results "
            f"`benchmarks/results/{result}.json`{md}.*")


def plot(name: str, draw, outside: bool = False) -> str | None:
    """Draw a figure with ``draw(ax)`` into ``docs/_generated/<name>.png``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    draw(ax)
    ax.grid(True, which="both", alpha=0.3)
    if outside:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.legend(fontsize=8)
    fig.tight_layout()
    FIGURES.mkdir(parents=True, exist_ok=True)
    fig.savefig(FIGURES / f"{name}.png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return f"![{name}](_generated/{name}.png)"


def paper_rows(paper: str) -> list[dict]:
    data = load(f"papers/{paper}")
    return [] if data is None else data.get("rows", [])


# --------------------------------------------------------------------------- sections
def disk(out: list[str]) -> None:
    out += ["## Disk: Zernike and pseudo-Zernike moments", ""]
    rows = []
    for name in ("disk_gpu_h200",):
        d = load(name)
        if d is None:
            continue
        gpu = env_of(d).get("gpu", "?")
        checks = {(c["family"], c["dtype"]): c for c in d.get("checks", [])
                  if c.get("method") == "jacobi" and "dtype" in c}
        for r in d.get("rows", []):
            if r.get("method") != "jacobi" or (r["dtype"] == "float64" and r["T"] != 700):
                continue
            c = checks.get((r["family"], r["dtype"]), {})
            rows.append([gpu, r["family"], r["T"], r["k"], r["dtype"],
                         g(r["forward"]["median_s"] * 1e3),
                         g((r.get("reconstruct") or {}).get("median_s", math.nan) * 1e3),
                         err(c.get("rel_err_moments")), g(r.get("thesis_s")),
                         ratio(r.get("thesis_s"), r["forward"]["median_s"])])
    if rows:
        d = load("disk_gpu_h200")
        out += ["One 512 × 512 image (scikit-image's camera) on the GPU, moments up to order T "
                "with k × k sub-pixel points; the thesis's time is its own GPU's (TITAN V) "
                "for the same job. Error: largest relative error of the moments against our "
                "float64 plan.", ""]
        rows = [merged(rs) for rs in grouped(rows, lambda r: (*r[:3], r[4])).values()]
        out += table(["GPU", "moments", "order T", "k", "dtype", "forward ms",
                      "reconstruction ms", "rel. error", "thesis s (TITAN V)",
                      "thesis / ours"], rows)
        out += [run_line(d, "disk_gpu.py", "disk_gpu_h200"), ""]
    cells = [r for r in paper_rows("zernike-thesis") if r.get("grid") == "T5.1"]
    if cells:
        def draw(ax):
            for k, color in (("1", "C0"), ("5", "C1"), ("11", "C2")):
                sel = sorted((num(r["T"]), num(r["paper s"]), num(r["ours s"]))
                             for r in cells if r.get("k") == k and num(r.get("ours s")))
                if sel:
                    ax.plot([s[0] for s in sel], [s[1] for s in sel], "--", color=color,
                            label=f"thesis, TITAN V, k={k}")
                    ax.plot([s[0] for s in sel], [s[2] for s in sel], "-o", color=color,
                            ms=3, label=f"fastmoments, k={k}")
            ax.set_yscale("log")
            ax.set_xlabel("order T")
            ax.set_ylabel("seconds, 512² image")
            ax.set_title("Zernike moments, float32: thesis Table 5.1 against ours", fontsize=9)
        fig = plot("bench_disk_thesis", draw, outside=True)
        dev = {r.get("our device", "").replace(" (CUDA events)", "") for r in cells} - {""}
        if fig:
            out += [fig, "", f"Ours on {', '.join(sorted(dev))}; the full table, with the "
                    "accuracy of every cell: `benchmarks/results/papers/zernike-thesis.md`.",
                    ""]
    d = load("disk_cpu")
    if d is not None:
        rows = [[r["job"], g(r["mahotas_s"]), g(r["fastmoments_warm_s"]),
                 g(r["fastmoments_cold_s"]), ratio(r["mahotas_s"], r["fastmoments_warm_s"]),
                 g(r.get("mahotas_max_error")), g(r.get("fastmoments_max_error"))]
                for r in d["rows"] if "mahotas_s" in r]
        out += ["On the CPU against mahotas (`mahotas.features.zernike_moments` at its "
                "defaults; fastmoments with the same disk and normalisation), same run, same "
                "image, one thread each; errors against a float64 direct sum:", ""]
        out += table(["job", "mahotas s", "fastmoments s", "fastmoments new centre s",
                      "mahotas / fastmoments", "mahotas max error",
                      "fastmoments max error"], rows)
        out += [run_line(d, "disk_cpu.py", "disk_cpu"), ""]


def pht(out: list[str]) -> None:
    gpu, cpu = load("pht_gpu"), load("pht_cpu")
    if gpu is None and cpu is None:
        return
    out += ["## Polar harmonic transforms (PCET, PCT, PST)", "",
            "The paper's two jobs: 128 real 512 × 512 patches with 1 ≤ n, l ≤ 25 (625 moments) "
            "and 1000 synthetic 2048 × 2048 images with 30 moments; the paper's times are "
            "from a GeForce GTX 1060. Error: relative error against our float64 plan.", ""]
    cells: dict[tuple, dict] = {}
    for d, where in ((gpu, "gpu"), (cpu, "cpu")):
        if d is None:
            continue
        dev = env_of(d).get("gpu") if where == "gpu" else "CPU, 2 cores"
        for r in d["rows"]:
            if r.get("method") != "gemm" or ("paper_s" not in r and "paper_gpu_s" not in r):
                continue
            job = ("128 patches 512²" if r["job"].startswith("patches")
                   else "1000 images 2048²")
            cells.setdefault((dev, job), {})[r["kind"]] = (
                r["median_s"], r.get("rel_err_vs_f64", r.get("rel_err")),
                r.get("paper_s", r.get("paper_gpu_s")))
    rows = []
    for (dev, job), c in cells.items():
        kinds = [k for k in ("pcet", "pct", "pst") if k in c]
        speed = [c[k][2] / c[k][0] for k in kinds]
        rows.append([dev, job, *(g(c[k][0]) if k in c else "–" for k in ("pcet", "pct", "pst")),
                     err(max(c[k][1] for k in kinds)),
                     " / ".join(g(c[k][2]) for k in kinds),
                     f"{g(min(speed))}–{g(max(speed))}×" if len(speed) > 1
                     else f"{g(speed[0])}×"])
    out += table(["device", "job", "PCET s", "PCT s", "PST s", "largest rel. error",
                  "paper s (GTX 1060)", "paper / ours"], rows)
    out += [" ".join(run_line(d, script, name) for d, script, name in (
        (gpu, "pht_gpu.py", "pht_gpu"), (cpu, "pht_cpu.py", "pht_cpu")) if d is not None), ""]


def gpu_targets(out: list[str]) -> None:
    """The GPU headline figures of every family through the public API, before and after the
    launch-replay machinery was replaced by plain CUDA graphs (same script, same GPU kind)."""
    after = load("gpu_targets_h200")
    if after is None:
        return
    before = after.get("before")
    old = {r["job"]: r for r in (before or {}).get("rows", [])}

    def time_of(r: dict | None) -> str:
        if r is None:
            return "–"
        if "median_ms" in r:
            return f"{g(r['median_ms'])} ms"
        return f"{g(r['median_us'])} µs"

    rows = []
    single = [r for r in after["rows"] if "one signal" in r["job"] and "cupyx_median_us" in r]
    for r in after["rows"]:
        if single and r is single[0]:
            rows.append(_single_signals(single, old))
        if any(r is x for x in single):
            continue
        if "target_ms" in r:
            target = f"≤ {g(r['target_ms'])} ms"
        elif "target_us" in r:
            target = f"≤ {g(r['target_us'])} µs"
        else:
            target = f"≥ {r['target_fraction']:.0%} of copy"
        if "fraction_of_copy" in r:
            was = old.get(r["job"], {}).get("fraction_of_copy")
            now = (f"{time_of(r)} ({r['fraction_of_copy']:.0%})")
            then = f"{time_of(old.get(r['job']))} ({was:.0%})" if was else "–"
        else:
            now, then = time_of(r), time_of(old.get(r["job"]))
        errs = [v for k, v in r.items() if k.startswith("rel_err") and v is not None]
        peer = (f"{g(r['cupyx_median_us'])} µs ({ratio(r['cupyx_median_us'], r['median_us'])})"
                if "cupyx_median_us" in r else "–")
        rows.append([r["job"], target, now, then, err(max(errs)) if errs else "–", peer])
    out += ["## GPU headline figures", "",
            "Each family's headline job through the public API on one GPU "
            "(`benchmarks/gpu_targets.py`): Zernike moments of order 700 of a 512² image, "
            "3-D Jacobi moments of a 512³ volume to degree 500 with reconstruction, one "
            "102 400-sample signal per call (the result ready after each call) against "
            "`cupyx.scipy.ndimage.gaussian_filter1d` in the same run, a 64-scale CWT, and a "
            "1000 × 102 400 batch as a fraction of the card's copy bandwidth. *Before*: an "
            "earlier run of the same script on the same GPU kind (its code's commit below). "
            "The one-signal calls at seven values of σ are summed up in one row (each σ: the "
            "result file). Error: relative to float64 (or, for the signals, to the exact "
            "convolution).", ""]
    out += table(["job", "target", "now", "before", "error", "cupyx (its time / ours)"],
                 merge_runs(rows))
    line = run_line(after, "gpu_targets.py", "gpu_targets_h200")
    kept = sorted({r["measured"] for r in after["rows"] if "measured" in r})
    if kept:
        line += (f" *Rows not measured in that run (disk, box) are those of the run of "
                 f"{', '.join(kept)}.*")
    if before is not None:
        e = before["meta"]
        line += (f" *Before: {e.get('device')}; {str(e.get('date'))[:10]}; torch "
                 f"{e.get('torch')}; code at commit {e.get('commit')}.*")
    out += [line, ""]


def _single_signals(rows: list[dict], old: dict) -> list[str]:
    """One line for the one-signal calls at every σ: medians, ranges and the peer."""
    def span(v: list[float]) -> str:
        return f"{g(statistics.median(v))} µs ({g(min(v))}–{g(max(v))})"

    now = [r["median_us"] for r in rows]
    then = [old[r["job"]]["median_us"] for r in rows if r["job"] in old]
    peer = [r["cupyx_median_us"] for r in rows]
    fast = [p / t for p, t in zip(peer, now, strict=True)]
    sig = [r["job"].rsplit("σ=", 1)[-1] for r in rows]
    target = rows[0]["target_us"]
    return [f"gaussian_filter1d, one signal of 102400, σ = {sig[0]}…{sig[-1]} ({len(rows)} "
            f"values): median (range)", f"≤ {g(target)} µs",
            f"{span(now)}; {sum(t <= target for t in now)} of {len(now)} ≤ target",
            span(then) if then else "–",
            err(max(max(v for k, v in r.items() if k.startswith("rel_err")) for r in rows)),
            f"{g(min(peer))}–{g(max(peer))} µs ({g(min(fast))}–{g(max(fast))}×; faster at "
            f"{sum(f > 1 for f in fast)} of {len(fast)})"]


def box(out: list[str]) -> None:
    labels = {"float32": "float32 (cuBLAS)", "fp16x3": "split float16 (fp16x3)",
              "tf32x3": "3 × TF32 (tf32x3)"}
    rows, first = [], None
    for name in ("box_tensor_cores_h200", "box_tensor_cores"):
        d = load(name)
        if d is None:
            continue
        first = first or (d, name)
        for r in d["rows"]:
            if r.get("variant") != "plan defaults":
                continue
            yn = {True: "yes", False: "no", None: "–"}
            rows.append([d["meta"]["device"], labels.get(r["precision"], r["precision"]),
                         yn[r.get("tma")], yn[r.get("replay")], g(r["forward"]["median_ms"]),
                         g(r["inverse"]["median_ms"]), g(r["both"]["median_ms"]),
                         err(r["rel_err_moments"]), err(r["rel_err_recon"])])
    d = load("box_cpu")
    if rows or d is not None:
        out += ["## Box: Legendre, Gegenbauer and Jacobi moments", ""]
    if rows:
        out += ["One 512³ volume (the 3-D Shepp–Logan phantom), Jacobi moments of total "
                "degree ≤ 500 with 23 × 23 × 23 sub-samples per voxel (α = β = 0.3), moments "
                "and reconstruction, float32 data; the products as cuBLAS float32 (the peer "
                "in the same run) or on tensor cores. Errors: relative errors of the moments "
                "and of the reconstruction against float64.", ""]
        out += table(["GPU", "products", "TMA loads", "launches replayed", "moments ms",
                      "reconstruction ms", "both ms", "moments error",
                      "reconstruction error"], rows)
        out += [run_line(first[0], "box_tensor_cores.py", first[1]), ""]
    if d is not None:
        rows = [["×".join(map(str, r["shape"])), r["order"], r["k"],
                 f"({r['alpha']}, {r['beta']})", g(r["forward_ms"]), g(r["inverse_ms"]),
                 err(r["rel_err_moments_vs_f64"]), g(r["psnr_db"])]
                for r in d["speed"] if r["variant"].startswith("engine (default")]
        rows = [merged(rs) for rs in grouped(rows, lambda r: tuple(r[:3])).values()]
        out += ["On the CPU: Jacobi moments of scikit-image's camera photograph, float32, "
                "k × k points per pixel, α and β the Jacobi parameters; moments and "
                "reconstruction timed separately; PSNR of the reconstruction.", ""]
        out += table(["image", "order", "k", "α, β", "moments ms", "reconstruction ms",
                      "moments error", "PSNR dB"], rows)
        out += [run_line(d, "box_cpu.py", "box_cpu"), ""]


def _scipy_grid(name: str) -> list[list]:
    """One row per dtype of a scipy-grid result, derivative orders pooled."""
    d = load(name)
    if d is None:
        return []
    m = d["meta"]
    rows = []
    for dtype in ("float32", "float64"):
        every = [r for r in d["rows"] if r["dtype"] == dtype]
        sel = [r for r in every if num(r.get("ratio"))]
        if not sel:
            continue
        rs = [r["ratio"] for r in sel]
        acc = sum(1 for r in every if r["fm_err"] <= 1.0001 * r["scipy_err"] + 1e-15)
        dev = "CPU, 2 cores" if m["device"] == "cpu" else m.get("name")
        rows.append([dev, m.get("peer", "scipy.ndimage"), dtype, len(sel),
                     sum(1 for x in rs if x > 1), g(statistics.median(rs)), g(min(rs)),
                     g(max(rs)), f"{acc} of {len(every)}"])
    return rows


def signal(out: list[str]) -> None:
    out += ["## Signals: Gaussian smoothing and Morlet wavelets", "",
            "### Gaussian filters against scipy.ndimage and cupyx", "",
            "A grid of 1-D signals (10³ to 10⁶ samples), images (512², 2048²) and a 128³ "
            "volume, every axis, σ from 0.5 to 8192, derivative orders 0–2, float32 and "
            "float64; each cell timed for fastmoments (`method=\"auto\"`) and the peer in the "
            "same run, except the few where the peer's cost is beyond the run's budget. "
            "Speed-up: peer time / ours. Accuracy: relative RMS error of each against the "
            "exact float64 convolution (for an untimed peer cell, that of its kernel applied "
            "exactly); *as accurate or better* counts the cells, timed or not, where ours is no "
            "further from it than the peer's.", ""]
    names = ("signal_scipy_grid_cpu", "signal_scipy_grid_cuda")
    out += table(["device", "peer", "dtype", "cells timed", "faster than the peer",
                  "median speed-up", "lowest", "highest", "as accurate or better"],
                 [r for name in names for r in _scipy_grid(name)])
    out += [" ".join(run_line(d, "signal_scipy_grid.py", name) for name in names
                     if (d := load(name)) is not None), ""]
    d = load("signal_numba")
    if d is not None:
        gs = [r for r in d["rows"] if r["section"] == "gaussian" and r["threads"] == 1]

        def draw(ax):
            for n, c in ((100000, "C0"), (1000000, "C1")):
                s = sorted((r["sigma"], r["auto_ms"], r["scipy_ms"]) for r in gs if r["n"] == n)
                ax.plot([x[0] for x in s], [x[1] for x in s], "-o", color=c, ms=3,
                        label=f"fastmoments, N = {n:,}")
                ax.plot([x[0] for x in s], [x[2] for x in s], "--s", color=c, ms=3,
                        label=f"scipy.ndimage, N = {n:,}")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("σ (samples)")
            ax.set_ylabel("ms, one thread")
            ax.set_title("gaussian_filter1d on the CPU, float64, time against σ", fontsize=9)
        fig = plot("bench_signal_cpu_sigma", draw)
        if fig:
            errs = [r["auto_err"] for r in gs] + [r["scipy_err"] for r in gs]
            out += [fig, "", f"Same run, float64, one thread; relative errors against the "
                    f"exact convolution between {err(min(errs))} and {err(max(errs))} for "
                    "both. " + run_line(d, "signal_numba.py", "signal_numba"), ""]
    out += ["### Morlet wavelet transform on the CPU", "",
            "A 64-scale CWT (scales 2 to 1024 samples, ξ = 6) of 102 400 float32 samples; "
            "error: median relative error of the magnitudes against the exact float64 "
            "transform.", ""]
    d = load("signal_numba")
    if d is not None:
        rows = [[r["impl"], r["threads"], g(r["ms"]), f"{g(r['ms_min'])}–{g(r['ms_max'])}",
                 err(r["mag_err"])] for r in d["rows"] if r["section"] == "cwt"
                and "engine=numba" not in r["impl"] and "FFTW_MEASURE" not in r["impl"]]
        out += table(["implementation", "threads", "median ms", "range ms", "error"], rows)
        line = run_line(d, "signal_numba.py", "signal_numba")
        c = load("signal_cpu")
        peers = {r["impl"].split()[0]: r for r in (c or {}).get("rows", [])
                 if r["impl"].split()[0] in ("PyWavelets", "ssqueezepy")}
        if peers:
            line += (" In an earlier run (`benchmarks/results/signal_cpu.md`), float64: "
                     + "; ".join(f"{k} {g(r['ms'])} ms (error {err(r['mag_err_median'])})"
                                 for k, r in sorted(peers.items())) + ".")
        out += [line, ""]
    _batch(out)


def _batch(out: list[str]) -> None:
    runs = [(n, load(n)) for n in ("signal_batch_cuda_h200",)]
    runs = [(n, d) for n, d in runs if d is not None]
    if not runs:
        return
    out += ["### A batch of signals on a GPU", "",
            "A batch of 1000 × 102 400 float32 signals through the public plan call "
            "(Gaussian of derivative order 0–2, or Morlet), against "
            "`cupyx.scipy.ndimage.gaussian_filter1d` in the same run (Gaussians with σ ≤ "
            "64; its cost grows with σ): time per batch and, in brackets, bytes read and "
            "written per second as a share of a plain device-to-device copy on the same "
            "GPU. Error: largest error against float64, relative to the largest output "
            "(the range over σ).", ""]
    for name, d in runs:
        jobs = d["jobs"]
        sigmas = sorted({r["sigma"] for r in jobs})
        kinds = sorted({r["order"] for r in jobs}, key=lambda o: (o is None, o))

        def what(order) -> str:
            return "Morlet" if order is None else f"Gaussian, order {order}"

        def error(r: dict) -> float:
            return r.get("cuda_error") if r.get("cuda_takes") else r.get("triton_error")

        def pct(x: float | None) -> str:
            return "–" if x is None else f"{100 * x:.0f} %" if x >= 0.01 else f"{100 * x:.1g} %"

        def span(v: list[float]) -> str:
            return err(v[0]) if len(v) == 1 or err(min(v)) == err(max(v)) \
                else f"{err(min(v))}–{err(max(v))}"

        rows = []
        for order in kinds:
            at = {r["sigma"]: r for r in jobs if r["order"] == order}
            rows.append([f"fastmoments, {what(order)}",
                         *(f"{g(at[s]['public_ms'])} ms ({pct(at[s]['public_fraction'])})"
                           if s in at else "–" for s in sigmas),
                         span([error(r) for r in at.values() if error(r) is not None])])
        for order in kinds:
            at = {r["sigma"]: r for r in jobs if r["order"] == order and r.get("cupyx_ms")}
            if at:
                rows.append([f"cupyx, {what(order)}",
                             *(f"{g(at[s]['cupyx_ms'])} ms "
                               f"({pct(at[s].get('cupyx_fraction'))})"
                               if s in at else "–" for s in sigmas), "–"])
        out += table(["call", *(f"σ = {g(s)}" for s in sigmas), "error"], rows)
        out += [run_line(d, "signal_batch_cuda.py", name), ""]


def features(out: list[str]) -> None:
    cells: dict[tuple, dict] = {}
    for name in ("features_cuda", "features_cpu"):
        d = load(name)
        if d is None:
            continue
        for r in d["rows"]:
            pairs = "pair" in r["impl"] or "pdist" in r["impl"]
            if ((r["dtype"] != "float32" and not pairs) or (pairs and r["dtype"] != "float64")
                    or "algorithm=engine" in r["impl"]):
                continue
            side = "peer" if "peer" in r["impl"] else "ours"
            cells.setdefault((d["meta"]["device"], r["task"], r["dtype"]), {})[side] = r
    rows = []
    for (dev, task, dtype), c in cells.items():
        ours, peer = c.get("ours"), c.get("peer")
        if ours is None or peer is None:
            continue
        rows.append([dev, task, dtype, peer["impl"].replace(" (peer, CPU)", " (CPU)")
                     .replace(" (peer)", ""), g(peer["median_s"] * 1e3),
                     g(ours["median_s"] * 1e3), ratio(peer["median_s"], ours["median_s"]),
                     err(ours.get("max_err_rel_to_max")), err(peer.get("max_err_rel_to_max"))])
    if not rows:
        return
    rows = [merged(rs) for rs in grouped(rows, lambda r: (r[1], r[2], r[3])).values()]
    out += ["## Moment features: the GB2312 character experiment", "",
            "The 6,763 GB2312 characters as 24 × 24 glyphs (the Zernike thesis's Chapter 6): "
            "features, and the all-pairs distance histogram, against a dense matrix product "
            "and SciPy in the same run. Error: largest error relative to the largest "
            "feature (float64 rows: `benchmarks/results/features_*.md`).", ""]
    out += table(["device", "task", "dtype", "peer", "peer ms", "ours ms", "peer / ours",
                  "our error", "peer error"], rows)
    runs = [(name, d) for name in ("features_cuda", "features_cpu")
            if (d := load(name)) is not None]
    out += [" ".join(f"Whole experiment (`fastmoments characters`): "
                     f"{g(d['experiment']['wall_s'])} s on {d['meta']['device']}. "
                     + run_line(d, "features_characters.py", name) for name, d in runs), ""]


def scale_out(out: list[str]) -> None:
    out += ["## Scale-out: several GPUs, Dask, collections", ""]
    d = load("multigpu")
    if d is not None:
        out += ["The same call with `device=\"cuda:0\"` and with two GPUs, same process, same "
                "run: time with one GPU → with two; *host*: NumPy arrays in host memory in "
                "(the copies timed), *on GPU 0*: a tensor already on the first GPU (also where "
                "the result file marks no input); difference: largest relative difference "
                "between the two results (host / on GPU 0 where they differ).", ""]
        out += table(["job", "host: 1 → 2 GPUs, ms", "speed-up", "on GPU 0: 1 → 2 GPUs, ms",
                      "speed-up", "speed-up target", "difference"],
                     _multigpu_rows(d["rows"]))
        out += [run_line(d, "multigpu.py", "multigpu"), ""]
    rows = []
    for name in ("collection_gpu", "collection_cpu"):
        c = load(name)
        if c is None:
            continue
        p = c["params"]
        for r in c["runs"]:
            rows.append([c["device"], f"{c['store']['n_images']} × {c['store']['size']}², "
                         f"{p['family']} order {p['orders']}", r["setup"], g(r["seconds"]),
                         f"{r['images_per_s']:.0f}", err(r["max_rel_diff_vs_first"])])
    if rows:
        out += ["`fastmoments features` over a Zarr store of glyph images (reads and writes "
                "included); difference: largest relative difference against the first "
                "set-up's features.", ""]
        out += table(["device", "store", "set-up", "seconds", "images / s", "difference"],
                     rows)
        out += [run_line(load("collection_gpu") or {}, "collection_gpu.py", "collection_gpu"),
                ""]
    d = load("dask_cpu")
    if d is not None:
        workers = "2 processes x 1 thread"
        sel = [r for r in d["results"] if r["workers"] == workers
               and (r["job"] == "features" or "(auto)" in r["what"])]
        inputs = list(dict.fromkeys(r["input"] for r in sel))
        rows = []
        for (job, chunks), rs in grouped(sel, lambda r: (
                r["job"], r["what"].rsplit(", ", 1)[-1].removeprefix("chunks of "))).items():
            at = {r["input"]: r for r in rs}
            rows.append([job, chunks, *(c for i in inputs for c in (
                [g(at[i]["single_s"]), g(at[i]["dask_s"]),
                 f"{at[i]['dask_s'] / at[i]['single_s']:.2f}"] if i in at else ["–"] * 3))])
        out += [f"Dask `LocalCluster` ({workers}) against one process on the same "
                "2-core CPU, the data going from the client back to the client (`compute`) or "
                "staying on the workers (`persist`); `fastmoments.dask`: the results equal the "
                "one-process ones, which the tests check:", ""]
        out += table(["job", "chunks", *(h for i in inputs for h in (
            f"{i.rpartition('(')[2].rstrip(')') or i}: one process s", "Dask s",
            "Dask / one"))], rows)
        out += [run_line(d, "dask_cpu.py", "dask_cpu"), ""]
    d = load("scaling_estimate")
    if d is not None:
        rows = {r["gpus"]: r for r in d["rows"]}
        out += ["An estimate on paper, nothing timed (`benchmarks/scaling_estimate.py` "
                "extrapolates the two-GPU measurements above; its result file has the table): "
                + "; ".join(f"{n} GPUs {rows[n]['images_per_s']:.0f} images/s, "
                            f"{g(rows[n]['hours_for_1e9_images'])} h for 10⁹ images"
                            for n in sorted(rows) if n in (8, 64, 512))
                + " (through Dask arrays, whose workers write their chunks; `run_features` "
                "writes every chunk from the client, a limit not measured past the two-GPU "
                "run).", ""]


def _input_of(what: str) -> tuple[str, str, str]:
    """A multi-GPU row's job, where its input starts (``"host"`` or ``"gpu"``) and what its
    mark says: ``"(host NumPy in)"`` and the like mean host memory, ``"(tensor on GPU 0)"``
    the first GPU; a row without such a mark starts on the first GPU."""
    stem, sep, mark = what.rpartition(" (")
    mark = mark.rstrip(")")
    if not sep or not what.endswith(")"):
        return what, "gpu", ""
    if "tensor" in mark or "on GPU" in mark:
        return stem, "gpu", mark
    if "NumPy" in mark or "host" in mark:
        return stem, "host", mark
    return what, "gpu", ""


def _multigpu_rows(rows: list[dict]) -> list[list[str]]:
    """One line per job of ``multigpu.json`` (the paper's Table 8 rows, job letters with a
    prime, left to its result file), host and GPU inputs side by side."""
    cells: dict[tuple, dict] = {}
    for r in rows:
        if r["job"].endswith("'"):
            continue
        stem, where, mark = _input_of(r["what"])
        cells.setdefault((r["job"], stem), {})[where] = (r, mark)
    out = []
    for (_, stem), c in cells.items():
        mark = c.get("host", (None, "host NumPy in"))[1]
        row = [stem if mark == "host NumPy in" else f"{stem} (host: {mark})"]
        c = {where: c[where][0] for where in ("host", "gpu") if where in c}
        for where in ("host", "gpu"):
            r = c.get(where)
            row += ([f"{g(r['ms_1gpu'])} → {g(r['ms_2gpu'])}", f"{r['speedup']:.2f}×"]
                    if r else ["–", "–"])
        targets = [f"≥ {g(r['target'])}×" if r.get("target") else "–" for r in c.values()]
        row += [joined(targets), joined([err(r["rel_err_2_vs_1"]) for r in c.values()])]
        out.append(row)
    return out


def ball(out: list[str]) -> None:
    """Shape retrieval on real proteins with 3-D Zernike descriptors (one row per device)."""
    rows, lines = [], []
    for kind in ("cpu", "cuda"):
        d = load(f"ball_retrieval_{kind}")
        if d is None:
            continue
        p, t = d["parameters"], d["time_per_query_s"]
        e = env_of(d)
        rows.append([e.get("gpu") or "CPU", f"{d['queries']} ({len(d['set']['structures'])} x "
                     f"{p['rotations']})", f"{p['size']}³, order {p['order']}",
                     f"{d['precision_top1']['raw']:.3f}",
                     f"{d['precision_top1']['normalised']:.3f}",
                     g(1e3 * t["density"]["median"]), g(1e3 * t["descriptor"]["median"]),
                     err(d["float32_vs_float64_descriptor_error"])])
        lines.append(run_line(d, "ball_retrieval.py", f"ball_retrieval_{kind}"))
    if rows or load("ball_moments_cpu") or load("ball_moments_h200"):
        out += ["## 3-D Zernike moments: protein retrieval, speed, peers and high orders", ""]
    if not rows:
        return
    out += ["Shape retrieval: the 15 structures of Debian's mustang-testdata, each rotated "
            "at random (atoms rotated, density rebuilt): the share of queries whose nearest "
            "descriptor (Euclidean, raw or divided by its norm) is their own structure, and the "
            "time per query.", ""]
    out += table(["device", "queries", "volume", "top-1 raw", "top-1 normalised",
                  "density ms", "descriptor ms", "float32 error"], rows)
    out += [*lines, ""]


def first_calls(out: list[str]) -> None:
    d = load("first_calls")
    if d is None:
        return
    cells: dict[str, dict] = {}
    for r in d["rows"]:
        if r.get("cache") not in ("cold", "warm") or r["case"].startswith("import"):
            continue
        first = (r.get("first") or {}).get("median")
        total = next(((r.get(k) or {}).get("median") for k in ("in_process", "total")
                      if r.get(k)), None)
        cells.setdefault(r["case"], {})[r["cache"]] = (first, total)
    rows = [[case, g(c.get("cold", (None,) * 2)[0]), g(c.get("cold", (None,) * 2)[1]),
             g(c.get("warm", (None,) * 2)[0]), g(c.get("warm", (None,) * 2)[1])]
            for case, c in cells.items()]
    m = d["meta"]
    out += ["## First calls in a fresh process", "",
            "Each case in a new Python process, as a user meets it, with empty caches (numba's "
            "compiled kernels and the fitted filter coefficients: a new installation) and "
            "filled ones (every later process); *import + first call* includes `import torch` "
            "and, for the command line, the interpreter's start.", ""]
    out += table(["case", "empty caches: first call s", "import + first call s",
                  "filled caches: first call s", "import + first call s"], rows)
    out += [f"*{m.get('machine', 'CPU')}, {m.get('cpu_count', 2)} cores, quiet; "
            f"{str(m.get('date', '?'))[:10]}; torch {m.get('torch')}. Script "
            "`benchmarks/first_calls.py`, results `benchmarks/results/first_calls.json` "
            "(and `.md`).*", ""]


def _median(v):
    """The median of a list of times, or the value itself."""
    if isinstance(v, list) and v:
        return sorted(v)[len(v) // 2]
    return v


def ball_speed(out: list[str]) -> None:
    """3-D Zernike moments: peers in the same run, batches, and high orders."""
    cpu, gpu = load("ball_moments_cpu"), load("ball_moments_h200")
    if cpu is None and gpu is None:
        return
    if cpu and cpu.get("peers"):
        rows = [[r["peer"], r["order"], g(r["peer_s"]), g(r["ours32_s"]), g(r["ours64_s"]),
                 ratio(r["peer_s"], r["ours32_s"]),
                 err(r.get("peer_difference")) if r.get("peer_finite", True)
                 else f"{r.get('peer_nonfinite')} peer values not finite",
                 err(r.get("ours32_error"))]
                for r in cpu["peers"] if "peer_s" in r]
        out += ["One 100³ volume on the CPU, each peer on its own ball and ours on the same ball; "
                "*difference*: largest relative difference of the descriptors (the peers "
                "integrate each voxel exactly, we sample it); *error*: our float32 against "
                "float64.", ""]
        out += table(["peer", "order", "peer s", "ours float32 s", "ours float64 s",
                      "peer / ours", "difference", "float32 error"], rows)
        out += [run_line(cpu, "ball_moments.py", "ball_moments_cpu"), ""]
    gp = [r for r in (gpu or {}).get("gpu_peers", []) if "peer_s" in r]
    if gp:
        out += ["The same volume on one H200: ZMPY3D's CuPy version, and ours one volume per "
                f"call and in batches of {gp[0]['batch']} (time per volume).", ""]
        out += table(["peer", "order", "peer s", "ours s, one", "ours s, batched",
                      "peer / ours, one", "peer / ours, batched", "difference",
                      "float32 error"],
                     [[r["peer"], r["order"], g(r["peer_s"]), g(r["ours32_one_s"]),
                       g(r["ours32_batched_s"]), ratio(r["peer_s"], r["ours32_one_s"]),
                       ratio(r["peer_s"], r["ours32_batched_s"]), err(r["peer_difference"]),
                       err(r["ours32_error"])] for r in gp])
    cells: dict[tuple, list] = {}
    for d in (cpu, gpu):
        if d is None:
            continue
        dev = d.get("meta", {}).get("device_name", "?")
        speed = [r for r in d.get("speed", []) if not r.get("other_stage")]  # not chosen:
        pr = d.get("proteins")  # in the result file only
        for r in speed + ([{**pr, "proteins": True}] if pr else []):
            key = (dev, "×".join(map(str, r["shape"])) + (" proteins" if "proteins" in r
                                                          else ""), r["order"], r["dtype"])
            cells.setdefault(key, []).append(r)
    devices = list(dict.fromkeys(key[0] for key in cells))
    names = {dev: "CPU" if dev in ("x86_64", "cpu") else dev for dev in devices}
    rows = []
    for job in dict.fromkeys(key[1:] for key in cells):
        row = list(job)
        for dev in devices:
            rs = cells.get((dev, *job))
            row += ["; ".join(f"{r['batch']}: {g(r['volumes_per_s'])}" for r in rs),
                    err(max(r.get("descriptor_error") or 0 for r in rs))] if rs else ["–"] * 2
        rows.append(row)
    if rows:
        out += ["Batches of volumes (random, or rotated protein densities); *batch: volumes/s* "
                "gives the volumes per second at each batch size:", ""]
        out += table(["volume", "order", "dtype",
                      *(h for dev in devices for h in (f"batch: volumes/s, {names[dev]}",
                                                       f"descriptor error, {names[dev]}"))],
                     rows)
    if gpu and gpu.get("high_order"):
        rows = []
        for r in gpu["high_order"]:
            nmse = r.get("nmse_by_order", {})
            top = max(nmse, key=int) if nmse else None
            peak = r.get("peak_device_bytes")
            rows.append(["×".join(map(str, r["shape"])), r["order"], r["k"], r["dtype"],
                         g(r["build_s"]), g(r["forward_s"]), g(r.get("reconstruct_s_each")),
                         g(peak / 2**30) if peak else "–",
                         f"{float(nmse[top]):.2e} (order {top})" if top else "–"])
        out += ["High orders on one GPU: forward time and the reconstruction's NMSE.", ""]
        out += table(["volume", "order", "k", "dtype", "build s", "forward s",
                      "reconstruction s", "peak GiB", "NMSE"], rows)
        out += [run_line(gpu, "ball_moments.py", "ball_moments_h200"), ""]


def _objects_threads(cpu: dict) -> str:
    """The per-object CPU run's thread setting, as its result file records it."""
    meta = cpu.get("meta", {})
    if meta.get("omp_num_threads"):
        return f"OMP_NUM_THREADS={meta['omp_num_threads']}"
    limit = meta.get("thread_limit")
    return "OMP_NUM_THREADS unset" + (f", {limit} CPUs usable" if limit else "")


def objects_speed(out: list[str]) -> None:
    """Per-object Zernike features against CellProfiler's code and cp_measure."""
    cpu, gpu = load("objects_cpu"), load("objects_gpu_h200")
    if cpu is None:
        return
    out += ["## Per-object features", "",
            "Zernike features of every nucleus of stardist's nuclei image (512², 125 objects) "
            "and its 5120² tiling (12,500 objects), degree 9, CellProfiler's convention, each "
            f"tool with its default threads ({_objects_threads(cpu)}); *difference*: our "
            "largest absolute difference from the reference tool (centrosome, CellProfiler's "
            "code, where it runs; its memory grows past the machine's at 5120²). Times on this "
            "shared machine move between runs (features.md gives their range).", ""]
    cells: dict[tuple, dict] = {}
    for r in cpu["rows"]:
        cells.setdefault((r["size"], r["features"]), {})[r["tool"]] = r
    rows = []
    for (size, features), c in cells.items():
        ours = c.get("fastmoments")
        if ours is None or "median_s" not in ours:
            continue
        timed = [c[t] for t in ("centrosome", "cp_measure") if "median_s" in c.get(t, {})]
        best = min(timed, key=lambda r: r["median_s"]) if timed else None
        rows.append([f"{size}²", features, g(ours["median_s"]),
                     *(g(c[t]["median_s"]) if "median_s" in c.get(t, {}) else "not run"
                       for t in ("centrosome", "cp_measure")),
                     best["tool"] if best else "–",
                     f"{g(best['median_s'] / ours['median_s'])}×" if best else "–",
                     err(ours.get("max_abs_diff")), str(ours.get("reference"))])
    rows = [merged(rs) for rs in grouped(rows, lambda r: r[0]).values()]
    out += table(["image", "features", "ours s", "centrosome s", "cp_measure s",
                  "faster peer", "its time / ours", "our difference", "from"], rows)
    out += [run_line(cpu, "objects_cpu.py", "objects_cpu"), ""]
    if gpu:
        rows = [[r.get("order", 9), r["convention"], g(r["total_ms"]), g(r["geometry_ms"]),
                 g(r.get("sums_ms")), g(r["objects_per_s"]), g(r.get("host_labels_ms")),
                 g(r.get("torch_route_ms")),
                 "–" if r.get("max_diff_vs_cpu") is None else err(r["max_diff_vs_cpu"])]
                for r in gpu["rows"]]
        out += [f"The 5120² image ({gpu['rows'][0]['objects']} objects) on one GPU: the whole "
                "call on labels already there, its centres and radii (*geometry*) and its "
                "moment sums, the whole call on NumPy labels (*from the host*: their copy to "
                "the GPU included), against the torch route (`method=\"torch\"`) in the "
                "same run; *difference*: largest absolute difference of the features from "
                "the CPU's (target: ≤ 20 ms at degree 9).", ""]
        out += table(["degree", "convention", "total ms", "geometry ms", "sums ms",
                      "objects/s", "from the host ms", "torch route ms",
                      "difference from CPU"], rows)
        out += [run_line(gpu, "objects_gpu.py", "objects_gpu_h200"), ""]


def signal_more(out: list[str]) -> None:
    """The newer signal transforms, each beside its peer in the same run."""
    rows = []
    d = load("signal_icwt")
    for r in (d or {}).get("rows", []):
        dtype = f", {r['dtype']}" if "dtype" in r else ""
        rows.append([f"cwt + icwt (single integral), {r['signal']}, {r['n_scales']} "
                     f"scales{dtype}", g(_median(r["fm_single-integral_round_trip_s"])),
                     "ssqueezepy cwt + icwt", g(_median(r["ssq_round_trip_s"])),
                     "SNR in the band, dB", f"{r['fm_single-integral_snr_band']:.1f}",
                     f"{r['ssq_snr_band']:.1f}"])
    d = load("signal_nan")
    for r in (d or {}).get("rows", []):
        rows.append([f"NaN-aware Gaussian, σ = {g(r['sigma'])}, 10 % NaN",
                     g(_median(r["fastmoments_ms"]) / 1e3), "astropy convolve",
                     g(_median(r["astropy_ms"]) / 1e3), "relative RMS error",
                     err(r["fastmoments_rel_rms_err"]), err(r["astropy_rel_rms_err"])])
    d = load("signal_dog")
    for r in (d or {}).get("rows", []):
        rows.append([f"CWT, {r['wavelet']}, {r['n_scales']} scales",
                     g(_median(r["fastmoments_s"])), "PyWavelets cwt", g(_median(r["pywt_s"])),
                     "largest error", err(r["fastmoments_err_max"]), err(r["pywt_err_max"])])
    for r in (d or {}).get("morse", []):
        rows.append([f"CWT, Morse β={g(r['beta'])} γ={g(r['gamma'])}, {r['n_scales']} scales, "
                     f"{r['dtype']}", g(_median(r["fastmoments_reflect_s"])),
                     "ssqueezepy cwt", g(_median(r["ssqueezepy_default_s"])),
                     "error", err(r["fastmoments_err"]), err(r["ssqueezepy_err"])])
    d = load("signal_stream")
    for r in (d or {}).get("rows", []):
        rows.append([f"stream, {r['method']} (delay {r['delay']})", g(r["stream_s"]),
                     "one-shot call", g(r["one_shot_s"]), "largest difference between the two",
                     err(r["max_abs_diff"] / r["max_abs_ref"]), "–"])
    d = load("signal_hop")
    for r in (d or {}).get("rows", []):
        if r["hop"] != 16:
            continue
        base = next((b for b in d["rows"] if b["wavelet"] == r["wavelet"] and b["hop"] == 1),
                    None)
        rows.append([f"CWT hop = {r['hop']}, {r['wavelet']}", g(r["seconds"]), "hop = 1",
                     g(base["seconds"]) if base else "–", "memory growth, MB",
                     g(r["peak_rss_growth_mb"]), g(base["peak_rss_growth_mb"]) if base else "–"])
    if not rows:
        return
    out += ["### Inverse CWT, more wavelets, NaN-aware and streaming smoothing", "",
            "CPU, one thread, the peer in the same run (result files `signal_icwt`, "
            "`signal_nan`, `signal_dog`, `signal_stream`, `signal_hop`; each names its "
            "machine and load).", ""]
    out += table(["job", "fastmoments s", "peer", "peer s", "measure", "fastmoments", "peer's"],
                 merge_runs(_pair_dtypes(rows), keyed=False, same=(2, 4)))


def _pair_dtypes(rows: list[list[str]]) -> list[list[str]]:
    """Rows that differ only by a trailing ``, float64`` / ``, float32`` in one row each, their
    cells ``a / b`` where they differ."""
    out, seen = [], {}
    for r in rows:
        stem, _, dtype = r[0].rpartition(", ")
        if dtype not in ("float32", "float64") or stem not in seen:
            if dtype in ("float32", "float64"):
                seen[stem] = len(out)
            out.append(list(r))
            continue
        first = out[seen.pop(stem)]
        first[0] = f"{stem}, {first[0].rpartition(', ')[2]} / {dtype}"
        for i in range(1, len(r)):
            if first[i] != r[i]:
                first[i] = f"{first[i]} / {r[i]}"
    return out


def busy_machine(out: list[str]) -> None:
    d = load("threads_busy_2cpu")
    if d is None:
        return
    runs = d["runs"]
    out += ["## A busy machine", "",
            "Public CPU calls in warm processes restricted to 2 CPUs, idle and while another "
            "process keeps one of the two busy, with the threads fastmoments chooses against "
            "`OMP_NUM_THREADS=1`; *ratio* = chosen / one thread (the target: busy ≤ 1.5, idle "
            "≤ 1 within the spread). *before*: torch's own thread count for every call.", ""]
    header = ["call"]
    for label in runs:
        header += [f"{label}: idle ratio", f"{label}: busy ratio"]
    header += ["one thread, idle ms"]
    names = list(next(iter(runs.values()))["rows"])
    rows = []
    for name in names:
        row = [name]
        last = None
        for run in runs.values():
            r = run["rows"].get(name)
            if r is None:
                row += ["–", "–"]
                continue
            last = r
            row += [g(r["idle"]["median"] / r["idle, 1 thread"]["median"], 2),
                    g(r["busy"]["median"] / r["busy, 1 thread"]["median"], 2)]
        row.append(g(1e3 * last["idle, 1 thread"]["median"]) if last else "–")
        rows.append(row)
    out += table(header, rows)
    info = "; ".join(f"{label}: commit {run['commit']}, {run['date']}, {run['machine']}"
                     for label, run in runs.items())
    out += [f"*{info}. Script `benchmarks/threads_busy.py`, results "
            "`benchmarks/results/threads_busy_2cpu.json` (and `.md`).*", ""]


PAPER_PICKS = [
    # (paper, grid, match, label, published unit, paper column, ours column)
    ("zernike-thesis", "T5.1", {"k": "1", "T": "700"}, "ZM 512², T=700, k=1, float32", "s",
     "paper s", "ours s"),
    ("zernike-thesis", "T5.1", {"k": "11", "T": "700"}, "ZM 512², T=700, k=11, float32", "s",
     "paper s", "ours s"),
    ("zernike-thesis", "T5.7", {"k": "11", "T": "700"}, "PZM 512², T=700, k=11, float32", "s",
     "paper s", "ours s"),
    ("relayout", "T10", {"n": "34", "size": "1024"}, "Z34,m (all m), 1024²", "ms", "paper ms",
     "ours ms"),
    ("relayout", "T9", {"moment": "Z25,13", "size": "1024"}, "one moment Z25,13, 1024²", "µs",
     "paper us", "ours us"),
    ("jacobi-thesis", "T2", {"k": "23", "order": "1000"}, "1024² image, order 1000, k=23",
     "ms", "paper ms", "ours ms"),
    ("jacobi-thesis", "T3", {"k": "23", "order": "500"}, "volume, order 500, k=23 (ours 256³)",
     "ms", "paper ms", "ours ms"),
    ("pht", "T6", {"transform": "pcet"}, "PCET, 128 patches 512²", "s", "paper GPU s",
     "ours GPU s"),
    ("pht", "T5", {"transform": "pcet", "size": "2048"}, "PCET, 1000 images 2048²", "s",
     "paper GPU s", "ours GPU s"),
]


def papers(out: list[str]) -> None:
    out += ["## The papers' published times beside ours", "",
            "Each paper's time is on its own hardware, ours on the GPU named; a ratio "
            "compares implementations and machines together. The papers are listed in "
            "{doc}`bibliography`.", ""]
    rows = []
    for paper, grid, match, label, unit, pcol, ocol in PAPER_PICKS:
        for r in paper_rows(paper):
            if r.get("grid") == grid and all(r.get(k) == v for k, v in match.items()):
                acc = r.get("accuracy") or r.get("GPU accuracy") or ""
                acc = acc.replace("GPU ", "").split(";")[0].split(" (")[0]
                acc = err(acc) if num(acc) is not None else acc
                dev = r.get("our device") or r.get("our GPU") or ""
                if not dev:  # the GPU cells come from the paper's cell store or its GPU file
                    cells = (load(f"papers/{paper}_cells") or {}).get("cells", [])
                    devs = sorted({c.get("device", "") for c in cells
                                   if c.get("device_type") == "cuda"} - {""})
                    dev = ", ".join(devs)
                if acc in ("", "–") and r.get("source") == "box_gpu.json":
                    # the cell was taken from box_gpu.json: its error is recorded there
                    box = [t for t in (load("box_gpu") or {}).get("timings", [])
                           if t["job"] == "2d" and t["order"] == num(r["order"])
                           and t["k"] == num(r["k"]) and (t["alpha"], t["beta"]) == (0.3, 0.3)
                           and t["variant"].startswith("engine default")]
                    acc = err(box[0]["rel_err_moments_vs_f64"]) if len(box) == 1 else "–"
                dev = dev.replace(" (CUDA events)", "")
                rows.append([PAPER_HARDWARE[paper], label, f"{r[pcol]} {unit}",
                             f"{g(r[ocol])} {unit}", dev if dev != "not run" else "–",
                             ratio(r[pcol], r[ocol]), acc or "–"])
                break
    asft = [r for r in paper_rows("asft") if r.get("grid") == "claim"]
    sg = load("signal_gpu") or {}
    for r in asft[:2]:
        # the error of the same call, from the run the paper page took its time from
        ours = num(r["ours ms"]) or math.nan
        same = [x for x in sg.get("rows", []) if x.get("kind") == "morlet"
                and x.get("sigma") == 8192 and x.get("n") == 102400
                and x.get("dtype") == "float32" and abs(x["ms"] - ours) <= 0.005 * ours]
        what = r[""] + (" (its time derived from the 413.6× claim)" if "truncated" in r[""]
                        else "")
        rows.append([PAPER_HARDWARE["asft"], f"Morlet, N = 102 400, σ = 8192: {what}",
                     f"{r['paper ms']} ms", f"{r['ours ms']} ms",
                     str(sg.get("env", {}).get("device", "–")),
                     ratio(r["paper ms"], r["ours ms"]),
                     err(same[0]["rel_err"]) if len(same) == 1 else "–"])
    out += table(["job", "paper's hardware", "published", "ours", "our GPU", "published / ours",
                  "our error"], merge_runs([[r[1], r[0], *r[2:]] for r in rows], same=(1, 4)))
    pages = sorted((RESULTS / "papers").glob("*.md"))
    if pages:
        out += ["Every table and figure of each paper, cell by cell, with the accuracy of "
                "each cell, is in `benchmarks/results/papers/` ("
                + ", ".join(f"`{page.name}`" for page in pages)
                + "; `python benchmarks/papers.py PAPER --run` rewrites them).", ""]


def main() -> int:
    out = [
        "# Benchmarks", "",
        "<!-- generated by benchmarks/report_docs.py from benchmarks/results/: do not edit -->",
        "",
        "What fastmoments costs and how accurate it is, beside the library a user would "
        "otherwise call where there is one, timed in the same run on the same device. Unless "
        "a table says otherwise, times are medians over repeated calls after a warm-up (on a "
        "GPU, CUDA-event times with the data already on the device) and errors are measured "
        "against a float64 reference. Below "
        "each table: the device, the date, the versions, the script that measured it and "
        "its result file, from which every number here is read. The CPU runs used a "
        "2-core x86_64 virtual machine shared with other jobs, so their times are upper "
        "bounds (each result file records the load). Where a row gathers variants of one "
        "job (`k=1 / 11`), its cells read `a / b` in the same order, or hold one value "
        "that holds for each.", "",
    ]
    papers(out)
    gpu_targets(out)
    disk(out)
    pht(out)
    box(out)
    ball(out)
    ball_speed(out)
    signal(out)
    signal_more(out)
    features(out)
    objects_speed(out)
    scale_out(out)
    first_calls(out)
    busy_machine(out)
    text = "\n".join(out).rstrip() + "\n"
    if not PAGE.exists() or PAGE.read_text() != text:
        PAGE.write_text(text)
    where = PAGE.relative_to(ROOT) if PAGE.is_relative_to(ROOT) else PAGE
    print(f"report_docs: {len(text.splitlines())} lines -> {where}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
