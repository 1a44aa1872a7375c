"""``fastmoments volume``: Jacobi (box) or 3-D Zernike (ball) moments of a volume, PSNR against
order and k, slice figures; for the ball also the rotation invariants ``||Omega_nl||``."""

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

#: The families of the command: the separable Jacobi moments of the box, the 3-D Zernike
#: moments of the ball inscribed in it (or of a ball given by --center and --radius).
FAMILIES = ("jacobi", "zernike3d")

#: Options that only one family takes: ``{option: family}``.
FAMILY_OPTIONS = {"alpha": "jacobi", "beta": "jacobi", "truncation": "jacobi",
                  "clip_plane": "jacobi", "center": "zernike3d", "radius": "zernike3d"}


def ball_center(text: str) -> Any:
    """``--center``: ``box`` (the box's centre), ``centroid`` or a point ``D,H,W``."""
    if text in ("box", "centroid"):
        return None if text == "box" else text
    parts = text.split(",")
    try:
        point = tuple(float(v) for v in parts)
    except ValueError:
        point = ()
    if len(point) != 3 or not all(math.isfinite(v) for v in point):
        raise argparse.ArgumentTypeError(
            f"must be 'box', 'centroid' or three finite numbers D,H,W (index coordinates), "
            f"got {text!r}")
    return point


def ball_radius(text: str) -> Any:
    """``--radius``: ``inscribed`` (``min(D, H, W) / 2``), ``enclosing`` or voxels > 0."""
    if text in ("inscribed", "enclosing"):
        return None if text == "inscribed" else text
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"must be 'inscribed', 'enclosing' or a number of voxels > 0, got {text!r}")
    return value


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "volume", formatter_class=HelpFormatter,
        help="Jacobi or 3-D Zernike moments of a volume: PSNR tables, timings, slice figures "
             "and (3-D Zernike) rotation invariants",
        description="Compute the moments of a volume (NIfTI .nii/.nii.gz, .npy, .npz, or the "
                    "built-in 'phantom') for each order and k, reconstruct it, and write PSNR "
                    "tables, timings and figures of reconstructed slices to --out: 3-D Jacobi "
                    "moments of the box (--family jacobi), or 3-D Zernike moments of a ball "
                    "(--family zernike3d), with their rotation invariants ||Omega_nl||.",
    )
    p.add_argument("volume", metavar="VOLUME",
                   help="a volume file, or 'phantom' for the 3-D Shepp-Logan phantom")
    p.add_argument("--family", choices=FAMILIES, default="jacobi",
                   help="'jacobi': separable moments of the box; 'zernike3d': 3-D Zernike "
                        "moments of a ball, with invariants.csv and invariants.png")
    add_orders(p, default=None,
               help="highest orders of the moments (default from the shortest side N: "
                    "jacobi N/2, 3N/2 and 3(N-1) with --truncation total, N/4, N/2 and N-1 "
                    "with box; zernike3d N/8, N/4 and N/2)")
    p.add_argument("--k", type=int_list("k", 1), default=None, metavar="K[,K...]",
                   help="points per voxel edge, same syntax as --orders (e.g. 1,7,23; default "
                        "1,3 for jacobi, 1 for zernike3d)")
    p.add_argument("--alpha", type=jacobi_parameter("alpha"), default=None,
                   help="Jacobi parameter alpha (> -1) of the weight (1-x)^alpha (1+x)^beta "
                        "on each axis; 0, 0 gives Legendre moments (jacobi only; default 0)")
    p.add_argument("--beta", type=jacobi_parameter("beta"), default=None,
                   help="Jacobi parameter beta (> -1) of the weight (1-x)^alpha (1+x)^beta "
                        "(jacobi only; default 0)")
    p.add_argument("--quadrature", default="midpoint", choices=("midpoint", "gauss"),
                   help="'midpoint' (thesis) or 'gauss'")
    p.add_argument("--truncation", default=None, choices=("total", "box"),
                   help="'total' (thesis) or 'box' (jacobi only; default total)")
    p.add_argument("--center", type=ball_center, default=None, metavar="box|centroid|D,H,W",
                   help="centre of the ball (zernike3d only): the box's centre (the default), "
                        "the intensity-weighted centroid, or a point in index coordinates")
    p.add_argument("--radius", type=ball_radius, default=None,
                   metavar="inscribed|enclosing|R",
                   help="radius of the ball in voxels (zernike3d only): min(D, H, W)/2 (the "
                        "default), the smallest ball about the centre holding every non-zero "
                        "voxel whole, or a number")
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
                        "--clip-plane=-1,1,1,0 when it starts with '-' (jacobi only)")
    p.add_argument("--keep", choices=("below", "above"), default="below",
                   help="the side of the clipping planes that is kept")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    add_progress(p)
    p.set_defaults(func=run)


