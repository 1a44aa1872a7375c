"""Clipped 3-D reconstructions from Jacobi moments, laid out as the Jacobi thesis's Figs. 17 and 19.

Each figure has three columns of parallel clipping planes, as in the thesis: ``-x + y + z = c``,
``x + z = c`` and ``x + y + z = c``, four offsets each, 0.4 apart (the thesis steps its planes by
100 voxels of a 512-voxel volume, 0.39 in our normalised units). Every panel keeps the side
``n.x <= c`` of its plane and shows the clipped reconstruction in 3-D: the isosurface of the
head (scikit-image's marching cubes of the clipped volume, clipped voxels set to 0) in grey,
the cut face coloured by the reconstructed intensities, and the plane's outline in red. The
title gives the plane and the PSNR of the kept voxels against the original ones (peak = the
original's range, thesis Eq. 47-48).

Volumes: the 3-D Shepp-Logan phantom (``fastmoments.box.phantom``, 64^3) and, when nibabel is
installed, the real MRI volume the tests use (nibabel's ``example4d``, first frame, 24 x 96 x
128 voxels of 2 x 2 x 2.2 mm, drawn with those proportions). Moments: Jacobi, alpha = beta =
0.3 (Fig. 17) and alpha = 0.3, beta = 0.7 (Fig. 19), k = 3, order 40, float32 on the CPU
(the thesis used order 500 and k = 23 on a GPU). Every panel is reconstructed with
``J.reconstruct(clip=Plane(...))``, which computes only the box that holds the kept voxels.

Run from the repository root: ``python benchmarks/box_clip_figures.py`` (about a minute on one
CPU core). Writes ``docs/figures/box_clip_planes_<volume>_a<alpha>_b<beta>.png``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np
import torch

sys.path.append(os.path.join(os.path.dirname(__file__), "..", "src"))

from fastmoments._progress import progress
from fastmoments.box import JacobiTransform, Plane
from fastmoments.box.phantom import shepp_logan_3d

ROOT = os.path.join(os.path.dirname(__file__), "..")

#: The columns of Figs. 17/19: a normal (nx, ny, nz) as written in the plane's equation, the
#: four offsets from top to bottom, and the view (elevation, azimuth) from the cut side.
COLUMNS = (
    ((-1, 1, 1), (0.8, 0.4, 0.0, -0.4), (30, 125)),
    ((1, 0, 1), (-0.4, 0.0, 0.4, 0.8), (35, 20)),
    ((1, 1, 1), (-0.4, 0.0, 0.4, 0.8), (30, 40)),
)


def equation(normal: tuple[int, ...], c: float) -> str:
    """``-x + y + z <= 0.4`` as written (integer normals)."""
    out = ""
    for v, name in zip(normal, "xyz", strict=True):
        if v == 0:
            continue
        sign = "-" if v < 0 else ("+" if out else "")
        mag = "" if abs(v) == 1 else str(abs(v))
        out += (f" {sign} " if out else sign) + mag + name
    return f"{out} \u2264 {c:g}"


def psnr(orig: np.ndarray, rec: np.ndarray, kept: np.ndarray, peak: float) -> float:
    mse = float(np.mean((orig[kept].astype(np.float64) - rec[kept].astype(np.float64)) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(peak**2 / mse)


def plane_outline(plane: Plane, half: np.ndarray) -> np.ndarray | None:
    """The polygon where the plane cuts the box ``[-1, 1]^3``, scaled by ``half`` (x, y, z)."""
    n = np.array(plane.normal)
    pts = []
    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1], indexing="ij")).reshape(3, -1).T
    for a in range(8):
        for b in range(a + 1, 8):
            p, q = corners[a], corners[b]
            if np.abs(p - q).sum() != 2:
                continue                                   # not an edge
            fp, fq = n @ p - plane.offset, n @ q - plane.offset
            if fp * fq <= 0 and fp != fq:
                pts.append(p + (q - p) * fp / (fp - fq))
    if len(pts) < 3:
        return None
    pts = np.array(pts)
    centre = pts.mean(0)
    u = pts[0] - centre
    v = np.cross(n, u)
    order = np.argsort(np.arctan2((pts - centre) @ v, (pts - centre) @ u))
    poly = pts[order] * half
    return np.vstack([poly, poly[:1]])


def panel(ax, rec: np.ndarray, plane: Plane, level: float, lo: float, hi: float,
          half: np.ndarray, view: tuple[float, float]) -> None:
    """Isosurface of the clipped volume ``rec`` (clipped voxels 0), cut face in colour."""
    from matplotlib import colormaps
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    from scipy import ndimage
    from skimage.measure import marching_cubes

    vol = np.pad(np.nan_to_num(rec, nan=0.0), 1)           # closed at the volume's faces
    # the head only: the largest connected part above the level (and one voxel around it,
    # so that the surface keeps its interpolated position); drops isolated ringing specks
    labels, count = ndimage.label(vol > level)
    if count > 1:
        sizes = np.bincount(labels.ravel())
        sizes[0] = 0
        head = ndimage.binary_dilation(labels == sizes.argmax())
        vol = np.where(head, vol, 0.0)
    verts, faces, normals, values = marching_cubes(vol, level)
    shape = np.array(rec.shape, dtype=np.float64)
    zyx = (2 * (verts - 1) + 1) / shape - 1                 # voxel index -> [-1, 1]
    xyz = zyx[:, ::-1]
    # faces on the cut: every vertex within 1.5 voxels of the plane
    dist = xyz @ np.array(plane.normal) - plane.offset
    step = 2 / shape.min()
    on_cut = (np.abs(dist[faces]) < 1.5 * step).all(1)
    pos = xyz * half
    tri = pos[faces]
    cmap = colormaps["gray"]
    colours = np.empty((len(faces), 4))
    vals = values[faces].mean(1)
    colours[on_cut] = cmap(np.clip((vals[on_cut] - lo) / (hi - lo), 0, 1) * 0.9 + 0.1)
    # the outer surface: light grey with Lambert shading from its normals
    light = np.array([0.4, -0.5, 0.8])
    light /= np.linalg.norm(light)
    nrm = normals[faces].mean(1)[:, ::-1]
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True) + 1e-12
    shade = 0.45 + 0.5 * np.abs(nrm @ light)
    colours[~on_cut] = np.column_stack([shade * 0.93, shade * 0.86, shade * 0.78,
                                        np.ones(len(shade))])[~on_cut]
    ax.add_collection3d(Poly3DCollection(tri, facecolors=colours, edgecolors="none",
                                         linewidths=0, antialiased=False))
    outline = plane_outline(plane, half)
    if outline is not None:
        ax.plot(outline[:, 0], outline[:, 1], outline[:, 2], color="tab:red", lw=0.7,
                alpha=0.8)
    ax.set_xlim(-half[0], half[0])
    ax.set_ylim(-half[1], half[1])
    ax.set_zlim(-half[2], half[2])
    ax.set_box_aspect(tuple(half), zoom=1.1 if half.min() == half.max() else 0.9)
    ax.view_init(elev=view[0], azim=view[1])
    ax.set_axis_off()


def figure(name: str, label: str, vol: np.ndarray, half: np.ndarray, level: float,
           alpha: float, beta: float, order: int, k: int, figdir: str) -> tuple[str, dict]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plan = JacobiTransform(vol.shape, order, alpha=alpha, beta=beta, k=k, dtype=torch.float32)
    J = plan.forward(vol)
    peak = float(vol.max() - vol.min())
    # grey levels of the cut: from the level to twice the median tissue (skull saturates)
    lo, hi = level, 2.0 * float(np.median(vol[vol > level]))
    fig = plt.figure(figsize=(8.4, 10.0))
    stats = {}
    cells = [(r, c) for r in range(4) for c in range(3)]
    clip_s = 0.0
    for r, c in progress(cells, desc=f"{name} a={alpha} b={beta}"):
        normal, offsets, view = COLUMNS[c]
        plane = Plane(normal, offsets[r])
        t = time.perf_counter()
        rec = J.reconstruct(clip=plane)
        clip_s += time.perf_counter() - t
        kept = np.isfinite(rec)
        p = psnr(vol, rec, kept, peak)
        stats[equation(normal, offsets[r])] = {"psnr_db": round(p, 2),
                                               "kept": round(float(kept.mean()), 3)}
        ax = fig.add_subplot(4, 3, 3 * r + c + 1, projection="3d")
        panel(ax, rec, plane, level, lo, hi, half, view)
        ax.set_title(f"{equation(normal, offsets[r])}\nPSNR {p:.1f} dB, "
                     f"{100 * kept.mean():.0f}% kept", fontsize=8, pad=-2)
    fig.suptitle(f"{label} clipped by planes, reconstructed from Jacobi moments\n"
                 f"\u03b1 = {alpha:g}, \u03b2 = {beta:g}, order {order}, k = {k} "
                 f"(thesis Fig. {17 if alpha == beta else 19} layout); "
                 "x along W, y along H, z along D, each in [-1, 1]", fontsize=9)
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=0.91, wspace=0.0, hspace=0.14)
    fname = f"box_clip_planes_{name}_a{alpha:g}_b{beta:g}.png".replace("0.", "0")
    path = os.path.join(figdir, fname)
    fig.savefig(path, dpi=84)
    plt.close(fig)
    stats["_clip_seconds_12_panels"] = round(clip_s, 3)
    return path, stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--order", type=int, default=40)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--size", type=int, default=64, help="phantom voxels per side")
    ap.add_argument("--figdir", default=os.path.join(ROOT, "docs", "figures"))
    args = ap.parse_args()
    os.makedirs(args.figdir, exist_ok=True)
    volumes = [("phantom", f"3-D Shepp-Logan phantom {args.size}^3",
                shepp_logan_3d(args.size), np.ones(3), 30.0)]
    try:
        from fastmoments.box.io import sample_volume

        mri = sample_volume("example4d")
        d, h, w = mri.shape
        size = np.array([w * 2.0, h * 2.0, d * 2.2])             # mm along x, y, z
        volumes.append(("mri", f"MRI (nibabel example4d, {d} x {h} x {w})", mri,
                        size / size.max(), 0.3 * float(mri.max())))
    except ImportError:
        print("nibabel is not installed: the MRI figures are skipped")
    for name, label, vol, half, level in volumes:
        for alpha, beta in ((0.3, 0.3), (0.3, 0.7)):
            t = time.perf_counter()
            path, stats = figure(name, label, vol, half, level, alpha, beta, args.order,
                                 args.k, args.figdir)
            print(f"{path}: {time.perf_counter() - t:.1f} s, "
                  f"{os.path.getsize(path) / 1024:.0f} kB")
            for key, val in stats.items():
                print(f"  {key}: {val}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
