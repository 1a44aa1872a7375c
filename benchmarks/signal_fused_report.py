"""Tables and figures for the chunked engine: ``signal_fused.json`` (GPU, signal_fused.py) and
``signal_cpu.json`` (CPU, signal_cpu.py).

Usage: ``python benchmarks/signal_fused_report.py`` -> ``benchmarks/results/signal_fused.md``,
``docs/figures/signal_gpu_vs_sigma.png``, ``docs/figures/signal_cpu_vs_sigma_n.png`` and
``docs/figures/signal_cpu_cwt.png``.
"""

from __future__ import annotations

import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from signal_common import PAPER_MORLET_MS

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
TARGETS_US = {"gaussian": 20.0, "morlet": 30.0}


def _load(name):
    path = os.path.join(RESULTS, name)
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        return json.load(fh)


def gpu_report(data) -> list[str]:
    env, rows = data["env"], data["rows"]
    out = [f"# Chunked SFT engine, fused kernels, on {env['device']} ({env['date']})", "",
           f"torch {env['torch']} (CUDA {env['cuda']}), Triton {env.get('triton')}; measured "
           f"copy bandwidth {env['copy_bandwidth_GBps']:.0f} GB/s (read + write). Written by "
           "`benchmarks/signal_fused.py`. float32 input, N = 102400, mode reflect. "
           "`eager`: the public call (input checks, plan lookup, two kernel launches), "
           "`fused`: the two kernels called from Python, `graph`: the two kernels replayed "
           "from a CUDA graph (allowed for this target). Medians of 20 after warm-up, CUDA "
           "events. `prefix graph`: the previous default engine (row-by-row prefix sums) "
           "in a CUDA graph, same run.", "",
           "## Single signal", "",
           "| transform | σ | rows | eager µs | fused µs | graph µs | prefix graph µs "
           "| target µs |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["section"] != "single":
            continue
        kind = "morlet" if r["kind"] == "morlet" else "gaussian"
        name = ("Morlet ξ = 6" if kind == "morlet" else f"Gaussian order {r['kind'][-1]}")
        pg = r.get("prefix_graph_ms")
        out.append(f"| {name} | {r['sigma']:g} | {r['rows']} | {1e3 * r['eager_ms']:.0f} | "
                   f"{1e3 * r['fused_ms']:.0f} | {1e3 * r['graph_ms']:.1f} | "
                   f"{'' if pg is None else f'{1e3 * pg:.0f}'} | ≤ {TARGETS_US[kind]:.0f} |")
    m = [r for r in rows if r["section"] == "single" and r["kind"] == "morlet"
         and r["sigma"] == 8192.0]
    if m:
        r = m[0]
        out += ["", f"The paper's Morlet transform (N = 102400, σ = 8192, RTX 3090): "
                f"{PAPER_MORLET_MS} ms. Here {1e3 * r['graph_ms']:.1f} µs from a graph "
                f"({PAPER_MORLET_MS / r['graph_ms']:.0f}× faster), {1e3 * r['fused_ms']:.0f} µs "
                f"as a plain call of the kernels ({PAPER_MORLET_MS / r['fused_ms']:.1f}×), "
                f"{1e3 * r['eager_ms']:.0f} µs through the public function "
                f"({PAPER_MORLET_MS / r['eager_ms']:.2f}×)."]
    out += ["", "## Batch of 1000 signals of 102400 samples", "",
            "Effective bandwidth: (input + output bytes) / time. Target: ≥ 50% of the copy "
            "bandwidth.", "",
            "| transform | σ | ms | GB/s | fraction of copy bandwidth | kernel ms |",
            "|---|---|---|---|---|---|"]
    for r in rows:
        if r["section"] == "batch":
            ks = ", ".join(f"{k} {v:.2f}" for k, v in r.get("kernels_ms", {}).items())
            out.append(f"| {r['kind']} | {r['sigma']:g} | {r['ms']:.2f} | "
                       f"{r['effective_GBps']:.0f} | {100 * r['bandwidth_fraction']:.1f}% | "
                       f"{ks} |")
    out += ["", "## 64-scale Morlet CWT, N = 102400 (target ≤ 1 ms)", "",
            "| scales | rows | eager ms | fused ms | graph ms |", "|---|---|---|---|---|"]
    for r in rows:
        if r["section"] == "cwt":
            out.append(f"| {r['scales']} | {r['rows']} | {r['eager_ms']:.3f} | "
                       f"{r['fused_ms']:.3f} | {r['graph_ms']:.3f} |")
    out += ["", "## Accuracy (float32 fused kernels)", "",
            "`exact`: relative RMSE against the float64 convolution with the exact kernel "
            "truncated at 10σ (by FFT); `vs f64`: against the float64 torch chunked engine "
            "(the float32 rounding alone); `kernel rmse`: the fitted kernel's own error.", "",
            "| transform | σ | order / ξ | method | mode | fused | exact | vs f64 | kernel rmse |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["section"] != "acc" or r["kind"] not in ("gaussian", "morlet"):
            continue
        oxi = r.get("order", r.get("xi"))
        out.append(f"| {r['kind']} | {r['sigma']:g} | {oxi:g} | {r['method']} | {r['mode']} | "
                   f"{'yes' if r['fused'] else 'no (torch)'} | {r['rel_err_exact']:.2e} | "
                   f"{r['rel_err_f64']:.1e} | {r['kernel_rmse']:.2e} |")
    for r in rows:
        if r["section"] == "acc" and r["kind"] == "cwt64":
            out += ["", f"64-scale CWT (scales 2-1024), relative RMSE against the exact "
                    f"convolution per scale: median {r['rel_err_exact_median']:.1e}, worst "
                    f"{r['rel_err_exact_max']:.1e}."]
        if r["section"] == "acc" and r["kind"] == "float32_1e7":
            out += ["", f"10^7 samples, σ = 256, {r['method']}: float32 against float64 "
                    f"{r['rel_err_f64']:.1e} (first and last 10^4 outputs: "
                    f"{r['head_tail_err'][0]:.1e}, {r['head_tail_err'][1]:.1e}): no drift."]
    pub = _load("signal_fused_public.json")
    if pub is not None:
        out += ["", f"## Public plan calls ({pub['env']['date']})", "",
                "`plan(x, check_finite=False, memory_budget=2**30)` on a CUDA tensor: captured in "
                "a CUDA graph and replayed (`graph`), or called directly without the NaN check "
                "(`no check`); `kernels`: the two kernels launched directly. Written by "
                "`signal_fused.py --sections public_graph --name signal_fused_public`.", "",
                "| transform | σ | graph µs | no check µs | kernels µs |", "|---|---|---|---|---|"]
        for r in pub["rows"]:
            out.append(f"| {r['kind']} | {r['sigma']:g} | {1e3 * r['public_graph_ms']:.1f} | "
                       f"{1e3 * r['public_no_check_ms']:.0f} | {1e3 * r['kernels_ms']:.0f} |")
    var = os.path.join(RESULTS, "signal_fused_variants.jsonl")
    if os.path.exists(var):
        out += ["", "## Kernel variants (CUDA graph ms)", "",
                "Chunks per tile (`bc`, chunk C = 32), warps and dot precision, one process per "
                "variant (`--sections variant`, `signal_fused_variants.jsonl`; the same kernels, "
                "measured just before the run above, with `bc` fixed for every job). The default "
                "is 4 warps, tf32x3, and 64 chunks per tile except for jobs of fewer than two "
                "tiles of 64 chunks per multiprocessor (a single signal), which take 32. "
                "Single-pass tf32 is faster but its error (1e-3) exceeds the fitted kernel's; "
                "bf16x3 did not compile with these kernels.", "",
                "| bc | warps | precision | Gaussian rel err vs f64 | Gaussian 1 signal "
                "| Gaussian 1000 | Morlet 1000 | CWT 64 |", "|---|---|---|---|---|---|---|---|"]
        with open(var) as fh:
            for line in fh:
                v = json.loads(line)
                out.append(f"| {v['bc']} | {v['warps']} | {v['precision']} | "
                           f"{v['gauss_rel_err_f64']:.1e} | {v['gauss_single_ms']:.4f} | "
                           f"{v['gauss_batch_ms']:.2f} | {v['morlet_batch_ms']:.2f} | "
                           f"{v['cwt64_ms']:.3f} |")
    return out


def gpu_figure(data, path):
    rows = data["rows"]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    styles = {"gaussian0": "o-", "gaussian1": "s-", "gaussian2": "^-", "morlet": "D-"}
    for kind, st in styles.items():
        sel = [r for r in rows if r["section"] == "single" and r["kind"] == kind]
        s = [r["sigma"] for r in sel]
        label = "Morlet ξ=6" if kind == "morlet" else f"Gaussian order {kind[-1]}"
        ax.plot(s, [1e3 * r["graph_ms"] for r in sel], st, label=f"{label}, CUDA graph")
        ax.plot(s, [1e3 * r["eager_ms"] for r in sel], st.replace("-", ":"), alpha=0.5,
                label=f"{label}, public call")
        pg = [(r["sigma"], 1e3 * r["prefix_graph_ms"]) for r in sel if "prefix_graph_ms" in r]
        if pg and kind in ("gaussian0", "morlet"):
            ax.plot(*zip(*pg, strict=True), "x--", color="gray", alpha=0.7,
                    label=f"{label}, old prefix engine (graph)")
    ax.axhline(20, color="g", lw=0.8, ls="--", label="target Gaussian 20 µs")
    ax.axhline(30, color="g", lw=0.8, ls="-.", label="target Morlet 30 µs")
    ax.axhline(1e3 * PAPER_MORLET_MS, color="r", lw=0.8, label="paper Morlet, RTX 3090")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("σ (samples)")
    ax.set_ylabel("µs per signal of 102400 samples")
    ax.set_title(f"Fused SFT kernels, float32, {data['env']['device']}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cpu_figure(data, path):
    g = data.get("gaussian", [])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    n0 = max((r["n"] for r in g), key=lambda m: sum(r["n"] == m for r in g))
    for ax, key, sel, xl in (
            (axes[0], "sigma", [r for r in g if r["n"] == n0], f"σ (samples), N = {n0}"),
            (axes[1], "n", [r for r in g if r["sigma"] == 256.0], "N (samples), σ = 256")):
        sel = sorted(sel, key=lambda r: r[key])
        xs = [r[key] for r in sel]
        ax.plot(xs, [r["ours_1t_ms"] for r in sel], "o-", label="fastmoments, 1 thread")
        ax.plot(xs, [r["ours_ms"] for r in sel], "s-", label="fastmoments, 2 threads")
        ax.plot(xs, [r["scipy_ms"] for r in sel], "k^--", label="scipy.ndimage.gaussian_filter1d")
        ax.set_xscale("log", base=2 if key == "sigma" else 10)
        ax.set_yscale("log")
        ax.set_xlabel(xl)
        ax.set_ylabel("ms (float64)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_title("Gaussian smoothing on the CPU: time against σ")
    axes[1].set_title("time against N")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cwt_figure(data, path):
    """Horizontal bars: the 64-scale CWT on the CPU (time, and the worst per-scale |W| error
    against the exact convolution), every implementation of one run."""
    rows = [r for r in data.get("rows", []) if "ms" in r]
    if not rows:
        return
    rows = sorted(rows, key=lambda r: r["ms"], reverse=True)
    labels = [f"{r['impl']} ({r['dtype']}, {r['threads']} thr.)" for r in rows]
    colors = ["tab:blue" if r["impl"].startswith("fastmoments") else "tab:gray" for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.42 * len(rows) + 1.5), sharey=True)
    ys = range(len(rows))
    axes[0].barh(ys, [r["ms"] for r in rows], color=colors)
    for y, r in zip(ys, rows, strict=True):
        axes[0].text(r["ms"], y, f" {r['ms']:.0f}", va="center", fontsize=7)
    axes[0].set_xscale("log")
    ticks = [t for t in (10, 20, 50, 100, 200, 500, 1000)
             if min(r["ms"] for r in rows) / 2 <= t <= 2 * max(r["ms"] for r in rows)]
    axes[0].set_xticks(ticks, [str(t) for t in ticks])
    axes[0].minorticks_off()
    axes[0].set_xlabel("median ms (N = 102400, 64 scales 2-1024, ξ = 6)")
    axes[0].set_yticks(list(ys), labels, fontsize=7)
    axes[0].set_title("64-scale Morlet CWT on the CPU (2-core VM)")
    axes[1].barh(ys, [r["mag_err_median"] for r in rows], color=colors, label="median scale")
    axes[1].plot([r["mag_err_max"] for r in rows], list(ys), "kD", ms=4, label="worst scale")
    axes[1].set_xscale("log")
    axes[1].set_xlabel("|W| error against the exact convolution (Eq. 49), per scale")
    axes[1].set_title("accuracy (fastmoments in blue)")
    axes[1].legend(fontsize=7, loc="lower right")
    fig.text(0.99, 0.005, "fCWT and ssqueezepy define the three smallest scales (σ ≤ 2.4) "
             "differently (their worst-scale 0.39 is that difference)", ha="right",
             fontsize=7)
    for ax in axes:
        ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    figdir = os.path.join(ROOT, "docs", "figures")
    os.makedirs(figdir, exist_ok=True)
    gpu = _load("signal_fused.json")
    if gpu is not None:
        with open(os.path.join(RESULTS, "signal_fused.md"), "w") as fh:
            fh.write("\n".join(gpu_report(gpu)) + "\n")
        gpu_figure(gpu, os.path.join(figdir, "signal_gpu_vs_sigma.png"))
    cpu = _load("signal_cpu.json")
    if cpu is not None and cpu.get("gaussian"):
        cpu_figure(cpu, os.path.join(figdir, "signal_cpu_vs_sigma_n.png"))
    if cpu is not None:
        cwt_figure(cpu, os.path.join(figdir, "signal_cpu_cwt.png"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