def default_orders(family: str, truncation: str, shape: tuple[int, ...]) -> list[int]:
    """The orders of a run without ``--orders``, from the shortest side ``N`` of the volume:
    a low order, one where most detail is back, and the highest the grid resolves.

    >>> default_orders("jacobi", "total", (96, 96, 96))
    [48, 144, 285]
    >>> default_orders("zernike3d", "total", (96, 96, 96))
    [12, 24, 48]
    """
    n = min(shape)
    if family == "zernike3d":
        cand = [n // 8, n // 4, n // 2]
    elif truncation == "box":
        cand = [n // 4, n // 2, n - 1]
    else:
        cand = [n // 2, 3 * n // 2, 3 * (n - 1)]
    return sorted({max(1, c) for c in cand})


def display_window(vol: np.ndarray) -> tuple[float, float]:
    """Grey levels drawn from black to white: the volume's range, with the top clipped at twice
    the median of its non-zero voxels when that is lower (a bright rim such as the phantom's
    skull would otherwise squeeze the inside into a few grey levels, as a CT viewer's soft
    tissue window avoids).

    >>> v = np.zeros((4, 4, 4)); v[1:3, 1:3, 1:3] = 1.0; v[0, 0, 0] = 5.0
    >>> display_window(v)
    (0.0, 2.0)
    """
    lo, hi = float(vol.min()), float(vol.max())
    nz = vol[vol != 0]
    if nz.size:
        hi = min(hi, 2.0 * float(np.median(np.abs(nz))))
    return lo, hi if hi > lo else lo + 1.0


def _psnr(ref: np.ndarray, est: np.ndarray) -> float:
    """PSNR of a whole volume (equations 47-48 of the :ref:`Jacobi thesis <bib-jacobi-thesis>`),
    peak = the reference's range."""
    ref = ref.astype(np.float64)
    mse = float(np.mean((ref - est.astype(np.float64)) ** 2))
    peak = float(ref.max() - ref.min()) or 1.0
    return math.inf if mse == 0 else 10.0 * math.log10(peak**2 / mse)


def _write_psnr(args: argparse.Namespace, rows: list[dict], title: str, note: str = ""
                ) -> None:
    """``psnr.csv`` (one row per k and order) and ``psnr.md`` (a k x order table under
    ``title``, then ``note``) in the output folder."""
    with open(os.path.join(args.out, "psnr.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "psnr.md"), "w") as fh:
        fh.write(title)
        fh.write(_made_by() + "\n\n")
        fh.write("| k \\ order | " + " | ".join(str(o) for o in args.orders) + " |\n")
        fh.write("|---" * (len(args.orders) + 1) + "|\n")
        for k in args.k:
            vals = [next(r["psnr_db"] for r in rows if r["k"] == k and r["order"] == o)
                    for o in args.orders]
            fh.write(f"| {k} | " + " | ".join(f"{v:.2f}" for v in vals) + " |\n")
        fh.write(note)


def run(args: argparse.Namespace) -> int:
    from ._errors import UsageError
    from ._inputs import load_volume_file
    from ._outputs import OutputFolder

    out = OutputFolder(args.out)
    if args.volume == "phantom":
        for option in ("frame", "key"):
            if getattr(args, option) is not None:
                raise UsageError(f"--{option} applies to volume files, not to 'phantom'")
        from ..box.phantom import shepp_logan_3d

        size = 96 if args.size is None else args.size
        vol = shepp_logan_3d(size)
        source = f"3-D Shepp-Logan phantom, {size}^3"
    else:
        if args.size is not None:
            raise UsageError(f"--size applies to 'phantom' only, not to VOLUME {args.volume!r}")
        vol = load_volume_file(args.volume, frame=args.frame, key=args.key)
        source = os.path.basename(args.volume)
    vol = np.ascontiguousarray(vol, dtype=np.float64 if args.dtype == "float64" else np.float32)
    _resolve_family_options(args, vol.shape)
    from ._args import pick_device

    args.device = pick_device(args.device)
    with out:
        if args.family == "zernike3d":
            _ball_study(vol, source, args)
        else:
            _study(vol, source, args)
    print(f"fastmoments volume: results in {args.out}/ (start with "
          f"{os.path.join(args.out, 'psnr.md')})")
    return 0


def _resolve_family_options(args: argparse.Namespace, shape: tuple[int, ...]) -> None:
    """Refuse the options of the other family; fill in the defaults of this one."""
    from ._errors import UsageError

    for option, family in FAMILY_OPTIONS.items():
        if family != args.family and getattr(args, option) not in (None, []):
            flag = "--" + option.replace("_", "-")
            raise UsageError(f"{flag} applies to --family {family}, not to --family "
                             f"{args.family}")
    if args.family == "jacobi":
        args.alpha = 0.0 if args.alpha is None else args.alpha
        args.beta = 0.0 if args.beta is None else args.beta
        args.truncation = "total" if args.truncation is None else args.truncation
    if args.orders is None:
        args.orders = default_orders(args.family, args.truncation or "total", shape)
    if args.k is None:
        args.k = [1] if args.family == "zernike3d" else [1, 3]


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
    _write_psnr(args, rows,
                f"PSNR (dB) of {source} {vol.shape} reconstructed from Jacobi moments, "
                f"alpha={args.alpha}, beta={args.beta}, {args.quadrature}, "
                f"truncation={args.truncation}, {args.dtype}\n\n")
    if args.clip_plane:
        _clipped(vol, J, args)
    if not args.no_figures:
        _figures(vol, recs, args, source, {(r["order"], r["k"]): r["psnr_db"] for r in rows})
    print(f"wrote {os.path.join(args.out, 'psnr.csv')}, psnr.md"
          + ("" if args.no_figures else ", slices_xy.png, slices_planes.png"))


def _ball_study(vol: np.ndarray, source: str, args: argparse.Namespace) -> None:
    """3-D Zernike moments of ``vol`` on a ball: for each k one plan of the highest order (the
    moments of a lower order are the same numbers), reconstructions of orders ``0..T`` for
    each T, PSNR and NMSE over the voxels whose centre is in the ball, the invariants
    ``||Omega_nl||``, and figures."""
    import torch

    from .._progress import progress_bar
    from ..ball import Zernike3DTransform, nmse, psnr
    from ..ball.transform import placement
    from ._args import want_progress
    from ._errors import UsageError

    try:
        center, radius = placement(torch.from_numpy(vol), args.center, args.radius)
    except ValueError as exc:
        raise UsageError(f"--center/--radius: {exc}") from None
    top = max(args.orders)
    rows, recs, invariants = [], {}, {}
    bar = progress_bar(len(args.k) * len(args.orders), desc="fastmoments volume",
                       show=want_progress(args.progress), unit="cell")
    for k in args.k:
        t0 = time.perf_counter()
        try:
            plan = Zernike3DTransform(vol.shape, top, k=k, quadrature=args.quadrature,
                                      center=center, radius=radius, dtype=args.dtype,
                                      device=args.device)
        except ValueError as exc:  # a ball that holds no voxel
            raise UsageError(f"--center/--radius: {exc}") from None
        t1 = time.perf_counter()
        Om = plan.forward(vol)
        _sync(plan.device, torch)
        t2 = time.perf_counter()
        mask = plan.reconstruction_mask
        invariants[k] = np.asarray(Om.invariants(), dtype=np.float64)
        for order in args.orders:
            t3 = time.perf_counter()
            rec = np.asarray(Om.reconstruct(orders=order))
            _sync(plan.device, torch)
            t4 = time.perf_counter()
            rows.append({"order": order, "k": k,
                         "psnr_db": round(float(psnr(vol, rec, mask=mask)), 4),
                         "nmse": float(f"{float(nmse(vol, rec, mask=mask)):.6g}"),
                         "plan_s": round(t1 - t0, 4), "moments_s": round(t2 - t1, 4),
                         "reconstruction_s": round(t4 - t3, 4)})
            bar.update(1)
            print(f"order {order:5d}  k {k:3d}  PSNR {rows[-1]['psnr_db']:8.3f} dB  "
                  f"NMSE {rows[-1]['nmse']:.3e}  moments (order {top}) {t2 - t1:.3f} s  "
                  f"reconstruction {t4 - t3:.3f} s", flush=True)
            if not args.no_figures:
                mid = [s // 2 for s in vol.shape]
                recs[(order, k)] = [rec[mid[0]], rec[:, mid[1]], rec[:, :, mid[2]]]
    bar.close()
    placed = (plan.ball_center, plan.ball_radius)
    _ball_tables(vol, source, args, rows, Om, invariants, placed)
    if not args.no_figures:
        psnr_of = {(r["order"], r["k"]): r["psnr_db"] for r in rows}
        _ball_figures(vol, recs, args, source, psnr_of, placed)
        _invariants_figure(Om.pairs, invariants, source, placed, args.out)
    print(f"wrote {os.path.join(args.out, 'psnr.csv')}, psnr.md, invariants.csv, moments.npz"
          + ("" if args.no_figures else ", slices_xy.png, slices_planes.png, invariants.png"))


def _ball_text(placed: tuple) -> str:
    (cd, ch, cw), r = placed
    return f"ball centre ({cd:g}, {ch:g}, {cw:g}), radius {r:g} voxels"


def _ball_tables(vol: np.ndarray, source: str, args: argparse.Namespace, rows: list,
                 Om: Any, invariants: dict, placed: tuple) -> None:
    """``psnr.csv``, ``psnr.md``, ``invariants.csv`` (one column per k) and ``moments.npz``
    (the moments of the last k: ``nlm``, ``values`` for ``m >= 0``, ``center``, ``radius``)."""
    _write_psnr(args, rows,
                f"PSNR (dB) of {source} {vol.shape} reconstructed from 3-D Zernike moments, "
                f"{_ball_text(placed)}, {args.quadrature}, {args.dtype}; over the voxels "
                f"whose centre lies in the ball\n\n",
                note=f"\nThe moments are computed once per k at order {max(args.orders)} "
                     f"(moments_s in psnr.csv); a lower order's reconstruction uses the "
                     f"moments with n <= its order. Invariants ||Omega_nl|| in "
                     f"invariants.csv.\n")
    with open(os.path.join(args.out, "invariants.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["n", "l", *(f"k={k}" for k in args.k)])
        for i, (n, l) in enumerate(Om.pairs):
            w.writerow([n, l, *(repr(float(invariants[k][i])) for k in args.k)])
    np.savez(os.path.join(args.out, "moments.npz"), nlm=Om.nlm,
             values=np.asarray(Om.values()), center=np.asarray(placed[0]),
             radius=np.float64(placed[1]), k=np.int64(args.k[-1]))


def _ball_figures(vol: np.ndarray, recs: dict, args: argparse.Namespace, source: str,
                  psnr: dict, placed: tuple) -> None:
    """``slices_xy.png`` and ``slices_planes.png`` as for the box, the ball outlined."""
    from ..viz.figures import save_figure, slices_figure

    mid = [s // 2 for s in vol.shape]
    window = display_window(vol)

    def shown(a: Any) -> np.ndarray:
        return np.clip(np.asarray(a), *window)

    ball = _ball_text(placed)
    fig = slices_figure(shown(vol[mid[0]]), {key: shown(v[0]) for key, v in recs.items()},
                        args.orders, args.k, psnr,
                        f"x-y slice {mid[0]} of {source}, 3-D Zernike moments ({ball}); PSNR "
                        f"over the ball" + _window_note(vol, window))
    save_figure(fig, os.path.join(args.out, "slices_xy.png"), dpi=110, bbox_inches=None)
    top = (args.orders[-1], args.k[-1])
    (cd, ch, cw), r = placed
    circles = []
    for (a, b), dist in (((cw, ch), mid[0] - cd), ((cw, cd), mid[1] - ch),
                         ((ch, cd), mid[2] - cw)):
        circles.append(((a, b), math.sqrt(r * r - dist * dist)) if abs(dist) < r else None)
    planes = {("x-y", 0): vol[mid[0]], ("x-z", 1): vol[:, mid[1]], ("y-z", 2): vol[:, :, mid[2]]}
    _planes_figure(planes, recs[top], top, psnr[top], ball + _window_note(vol, window),
                   source, args.out, window=window, family="3-D Zernike moments",
                   psnr_of="the ball (dashed)", circles=circles)


def _invariants_figure(pairs: list, invariants: dict, source: str, placed: tuple,
                       out: str) -> None:
    """``invariants.png``: ``log10 ||Omega_nl||`` over ``(l, n)`` for the last k, and the share
    of the energy :math:`\\sum_l ||Omega_nl||^2` in each order ``n`` for every k."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..viz.figures import save_figure

    ks = list(invariants)
    order = max(n for n, _l in pairs)
    grid = np.full((order + 1, order + 1), np.nan)
    last = invariants[ks[-1]]
    tiny = max(float(last.max()), 1e-300) * 1e-16
    for (n, l), v in zip(pairs, last, strict=True):
        grid[n, l] = math.log10(max(float(v), tiny))
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(9.6, 4.2))
    im = a0.imshow(grid, origin="lower", cmap="viridis", aspect="auto",
                   extent=(-0.5, order + 0.5, -0.5, order + 0.5))
    a0.set_xlabel("degree l")
    a0.set_ylabel("order n")
    a0.set_title(f"log10 ||Omega_nl|| (k = {ks[-1]})", fontsize=9)
    fig.colorbar(im, ax=a0, label="log10 ||Omega_nl||")
    n_of = np.array([n for n, _l in pairs])
    for k in ks:
        energy = np.bincount(n_of, weights=invariants[k] ** 2, minlength=order + 1)
        share = energy / max(float(energy.sum()), 1e-300)
        a1.semilogy(np.arange(order + 1), np.maximum(share, 1e-300), ".-", ms=3,
                    label=f"k = {k}")
    a1.set_xlabel("order n")
    a1.set_ylabel("share of sum ||Omega_nl||^2")
    a1.set_title("energy per order (sum over l)", fontsize=9)
    a1.grid(True, which="major", alpha=0.3)
    a1.legend(fontsize=8)
    import textwrap

    fig.suptitle(textwrap.fill(f"3-D Zernike invariants ||Omega_nl|| of {source}, "
                               f"{_ball_text(placed)}: unchanged by rotations about the ball's "
                               f"centre", 110), fontsize=9)
    fig.tight_layout()
    save_figure(fig, os.path.join(out, "invariants.png"), dpi=110)


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


def _window_note(vol: np.ndarray, window: tuple[float, float]) -> str:
    """What the figures' titles say about a display window that clips the volume."""
    if window[1] < float(vol.max()):
        return f"; grey levels {window[0]:g} to {window[1]:g} (brighter voxels drawn white)"
    return ""


def _figures(vol: np.ndarray, recs: dict, args: argparse.Namespace, source: str,
             psnr: dict) -> None:
    """``slices_xy.png``: the middle x-y slice for every (order, k); ``slices_planes.png``: the
    three middle planes at the highest order and k. Every reconstruction's title gives the PSNR
    of the whole volume; one grey-level colorbar per figure, in the window of
    :func:`display_window`."""
    from ..viz.figures import save_figure, slices_figure

    orders, ks = args.orders, args.k
    params = f"alpha={args.alpha:g}, beta={args.beta:g}"
    mid = [s // 2 for s in vol.shape]
    window = display_window(vol)

    def shown(a: Any) -> np.ndarray:
        return np.clip(np.asarray(a), *window)

    fig = slices_figure(shown(vol[mid[0]]), {key: shown(v[0]) for key, v in recs.items()},
                        orders, ks, psnr,
                        f"x-y slice {mid[0]} of {source}, Jacobi moments ({params}); "
                        f"PSNR of the whole volume" + _window_note(vol, window))
    save_figure(fig, os.path.join(args.out, "slices_xy.png"), dpi=110, bbox_inches=None)
    top = (orders[-1], ks[-1])
    planes = {("x-y", 0): vol[mid[0]], ("x-z", 1): vol[:, mid[1]], ("y-z", 2): vol[:, :, mid[2]]}
    _planes_figure(planes, recs[top], top, psnr[top], params + _window_note(vol, window),
                   source, args.out, window=window)


def _planes_figure(planes: dict, recs: list, top: tuple, value: float, params: str,
                   source: str, out: str, filename: str = "slices_planes.png",
                   psnr_of: str = "the whole volume", window: tuple | None = None,
                   family: str = "Jacobi moments", circles: list | None = None) -> None:
    """The three middle planes of the input over their reconstruction; ``circles`` (one
    ``(centre (col, row), radius)`` or ``None`` per plane) outlines the ball on the input."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..viz.figures import save_figure

    if window is None:
        window = (min(float(p.min()) for p in planes.values()),
                  max(float(p.max()) for p in planes.values()))
    lo, hi = window
    fig, axes = plt.subplots(2, 3, figsize=(8.2, 5.2))
    im = None
    for (name, j), orig in planes.items():
        im = axes[0, j].imshow(orig, cmap="gray", vmin=lo, vmax=hi)
        axes[0, j].set_title(f"{name} original", fontsize=8)
        axes[1, j].imshow(np.asarray(recs[j]), cmap="gray", vmin=lo, vmax=hi)
        axes[1, j].set_title(f"{name}, order {top[0]}, k = {top[1]}\nPSNR {value:.2f} dB",
                             fontsize=8)
        if circles is not None and circles[j] is not None:
            (cx, cy), r = circles[j]
            for row in (0, 1):
                axes[row, j].add_patch(matplotlib.patches.Circle(
                    (cx, cy), r, fill=False, color="tab:orange", lw=0.8, ls="--"))
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    import textwrap

    fig.suptitle(textwrap.fill(f"middle planes of {source}, {family} ({params}); PSNR "
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
