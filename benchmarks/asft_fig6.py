"""ASFT paper, Figs. 5 and 6 and the abstract's "413.6x faster", from our fits and our hardware.

1. **Fig. 6**: relative RMSE (Eq. 66) against ξ = 1..20 at σ = 60 of the Morlet wavelet fitted
   by the direct method with P_D = 6 (SFT, and ASFT with n0 = 4), beside the wavelet truncated
   to [-3σ, 3σ] (the truncated convolution MCT3). All in float64 from our fits
   (:func:`fastmoments.signal.coefficients.fit_morlet`, K and P_S chosen by the library).
2. **Fig. 5 for ξ ≥ 8**: our committed fits (``signal_morlet_fit.json``) put the direct method
   up to a few times above the multiplication method with ``P_D = 2 P_M + 1``, where the paper
   shows them equal. The paper chooses K "such that the relative RMSE becomes the smallest";
   here every integer K in [2σ, 6σ] and the three bands P_S nearest the carrier are fitted in
   float64 and the smallest error is kept. If that minimum meets the multiplication method,
   the paper is right and our K/P_S design is what falls short.
3. **The abstract's claim** (N = 102400, σ = 8192: 0.545 ms, 413.6x a conventional method):
   our Morlet transform (default plan, float32) against our truncated convolution
   (``method="direct", truncate=3``, MCT3) on ``--device``, wall clock or CUDA events after a
   warm-up, median of ``--repeat``; both checked against a float64 FFT convolution with the
   exact wavelet.

Usage: ``PYTHONPATH=src python benchmarks/asft_fig6.py [--device cpu] [--xi 6]``
(about 3 minutes on one CPU core, most of it the exhaustive fits of part 2 and the CPU
truncated convolution). Writes ``benchmarks/results/papers/asft_fig6.{json,md}``,
``asft_fig6.png`` and ``asft_fig5_check.png``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import statistics
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from disk_common import time_samples
from fastmoments import MorletTransform, __version__
from fastmoments._progress import progress
from fastmoments.signal.coefficients import _fit_morlet_k, fit_morlet, morlet_kernel
from signal_common import fft_reference, rel

OUT = Path(__file__).resolve().parent / "results" / "papers"
SIGMA_FIT = 60.0
PAPER_MS, PAPER_RATIO = 0.545, 413.6


def truncated_rmse(sigma: float, xi: float, half: float) -> float:
    """Eq. 66 of the wavelet cut to ``|k| ≤ half``: the energy outside over the whole."""
    w = math.ceil(20 * sigma)
    k = np.arange(-w, w + 1)
    e = np.abs(morlet_kernel(k, sigma, xi)) ** 2
    return float(math.sqrt(e[np.abs(k) > half].sum() / e.sum()))


def fig6_rows() -> list[dict]:
    rows = []
    for xi in progress(np.arange(1.0, 20.5, 1.0), desc="Fig. 6 fits"):
        sft = fit_morlet(SIGMA_FIT, float(xi), 6, 0)
        asft = fit_morlet(SIGMA_FIT, float(xi), 6, 4)
        rows.append({"xi": float(xi), "sft_P6": sft.rmse, "sft_K": sft.K, "sft_P_S": sft.first,
                     "asft_P6": asft.rmse, "asft_K": asft.K,
                     "truncated_3sigma": truncated_rmse(SIGMA_FIT, float(xi), 3 * SIGMA_FIT)})
    return rows


def fig5_rows(xis: list[float]) -> list[dict]:
    """Best direct fit over every K in [2σ, 6σ] and P_S near the carrier, against ours."""
    from fastmoments.signal.morlet import kernel_rmse, morlet_bank

    rows = []
    jobs = [(xi, pd, pm) for xi in xis for pd, pm in ((5, 2), (7, 3), (9, 4), (11, 5))]
    for xi, pd, pm in progress(jobs, desc="Fig. 5 exhaustive K"):
        best = None
        for K in range(int(2 * SIGMA_FIT), int(6 * SIGMA_FIT) + 1):
            c = round(xi * K / (math.pi * SIGMA_FIT) - (pd - 1) / 2)
            for f in range(max(0, c - 1), c + 2):
                e = _fit_morlet_k(SIGMA_FIT, xi, K, f, pd)[2]
                if best is None or e < best[0]:
                    best = (e, K, f)
        ours = fit_morlet(SIGMA_FIT, xi, pd, 0)
        mult = kernel_rmse(morlet_bank(SIGMA_FIT, xi, "sft", "multiplication", pm, 0, 4.0),
                           SIGMA_FIT, xi)
        rows.append({"xi": xi, "P_D": pd, "P_M": pm, "ours_direct": ours.rmse, "ours_K": ours.K,
                     "ours_P_S": ours.first, "best_direct": best[0], "best_K": best[1],
                     "best_P_S": best[2], "multiplication": mult})
    return rows


def claim_rows(device: torch.device, xi: float, repeat: int) -> list[dict]:
    n, sigma = 102_400, 8192.0
    rng = np.random.default_rng(413)
    x64 = torch.from_numpy(rng.standard_normal(n)).to(device)
    x32 = x64.float()
    w = math.ceil(10 * sigma)
    ref = fft_reference(x64[None], morlet_kernel(np.arange(-w, w + 1), sigma, xi))[0]
    rows = []
    for name, plan in (("proposed (library default: SFT, direct, chunked engine)",
                        MorletTransform(sigma, xi)),
                       ("truncated convolution [-3 sigma, 3 sigma] (MCT3)",
                        MorletTransform(sigma, xi, method="direct", truncate=3.0))):
        y = plan(x32)
        ts = time_samples(lambda p=plan: p(x32), device, warmup=1, repeat=repeat)
        rows.append({"what": name, "ms": 1e3 * statistics.median(ts), "min_ms": 1e3 * min(ts),
                     "max_ms": 1e3 * max(ts), "rel_err_vs_float64": rel(y, ref),
                     "terms": getattr(plan, "terms", None), "K": getattr(plan, "K", None)})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--xi", type=float, default=6.0, help="ξ of the timed transform")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    device = torch.device(a.device)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    f6 = fig6_rows()
    f5 = fig5_rows([8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0])
    claim = claim_rows(device, a.xi, a.repeat)
    dev_name = (torch.cuda.get_device_name(device) if device.type == "cuda"
                else f"CPU ({platform.processor() or platform.machine()}, "
                     f"{torch.get_num_threads()} torch threads)")
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": dev_name, "torch": torch.__version__, "numpy": np.__version__,
            "fastmoments": __version__, "platform": platform.platform(), "xi_timed": a.xi,
            "device_arg": a.device}
    (out / "asft_fig6.json").write_text(json.dumps(
        {"meta": meta, "fig6": f6, "fig5_check": f5, "claim": claim}, indent=1))
    plot(out, f6, f5)
    write_md(out / "asft_fig6.md", meta, f6, f5, claim)
    print((out / "asft_fig6.md").read_text())
    return 0


def plot(out: Path, f6: list, f5: list) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    xi = [r["xi"] for r in f6]
    ax.semilogy(xi, [r["sft_P6"] for r in f6], "o-", ms=3, label="SFT, direct, P_D = 6")
    ax.semilogy(xi, [r["asft_P6"] for r in f6], "s--", ms=3, label="ASFT (n0 = 4), P_D = 6")
    ax.semilogy(xi, [r["truncated_3sigma"] for r in f6], "k^-", ms=3,
                label="truncated to [-3σ, 3σ]")
    ax.set_xlabel("ξ")
    ax.set_ylabel("relative RMSE (Eq. 66)")
    ax.set_title(f"Morlet wavelet, σ = {SIGMA_FIT:g} (cf. the ASFT paper's Fig. 6)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "asft_fig6.png", dpi=110)
    plt.close(fig)
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6), sharey=True)
    for ax, pd in zip(axes, (5, 7, 9, 11), strict=True):
        sel = [r for r in f5 if r["P_D"] == pd]
        x = [r["xi"] for r in sel]
        ax.semilogy(x, [r["ours_direct"] for r in sel], "o-", ms=3, label="direct, our K/P_S")
        ax.semilogy(x, [r["best_direct"] for r in sel], "s-", ms=3, label="direct, best K/P_S")
        ax.semilogy(x, [r["multiplication"] for r in sel], "k^--", ms=3,
                    label=f"multiplication, P_M = {sel[0]['P_M']}")
        ax.set_title(f"P_D = {pd}")
        ax.set_xlabel("ξ")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("relative RMSE (Eq. 66)")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Fig. 5 for ξ ≥ 8, σ = {SIGMA_FIT:g}, SFT: float64 fits, K searched exhaustively")
    fig.tight_layout()
    fig.savefig(out / "asft_fig5_check.png", dpi=100)
    plt.close(fig)


def write_md(path: Path, meta: dict, f6: list, f5: list, claim: list) -> None:
    prop, conv = claim
    ratio = conv["ms"] / prop["ms"]
    worst_ours = max(r["ours_direct"] / r["multiplication"] for r in f5)
    worst_best = max(r["best_direct"] / r["multiplication"] for r in f5)
    lines = [
        "# ASFT paper: Figs. 5 and 6 and the 413.6x claim, from our fits and hardware",
        "",
        f"_Generated by `benchmarks/asft_fig6.py --device {meta['device_arg']}` "
        f"on {meta['date']}; {meta['device']}, torch {meta['torch']}._",
        "",
        "## The abstract's claim: Morlet transform, N = 102400, sigma = 8192",
        "",
        f"The paper: {PAPER_MS} ms on an RTX 3090, {PAPER_RATIO}x faster than a conventional "
        f"method. Ours, xi = {meta['xi_timed']}, float32, on {meta['device']}:",
        "",
        "| method | ms (median, min-max) | rel. error vs float64 |",
        "|---|---|---|",
    ]
    for r in claim:
        lines.append(f"| {r['what']} | {r['ms']:.4g} ({r['min_ms']:.4g}-{r['max_ms']:.4g}) | "
                     f"{r['rel_err_vs_float64']:.2e} |")
    lines += [
        "",
        f"**Our ratio: {ratio:.1f}x** (truncated convolution / proposed) on {meta['device']}; "
        f"the paper's: {PAPER_RATIO}x on its GPU. The two ratios share only the method pair; "
        "the hardware, and how well the conventional method is implemented (ours is "
        "`torch.nn.functional.conv1d`), differ.",
        "",
        "## Fig. 6: the fitted wavelet (P_D = 6) against the truncated one",
        "",
        "![Fig. 6](asft_fig6.png)",
        "",
        "| xi | SFT P_D=6 | K | P_S | ASFT P_D=6 | truncated [-3σ, 3σ] |",
        "|---|---|---|---|---|---|",
    ]
    for r in f6:
        lines.append(f"| {r['xi']:g} | {r['sft_P6']:.2e} | {r['sft_K']} | {r['sft_P_S']} | "
                     f"{r['asft_P6']:.2e} | {r['truncated_3sigma']:.2e} |")
    lines += [
        "",
        "## Fig. 5 for xi >= 8: which is right",
        "",
        "The paper shows the direct method (P_D) and the multiplication method "
        "(P_M, P_D = 2 P_M + 1) at about the same error for xi >= 6; our committed fits "
        f"(`signal_morlet_fit.json`) put the direct method up to {worst_ours:.1f}x above. "
        "Below, every integer K in [2 sigma, 6 sigma] with the three bands P_S nearest the "
        "carrier is fitted in float64 (least squares, error by Eq. 66 on [-5K, 5K]) and the "
        f"smallest error is kept: it stays within {worst_best:.2f}x of the multiplication "
        "method at every xi and P_D here.",
        "",
        "| xi | P_D | P_M | direct, our K, P_S | direct, best K, P_S | multiplication | "
        "ours / mult. | best / mult. |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in f5:
        lines.append(
            f"| {r['xi']:g} | {r['P_D']} | {r['P_M']} | {r['ours_direct']:.2e} "
            f"({r['ours_K']}, {r['ours_P_S']}) | {r['best_direct']:.2e} ({r['best_K']}, "
            f"{r['best_P_S']}) | {r['multiplication']:.2e} | "
            f"{r['ours_direct'] / r['multiplication']:.2f} | "
            f"{r['best_direct'] / r['multiplication']:.2f} |")
    verdict = ("the paper is right: with K chosen per xi to minimise the error, as it states, "
               "the direct method meets the multiplication method. Our gap is our design of "
               "K and P_S (`coefficients.morlet_design`: a search at sigma = 32 on a 0.5 sigma "
               "grid of K, refined locally, then reused at every sigma), which misses the "
               "narrow minima in K: the error oscillates with K as the carrier xi/sigma moves "
               "between the grid frequencies pi p / K, and only some K put it where P_D "
               "sinusoids cover the wavelet's spectrum symmetrically."
               if worst_best < 1.5 else
               "even the best K and P_S leave the direct method above the multiplication "
               "method: the paper's plot is not reproduced by a float64 least-squares fit in "
               "its basis.")
    lines += ["", f"Verdict, from these float64 fits: {verdict}", "",
              "![Fig. 5 check](asft_fig5_check.png)", ""]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
