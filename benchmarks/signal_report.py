"""Tables and figures from ``benchmarks/results/signal_gpu.json`` (written by signal_gpu.py).

Usage: ``python benchmarks/signal_report.py`` -> ``benchmarks/results/signal_gpu.md`` and
``docs/figures/signal_time_vs_sigma.png``, ``docs/figures/signal_time_vs_n.png``.
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


def main() -> int:
    with open(os.path.join(HERE, "results", "signal_gpu.json")) as fh:
        data = json.load(fh)
    env, rows = data["env"], data["rows"]
    out = [f"# Signal transforms on {env['device']} ({env['date']})", "",
           f"torch {env['torch']} (CUDA {env['cuda']}), numpy {env['numpy']}, scipy "
           f"{env.get('scipy')}; measured copy bandwidth {env.get('copy_bandwidth_GBps', 0):.0f}"
           " GB/s. `eager ms`: the public call (input checks, extension, bank), median of 20 "
           "after warm-up, CUDA events. `graph ms`: the filter core (extension + SFT bank) "
           "captured in a CUDA graph and replayed. `rel err`: against the exact float64 "
           "convolution with the kernel truncated at 10σ.", ""]

    def table(kind, keys, title, filt=lambda r: True):
        sel = [r for r in rows if r["kind"] == kind and filt(r)]
        if not sel:
            return
        out.extend([f"## {title}", "", "| " + " | ".join(keys) + " |",
                    "|" + "---|" * len(keys)])
        for r in sel:
            vals = []
            for k in keys:
                v = r.get(k)
                if isinstance(v, float):
                    v = f"{v:.3g}" if k not in ("ms", "graph_ms") else f"{v:.3f}"
                vals.append("" if v is None else str(v))
            out.append("| " + " | ".join(vals) + " |")
        out.append("")

    table("gaussian", ["sigma", "order", "method", "engine", "dtype", "terms", "K", "ms",
                       "graph_ms", "rel_err", "kernel_rmse"],
          "Gaussian smoothing, N = 102400", lambda r: r["dtype"] == "float32" or
          r["method"] == "direct")
    table("morlet", ["sigma", "method", "approximation", "engine", "dtype", "terms", "ms",
                     "graph_ms", "rel_err", "kernel_rmse"], "Morlet transform (ξ = 6), N = 102400",
          lambda r: r["dtype"] == "float32")
    table("gaussian_vs_n", ["n", "engine", "ms", "graph_ms"], "Gaussian σ = 16 against N")
    table("morlet_vs_n", ["n", "engine", "ms", "graph_ms"], "Morlet σ = 16 against N")
    table("gaussian_batch", ["batch", "n", "sigma", "engine", "ms", "GBps",
                             "bandwidth_fraction", "rel_err"], "Batch of signals (float32)")
    table("cwt64", ["n", "scales", "method", "engine", "ms", "rel_err", "kernel_rmse"],
          "64-scale CWT (float32)")
    table("float32_drift", ["n", "sigma", "method", "engine", "err64", "err32", "err32_vs_64"],
          "float32 on 10^7 samples (error of the first 100000 outputs)")
    table("cpu_gaussian", ["sigma", "impl", "dtype", "ms", "rel_err", "speedup_vs_scipy"],
          "CPU, 2 threads of the same machine: Gaussian vs scipy.ndimage")
    m = [r for r in rows if r["kind"] == "morlet" and r["sigma"] == 8192.0 and
         r["dtype"] == "float32" and r["method"] == "sft" and r["engine"] == "prefix" and
         r["approximation"] == "direct"]
    if m:
        r = m[0]
        out.append(f"Paper's Morlet, N = 102400, σ = 8192 on an RTX 3090: {PAPER_MORLET_MS} ms. "
                   f"Here: {r['ms']:.3f} ms eager (ratio {PAPER_MORLET_MS / r['ms']:.2f}x), "
                   f"{r['graph_ms']:.3f} ms as a CUDA graph "
                   f"(ratio {PAPER_MORLET_MS / r['graph_ms']:.2f}x).")
    with open(os.path.join(HERE, "results", "signal_gpu.md"), "w") as fh:
        fh.write("\n".join(out) + "\n")

    figdir = os.path.join(ROOT, "docs", "figures")
    os.makedirs(figdir, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, kind in zip(axes, ("gaussian", "morlet"), strict=True):
        for method, engine, style in (("sft", "prefix", "o-"), ("sft", "sliding", "s-"),
                                      ("asft", "recursive", "^-"), ("direct", "direct", "k--")):
            sel = [r for r in rows if r["kind"] == kind and r["method"] == method and
                   r["engine"] == engine and r["dtype"] == "float32" and
                   r.get("order", 0) == 0 and r.get("approximation", "direct") == "direct"]
            if not sel:
                continue
            s = [r["sigma"] for r in sel]
            ax.plot(s, [r["ms"] for r in sel], style, label=f"{method}/{engine} eager")
            if method != "direct":
                ax.plot(s, [r["graph_ms"] for r in sel], style.replace("-", ":"), alpha=0.7,
                        label=f"{method}/{engine} CUDA graph")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("σ (samples)")
        ax.set_ylabel("ms")
        ax.set_title(f"{kind}, N = 102400, float32, {env['device']}")
        ax.grid(True, which="both", alpha=0.3)
    axes[1].axhline(PAPER_MORLET_MS, color="r", lw=0.8, label="paper, RTX 3090, σ = 8192")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(figdir, "signal_time_vs_sigma.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for kind in ("gaussian_vs_n", "morlet_vs_n"):
        for engine, style in (("prefix", "o-"), ("sliding", "s-"), ("direct", "k--")):
            sel = [r for r in rows if r["kind"] == kind and r["engine"] == engine]
            ax.plot([r["n"] for r in sel], [r["ms"] for r in sel], style,
                    label=f"{kind[:-5]} {engine} eager", alpha=0.8 if "g" in kind[:1] else 0.5)
            if engine != "direct":
                ax.plot([r["n"] for r in sel], [r["graph_ms"] for r in sel],
                        style.replace("-", ":"), label=f"{kind[:-5]} {engine} graph")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("N (samples), σ = 16")
    ax.set_ylabel("ms")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(f"time against N, float32, {env['device']}")
    fig.tight_layout()
    fig.savefig(os.path.join(figdir, "signal_time_vs_n.png"), dpi=110)
    plt.close(fig)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
