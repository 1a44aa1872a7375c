"""The paper's Figs. 5 and 7 on our fits: Morlet approximation error against ξ (σ = 60).

Relative RMSE (Eq. 66) of the direct method with P_D = 5, 7, 9, 11 and of the multiplication
method with P_M = 2, 3, 4, 5 (pairs P_D = 2 P_M + 1, as in Fig. 5), SFT and ASFT (n0 = 4), for
ξ = 1 .. 20, and the optimum first order P_S for P_D = 6 (Fig. 7). CPU only, float64 fits.

Usage: ``PYTHONPATH=src python benchmarks/signal_morlet_fit.py`` -> ``benchmarks/results/
signal_morlet_fit.json`` and ``docs/figures/signal_morlet_rmse.png``.
"""

from __future__ import annotations

import datetime
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from fastmoments.signal.coefficients import fit_morlet
from fastmoments.signal.morlet import kernel_rmse, morlet_bank

HERE = os.path.dirname(os.path.abspath(__file__))
SIGMA = 60.0


def main() -> int:
    xis = np.arange(1.0, 20.5, 1.0)
    rows = []
    for xi in xis:
        for method, shift in (("sft", 0), ("asft", 4)):
            for pd, pm in ((5, 2), (7, 3), (9, 4), (11, 5)):
                direct = morlet_bank(SIGMA, float(xi), method, "direct", pd, shift, 4.0)
                mult = morlet_bank(SIGMA, float(xi), method, "multiplication", pm, shift, 4.0)
                rows.append({"xi": float(xi), "method": method, "P_D": pd, "P_M": pm,
                             "rmse_direct": kernel_rmse(direct, SIGMA, float(xi)),
                             "rmse_multiplication": kernel_rmse(mult, SIGMA, float(xi)),
                             "P_S": fit_morlet(SIGMA, float(xi), pd, shift).first})
        rows.append({"xi": float(xi), "method": "sft", "P_D": 6, "P_M": None,
                     "P_S": fit_morlet(SIGMA, float(xi), 6, 0).first,
                     "rmse_direct": fit_morlet(SIGMA, float(xi), 6, 0).rmse,
                     "rmse_multiplication": None})
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "sigma": SIGMA, "note": "float64 least-squares fits; K per the design search"}
    with open(os.path.join(HERE, "results", "signal_morlet_fit.json"), "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1)

    fig, axes = plt.subplots(1, 5, figsize=(20, 3.8))
    for ax, (pd, pm) in zip(axes[:4], ((5, 2), (7, 3), (9, 4), (11, 5)), strict=True):
        for method, style in (("sft", "-"), ("asft", "--")):
            sel = [r for r in rows if r["P_D"] == pd and r["method"] == method]
            ax.semilogy([r["xi"] for r in sel], [r["rmse_direct"] for r in sel], "o" + style,
                        ms=3, label=f"direct P_D={pd} {method.upper()}")
            ax.semilogy([r["xi"] for r in sel], [r["rmse_multiplication"] for r in sel],
                        "s" + style, ms=3, label=f"multiplication P_M={pm} {method.upper()}")
        ax.set_xlabel("ξ")
        ax.set_ylabel("relative RMSE (Eq. 66)")
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
    sel = [r for r in rows if r["P_D"] == 6]
    axes[4].plot([r["xi"] for r in sel], [r["P_S"] for r in sel], "o-")
    axes[4].set_xlabel("ξ")
    axes[4].set_ylabel("optimum P_S (P_D = 6, SFT)")
    axes[4].grid(True, alpha=0.3)
    fig.suptitle(f"Morlet wavelet approximation, σ = {SIGMA:g} (cf. the paper's Figs. 5 and 7)")
    fig.tight_layout()
    fig.savefig(os.path.join(os.path.dirname(HERE), "docs", "figures",
                             "signal_morlet_rmse.png"), dpi=100)
    for r in rows:
        if r["P_D"] in (7, 11) and r["method"] == "sft" and r["xi"] in (1.0, 3.0, 6.0, 12.0, 20.0):
            print(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
