"""Box (Jacobi) moments: accuracy and speed of moments + reconstruction, on the GPU or CPU.

The thesis's jobs (jacobi-3d-gpu-thesis): a 512^3 volume, order 500, k = 23, moments plus
reconstruction (387 ms on a Tesla V100, Table 3), and a 1024^2 image, order 1000, k = 23
(131.8 ms on a K80, Table 2), timed for several engine variants; PSNR tables against order
and k (Tables 4 and 6) on the 3-D Shepp-Logan phantom and on a real MRI volume; slices of the
reconstructions for the figures.

Run from the repository root: ``PYTHONPATH=src python benchmarks/box_gpu.py --out DIR``
(``--small`` for a quick check on a CPU). float32 with TF32 off; every timed variant carries
its relative error against a float64 reference computed with plain separable products.
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

from disk_common import sync, time_samples
from fastmoments.box import JacobiTransform, engine
from fastmoments.box.phantom import phantom_tensor

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def bench(fn, dev: torch.device, reps: int, warm: int = 2) -> list[float]:
    """Milliseconds per call (CUDA events on a GPU), after ``warm`` calls."""
    return [1e3 * t for t in time_samples(fn, dev, warmup=warm, repeat=reps)]


def summary(ms: list[float]) -> dict:
    return {"median_ms": statistics.median(ms), "min_ms": min(ms), "max_ms": max(ms),
            "reps": len(ms)}


def count_flops(fn) -> float:
    """GEMM flops of one call, counted at the engine's single contraction point."""
    total = [0.0]
    orig = engine._product

    def counting(data, mat, mat_first):
        total[0] += 2.0 * data.numel() * mat.shape[0 if mat_first else 1]
        return orig(data, mat, mat_first)

    engine._product = counting
    try:
        fn()
    finally:
        engine._product = orig
    return total[0]


def dense_forward(x: torch.Tensor, mats: list[torch.Tensor]) -> torch.Tensor:
    """Plain separable products, no parity and no truncation savings (the reference path)."""
    t = x
    for ax in reversed(range(len(mats))):
        t = torch.movedim(torch.tensordot(t, mats[ax], dims=([ax], [1])), -1, ax)
    return t


def dense_inverse(c: torch.Tensor, mats: list[torch.Tensor]) -> torch.Tensor:
    t = c
    for ax in range(len(mats)):
        t = torch.movedim(torch.tensordot(t, mats[ax], dims=([ax], [0])), -1, ax)
    return t


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    a = a.double()
    b = b.double()
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


def psnr255(ref: torch.Tensor, est: torch.Tensor) -> float:
    mse = float(((ref.double() - est.double()) ** 2).mean())
    return 10 * math.log10(255.0**2 / mse) if mse > 0 else float("inf")


def job(name, x, shape, order, k, alpha, beta, dev, reps, results, variants):
    """Time the variants of one job and check each against the float64 dense reference."""
    t0 = time.perf_counter()
    ref_plan = JacobiTransform(shape, order, alpha=alpha, beta=beta, k=k, dtype=torch.float64,
                               device=dev)
    build64 = time.perf_counter() - t0
    x64 = x.double()
    a64 = ref_plan.analysis_matrices()
    s64 = ref_plan.synthesis_matrices()
    outside = ref_plan.outside()
    j64 = dense_forward(x64, a64).masked_fill(outside, 0.0)
    r64 = dense_inverse(j64, s64)
    del x64
    for vname, kind, opts in variants:
        t0 = time.perf_counter()
        plan = JacobiTransform(shape, order, alpha=alpha, beta=beta, k=k, device=dev, **opts)
        sync(dev)
        build = time.perf_counter() - t0
        if kind == "dense":
            a32 = plan.analysis_matrices()
            s32 = plan.synthesis_matrices()
            out32 = plan.outside()

            def fwd(x=x, a32=a32, out32=out32):
                return dense_forward(x, a32).masked_fill(out32, 0.0)

            def inv(c, s32=s32):
                return dense_inverse(c, s32)
            flops = None
        else:
            def fwd(x=x, plan=plan):
                return plan.forward(x).data

            def inv(c, plan=plan):
                return plan.inverse(c)
        j = fwd()
        r = inv(j)
        err_j = rel(j, j64)
        err_r = rel(r, r64)
        p = psnr255(x, r)
        del r
        if kind != "dense":
            flops = count_flops(lambda: inv(fwd()))
        ms_f = bench(fwd, dev, reps)
        ms_i = bench(lambda j=j: inv(j), dev, reps)
        ms_b = bench(lambda: inv(fwd()), dev, reps)
        row = {"job": name, "variant": vname, "shape": list(shape), "order": order, "k": k,
               "alpha": alpha, "beta": beta, "dtype": "float32", "tf32": False,
               "forward": summary(ms_f), "inverse": summary(ms_i), "both": summary(ms_b),
               "plan_build_s": build, "plan_build_float64_s": build64,
               "rel_err_moments_vs_f64": err_j, "rel_err_recon_vs_f64": err_r, "psnr": p,
               "gemm_flops": flops}
        if flops:
            row["tflops"] = flops / (row["both"]["median_ms"] * 1e-3) / 1e12
        results.append(row)
        print(f"{name:8s} {vname:34s} fwd {row['forward']['median_ms']:8.2f} inv "
              f"{row['inverse']['median_ms']:8.2f} both {row['both']['median_ms']:8.2f} ms "
              f"err {err_j:.1e}/{err_r:.1e} psnr {p:.2f}", flush=True)
        j = plan = None
        if dev.type == "cuda":
            torch.cuda.empty_cache()


