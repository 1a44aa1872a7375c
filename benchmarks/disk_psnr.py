"""Reconstruction accuracy of the thesis (Tables 5.4, 5.5, 5.9, 5.10; Figs. 5.2, 5.6, 5.7).

PSNR of images reconstructed from Zernike and pseudo-Zernike moments of two real 512 x 512
photographs (scikit-image's camera and astronaut, grey) for T = 100..700 and k = 1..11
(midpoint), plus Gauss-Legendre rows (k = 3, 5) to answer: does k = 5 Gauss reach k = 11
midpoint? PSNR is over the pixels of the disk, peak 255, reported twice: for the raw
reconstruction and for the reconstruction clipped to [0, 255] (the image as saved/shown).
Also writes the reconstruction grid (rows k, columns T) and partial reconstructions.

Run on a GPU (it also runs on a CPU, slowly)::

    PYTHONPATH=src python benchmarks/disk_psnr.py [cuda|cpu]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fastmoments as fm
from disk_common import environment, out_dir, write_results
from fastmoments.disk.study import reconstruction_study
from fastmoments.viz import figures

torch.backends.cuda.matmul.allow_tf32 = False

ORDERS = [100, 200, 300, 400, 500, 600, 700]
KS = [1, 3, 5, 7, 9, 11]
# thesis Table 5.5 (ZM, its Fig. 5.1(b)) and Table 5.9 (PZM, its Fig. 5.1(a)), for comparison only:
# the thesis's photograph is not ours
THESIS = {
    "zernike": {1: [21.96, 23.17, 23.50, 22.55, 20.62, 18.72, 16.78],
                11: [21.95, 23.36, 24.96, 26.78, 28.86, 31.32, 34.49]},
    "pseudo-zernike": {1: [28.82, 28.81, 23.83, 19.83, 16.74, 14.18, 12.02],
                       11: [28.82, 33.63, 37.37, 40.56, 43.01, 45.07, 46.29]},
}
# where each row of THESIS is printed (written into the results file beside the values)
THESIS_SOURCE = {"zernike": "thesis Table 5.5 (its image Fig. 5.1(b))",
                 "pseudo-zernike": "thesis Table 5.9 (its image Fig. 5.1(a))"}


def clipped_psnr(study) -> np.ndarray:
    out = np.zeros_like(study.psnr)
    for i in range(len(study.ks)):
        for j in range(len(study.orders)):
            rec = np.clip(study.images[i][j], 0, 255)
            out[i, j] = fm.psnr(study.image, rec, mask=study.mask, data_range=255.0)
    return out


def main() -> None:
    dev = torch.device(sys.argv[1] if len(sys.argv) > 1 else
                       ("cuda" if torch.cuda.is_available() else "cpu"))
    dest = Path(out_dir()) if out_dir() else Path(__file__).resolve().parents[1] / "docs"
    figdir = dest / "figures" if not out_dir() else dest
    env = environment(dev)
    results = []
    for name in ("camera", "astronaut"):
        img = fm.data.sample_image(name, 512)
        for fam in ("zernike", "pseudo-zernike"):
            for quad, ks in (("midpoint", KS), ("gauss", [3, 5])):
                t0 = time.time()
                st = reconstruction_study(img, family=fam, orders=ORDERS, ks=ks,
                                          quadrature=quad, device=dev, show_progress=False)
                clip = clipped_psnr(st)
                row = {"image": name, "family": fam, "quadrature": quad, "ks": st.ks,
                       "orders": st.orders, "psnr": st.psnr.tolist(),
                       "psnr_clipped": clip.tolist(),
                       "forward_s": st.forward_seconds.tolist(),
                       "seconds_total": time.time() - t0}
                results.append(row)
                print(name, fam, quad, f"{row['seconds_total']:.1f}s")
                print(st.table())
                if quad == "midpoint" and name == "camera":
                    sel = [0, 1, 2, 5]  # k = 1, 3, 5, 11
                    st.ks = [st.ks[i] for i in sel]
                    st.psnr = st.psnr[sel]
                    st.images = [st.images[i] for i in sel]
                    fig = figures.reconstruction_grid(
                        st, title=f"{fam} reconstructions of camera (rows k, columns T)")
                    figures.save_figure(fig, figdir / f"disk_grid_{fam}.png", dpi=70)
    # partial reconstructions of camera, k = 11 (thesis Figs. 5.6, 5.7)
    img = fm.data.sample_image("camera", 512)
    for fam in ("zernike", "pseudo-zernike"):
        plan = fm.DiskTransform(fam, 512, 700, k=11, device=dev)
        A = plan.forward(torch.tensor(img, device=dev, dtype=torch.float32))
        ranges = [(0, 50), (51, 100), (101, 200), (201, 300), (301, 500), (501, 700)]
        parts = [A.reconstruct(orders=r).cpu().numpy() for r in ranges]
        total = sum(parts)
        full = A.reconstruct().cpu().numpy()
        results.append({"family": fam, "partial_sum_minus_full_max": float(
            np.abs(total - full).max())})
        fig = figures.image_row(parts, [f"n = {a}..{b}" for a, b in ranges],
                                title=f"{fam}: partial reconstructions by order (x10 past "
                                      "the first)", scale=[1] + [10] * 5)
        figures.save_figure(fig, figdir / f"disk_partial_orders_{fam}.png", dpi=70)
        sets = ["positive", "negative", "zero", "nonnegative", "nonpositive", "all"]
        reps = [A.reconstruct(repetitions=s).cpu().numpy() for s in sets]
        results.append({"family": fam,
                         "positive_equals_negative_max_diff": float(
                             np.abs(reps[0] - reps[1]).max()),
                         "nonnegative_equals_nonpositive_max_diff": float(
                             np.abs(reps[3] - reps[4]).max())})
        fig = figures.image_row(reps, ["m > 0", "m < 0", "m = 0", "m >= 0", "m <= 0", "all"],
                                title=f"{fam}: partial reconstructions by repetition")
        figures.save_figure(fig, figdir / f"disk_partial_reps_{fam}.png", dpi=70)
    payload = {"environment": env, "thesis_tables": THESIS, "thesis_tables_source": THESIS_SOURCE,
               "results": results}
    print("wrote", write_results("disk_psnr", payload, out_dir()))


if __name__ == "__main__":
    main()
