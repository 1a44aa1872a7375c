"""Shared by ``fastmoments demo`` and ``fastmoments reconstruct``: run reconstruction studies
and write figures, PSNR tables and timings to a folder."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def run_studies(image: np.ndarray, *, families: Sequence[str], orders: Sequence[int],
                ks: Sequence[int], device: str, out: Path, label: str,
                quadrature: str = "midpoint", show_progress: bool | None = True) -> Path:
    """Reconstruct ``image`` for every family, order and k; write everything to ``out`` (an
    existing folder: see :class:`fastmoments.cli._outputs.OutputFolder`)."""
    from ..disk.study import reconstruction_study
    from ..viz.figures import reconstruction_grid, save_figure

    summary: dict = {"image": label, "size": int(image.shape[0]), "device": device,
                     "quadrature": quadrature, "results": {}}
    lines = [f"# fastmoments reconstructions of {label} ({image.shape[0]}x{image.shape[1]}, "
             f"{device})", ""]
    for fam in families:
        t0 = time.perf_counter()
        st = reconstruction_study(image, family=fam, orders=orders, ks=ks,
                                  quadrature=quadrature, device=device,
                                  show_progress=show_progress)
        total = time.perf_counter() - t0
        fig = reconstruction_grid(st, title=f"{fam} moments of {label}: rows k, columns T "
                                            "(PSNR over the disk)")
        png = save_figure(fig, out / f"{fam}_grid.png")
        summary["results"][fam] = {
            "orders": st.orders, "ks": st.ks, "psnr_db": st.psnr.round(3).tolist(),
            "forward_seconds": st.forward_seconds.round(4).tolist(),
            "reconstruct_seconds": st.reconstruct_seconds.round(4).tolist(),
            "total_seconds": round(total, 3), "figure": png.name}
        lines += [f"## {fam}", "", "PSNR (dB) over the pixels of the disk:", "", st.table(), "",
                  "Seconds for the moments up to the highest order, per k: "
                  + ", ".join(f"k={k}: {s:.3f}" for k, s in zip(st.ks, st.forward_seconds,
                                                                 strict=True)),
                  "", f"![{fam}]({png.name})", ""]
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    report = out / "README.md"
    report.write_text("\n".join(lines))
    return report
