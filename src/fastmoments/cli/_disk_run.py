"""Shared by ``fastmoments demo`` and ``fastmoments reconstruct``: run reconstruction studies
and write figures, PSNR tables and timings to a folder.

The work is split into steps short enough for the progress bar to move every few seconds:
the moments of each ``k`` are computed in groups of repetitions ``m`` (one plan per group,
:class:`fastmoments.disk.DiskTransform` with ``repetitions=``), each group sized so that its
modelled time (:mod:`fastmoments.cli._estimate`) is at most :data:`STEP_SECONDS`; a
reconstruction at order ``T`` is the sum of the groups' reconstructions (Eq. 2.12 is a sum over
``(n, m)``, so splitting it by ``m`` changes only the order of the additions).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: Modelled CPU seconds of one step of the moments (a group of repetitions).
STEP_SECONDS = 0.5

#: Why k = 1 degrades at high order: the sentence written next to the figures.
K1_NOTE = ("With k = 1 each pixel is one sample at its centre; at high order T the radial "
           "polynomials oscillate faster than the pixel grid samples them (their "
           "zeros come closer than a pixel near the rim), so the sums no longer approximate "
           "the integrals, the moments lose orthogonality and the error grows with T. "
           "k x k points per pixel integrate each pixel and keep the PSNR rising.")


def repetition_groups(n: int, k: int, order: int, device: str) -> list[list[int]]:
    """The repetitions ``0..order`` split into groups of about :data:`STEP_SECONDS` each
    (one group on CUDA, where there is no time model)."""
    from ._estimate import forward_seconds

    reps = list(range(order + 1))
    if device.startswith("cuda"):
        return [reps]
    total = forward_seconds(n, k, order)
    count = max(1, min(len(reps), int(np.ceil(total / STEP_SECONDS))))
    return [list(g) for g in np.array_split(reps, count) if len(g)]


def _sync(dev: Any) -> None:
    import torch

    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def study_steps(n: int, orders: Sequence[int], ks: Sequence[int], device: str) -> int:
    """Number of progress steps of one family's study."""
    top = max(orders)
    return sum(len(repetition_groups(n, k, top, device)) + len(orders) for k in ks)


def chunked_study(image: np.ndarray, *, family: str, orders: Sequence[int], ks: Sequence[int],
                  quadrature: str, device: str, bar: Any) -> Any:
    """:func:`fastmoments.disk.study.reconstruction_study`, in steps that advance ``bar``."""
    import torch

    from .._array import resolve_device
    from ..disk import DiskTransform
    from ..disk.study import ReconstructionStudy
    from ..metrics import psnr

    img = np.asarray(image, dtype=np.float64)
    orders, ks = sorted(set(orders)), sorted(set(ks))
    dev = resolve_device(device)
    n, top = img.shape[-1], max(orders)
    x = torch.as_tensor(img, device=dev)
    ps = np.zeros((len(ks), len(orders)))
    fsec = np.zeros(len(ks))
    rsec = np.zeros((len(ks), len(orders)))
    images: list[list[np.ndarray]] = []
    mask = None
    for i, k in enumerate(ks):
        parts, lowest = [], []
        for group in repetition_groups(n, k, top, str(dev)):
            lowest.append(min(abs(m) for m in group))
            bar.set_postfix_str(f"{family} k={k} moments m={group[0]}..{group[-1]}",
                                refresh=False)
            plan = DiskTransform(family, n, top, k=k, quadrature=quadrature,
                                 repetitions=group, dtype="float32", device=dev)
            _sync(dev)
            t0 = time.perf_counter()
            parts.append(plan.forward(x))
            _sync(dev)
            fsec[i] += time.perf_counter() - t0
            mask = plan.mask
            bar.update(1)
        images.append([])
        for j, t in enumerate(orders):
            bar.set_postfix_str(f"{family} k={k} reconstruction T={t}", refresh=False)
            _sync(dev)
            t0 = time.perf_counter()
            # a group of repetitions holds no moment of order below its smallest |m|, and
            # none above its own highest order (parity can make that T - 1)
            rec = sum(np.asarray(
                (p.reconstruct(orders=t) if t < p.order else p.reconstruct())
                .detach().cpu().numpy(), dtype=np.float64)
                for p, m in zip(parts, lowest, strict=True) if m <= t)
            _sync(dev)
            rsec[i, j] = time.perf_counter() - t0
            images[i].append(rec)
            ps[i, j] = psnr(img, rec, mask=mask, data_range=255.0)
            bar.update(1)
        del parts
    return ReconstructionStudy(
        family=family, image=img, mask=np.asarray(mask), orders=orders, ks=ks,
        quadrature=quadrature, device=str(dev), dtype="float32", psnr=ps, images=images,
        forward_seconds=fsec, reconstruct_seconds=rsec)


