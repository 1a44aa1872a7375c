"""Figures people would rather look at than read: reconstruction grids and image rows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["column_peaks", "figure_texts", "image_row", "reconstruction_grid", "save_figure",
           "scalogram_figure", "slices_figure"]


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def figure_texts(fig: Any) -> dict[str, str]:
    """The words of a figure: ``title`` (the suptitle, else the first axes' title),
    ``caption`` (the figure's x label: the note under a grid), ``axes`` (every axes title,
    one per line) and ``colorbars`` (every colorbar label, one per line)."""
    sup = getattr(fig, "_suptitle", None)
    cap = getattr(fig, "_supxlabel", None)
    bars = [ax for ax in fig.axes
            if getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"]
    main = [ax for ax in fig.axes if ax not in bars]
    titles = [ax.get_title() for ax in main if ax.get_title()]
    return {"title": sup.get_text() if sup is not None else (titles[0] if titles else ""),
            "caption": cap.get_text() if cap is not None else "",
            "axes": "\n".join(titles),
            "colorbars": "\n".join(ax.get_ylabel() or ax.get_xlabel() for ax in bars)}


def save_figure(fig: Any, path: str | Path, dpi: int = 110, *,
                bbox_inches: str | None = "tight") -> Path:
    """Save and close ``fig`` (creating the folder); returns the path.

    A PNG also carries the figure's words (:func:`figure_texts`) as text chunks: ``Title``,
    ``Description`` (the caption) and ``fastmoments:axes`` / ``fastmoments:colorbars``, so
    that a reader (or a test) gets them without looking at pixels.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = None
    if path.suffix.lower() == ".png":
        words = figure_texts(fig)
        metadata = {"Title": words["title"], "Description": words["caption"],
                    "fastmoments:axes": words["axes"],
                    "fastmoments:colorbars": words["colorbars"]}
    fig.savefig(path, dpi=dpi, bbox_inches=bbox_inches, metadata=metadata)
    import sys

    if "matplotlib.pyplot" in sys.modules:  # a figure of pyplot's (not one made by _figure)
        sys.modules["matplotlib.pyplot"].close(fig)
    return path


def _figure(**kwargs: Any) -> Any:
    """A matplotlib Figure on the Agg canvas without importing pyplot (a second less on a
    first call: pyplot loads every backend helper and registers the figure manager)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


def reconstruction_grid(study: Any, title: str | None = None, caption: str | None = None) -> Any:
    """Grid of reconstructions, rows ``k``, columns order ``T``, PSNR in each panel (as figure
    5.2 of the :ref:`Zernike thesis <bib-zernike-thesis>`); the original image is shown in the
    first column; ``caption`` is written under the grid (wrapped to its width)."""
    import textwrap

    plt = _plt()
    nk, nt = len(study.ks), len(study.orders)
    width = 2.1 * (nt + 1)
    cap_lines = textwrap.wrap(caption, int(width * 15)) if caption else []
    fig, axes = plt.subplots(nk, nt + 1, figsize=(width, 2.3 * nk + 0.5 + 0.14 * len(cap_lines)),
                             squeeze=False, layout="constrained")
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
    fig.suptitle("\n".join(textwrap.wrap(
        title or f"{study.family} reconstructions ({study.quadrature})", int(width * 12))),
        fontsize=9)
    if cap_lines:
        fig.supxlabel("\n".join(cap_lines), fontsize=7)
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


def slices_figure(original: np.ndarray, recs: dict, orders: Sequence[int], ks: Sequence[int],
                  psnr: dict, title: str) -> Any:
    """Grid of one slice: the original, then rows order, columns ``k``, with the PSNR of the
    whole volume at that (order, k) in each panel's title and one grey-level colorbar."""
    plt = _plt()
    lo, hi = float(np.min(original)), float(np.max(original))
    nr, nc = len(orders), len(ks) + 1
    fig, axes = plt.subplots(nr, nc, squeeze=False, figsize=(2.3 * nc + 0.6, 2.3 * nr + 0.4))
    im = None
    for i, o in enumerate(orders):
        im = axes[i, 0].imshow(original, cmap="gray", vmin=lo, vmax=hi)
        axes[i, 0].set_title("original" if i == 0 else "", fontsize=8)
        axes[i, 0].set_ylabel(f"order {o}", fontsize=8)
        for j, k in enumerate(ks):
            axes[i, j + 1].imshow(np.asarray(recs[(o, k)]), cmap="gray", vmin=lo, vmax=hi)
            axes[i, j + 1].set_title(f"order {o}, k = {k}\nPSNR {psnr[(o, k)]:.2f} dB",
                                     fontsize=7)
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    import textwrap

    fig.suptitle("\n".join(textwrap.wrap(title, int(fig.get_figwidth() * 12))), fontsize=9)
    fig.tight_layout(rect=(0, 0, 0.86, 1))
    cax = fig.add_axes((0.88, 0.1, 0.02, 0.75))
    fig.colorbar(im, cax=cax, label="intensity")
    return fig


def column_peaks(t: np.ndarray, values: np.ndarray,
                 max_columns: int = 1200) -> tuple[np.ndarray, np.ndarray]:
    """``(t, values)`` with at most ``max_columns`` columns: a longer row is cut into that
    many time bins and each bin drawn with its largest value (a 9-inch figure has fewer
    pixels than that; peaks stay visible), at the bin's middle sample.

    >>> t, v = column_peaks(np.arange(10.0), np.arange(10.0)[None], max_columns=2)
    >>> t.tolist(), v.tolist()
    ([2.0, 7.0], [[4.0, 9.0]])
    """
    t = np.asarray(t, dtype=np.float64)
    if t.size <= max_columns:
        return t, values
    edges = np.linspace(0, t.size, max_columns + 1).astype(int)
    return (t[(edges[:-1] + edges[1:] - 1) // 2],
            np.maximum.reduceat(values, edges[:-1], axis=1))


def scalogram_figure(t: np.ndarray, freqs: np.ndarray, magnitude: np.ndarray, *,
                     title: str, time_label: str, freq_label: str,
                     colour_label: str = "|W|", max_columns: int = 1200) -> Any:
    """``magnitude`` (scales x time) drawn against time and a logarithmic frequency axis (rows
    sorted by frequency), with a colorbar labelled ``colour_label``; an octave of high
    frequencies gets as much height as an octave of low ones. A signal longer than
    ``max_columns`` samples is drawn with the largest value of each of ``max_columns`` time
    bins (a 9-inch figure has fewer pixels than that; peaks stay visible)."""
    freqs = np.asarray(freqs, dtype=np.float64)
    rows = np.argsort(freqs)  # pcolormesh needs monotonic frequencies
    t, values = column_peaks(t, np.asarray(magnitude)[rows], max_columns)
    fig = _figure(figsize=(9, 4.5))
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.08, right=0.97, bottom=0.12, top=0.92)
    mesh = ax.pcolormesh(t, freqs[rows], values, shading="nearest", cmap="magma")
    ax.set_yscale("log")
    ax.set_xlabel(time_label)
    ax.set_ylabel(freq_label + " (log scale)")
    ax.set_title(title)
    fig.colorbar(mesh, ax=ax, label=colour_label, pad=0.02)
    return fig
