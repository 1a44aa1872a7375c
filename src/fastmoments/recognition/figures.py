"""Figures of the GB2312 character experiment (matplotlib, Agg backend, PNG)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..viz.figures import save_figure
from . import thesis

__all__ = ["draw_all"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _cjk(font: Path):
    from matplotlib.font_manager import FontProperties

    return FontProperties(fname=str(font))


def draw_all(out: Path, result: dict[str, Any], masks: np.ndarray, chars: list[str],
             font: Path) -> list[Path]:
    """Draw every figure of the experiment into ``out``; returns the paths."""
    paths = [_closest_pairs(out, result, masks, font), _histogram(out, result)]
    if result.get("recognition"):
        paths.append(_recognition(out, result))
    return paths


def _closest_pairs(out: Path, result: dict[str, Any], masks: np.ndarray, font: Path) -> Path:
    plt = _pyplot()
    names = [n for n in result["pair_statistics"] if "[thesis" not in n]
    fig, axes = plt.subplots(len(names), 10, figsize=(15, 1.9 * len(names)), squeeze=False)
    fp = _cjk(font)
    for r, name in enumerate(names):
        closest = result["pair_statistics"][name]["closest"]
        for c in range(10):
            ax = axes[r, c]
            ax.set_xticks([])
            ax.set_yticks([])
            if c >= len(closest):
                ax.axis("off")
                continue
            p = closest[c]
            pair = np.concatenate([masks[p["i"]], np.zeros((masks.shape[1], 2), bool),
                                   masks[p["j"]]], axis=1)
            ax.imshow(~pair, cmap="gray", interpolation="nearest")
            ax.set_title(f"{p['pair']}  {p['d']:.4f}", fontproperties=fp, fontsize=10)
        axes[r, 0].set_ylabel(name, fontsize=9)
    fig.suptitle("Ten closest character pairs per feature vector (24x24 renderings, "
                 "distance Eq. 6.4/6.5)", fontsize=11)
    fig.tight_layout()
    return save_figure(fig, out / "features_closest_pairs.png", dpi=90, bbox_inches=None)


def _histogram(out: Path, result: dict[str, Any]) -> Path:
    plt = _pyplot()
    names = [n for n in result["pair_statistics"] if "[thesis" not in n]
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.6), sharey=True,
                             squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        st = result["pair_statistics"][name]
        k = np.arange(len(st["counts"]) - 1)
        ax.bar(k - 0.2, st["counts"][:-1], width=0.4, label="ours")
        if name in thesis.HISTOGRAM:
            ax.bar(k + 0.2, thesis.HISTOGRAM[name][:-1], width=0.4, label="thesis")
        ax.set_yscale("log")
        ax.set_xticks(k, [lab.split("-")[0] for lab in st["labels"][:-1]], rotation=60,
                      fontsize=7)
        ax.set_title(f"{name}\nmean {st['mean']:.4f}", fontsize=9)
        ax.set_xlabel("distance bin (lower edge)", fontsize=8)
    axes[0, 0].set_ylabel("pairs")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, out / "features_histogram.png", dpi=90, bbox_inches=None)


def _recognition(out: Path, result: dict[str, Any]) -> Path:
    plt = _pyplot()
    rec = result["recognition"]
    sigmas = rec["noise_sigma"]
    fig, axes = plt.subplots(1, len(sigmas), figsize=(5 * len(sigmas), 3.8), sharey=True,
                             squeeze=False)
    for ax, sigma in zip(axes[0], sigmas, strict=True):
        rows = [r for r in rec["rows"] if r["noise"] == sigma and r["kind"] != "V_magnitude"]
        for fam, kind in sorted({(r["family"], r["kind"]) for r in rows}):
            sel = sorted((r["order"], r["top1"]) for r in rows
                         if r["family"] == fam and r["kind"] == kind)
            ax.plot([s[0] for s in sel], [100 * s[1] for s in sel], marker="o",
                    label=f"{fam} {kind}")
        v4 = [r["top1"] for r in rec["rows"] if r["noise"] == sigma
              and r["kind"] == "V_magnitude"]
        if v4:
            ax.axhline(100 * v4[0], color="gray", ls=":", label="thesis V_magnitude (4)")
        ax.set_title(f"rotated by random angles, noise sigma {sigma}", fontsize=9)
        ax.set_xlabel("highest moment order T")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("top-1 accuracy (%)")
    axes[0, -1].legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, out / "features_recognition.png", dpi=90, bbox_inches=None)