def run_studies(image: np.ndarray, *, families: Sequence[str], orders: Sequence[int],
                ks: Sequence[int], device: str, out: Path, label: str, command: str,
                quadrature: str = "midpoint", show_progress: bool = False) -> Path:
    """Reconstruct ``image`` for every family, order and k; write everything to ``out`` (an
    existing folder: see :class:`fastmoments.cli._outputs.OutputFolder`)."""
    from .._collection_outputs import library_identity
    from .._progress import progress_bar
    from ..viz.figures import reconstruction_grid, save_figure

    n = int(image.shape[0])
    made_by = library_identity()
    summary: dict = {"image": label, "size": n, "device": device,
                     "quadrature": quadrature, "fastmoments": made_by, "results": {}}
    commit = f", commit {made_by['commit'][:12]}" if made_by["commit"] else ""
    lines = [f"# fastmoments reconstructions of {label} ({image.shape[0]}x{image.shape[1]}, "
             f"{device})", "", f"Made by fastmoments {made_by['version']}{commit}.", ""]
    steps = len(families) * study_steps(n, orders, ks, device)
    bar = progress_bar(steps, desc=f"fastmoments {command}", show=show_progress, unit="step")
    if not hasattr(bar, "set_postfix_str"):  # the silent stand-in
        bar.set_postfix_str = lambda *a, **kw: None
    try:
        for fam in families:
            t0 = time.perf_counter()
            st = chunked_study(image, family=fam, orders=orders, ks=ks, quadrature=quadrature,
                               device=device, bar=bar)
            total = time.perf_counter() - t0
            caption = K1_NOTE if 1 in st.ks else None
            fig = reconstruction_grid(
                st, title=f"{fam} moments of {label}: rows k (sub-pixel points per axis), "
                          "columns order T, PSNR over the disk", caption=caption)
            png = save_figure(fig, out / f"{fam}_grid.png")
            summary["results"][fam] = {
                "orders": st.orders, "ks": st.ks, "psnr_db": st.psnr.round(3).tolist(),
                "forward_seconds": st.forward_seconds.round(4).tolist(),
                "reconstruct_seconds": st.reconstruct_seconds.round(4).tolist(),
                "total_seconds": round(total, 3), "figure": png.name}
            lines += [f"## {fam}", "", "PSNR (dB) over the pixels of the disk:", "", st.table(),
                      "", "Seconds for the moments up to the highest order, per k: "
                      + ", ".join(f"k={k}: {s:.3f}" for k, s in zip(st.ks, st.forward_seconds,
                                                                     strict=True)),
                      "", f"![{fam}]({png.name})", ""]
            if caption:
                lines += [f"*Why k = 1 degrades at high order:* {K1_NOTE}", ""]
    finally:
        bar.close()
    if any(1 in r["ks"] for r in summary["results"].values()):
        summary["k1_note"] = K1_NOTE
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    report = out / "README.md"
    report.write_text("\n".join(lines))
    return report
