"""Zernike thesis Fig. 3.1: an image rebuilt from Zernike moments computed through geometric
moments (Eq. 3.1-3.3) against the same moments by Deng's recurrence (Eq. 3.10-3.11).

A 64 x 64 image (the camera sample), Zernike moments to order T by the geometric method in
float64 and by Deng's recurrence (float64), each reconstruction shown with its PSNR over the
disk mask. Rows: T = 23 (the thesis's order) and T = 45 (where the float64 geometric method
does break here). The error of each set of moments against exact rational arithmetic
(``method="geometric-exact"``) is printed and shown in the panel titles.

    PYTHONPATH=src python benchmarks/geometric_fig31.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fastmoments import psnr
from fastmoments._progress import progress
from fastmoments.data import sample_image
from fastmoments.disk import ZernikeTransform
from fastmoments.disk.geometric import geometric_moments

ORDERS = (23, 45)
SIZE = 64
OUT = Path(__file__).resolve().parents[1] / "docs" / "figures" / "disk_geometric_fig31.png"


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    img = sample_image("camera", SIZE)
    fig, axes = plt.subplots(len(ORDERS), 3, figsize=(9.0, 3.8 * len(ORDERS)))
    for row, T in enumerate(progress(ORDERS, desc="orders")):
        plan = ZernikeTransform(SIZE, T, dtype="float64")
        exact = geometric_moments(plan, img, exact=True)
        scale = float(np.abs(exact.data.numpy()).max())
        runs = {"geometric, float64": geometric_moments(plan, img),
                "Deng, float64": plan.forward(img)}
        shown = np.where(plan.mask, img, 0)
        axes[row, 0].imshow(shown, cmap="gray", vmin=0, vmax=255)
        axes[row, 0].set_title(f"({'ad'[row]}) original {SIZE}x{SIZE}", fontsize=9)
        for col, (label, A) in enumerate(runs.items(), start=1):
            rec = np.asarray(A.reconstruct())
            p = psnr(img, rec, mask=plan.mask)
            err = float(np.abs(A.data.numpy() - exact.data.numpy()).max()) / scale
            print(f"T={T} {label}: PSNR {p:.2f} dB, max |A - A_exact| / max |A_exact| "
                  f"{err:.1e}", flush=True)
            ax = axes[row, col]
            ax.imshow(np.clip(rec, 0, 255), cmap="gray", vmin=0, vmax=255)
            ax.set_title(f"({['bc', 'ef'][row][col - 1]}) {label}, T={T}\nPSNR {p:.2f} dB, "
                         f"moment error {err:.0e}", fontsize=8)
        for ax in axes[row]:
            ax.set_axis_off()
    fig.suptitle("Zernike thesis Fig. 3.1: reconstruction from moments computed through "
                 "geometric moments vs Deng's recurrence\n(moment error: largest |A - A_exact| "
                 "relative to the largest moment, A_exact in exact rational arithmetic)",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.93), h_pad=2.0)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, dpi=110)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