def psnr_table(name, vols, shape, orders, ks, params, dev, slices_at, slices, rows):
    """PSNR against order and k (thesis Tables 4, 6), with timing of each job."""
    for alpha, beta in params:
        for k in ks:
            for order in orders:
                t0 = time.perf_counter()
                plan = JacobiTransform(shape, order, alpha=alpha, beta=beta, k=k, device=dev)
                build = time.perf_counter() - t0
                for vname, x in vols.items():
                    sync(dev)
                    t0 = time.perf_counter()
                    J = plan.forward(x)
                    r = J.reconstruct()
                    sync(dev)
                    ms = (time.perf_counter() - t0) * 1e3
                    rows.append({"table": name, "volume": vname, "alpha": alpha, "beta": beta,
                                 "k": k, "order": order, "psnr": psnr255(x, r),
                                 "ms_moments_and_recon_host_clock": ms, "plan_build_s": build})
                    if (order, k) in slices_at and len(shape) == 3 and alpha == beta:
                        mid = shape[0] // 2
                        key = f"{vname}_a{alpha}_b{beta}_k{k}_n{order}"
                        s = J.slice("xy", mid)
                        slices[key + "_xy"] = s.detach().clamp(0, 255).round().to(
                            torch.uint8).cpu().numpy()
                    del J, r
                print(f"table {name} a={alpha} b={beta} k={k:2d} order={order:4d} "
                      + " ".join(f"{rw['volume']}:{rw['psnr']:.2f}" for rw in rows[-len(vols):]),
                      flush=True)


def ceilings(dev: torch.device) -> dict:
    out = {}
    if dev.type != "cuda":
        return out
    n = 8192
    a = torch.randn(n, n, device=dev)
    b = torch.randn(n, n, device=dev)
    ms = bench(lambda: a @ b, dev, 5)
    out["sgemm_8192_tflops_tf32_off"] = 2 * n**3 / (statistics.median(ms) * 1e-3) / 1e12
    big = torch.randn(2**28, device=dev)
    dst = torch.empty_like(big)
    ms = bench(lambda: dst.copy_(big), dev, 10)
    out["copy_GBps_read_plus_write"] = 2 * big.numel() * 4 / (statistics.median(ms) * 1e-3) / 1e9
    a = b = big = dst = None
    torch.cuda.empty_cache()
    return out


# ----------------------------------------------------------- the report (tables, figure)
ROOT = os.path.join(os.path.dirname(__file__), "..")

#: published times (ms) of the thesis for moments + reconstruction at order 500, k = 23 (V100)
#: and for the 1024^2 reconstruction at order 1000, k = 23 (K80, Table 2)
THESIS = {("3d", 0.3, 0.3): 387.36, ("3d", 0.3, 0.7): 382.22, ("2d", 0.3, 0.3): 131.7593}


def dense_flops(shape: list[int], order: int) -> float:
    """Multiply-adds x 2 of plain separable products, moments + reconstruction."""
    p = order + 1
    f, rest = 0.0, list(shape)
    for i in reversed(range(len(rest))):
        f += 2.0 * p * float(math.prod(rest))
        rest[i] = p
    return 2 * f


