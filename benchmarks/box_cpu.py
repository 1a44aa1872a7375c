"""Box (Jacobi) moments on the CPU: speed of the 2-D jobs, PSNR tables, and the figures.

* 2-D: a 512 x 512 photograph, order 500, k = 23, moments + reconstruction (target < 2 s on
  2 cores), and 1024 x 1024, order 1000, k = 23 compared with the CPU time that the thesis
  quotes for the same job (4.8221 s, the CPU algorithm of its ref. [20]). Each row has its
  error against a float64 reference computed with plain separable products.
* PSNR against order and k (the thesis's Tables 4 and 6 layout) for alpha = beta = 0.3 and
  alpha = 0.3, beta = 0.7, on the scikit-image "camera" photograph (2-D) and on the real MRI
  volume shipped with nibabel (3-D, at its own size).
* Figures: PSNR curves, reconstructed slices across order and k (thesis Figs. 14-16) and a
  clipped volume (Fig. 17), all computed straight from the moments.

Run from the repository root: ``python benchmarks/box_cpu.py`` (``--quick`` for a smoke run).
Writes ``benchmarks/results/box_cpu.json``, ``box_cpu.md`` and ``docs/figures/box_*.png``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np
import torch

sys.path.append(os.path.join(os.path.dirname(__file__), "..", "src"))

from fastmoments.box import JacobiTransform
from fastmoments.box.io import sample_volume
from fastmoments.box.phantom import shepp_logan_3d
from fastmoments.data import sample_image

ROOT = os.path.join(os.path.dirname(__file__), "..")


def psnr(ref: np.ndarray, est: np.ndarray, peak: float) -> float:
    mse = float(np.mean((ref.astype(np.float64) - est.astype(np.float64)) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(peak**2 / mse)


def timed(fn, reps: int) -> list[float]:
    fn()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e3)
    return out


def speed_rows(quick: bool) -> list[dict]:
    rows = []
    jobs = [(512, 500, 23)] + ([] if quick else [(1024, 1000, 23)])
    if quick:
        jobs = [(128, 100, 5)]
    for n, order, k in jobs:
        img = sample_image("camera", n)
        x32 = img.astype(np.float32)
        for a, b in ((0.3, 0.3), (0.3, 0.7)):
            ref = JacobiTransform((n, n), order, alpha=a, beta=b, k=k, dtype=torch.float64)
            A0, A1 = ref.analysis_matrices()
            S0, S1 = ref.synthesis_matrices()
            j64 = (A0 @ torch.from_numpy(img) @ A1.T).masked_fill(ref.outside(), 0.0)
            r64 = (S0.T @ j64 @ S1).numpy()
            variants = [("engine (default: plain products in 2-D)", {}),
                        ("engine, total-degree blocks of 64", {"block": 64})]
            if a == b:
                variants.append(("engine, parity on", {"parity": True}))
            for name, kw in variants:
                t0 = time.perf_counter()
                plan = JacobiTransform((n, n), order, alpha=a, beta=b, k=k, **kw)
                build = time.perf_counter() - t0
                fwd = timed(lambda plan=plan, x32=x32: plan.forward(x32), 5)
                J = plan.forward(x32)
                inv = timed(lambda plan=plan, J=J: plan.inverse(J), 5)
                both = timed(lambda plan=plan, x32=x32: plan.inverse(plan.forward(x32)), 5)
                rec = plan.inverse(J)
                jn = J.numpy().astype(np.float64)
                rows.append({
                    "shape": [n, n], "order": order, "k": k, "alpha": a, "beta": b,
                    "variant": name, "dtype": "float32", "plan_build_s": build,
                    "forward_ms": statistics.median(fwd), "inverse_ms": statistics.median(inv),
                    "both_ms": statistics.median(both), "both_min_ms": min(both),
                    "both_max_ms": max(both),
                    "rel_err_moments_vs_f64": float(np.linalg.norm(jn - j64.numpy())
                                                    / np.linalg.norm(j64.numpy())),
                    "rel_err_recon_vs_f64": float(np.linalg.norm(rec - r64)
                                                  / np.linalg.norm(r64)),
                    "psnr_db": psnr(img, rec, 255.0)})
                r = rows[-1]
                print(f"{n}^2 order {order} k {k} a={a} b={b} {name:32s} fwd {r['forward_ms']:8.1f}"
                      f" inv {r['inverse_ms']:8.1f} both {r['both_ms']:8.1f} ms  plan "
                      f"{build:.2f} s  err {r['rel_err_moments_vs_f64']:.1e}  PSNR "
                      f"{r['psnr_db']:.2f}", flush=True)
    return rows


def psnr_tables(quick: bool) -> list[dict]:
    rows = []
    img = sample_image("camera", 512 if not quick else 64)
    real = sample_volume("example4d")
    real = (real - real.min()) / (real.max() - real.min()) * 255.0
    orders2 = [100, 200, 300, 400, 500] if not quick else [10, 20]
    orders3 = [10, 20, 40, 60, 80] if not quick else [5, 10]
    ks = [1, 3, 7, 11, 15, 19, 23] if not quick else [1, 3]
    for a, b in ((0.3, 0.3), (0.3, 0.7)):
        for k in ks:
            for name, x, orders in (("camera 512x512", img, orders2),
                                    ("MRI example4d 24x96x128", real, orders3)):
                for order in orders:
                    plan = JacobiTransform(x.shape, order, alpha=a, beta=b, k=k,
                                           dtype=torch.float64)
                    t = time.perf_counter()
                    rec = plan.inverse(plan.forward(x))
                    rows.append({"data": name, "alpha": a, "beta": b, "k": k, "order": order,
                                 "psnr_db": psnr(x, rec, 255.0),
                                 "ms": (time.perf_counter() - t) * 1e3})
            print(f"tables a={a} b={b} k={k} done", flush=True)
    return rows


def figures(rows: list[dict], quick: bool, figdir: str) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(figdir, exist_ok=True)
    made = {}
    # PSNR curves
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), squeeze=False)
    for i, data in enumerate(("camera 512x512", "MRI example4d 24x96x128")):
        for j, (a, b) in enumerate(((0.3, 0.3), (0.3, 0.7))):
            ax = axes[i, j]
            for k in sorted({r["k"] for r in rows}):
                sel = [r for r in rows if r["data"] == data and r["k"] == k
                       and (r["alpha"], r["beta"]) == (a, b)]
                ax.plot([r["order"] for r in sel], [r["psnr_db"] for r in sel], "o-",
                        label=f"k={k}", ms=3)
            ax.set_title(f"{data}, alpha={a}, beta={b}", fontsize=9)
            ax.set_xlabel("order")
            ax.set_ylabel("PSNR (dB)")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(figdir, "box_psnr_cpu.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    made["psnr"] = path
    # slices across orders and k (Figs. 14-16), straight from the moments
    n = 128 if not quick else 32
    vols = {"3-D Shepp-Logan phantom 128^3": shepp_logan_3d(n).astype(np.float64),
            "MRI example4d (24x96x128)": sample_volume("example4d").astype(np.float64)}
    orders = [20, 60, 120] if not quick else [5, 10]
    ks = [1, 3, 15]
    for vname, vol in vols.items():
        o_list = orders if vol.shape[0] > 64 else [10, 30, 60]
        fig, axes = plt.subplots(len(o_list), len(ks) + 1,
                                 figsize=(2.3 * (len(ks) + 1), 2.3 * len(o_list)))
        lo, hi = float(vol.min()), float(vol.max())
        mid = vol.shape[0] // 2
        for i, o in enumerate(o_list):
            axes[i, 0].imshow(vol[mid], cmap="gray", vmin=lo, vmax=hi)
            axes[i, 0].set_ylabel(f"order {o}", fontsize=8)
            for j, k in enumerate(ks):
                plan = JacobiTransform(vol.shape, o, alpha=0.3, beta=0.3, k=k,
                                       dtype=torch.float64)
                J = plan.forward(vol)
                sl = J.slice("xy", mid)
                axes[i, j + 1].imshow(sl, cmap="gray", vmin=lo, vmax=hi)
                axes[i, j + 1].set_title(f"k={k}: {psnr(vol[mid], sl, hi - lo):.1f} dB",
                                         fontsize=8)
        axes[0, 0].set_title("original", fontsize=8)
        for ax in axes.flat:
            ax.set_xticks([])
            ax.set_yticks([])
        fig.suptitle(f"x-y slice {mid} of {vname} from Jacobi moments (alpha=beta=0.3)",
                     fontsize=9)
        fig.tight_layout()
        key = "phantom" if "phantom" in vname else "mri"
        path = os.path.join(figdir, f"box_slices_{key}.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        made[f"slices_{key}"] = path
    # three planes (Fig. 16) and a clipped volume (Fig. 17)
    vol = vols["3-D Shepp-Logan phantom 128^3"]
    plan = JacobiTransform(vol.shape, 120 if not quick else 10, alpha=0.3, beta=0.3, k=7,
                           dtype=torch.float64)
    J = plan.forward(vol)
    d, h, w = vol.shape
    cd, ch, cw = d // 2, h // 2, w // 2
    fig = plt.figure(figsize=(11, 4))
    for idx, (plane, i) in enumerate((("xy", cd), ("xz", ch), ("yz", cw))):
        ax = fig.add_subplot(1, 4, idx + 1)
        ax.imshow(J.slice(plane, i), cmap="gray", vmin=0, vmax=255)
        ax.set_title(f"{plane} plane at index {i}", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    ax = fig.add_subplot(1, 4, 4, projection="3d")
    # the box shown: the head's extent, with the octant towards the viewer cut away
    d0, d1 = d // 8, d - d // 8
    h0, h1 = h // 8, h - h // 8
    w0, w1 = w // 8, w - w // 8
    t = time.perf_counter()
    faces = {
        "top": J.reconstruct(region=(d1 - 1, slice(h0, h1), slice(w0, w1))),
        "front": J.reconstruct(region=(slice(d0, d1), h0, slice(w0, w1))),
        "right": J.reconstruct(region=(slice(d0, d1), slice(h0, h1), w1 - 1)),
        "cut_z": J.reconstruct(region=(cd, slice(h0, ch), slice(cw, w1))),
        "cut_y": J.reconstruct(region=(slice(cd, d1), ch, slice(cw, w1))),
        "cut_x": J.reconstruct(region=(slice(cd, d1), slice(h0, ch), cw)),
    }
    clip_s = time.perf_counter() - t
    cmap = plt.get_cmap("gray")

    def colours(a, hide=None):
        c = cmap(np.clip(a / 255.0, 0, 1))
        if hide is not None:
            c[hide] = (1, 1, 1, 0)
        return c

    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    polys, cols = [], []

    def face(values, fixed_axis, fixed_at, start, hide=None):
        """Quads of one face: ``values`` indexed by the two free axes in (z, y, x) order."""
        rgba = colours(values, hide)
        free = [a for a in (0, 1, 2) if a != fixed_axis]
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                if rgba[i, j, 3] == 0:
                    continue
                quad = []
                for di, dj in ((0, 0), (1, 0), (1, 1), (0, 1)):
                    p = [0.0, 0.0, 0.0]
                    p[fixed_axis] = fixed_at
                    p[free[0]] = start[0] + i + di
                    p[free[1]] = start[1] + j + dj
                    quad.append((p[2], p[1], p[0]))          # plot as (x, y, z)
                polys.append(quad)
                cols.append(rgba[i, j])

    yy, xx = np.mgrid[h0:h1, w0:w1]
    face(faces["top"], 0, d1, (h0, w0), (yy < ch) & (xx >= cw))
    zz, xx = np.mgrid[d0:d1, w0:w1]
    face(faces["front"], 1, h0, (d0, w0), (zz >= cd) & (xx >= cw))
    zz, yy = np.mgrid[d0:d1, h0:h1]
    face(faces["right"], 2, w1, (d0, h0), (zz >= cd) & (yy < ch))
    face(faces["cut_z"], 0, cd, (h0, cw))
    face(faces["cut_y"], 1, ch, (cd, cw))
    face(faces["cut_x"], 2, cw, (cd, h0))
    ax.add_collection3d(Poly3DCollection(polys, facecolors=cols, edgecolors="none",
                                         linewidths=0, antialiased=False))
    ax.set_xlim(w0, w1)
    ax.set_ylim(h0, h1)
    ax.set_zlim(d0, d1)
    ax.set_box_aspect((w1 - w0, h1 - h0, d1 - d0))
    ax.view_init(elev=25, azim=-60)
    ax.set_axis_off()
    ax.set_title("clipped volume (faces from the moments)", fontsize=8)
    fig.suptitle(f"Phantom {d}^3 reconstructed from order-{plan.order} Jacobi moments "
                 "(alpha=beta=0.3, k=7): slices and a clipped view", fontsize=9)
    fig.tight_layout()
    path = os.path.join(figdir, "box_clip_phantom.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    made["clip"] = path
    made["clip_faces_seconds"] = clip_s
    return made


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    ap.add_argument("--figdir", default=os.path.join(ROOT, "docs", "figures"))
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
            "numpy": np.__version__, "python": platform.python_version(),
            "load_average_at_start": os.getloadavg()[0],
            "note": "shared machine: other engineers' jobs ran at the same time"}
    print(meta, flush=True)
    speed = speed_rows(args.quick)
    tables = psnr_tables(args.quick)
    figs = figures(tables, args.quick, args.figdir)
    os.makedirs(args.out, exist_ok=True)
    stem = "box_cpu" if not args.quick else "box_cpu_quick"
    with open(os.path.join(args.out, stem + ".json"), "w") as fh:
        json.dump({"meta": meta, "speed": speed, "psnr_tables": tables,
                   "figures": {k: (os.path.relpath(v, ROOT) if isinstance(v, str) else v)
                               for k, v in figs.items()}}, fh, indent=1)
    with open(os.path.join(args.out, stem + ".md"), "w") as fh:
        fh.write(f"# Box moments on the CPU ({meta['machine']}, {meta['cpu_count']} cores, "
                 f"torch {meta['torch']}, {meta['date']})\n\n")
        fh.write("float32 moments + reconstruction, median of 5 after a warm-up; error = "
                 "relative L2 vs a float64 reference (plain separable products).\n\n")
        fh.write("| image | order | k | alpha, beta | variant | moments ms | reconstruction ms "
                 "| both ms [min, max] | plan s | rel. err moments | PSNR dB |\n")
        fh.write("|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in speed:
            fh.write(f"| {r['shape'][0]}x{r['shape'][1]} | {r['order']} | {r['k']} | "
                     f"{r['alpha']}, {r['beta']} | {r['variant']} | {r['forward_ms']:.1f} | "
                     f"{r['inverse_ms']:.1f} | {r['both_ms']:.1f} [{r['both_min_ms']:.1f}, "
                     f"{r['both_max_ms']:.1f}] | {r['plan_build_s']:.2f} | "
                     f"{r['rel_err_moments_vs_f64']:.1e} | {r['psnr_db']:.2f} |\n")
        for data in sorted({r["data"] for r in tables}):
            for a, b in ((0.3, 0.3), (0.3, 0.7)):
                sel = [r for r in tables if r["data"] == data and (r["alpha"], r["beta"]) == (a, b)]
                orders = sorted({r["order"] for r in sel})
                fh.write(f"\n## PSNR (dB), {data}, alpha={a}, beta={b} (float64)\n\n")
                fh.write("| k \\ order | " + " | ".join(map(str, orders)) + " |\n")
                fh.write("|---" * (len(orders) + 1) + "|\n")
                for k in sorted({r["k"] for r in sel}):
                    vals = {r["order"]: r["psnr_db"] for r in sel if r["k"] == k}
                    fh.write(f"| {k} | " + " | ".join(f"{vals[o]:.2f}" for o in orders) + " |\n")
    meta["load_average_at_end"] = os.getloadavg()[0]
    print("wrote", os.path.join(args.out, stem + ".json"), meta, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
