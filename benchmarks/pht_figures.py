"""Figure of the measured times (``benchmarks/results/pht_gpu.json`` and ``pht_cpu.json``)
against the paper's GTX 1060 times: ``docs/figures/pht_speed.png``.

Run: ``python benchmarks/pht_figures.py`` (reads the committed results; measures nothing).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from disk_common import FIGURES, PHT_PAPER, RESULTS


def _bars(ax, series: dict, kinds: tuple, title: str, ylim: tuple) -> None:
    """Grouped bars, one group per transform and one bar per series, on a log axis."""
    width = 0.8 / len(series)
    for i, (label, vals) in enumerate(series.items()):
        ax.bar([j + i * width for j in range(len(kinds))], vals, width, label=label)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(kinds))], [k.upper() for k in kinds])
    ax.set_yscale("log")
    ax.set_title(title)
    ax.set_ylim(*ylim)
    ax.legend(fontsize=8, ncol=2, loc="upper left")
    ax.grid(alpha=0.3, axis="y")


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gpu = json.loads((RESULTS / "pht_gpu.json").read_text())
    cpu = json.loads((RESULTS / "pht_cpu.json").read_text())
    kinds = ("pcet", "pct", "pst")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))

    ax = axes[0]
    series = {"paper (GTX 1060)": [PHT_PAPER["patches_512"][k] for k in kinds]}
    for label, src, method in (("H100 gemm", gpu, "gemm"), ("H100 engine", gpu, "engine"),
                               ("CPU 2 threads gemm", cpu, "gemm"),
                               ("CPU 2 threads nufft", cpu, "nufft")):
        series[label] = [next(r["median_s"] for r in src["rows"] if r["job"] == "patches_512"
                              and r["kind"] == k and r["method"] == method) for k in kinds]
    _bars(ax, series, kinds, "128 patches 512x512, 1 <= n, l <= 25", (1e-3, 3e2))
    ax.set_ylabel("seconds (median)")

    ax = axes[1]
    series = {"paper (GTX 1060)": [PHT_PAPER["synthetic_2048"][k] for k in kinds],
              "H100 gemm": [next(r["median_s"] for r in gpu["rows"]
                                 if r["job"] == "synthetic_2048" and r["kind"] == k
                                 and r["method"] == "gemm-plain") for k in kinds]}
    _bars(ax, series, kinds, "1000 images 2048x2048, 11 <= n <= 16, 11 <= l <= 15", (1e-2, 1e2))
    fig.suptitle(f"Polar harmonic transforms, measured {gpu['environment']['date'][:10]}",
                 fontsize=10)
    fig.tight_layout()
    FIGURES.mkdir(parents=True, exist_ok=True)
    fig.savefig(FIGURES / "pht_speed.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
