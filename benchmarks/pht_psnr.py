"""Reconstruction quality of PCET, PCT and PST against the order, on two real photographs.

For each photograph (scikit-image's ``camera`` and ``astronaut``, grey, 256 x 256) and each
transform, the moments up to ``nmax = lmax = 60`` are computed once (float64, NUFFT with
eps = 1e-12), then the image is reconstructed from the moments with ``|n| <= T`` and
``|l| <= T`` (``M.reconstruct(nmax=T, lmax=T)``) and compared with the photograph inside the
disk (PSNR over the used pixels, data range 255).

Writes ``benchmarks/results/pht_psnr.json`` / ``.md`` and the figures
``docs/figures/pht_psnr.png`` (PSNR against T) and ``docs/figures/pht_reconstructions.png``.

Run: ``PYTHONPATH=src python benchmarks/pht_psnr.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch

import fastmoments as fm
from disk_common import FIGURES, RESULTS, pht_environment, write_json
from fastmoments.data import sample_image
from fastmoments.disk import pixel_mask

N = 256
TMAX = 60
ORDERS = (5, 10, 15, 20, 30, 40, 50, 60)
IMAGES = ("camera", "astronaut")
KINDS = ("pcet", "pct", "pst")


def main() -> None:
    env = pht_environment(torch.device("cpu"))
    mask = pixel_mask(N)
    rows = []
    recons: dict = {}
    for name in IMAGES:
        img = sample_image(name, N)
        for kind in KINDS:
            t0 = time.perf_counter()
            M = getattr(fm, kind)(img, TMAX, TMAX, method="nufft", eps=1e-12, dtype="float64")
            t_fwd = time.perf_counter() - t0
            for T in ORDERS:
                rec = M.reconstruct(nmax=T, lmax=T)
                p = float(fm.psnr(img, rec, mask=mask, data_range=255.0))
                rows.append({"image": name, "kind": kind, "T": T, "psnr_db": p,
                             "moments_used": sum(1 for n, m in M.pairs
                                                 if abs(n) <= T and m <= T),
                             "forward_s": t_fwd})
                recons[(name, kind, T)] = rec
                print(f"{name:9s} {kind:5s} T={T:3d} PSNR {p:6.2f} dB", flush=True)
    write_json(RESULTS / "pht_psnr.json", {"environment": env, "size": N, "rows": rows})
    lines = [f"# Reconstruction PSNR (dB) inside the disk, {N}x{N}, moments with |n|, |l| <= T",
             "", f"{env['date']}; float64, forward by NUFFT (eps 1e-12), reconstruction at the "
             "pixel centres; data range 255.", "",
             "| image | kind | " + " | ".join(f"T={T}" for T in ORDERS) + " |",
             "|---|---|" + "---|" * len(ORDERS)]
    for name in IMAGES:
        for kind in KINDS:
            vals = [r["psnr_db"] for r in rows if r["image"] == name and r["kind"] == kind]
            lines.append(f"| {name} | {kind} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
    (RESULTS / "pht_psnr.md").write_text("\n".join(lines) + "\n")
    figures(rows, recons)


def figures(rows: list[dict], recons: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    FIGURES.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, len(IMAGES), figsize=(10, 4), sharey=True)
    for ax, name in zip(axes, IMAGES, strict=True):
        for kind in KINDS:
            r = [x for x in rows if x["image"] == name and x["kind"] == kind]
            ax.plot([x["T"] for x in r], [x["psnr_db"] for x in r], "o-", label=kind.upper())
        ax.set_title(f"{name} ({N}x{N})")
        ax.set_xlabel("T (|n|, |l| <= T)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("PSNR inside the disk (dB)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(FIGURES / "pht_psnr.png", dpi=110)
    plt.close(fig)

    shown = (5, 15, 30, 60)
    fig, axes = plt.subplots(len(KINDS), len(shown) + 1, figsize=(12, 7.5))
    img = sample_image("camera", N) * pixel_mask(N)
    for i, kind in enumerate(KINDS):
        axes[i, 0].imshow(img, cmap="gray", vmin=0, vmax=255)
        axes[i, 0].set_title("camera (disk)" if i == 0 else "")
        axes[i, 0].set_ylabel(kind.upper())
        for j, T in enumerate(shown):
            axes[i, j + 1].imshow(np.clip(recons[("camera", kind, T)], 0, 255), cmap="gray",
                                  vmin=0, vmax=255)
            p = next(x["psnr_db"] for x in rows
                 if x["image"] == "camera" and x["kind"] == kind and x["T"] == T)
            axes[i, j + 1].set_title(f"T={T}: {p:.1f} dB", fontsize=9)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(FIGURES / "pht_reconstructions.png", dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    main()
