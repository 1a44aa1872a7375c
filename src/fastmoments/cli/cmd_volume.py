"""``fastmoments volume``: Jacobi moments of a volume, PSNR against order and k, slice figures."""

from __future__ import annotations

import argparse
import csv
import math
import os
import time
from typing import Any

import numpy as np

from ._args import (
    HelpFormatter,
    add_device,
    add_orders,
    add_out,
    add_progress,
    clip_plane,
    int_list,
    jacobi_parameter,
    natural,
    positive_int,
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "volume", formatter_class=HelpFormatter,
        help="Jacobi moments of a 3-D volume: PSNR tables, timings and slice figures",
        description="Compute 3-D Jacobi moments of a volume (NIfTI .nii/.nii.gz, .npy, .npz, or "
                    "the built-in 'phantom') for each order and k, reconstruct it, and write "
                    "PSNR tables, timings and figures of reconstructed slices to --out.",
    )
    p.add_argument("volume", metavar="VOLUME",
                   help="a volume file, or 'phantom' for the 3-D Shepp-Logan phantom")
    add_orders(p, default=[20, 40], help="highest orders of the moments", alias="--order")
    p.add_argument("--k", type=int_list("k", 1), default=[1, 3], metavar="K[,K...]",
                   help="points per voxel edge, same syntax as --orders (e.g. 1,7,23)")
    p.add_argument("--alpha", type=jacobi_parameter("alpha"), default=0.0,
                   help="Jacobi parameter alpha (> -1) of the weight (1-x)^alpha (1+x)^beta "
                        "on each axis; 0, 0 gives Legendre moments")
    p.add_argument("--beta", type=jacobi_parameter("beta"), default=0.0,
                   help="Jacobi parameter beta (> -1) of the weight (1-x)^alpha (1+x)^beta")
    p.add_argument("--quadrature", default="midpoint", choices=("midpoint", "gauss"),
                   help="'midpoint' (thesis) or 'gauss'")
    p.add_argument("--truncation", default="total", choices=("total", "box"),
                   help="'total' (thesis) or 'box'")
    p.add_argument("--size", type=positive_int, default=None,
                   help="phantom voxels per side (default 96; for 'phantom' only)")
    p.add_argument("--frame", type=natural, default=None,
                   help="frame of a 4-D NIfTI series (default: the first; for such series only)")
    p.add_argument("--key", default=None, metavar="NAME",
                   help="the array of an .npz file to use; needed when the file holds several")
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"),
                   help="float32 or float64")
    add_device(p)
    add_out(p, "volume")
    p.add_argument("--clip-plane", action="append", default=[], type=clip_plane,
                   metavar="NX,NY,NZ,D",
                   help="also reconstruct the last order and k clipped by the plane "
                        "nx*x + ny*y + nz*z = d (x along W, y along H, z along D, each in "
                        "[-1, 1]; thesis Sec. 6.2); repeat to intersect several planes; write "
                        "--clip-plane=-1,1,1,0 when it starts with '-'")
    p.add_argument("--keep", choices=("below", "above"), default="below",
                   help="the side of the clipping planes that is kept")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    add_progress(p)
    p.set_defaults(func=run)


def _psnr(ref: np.ndarray, est: np.ndarray) -> float:
    """PSNR of a whole volume (equations 47-48 of the :ref:`Jacobi thesis <bib-jacobi-thesis>`),
    peak = the reference's range."""
    ref = ref.astype(np.float64)
    mse = float(np.mean((ref - est.astype(np.float64)) ** 2))
    peak = float(ref.max() - ref.min()) or 1.0
    return math.inf if mse == 0 else 10.0 * math.log10(peak**2 / mse)


def run(args: argparse.Namespace) -> int:
    from ..box.phantom import shepp_logan_3d
    from ._errors import UsageError
    from ._inputs import load_volume_file
    from ._outputs import OutputFolder

    out = OutputFolder(args.out)
    if args.volume == "phantom":
        for option in ("frame", "key"):
            if getattr(args, option) is not None:
                raise UsageError(f"--{option} applies to volume files, not to 'phantom'")
        size = 96 if args.size is None else args.size
        vol = shepp_logan_3d(size)
        source = f"3-D Shepp-Logan phantom, {size}^3"
    else:
        if args.size is not None:
            raise UsageError(f"--size applies to 'phantom' only, not to VOLUME {args.volume!r}")
        vol = load_volume_file(args.volume, frame=args.frame, key=args.key)
        source = os.path.basename(args.volume)
    vol = np.ascontiguousarray(vol, dtype=np.float64 if args.dtype == "float64" else np.float32)
    from ._args import pick_device

    args.device = pick_device(args.device)
    with out:
        _study(vol, source, args)
    print(f"fastmoments volume: results in {args.out}/ (start with "
          f"{os.path.join(args.out, 'psnr.md')})")
    return 0


