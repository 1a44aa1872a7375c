"""The SFT/ASFT filter variants of the ASFT paper: float32 error growth against N, and timings.

Every variant computes the same SFT/ASFT components of one Gaussian plan (σ = 16, the paper's
Figs. 8-9, 0th order, ``terms`` of the plan), so they differ only in how the weighted sliding
sums ``S[m] = Σ_{s<2K+1} x[m + s] q^s`` are evaluated:

==========  ==================================================================================
FO          first-order recursive filter on the running sum, Eqs. 22-24 (ASFT: 34-35), then
            the window difference; sequential (:mod:`fastmoments.signal.recursive2`)
FOW         first-order filter on the window sums directly, Eq. 28 (ASFT: 37); sequential
SO          second-order (real-coefficient) filter on the running sum, Eq. 30 (ASFT: 38)
SOW         second-order filter on the window sums, Eq. 31 (ASFT: 39) = ``engine="recursive2"``
KI32        kernel integral, Eqs. 16-20, with float32 prefix sums (SFT only)
prefix      ``engine="prefix"``: the kernel integral with float64 prefix sums (SFT only)
recursive   ``engine="recursive"``: FO as a blocked parallel scan
sliding     ``engine="sliding"``: the sliding-sum algorithm, Sec. 4.1 (Algorithm 1)
chunked     ``engine="chunked"``: the library's default (small matrix products)
==========  ==================================================================================

Input: ``x = 1 + u``, ``u`` uniform on [0, 1) (a signal with a mean, as real signals have; the
running sums then grow like N). Error: relative RMSE of the float32 output against the same
bank applied in float64 by the sliding-sum engine (exact to ~1e-15; the kernel fit's own error
is not counted), over the whole output and over its first 1000 samples (the recursions run
backwards, so their accumulated state is largest at the start). The float64 error of each
variant is reported too. Timings: float32, N = 102400, ``--threads`` torch threads (the numba
kernels are single-threaded), wall clock, median of ``--repeat`` after one warm-up.

Usage: ``PYTHONPATH=src python benchmarks/asft_filters.py [--max-n 1000000] [--threads 1]``
(about 1 minute on one core; ``--max-n 10000000`` adds N = 10^7, about 4 GB and 5
minutes). Writes ``benchmarks/results/asft_filters.json``, ``.md`` and
``.png``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from fastmoments import GaussianFilter, __version__
from fastmoments._progress import progress
from fastmoments.signal.boundary import extend
from fastmoments.signal.recursive2 import VARIANTS, recursive_sums

OUT = Path(__file__).resolve().parent / "results"
SEQUENTIAL = {"FO": "first-order", "FOW": "first-order windowed", "SO": "second-order",
              "SOW": "second-order windowed"}
ENGINE_ROWS = ("prefix", "recursive", "sliding", "chunked")
SIGMA = 16.0


def _sums_ki32(seg: torch.Tensor, q64: torch.Tensor, length: int, n: int) -> torch.Tensor:
    """Kernel integral (Eqs. 16-20) with float32 prefix sums: SFT only (|q| = 1)."""
    cdt = torch.complex64 if seg.dtype == torch.float32 else torch.complex128
    j = torch.arange(seg.shape[-1], dtype=torch.float64)
    ph = torch.remainder(q64.angle()[:, None] * j, 2 * math.pi)
    rot = torch.polar(torch.ones_like(ph), ph).to(cdt)  # q^j, rounded once
    f = seg.to(cdt)[:, None, :] * rot
    u = torch.nn.functional.pad(torch.view_as_real(torch.cumsum(f, -1)), (0, 0, 1, 0))
    u = torch.view_as_complex(u)
    return (u[..., length: length + n] - u[..., :n]) * rot[:, :n].conj()


def apply_with(bank, xp: torch.Tensor, n: int, sums) -> torch.Tensor:
    """The bank's output channels with the sums ``S`` of each row group from ``sums``
    (the combination step of :meth:`SFTBank.apply`, written out here)."""
    t = bank.tables(xp.dtype, xp.device)
    out = None
    for r0, r1, _ch, half, shift in bank.groups:
        start = bank.pad + shift - half
        length = 2 * half + 1
        seg = xp[:, start: start + n + length - 1]
        s = sums(seg, t["q64"][r0:r1], length, n)
        y = (t["a"][r0:r1, None] * s.real + t["b"][r0:r1, None] * s.imag).sum(1)
        out = y if out is None else out + y
    return out


def variant_fn(plan: GaussianFilter, name: str):
    """``f(x) -> y`` for a 1-D float tensor ``x`` (reflect boundary), by the variant ``name``."""
    bank = plan.bank
    if name in ENGINE_ROWS:
        return lambda x: torch.as_tensor(plan(x, engine=name))
    if name == "KI32":
        def sums(seg, q64, length, n):
            return _sums_ki32(seg, q64, length, n)
    else:
        order, windowed = VARIANTS[SEQUENTIAL[name]]

        def sums(seg, q64, length, n):
            return recursive_sums(seg, q64, length, n, order=order, windowed=windowed)

    def f(x):
        xp = extend(x[None], bank.pad, bank.pad, "reflect", 0.0)
        return apply_with(bank, xp, x.shape[-1], sums)[0]
    return f


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.to(torch.float64), b.to(torch.float64)
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-n", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(OUT / "asft_filters"))
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    ns = [n for n in (1000, 10_000, 100_000, 1_000_000, 10_000_000) if n <= a.max_n]
    rng = np.random.default_rng(2022)
    x64_all = torch.from_numpy(1.0 + rng.random(max(ns)))
    rows = []
    methods = ("sft", "asft")
    names = [*SEQUENTIAL, "KI32", *ENGINE_ROWS]
    jobs = [(m, v, n) for m in methods for v in names for n in ns
            if not (m == "asft" and v in ("KI32", "prefix"))]
    plans = {m: GaussianFilter(SIGMA, method=m) for m in methods}
    refs = {}
    for m, v, n in progress(jobs, desc="errors"):
        plan = plans[m]
        x64 = x64_all[:n]
        if (m, n) not in refs:
            refs[m, n] = torch.as_tensor(plan(x64, engine="sliding"))
        ref = refs[m, n]
        f = variant_fn(plan, v)
        y32 = f(x64.float())
        y64 = f(x64)
        head = slice(0, min(1000, n))
        rows.append({"kind": "error", "method": m, "variant": v, "n": n,
                     "rel_f32": rel(y32, ref), "rel_f32_head": rel(y32[head], ref[head]),
                     "rel_f64": rel(y64, ref), "terms": plan.terms, "K": plan.K,
                     "kernel_rmse": plan.rmse})
    n_t = 102_400
    xt = x64_all[:n_t].float() if max(ns) >= n_t else torch.from_numpy(
        1.0 + rng.random(n_t)).float()
    for m, v in progress([(m, v) for m in methods for v in names
                          if not (m == "asft" and v in ("KI32", "prefix"))], desc="timing"):
        f = variant_fn(plans[m], v)
        f(xt)
        ts = []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            f(xt)
            ts.append(1e3 * (time.perf_counter() - t0))
        rows.append({"kind": "time", "method": m, "variant": v, "n": n_t, "dtype": "float32",
                     "ms": statistics.median(ts), "min_ms": min(ts), "max_ms": max(ts)})
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": platform.processor() or platform.machine(), "platform": platform.platform(),
            "torch": torch.__version__, "numpy": np.__version__, "fastmoments": __version__,
            "torch_threads": a.threads, "sigma": SIGMA, "input": "1 + uniform[0, 1)",
            "reference": "same bank in float64, engine='sliding'"}
    try:
        import numba
        meta["numba"] = numba.__version__
    except ImportError:  # pragma: no cover
        pass
    out = Path(a.out)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    write_md(out.with_suffix(".md"), meta, rows, ns)
    plot(out.with_suffix(".png"), rows)
    print(out.with_suffix(".md").read_text())
    return 0


def write_md(path: Path, meta: dict, rows: list, ns: list) -> None:
    err = [r for r in rows if r["kind"] == "error"]
    lines = [
        "# SFT/ASFT filter variants: float32 error against N, and time (ASFT paper, Sec. 2.3-2.4)",
        "",
        f"_Generated by `benchmarks/asft_filters.py` on {meta['date']}; {meta['device']}, "
        f"torch {meta['torch']}, numba {meta.get('numba')}, {meta['torch_threads']} torch "
        f"thread(s)._",
        "",
        f"Gaussian, sigma = {meta['sigma']}, order 0; input {meta['input']}. Error: relative "
        "RMSE of the float32 output against the same filter bank in float64 (the kernel fit's "
        "own error, `kernel_rmse`, is not counted). `head`: the first 1000 samples, where the "
        "backward recursions have accumulated the whole signal. Variants are described in "
        "the script's docstring.",
        "",
    ]
    for m in ("sft", "asft"):
        sel = [r for r in err if r["method"] == m]
        names = list(dict.fromkeys(r["variant"] for r in sel))
        kr = sel[0]
        lines += [f"## {m.upper()} (terms {kr['terms']}, K {kr['K']}, kernel_rmse "
                  f"{kr['kernel_rmse']:.2e}): float32 relative error (whole / head)", "",
                  "| variant | " + " | ".join(f"N = {n:,}" for n in ns)
                  + " | growth (power of N) | float64, largest N |",
                  "|---|" + "---|" * (len(ns) + 2)]
        for v in names:
            cells = []
            for n in ns:
                r = next((r for r in sel if r["variant"] == v and r["n"] == n), None)
                cells.append(f"{r['rel_f32']:.1e} / {r['rel_f32_head']:.1e}" if r else "")
            mine = [r for r in sel if r["variant"] == v]
            g = growth(mine)
            lines.append(f"| {v} | " + " | ".join(cells)
                         + f" | {'' if g is None else f'{g:.2f}'} | {mine[-1]['rel_f64']:.1e} |")
        lines.append("")
    lines += ["## Time, float32, N = 102,400 (CPU, indicative: shared machine)", "",
              "| variant | SFT ms | ASFT ms |", "|---|---|---|"]
    tim = [r for r in rows if r["kind"] == "time"]
    for v in dict.fromkeys(r["variant"] for r in tim):
        c = {r["method"]: f"{r['ms']:.3g} ({r['min_ms']:.3g}-{r['max_ms']:.3g})"
             for r in tim if r["variant"] == v}
        lines.append(f"| {v} | {c.get('sft', 'n/a (SFT only)')} | "
                     f"{c.get('asft', 'n/a (SFT only)')} |")
    lines += ["", "![float32 error against N](asft_filters.png)", ""]
    path.write_text("\n".join(lines))


def plot(path: Path, rows: list) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    err = [r for r in rows if r["kind"] == "error"]
    names = list(dict.fromkeys(r["variant"] for r in err))
    colors = {v: f"C{i}" for i, v in enumerate(names)}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, m in zip(axes, ("sft", "asft"), strict=True):
        sel = [r for r in err if r["method"] == m]
        for v in names:
            pts = [(r["n"], max(r["rel_f32"], 1e-17)) for r in sel if r["variant"] == v]
            if pts:
                ax.loglog(*zip(*pts, strict=True), "o-", label=v, ms=3, color=colors[v])
        ax.set_title(f"{m.upper()}, sigma = {SIGMA:g}: float32 relative RMSE")
        ax.set_xlabel("N (samples)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("relative RMSE against float64")
    axes[0].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def growth(sel: list) -> float | None:
    """Least-squares slope of log(error) against log(N): the power of N the error grows by."""
    pts = [(math.log(r["n"]), math.log(r["rel_f32"])) for r in sel if r["rel_f32"] > 0]
    if len(pts) < 2:
        return None
    xs, ys = zip(*pts, strict=True)
    return float(np.polyfit(xs, ys, 1)[0])


if __name__ == "__main__":
    raise SystemExit(main())
