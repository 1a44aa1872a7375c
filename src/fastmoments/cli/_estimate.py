"""How long a disk reconstruction study will take: an operation count and a time model.

The two-stage disk engine (:mod:`fastmoments.disk.engine`) does, for an ``N x N`` image
sampled with ``k x k`` points per pixel and moments up to order ``T``:

- an angular stage over every sample point and every repetition ``m``:
  about :math:`(Nk)^2 (T+1)` complex multiply-adds;
- a radial stage over the distinct radii (about :math:`Nk` of them) and every ``(n, m)``
  pair: about :math:`Nk (T+1)^2`;

and a reconstruction at order ``T`` (at the pixel centres) costs about :math:`N^2 (T+1)`;
for ``k > 1`` it first builds the pixel-centre engine once (the forward cost at ``k = 1``).

Seconds per operation were fitted by least squares (relative error) to CPU times
(:func:`time.process_time`, one torch thread, so that other users of a shared machine do not
inflate them) of Zernike plans on an x86-64 core of a 2-core AMD EPYC virtual machine, torch 2.13
CPU build: ``N`` in {64, 128, 256}, ``T`` in {25, 50, 100, 200}, ``k`` in {1, 3, 5} (12
points; the model is within a factor 1.6 of every point, most within 25 %); checked beyond
the grid at ``N = 256``: ``T = 400, k = 3`` took 8.6 s (model 9.4 s), ``T = 700, k = 1`` 3.8 s
(model 7.2 s: the model errs on the long side). The constants below are those fits;
re-measure with ``python -m fastmoments.cli._estimate``. Wall time on a quiet machine is about
the CPU time; on a busy one, more (with 2 torch threads on the shared 2-core development
machine, CPU time itself was 2 to 4 times the 1-thread figure).
On CUDA there is no calibrated model: the estimate gives the operation count only.

The line a command prints (:func:`estimate_line`) adds what follows the moments: one figure
grid per family, :data:`FIGURE_S` each plus :data:`PANEL_S` per image in it (matplotlib's Agg
canvas and the PNG encoder; measured 0.5-1.0 s for a 2 x 3 grid of 128 x 128 images on the
2-core machine), and scales the sum by how busy the machine is (:func:`load_factor`: the
load average over the CPUs this process may use, when above 1). It says that figure and a
range, :data:`RANGE` times it. Measured on the 2-core machine, default ``fastmoments demo``
(model: 1.7 s of moments and reconstructions, 1.2 s for the two figures, 2.9 s in all):
quiet (load 1.2), 1.1 s of moments and reconstructions and 1.0 s of figures, 2.1 s after the
line and 5.3 s from the command line to the end (importing torch and reading scikit-image's
photograph take the 2-3 s before the line); busy (load 6-7 on the 2 cores, factor 2.9-3.3),
10.1-24.2 s after the line against a printed 8.6-9.4 s, which :data:`RANGE` covers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

__all__ = [
    "ANGULAR_S",
    "FIGURE_S",
    "PANEL_S",
    "RADIAL_S",
    "RANGE",
    "SYNTH_S",
    "estimate_line",
    "forward_seconds",
    "study_seconds",
]

#: CPU seconds per angular-stage operation ((Nk)^2 (T+1)), fitted as described above.
ANGULAR_S = 1.2e-8
#: CPU seconds per radial-stage operation (Nk (T+1)^2).
RADIAL_S = 5.3e-8
#: CPU seconds per reconstruction operation (N^2 (T+1)).
SYNTH_S = 1.5e-8
#: Seconds to draw and write one figure grid, and per image (panel) in it.
FIGURE_S, PANEL_S = 0.3, 0.05
#: The range the printed estimate states: (low, high) factors of the modelled seconds (the
#: model errs on the long side on a quiet machine; the load of a busy one changes while it
#: runs, and torch's threads wait for each other there).
RANGE = (0.6, 3.0)


def load_factor() -> float:
    """How much longer than on an idle machine the work should take: the 1-minute load
    average (this process, busy importing, included) over the CPUs this process may use, or 1
    when that is below 1 (or the system does not say)."""
    import os

    from .._threads import usable_cpus

    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # pragma: no cover - not on Unix
        return 1.0
    return max(1.0, load / usable_cpus())


def forward_ops(n: int, k: int, order: int) -> tuple[float, float]:
    """(angular, radial) operation counts of the moments up to ``order``."""
    nk = float(n * k)
    return nk * nk * (order + 1), nk * (order + 1) ** 2


def forward_seconds(n: int, k: int, order: int, repetitions: int | None = None) -> float:
    """Modelled CPU seconds of the moments up to ``order`` (a share ``repetitions / (T+1)``
    of them when only that many repetitions are computed)."""
    ang, rad = forward_ops(n, k, order)
    share = 1.0 if repetitions is None else repetitions / (order + 1)
    return share * (ANGULAR_S * ang + RADIAL_S * rad)


def study_seconds(n: int, orders: Sequence[int], ks: Sequence[int]) -> float:
    """Modelled CPU seconds of one family's study: a forward at ``max(orders)`` per ``k`` and a
    reconstruction per ``(k, T)``."""
    top = max(orders)
    total = 0.0
    for k in ks:
        total += forward_seconds(n, k, top)
        if k > 1:
            total += forward_seconds(n, 1, top)  # the pixel-centre engine
        total += sum(SYNTH_S * n * n * (t + 1) for t in orders)
    return total


def figure_seconds(families: int, orders: Sequence[int], ks: Sequence[int]) -> float:
    """Modelled seconds of the figure grids: one per family, ``len(ks) x len(orders)``
    panels."""
    return families * (FIGURE_S + PANEL_S * len(ks) * len(orders))


def _fmt_seconds(s: float) -> str:
    if s < 90:
        return f"{max(s, 0.1):.2g} s" if s < 10 else f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def _fmt_range(s: float) -> str:
    """``"2-6 s"``, ``"3-9 min"``: the range :data:`RANGE` around ``s``."""
    lo, hi = RANGE[0] * s, RANGE[1] * s
    for unit, size in (("s", 1.0), ("min", 60.0), ("h", 3600.0)):
        if hi < 90 * size or unit == "h":
            digits = 0 if hi >= 10 * size else 1
            a, b = f"{lo / size:.{digits}f}", f"{hi / size:.{digits}f}"
            return f"{a}-{b} {unit}"
    raise AssertionError  # pragma: no cover


def estimate_line(command: str, *, n: int, orders: Sequence[int], ks: Sequence[int],
                  families: int, device: str, load: float = 1.0) -> str:
    """One line: what will be computed and how long it should take from here, as a modelled
    figure and a range (module notes); ``load`` is :func:`load_factor` (the commands pass it).

    Examples
    --------
    >>> line = estimate_line("demo", n=128, orders=[30, 60, 120], ks=[1, 3], families=2,
    ...                      device="cpu")
    >>> line[:66]
    'fastmoments demo: estimate: 2 families x 2 k x 3 orders on 128x128'
    >>> line[line.index(": about"):].split(":")[1]
    ' about 2.9 s (1.8-8.8 s'
    """
    ang = rad = 0.0
    for k in ks:
        a, r = forward_ops(n, k, max(orders))
        ang, rad = ang + a, rad + r
    ops = families * (ang + rad)
    what = (f"{families} famil{'y' if families == 1 else 'ies'} x {len(ks)} k x "
            f"{len(orders)} orders on {n}x{n} (highest order {max(orders)}, "
            f"{ops / 1e9:.2g} G operations)")
    if device.startswith("cuda"):
        return (f"fastmoments {command}: estimate: {what}; no time model for CUDA "
                f"(the CPU model is calibrated only)")
    work = families * study_seconds(n, orders, ks)
    figures = figure_seconds(families, orders, ks)
    secs = (work + figures) * load
    busy = (f" x {load:.1f} for the machine's load" if load >= 1.2 else "")
    line = (f"fastmoments {command}: estimate: {what}: about {_fmt_seconds(secs)} "
            f"({_fmt_range(secs)}: {_fmt_seconds(work)} of moments and reconstructions and "
            f"{_fmt_seconds(figures)} for {families} figure{'s' if families != 1 else ''}"
            f"{busy}; model of one core of a 2-core x86-64 machine)")
    if secs > 300:
        line += "; smaller --orders, --k or --size make it shorter"
    return line


def _calibrate() -> None:  # pragma: no cover - a measurement, run by hand
    """Print CPU seconds against the model for the calibration grid."""
    import numpy as np
    import torch

    from ..disk import DiskTransform

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    DiskTransform("zernike", 32, 10).forward(rng.random((32, 32)))
    for n, t, k in [(64, 25, 1), (64, 50, 1), (64, 100, 1), (128, 50, 1), (128, 100, 1),
                    (64, 50, 3), (128, 50, 3), (64, 100, 3), (128, 25, 5), (128, 100, 3),
                    (256, 100, 1), (256, 200, 3)]:
        img = rng.random((n, n))
        c0 = time.process_time()
        moments = DiskTransform("zernike", n, t, k=k).forward(img)
        c1 = time.process_time()
        moments.reconstruct(orders=t)
        c2 = time.process_time()
        print(f"N={n:4d} T={t:4d} k={k}: forward {c1 - c0:7.3f} s (model "
              f"{forward_seconds(n, k, t):7.3f}), reconstruction {c2 - c1:6.3f} s")


if __name__ == "__main__":  # pragma: no cover
    _calibrate()
