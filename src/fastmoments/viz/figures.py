"""Figures people would rather look at than read: reconstruction grids and image rows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["image_row", "reconstruction_grid", "save_figure"]


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: str | Path, dpi: int = 110, *,
                bbox_inches: str | None = "tight") -> Path:
    """Save and close ``fig`` (creating the folder); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches=bbox_inches)
    _plt().close(fig)
    return path


def reconstruction_grid(study: Any, title: str | None = None) -> Any:
    """Grid of reconstructions, rows ``k``, columns order ``T``, PSNR in each panel (as thesis
    Fig. 5.2); the original image is shown in the first column."""
    plt = _plt()
    nk, nt = len(study.ks), len(study.orders)
    fig, axes = plt.subplots(nk, nt + 1, figsize=(2.1 * (nt + 1), 2.2 * nk), squeeze=False)
    for i, k in enumerate(study.ks):
        ax = axes[i, 0]
        ax.imshow(study.image, cmap="gray", vmin=0, vmax=255)
        ax.set_title("original" if i == 0 else "", fontsize=8)
        ax.set_ylabel(f"k = {k}", fontsize=9)
        for j, t in enumerate(study.orders):
            ax = axes[i, j + 1]
            ax.imshow(np.clip(study.images[i][j], 0, 255), cmap="gray", vmin=0, vmax=255)
            ax.set_title(f"T={t}  {study.psnr[i, j]:.2f} dB", fontsize=8)
        for ax in axes[i]:
            ax.set_xticks([])
            ax.set_yticks([])
    fig.suptitle(title or f"{study.family} reconstructions ({study.quadrature})", fontsize=10)
    fig.tight_layout()
    return fig


def image_row(images: Sequence[np.ndarray], titles: Sequence[str], title: str = "",
              scale: Sequence[float] | None = None) -> Any:
    """One row of grey images with titles (optionally multiplied by ``scale[i]``)."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(images), figsize=(2.2 * len(images), 2.5), squeeze=False)
    for i, (img, t) in enumerate(zip(images, titles, strict=True)):
        s = 1.0 if scale is None else scale[i]
        axes[0, i].imshow(np.asarray(img) * s, cmap="gray")
        axes[0, i].set_title(t, fontsize=8)
        axes[0, i].set_xticks([])
        axes[0, i].set_yticks([])
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