def _study(vol: np.ndarray, source: str, args: argparse.Namespace) -> None:
    """Moments, reconstructions, PSNR tables and figures of ``vol`` into ``args.out``."""
    import torch

    from .._progress import progress_bar
    from ..box import JacobiTransform
    from ._args import want_progress

    rows = []
    recs: dict[tuple[int, int], np.ndarray] = {}
    bar = progress_bar(len(args.k) * len(args.orders), desc="fastmoments volume",
                       show=want_progress(args.progress), unit="cell")
    for k in args.k:
        for order in args.orders:
            t0 = time.perf_counter()
            plan = JacobiTransform(vol.shape, order, alpha=args.alpha, beta=args.beta, k=k,
                                   quadrature=args.quadrature, truncation=args.truncation,
                                   dtype=args.dtype, device=args.device)
            t1 = time.perf_counter()
            J = plan.forward(vol)
            _sync(plan.device, torch)
            t2 = time.perf_counter()
            rec = J.reconstruct()
            _sync(plan.device, torch)
            t3 = time.perf_counter()
            rows.append({"order": order, "k": k, "psnr_db": round(_psnr(vol, rec), 4),
                         "plan_s": round(t1 - t0, 4), "moments_s": round(t2 - t1, 4),
                         "reconstruction_s": round(t3 - t2, 4)})
            bar.update(1)
            print(f"order {order:5d}  k {k:3d}  PSNR {rows[-1]['psnr_db']:8.3f} dB  "
                  f"moments {t2 - t1:.3f} s  reconstruction {t3 - t2:.3f} s", flush=True)
            if not args.no_figures:
                mid = [s // 2 for s in vol.shape]
                recs[(order, k)] = [J.slice("xy", mid[0]), J.slice("xz", mid[1]),
                                    J.slice("yz", mid[2])]
    bar.close()
    with open(os.path.join(args.out, "psnr.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "psnr.md"), "w") as fh:
        fh.write(f"PSNR (dB) of {source} {vol.shape} reconstructed from Jacobi moments, "
                 f"alpha={args.alpha}, beta={args.beta}, {args.quadrature}, "
                 f"truncation={args.truncation}, {args.dtype}\n\n")
        fh.write(_made_by() + "\n\n")
        fh.write("| k \\ order | " + " | ".join(str(o) for o in args.orders) + " |\n")
        fh.write("|---" * (len(args.orders) + 1) + "|\n")
        for k in args.k:
            vals = [next(r["psnr_db"] for r in rows if r["k"] == k and r["order"] == o)
                    for o in args.orders]
            fh.write(f"| {k} | " + " | ".join(f"{v:.2f}" for v in vals) + " |\n")
    if args.clip_plane:
        _clipped(vol, J, args)
    if not args.no_figures:
        _figures(vol, recs, args, source, {(r["order"], r["k"]): r["psnr_db"] for r in rows})
    print(f"wrote {os.path.join(args.out, 'psnr.csv')}, psnr.md"
          + ("" if args.no_figures else ", slices_xy.png, slices_planes.png"))


def _clipped(vol: np.ndarray, J: Any, args: argparse.Namespace) -> None:
    """The last (order, k) reconstruction clipped by ``--clip-plane``: ``clipped.npy`` (NaN where
    clipped away), its PSNR over the kept voxels in ``psnr.md`` and ``clipped_planes.png``."""
    from ..box import Plane

    planes = [Plane(v[:3], v[3], keep=args.keep) for v in args.clip_plane]
    clipped = np.asarray(J.reconstruct(clip=planes))
    np.save(os.path.join(args.out, "clipped.npy"), clipped)
    kept = np.isfinite(clipped)
    value = _psnr(vol[kept], clipped[kept]) if kept.any() else math.nan
    desc = " and ".join(f"{p.normal[0]:g}x{p.normal[1]:+g}y{p.normal[2]:+g}z "
                        f"{'<=' if p.keep == 'below' else '>='} {p.offset:g}" for p in planes)
    with open(os.path.join(args.out, "psnr.md"), "a") as fh:
        fh.write(f"\nClipped by {desc} (order {args.orders[-1]}, k = {args.k[-1]}): "
                 f"{100 * kept.mean():.1f}% of the voxels kept, PSNR over them "
                 f"{value:.2f} dB (clipped.npy, NaN where clipped away)\n")
    print(f"clipped by {desc}: {100 * kept.mean():.1f}% kept, PSNR {value:.2f} dB")
    if not args.no_figures:
        mid = [s // 2 for s in vol.shape]
        cuts = {("x-y", 0): vol[mid[0]], ("x-z", 1): vol[:, mid[1]], ("y-z", 2): vol[:, :, mid[2]]}
        recs = [clipped[mid[0]], clipped[:, mid[1]], clipped[:, :, mid[2]]]
        _planes_figure(cuts, recs, (args.orders[-1], args.k[-1]), value,
                       f"alpha={args.alpha:g}, beta={args.beta:g}; clipped by {desc}",
                       os.path.basename(str(args.volume)), args.out,
                       filename="clipped_planes.png", psnr_of="the kept voxels")


def _sync(device: Any, torch: Any) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _figures(vol: np.ndarray, recs: dict, args: argparse.Namespace, source: str,
             psnr: dict) -> None:
    """``slices_xy.png``: the middle x-y slice for every (order, k); ``slices_planes.png``: the
    three middle planes at the highest order and k. Every reconstruction's title gives the PSNR
    of the whole volume; one grey-level colorbar per figure."""
    from ..viz.figures import save_figure, slices_figure

    orders, ks = args.orders, args.k
    params = f"alpha={args.alpha:g}, beta={args.beta:g}"
    mid = [s // 2 for s in vol.shape]
    fig = slices_figure(vol[mid[0]], {key: v[0] for key, v in recs.items()}, orders, ks, psnr,
                        f"x-y slice {mid[0]} of {source}, Jacobi moments ({params}); "
                        f"PSNR of the whole volume")
    save_figure(fig, os.path.join(args.out, "slices_xy.png"), dpi=110, bbox_inches=None)
    top = (orders[-1], ks[-1])
    planes = {("x-y", 0): vol[mid[0]], ("x-z", 1): vol[:, mid[1]], ("y-z", 2): vol[:, :, mid[2]]}
    _planes_figure(planes, recs[top], top, psnr[top], params, source, args.out)


def _planes_figure(planes: dict, recs: list, top: tuple, value: float, params: str,
                   source: str, out: str, filename: str = "slices_planes.png",
                   psnr_of: str = "the whole volume") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..viz.figures import save_figure

    lo = min(float(p.min()) for p in planes.values())
    hi = max(float(p.max()) for p in planes.values())
    fig, axes = plt.subplots(2, 3, figsize=(8.2, 5.2))
    im = None
    for (name, j), orig in planes.items():
        im = axes[0, j].imshow(orig, cmap="gray", vmin=lo, vmax=hi)
        axes[0, j].set_title(f"{name} original", fontsize=8)
        axes[1, j].imshow(np.asarray(recs[j]), cmap="gray", vmin=lo, vmax=hi)
        axes[1, j].set_title(f"{name}, order {top[0]}, k = {top[1]}\nPSNR {value:.2f} dB",
                             fontsize=8)
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    import textwrap

    fig.suptitle(textwrap.fill(f"middle planes of {source}, Jacobi moments ({params}); PSNR "
                               f"of {psnr_of}", 100), fontsize=9)
    fig.tight_layout(rect=(0, 0, 0.9, 1))
    fig.colorbar(im, cax=fig.add_axes((0.91, 0.1, 0.02, 0.75)), label="intensity")
    save_figure(fig, os.path.join(out, filename), dpi=110, bbox_inches=None)


def _made_by() -> str:
    """The line that records the library that made an output."""
    from .._collection_outputs import library_identity

    made_by = library_identity()
    commit = f", commit {made_by['commit'][:12]}" if made_by["commit"] else ""
    return f"Made by fastmoments {made_by['version']}{commit}."
