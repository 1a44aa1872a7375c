"""Tables and a figure from a GPU run of ``box_gpu.py`` (the JSON it wrote).

``python benchmarks/box_report.py benchmarks/results/box_gpu.json`` writes the markdown
next to the JSON and ``docs/figures/box_psnr_gpu.png``. Speed ratios are taken against the
thesis's published times (Tables 2, 3 and 5: Tesla V100 for 512^3, K80 for 1024^2).
"""

from __future__ import annotations

import json
import math
import os
import sys

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


def main(path: str) -> int:
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.join(ROOT, "benchmarks", "results", "box_gpu.json")))