def report(path: str) -> int:
    with open(path) as fh:
        d = json.load(fh)
    meta = d["meta"]
    stem = os.path.splitext(path)[0]
    lines = [f"# Box moments on {meta['device']} ({meta['date']})", "",
             f"torch {meta['torch']}, CUDA {meta['cuda']}, float32, TF32 off. Measured "
             f"ceilings in the same run: float32 GEMM 8192^3 "
             f"{meta.get('sgemm_8192_tflops_tf32_off', 0):.1f} TFLOP/s, device copy "
             f"{meta.get('copy_GBps_read_plus_write', 0):.0f} GB/s (read + write).", "",
             "Engine: " + meta.get("engine", "v1, the first version (commit e6818b7: parity "
                                   "classes interleaved in step-2 blocks, blocks at every "
                                   "stage); variant names are that version's") + ".", "",
             "Median of 10 timed calls after 2 warm-ups (CUDA events), [min, max]. Error = "
             "relative L2 distance to a float64 reference computed with plain separable "
             "products on the same device. 'thesis / ours' divides the thesis's published time "
             "(V100 for 3-D, Tables 3 and 5; K80 for 2-D, Table 2, which times the "
             "reconstruction alone) by our moments + reconstruction time.", "",
             "| job | alpha, beta | variant | moments ms | reconstruction ms | both ms [min, max] "
             "| TFLOP/s | rel. err moments | rel. err recon | PSNR dB | thesis / ours |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in d["timings"]:
        flops = r.get("gemm_flops") or dense_flops(r["shape"], r["order"])
        tf = flops / (r["both"]["median_ms"] * 1e-3) / 1e12
        ref = THESIS.get((r["job"], r["alpha"], r["beta"]))
        ratio = f"{ref / r['both']['median_ms']:.1f}x" if ref else "-"
        job = "x".join(map(str, r["shape"])) + f", order {r['order']}, k {r['k']}"
        lines.append(
            f"| {job} | {r['alpha']}, {r['beta']} | {r['variant']} | "
            f"{r['forward']['median_ms']:.2f} | {r['inverse']['median_ms']:.2f} | "
            f"{r['both']['median_ms']:.2f} [{r['both']['min_ms']:.2f}, {r['both']['max_ms']:.2f}]"
            f" | {tf:.1f} | {r['rel_err_moments_vs_f64']:.1e} | {r['rel_err_recon_vs_f64']:.1e}"
            f" | {r['psnr']:.2f} | {ratio} |")
    rows = d["psnr_tables"]
    for vol in sorted({r["volume"] for r in rows}):
        for a, b in ((0.3, 0.3), (0.3, 0.7)):
            sel = [r for r in rows if r["volume"] == vol and (r["alpha"], r["beta"]) == (a, b)]
            if not sel:
                continue
            orders = sorted({r["order"] for r in sel})
            lines += ["", f"## PSNR (dB), {vol} 512^3, alpha={a}, beta={b} (float32)", "",
                      "| k \\ order | " + " | ".join(map(str, orders)) + " |",
                      "|---" * (len(orders) + 1) + "|"]
            for k in sorted({r["k"] for r in sel}):
                v = {r["order"]: r["psnr"] for r in sel if r["k"] == k}
                lines.append(f"| {k} | " + " | ".join(f"{v[o]:.2f}" for o in orders) + " |")
    if "real_volume" in meta:
        rv = meta["real_volume"]
        lines += ["", f"Real volume: {rv['source']}, native (D, H, W) = "
                  f"{tuple(rv['native_shape_DHW'])}, resampled {rv['mode']} to 512^3, "
                  f"{rv['grey_levels']}."]
    with open(stem + ".md", "w") as fh:
        fh.write("\n".join(lines) + "\n")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    vols = sorted({r["volume"] for r in rows})
    fig, axes = plt.subplots(len(vols), 2, figsize=(10, 3.6 * len(vols)), squeeze=False)
    for i, vol in enumerate(vols):
        for j, (a, b) in enumerate(((0.3, 0.3), (0.3, 0.7))):
            ax = axes[i, j]
            for k in sorted({r["k"] for r in rows}):
                sel = sorted((r for r in rows if r["volume"] == vol and r["k"] == k
                              and (r["alpha"], r["beta"]) == (a, b)), key=lambda r: r["order"])
                ax.plot([r["order"] for r in sel], [r["psnr"] for r in sel], "o-", ms=3,
                        label=f"k={k}")
            ax.set_title(f"{vol} 512^3, alpha={a}, beta={b}", fontsize=9)
            ax.set_xlabel("order")
            ax.set_ylabel("PSNR (dB)")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"PSNR of 3-D reconstructions against order and k ({meta['device']})",
                 fontsize=10)
    fig.tight_layout()
    out = os.path.join(ROOT, "docs", "figures", "box_psnr_gpu.png")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    print("wrote", stem + ".md", out)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--small", action="store_true", help="tiny sizes for a CPU check")
    ap.add_argument("--real", default=None, help=".npy real volume (D, H, W) for the tables")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--report", default=None, metavar="JSON",
                    help="only write the tables and the figure from this run's JSON")
    args = ap.parse_args()
    if args.report:
        return report(args.report)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    os.makedirs(args.out, exist_ok=True)
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else
            platform.processor() or platform.machine(),
            "torch": torch.__version__, "cuda": torch.version.cuda, "numpy": np.__version__,
            "python": platform.python_version(), "tf32": False, "dtype": "float32",
            "cpu_threads": torch.get_num_threads(),
            "engine": "v2: parity classes contiguous, one fold per GEMM output; defaults "
                      "blocks of 64 degrees for volumes, none for images, parity off"}
    meta.update(ceilings(dev))
    print(meta, flush=True)
    n3, o3, n2, o2, k = (512, 500, 1024, 1000, 23) if not args.small else (48, 40, 96, 80, 5)
    results: list[dict] = []
    # ---------------- 3-D job
    x3 = phantom_tensor((n3,) * 3, device=dev)
    sym = [("engine default (blocks of 64, no parity)", "engine", {}),
           ("engine: blocks of 128, no parity", "engine", {"block": 128}),
           ("engine: parity + blocks of 64", "engine", {"parity": True, "block": 64}),
           ("engine: parity + blocks of 128", "engine", {"parity": True, "block": 128}),
           ("engine: parity only (no blocks)", "engine", {"parity": True, "block": 10**6}),
           ("dense separable GEMMs (no savings)", "dense", {})]
    asym = [("engine default (blocks of 64, no parity)", "engine", {}),
            ("dense separable GEMMs (no savings)", "dense", {})]
    sym2 = [("engine default (plain products)", "engine", {}),
            ("engine: parity", "engine", {"parity": True}),
            ("engine: blocks of 128", "engine", {"block": 128}),
            ("dense separable GEMMs (no savings)", "dense", {})]
    job("3d", x3, (n3,) * 3, o3, k, 0.3, 0.3, dev, args.reps, results, sym)
    job("3d", x3, (n3,) * 3, o3, k, 0.3, 0.7, dev, args.reps, results, asym)
    # ---------------- 2-D job (camera photograph resized)
    from fastmoments.data import sample_image

    img = torch.from_numpy(sample_image("camera", n2).astype(np.float32)).to(dev)
    job("2d", img, (n2, n2), o2, k, 0.3, 0.3, dev, args.reps, results, sym2)
    job("2d", img, (n2, n2), o2, k, 0.3, 0.7, dev, args.reps, results, sym2[:1] + sym2[2:])
    # ---------------- PSNR tables (Tables 4 and 6) on the phantom and a real volume
    vols = {"phantom": x3}
    if args.real:
        real = torch.from_numpy(np.load(args.real).astype(np.float32)).to(dev)
        real = (real - real.min()) / (real.max() - real.min()) * 255.0
        up = torch.nn.functional.interpolate(real[None, None], size=(n3,) * 3,
                                             mode="trilinear", align_corners=False)[0, 0]
        vols["mri_example4d_upsampled"] = up.contiguous()
        meta["real_volume"] = {"source": "nibabel tests/data/example4d.nii.gz frame 0",
                               "native_shape_DHW": list(real.shape),
                               "resampled_to": [n3] * 3, "mode": "trilinear",
                               "grey_levels": "rescaled to [0, 255]"}
    orders = [100, 200, 300, 400, 500] if not args.small else [10, 20, 40]
    ks = [1, 3, 7, 11, 15, 19, 23] if not args.small else [1, 3]
    table_rows: list[dict] = []
    slices: dict[str, np.ndarray] = {}
    slices_at = {(o, kk) for o in (orders[0], orders[2], orders[-1])
                 for kk in (ks[1], ks[-3] if len(ks) > 3 else ks[0], ks[-1])}
    psnr_table("3d", vols, (n3,) * 3, orders, ks, [(0.3, 0.3), (0.3, 0.7)], dev, slices_at,
               slices, table_rows)
    for vname, x in vols.items():
        slices[f"{vname}_original_xy"] = x[n3 // 2].clamp(0, 255).round().to(
            torch.uint8).cpu().numpy()
    with open(os.path.join(args.out, "box_gpu.json"), "w") as fh:
        json.dump({"meta": meta, "timings": results, "psnr_tables": table_rows}, fh, indent=1)
    report(os.path.join(args.out, "box_gpu.json"))
    np.savez_compressed(os.path.join(args.out, "box_gpu_slices.npz"), **slices)
    print("\nsummary (median ms, float32, TF32 off):")
    for r in results:
        print(f"{r['job']} a={r['alpha']} b={r['beta']} {r['variant']:36s} "
              f"both {r['both']['median_ms']:8.2f} [{r['both']['min_ms']:.2f}, "
              f"{r['both']['max_ms']:.2f}] err {r['rel_err_moments_vs_f64']:.1e} "
              f"psnr {r['psnr']:.2f} tflops {r.get('tflops') or 0:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
