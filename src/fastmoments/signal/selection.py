"""``method="auto"``: the fastest accurate method for one call, from measured crossover points.

The candidates of a Gaussian filter along one axis are

* ``"direct"``: scipy.ndimage's kernel applied as a separable FIR (forced, it is truncated
  at ``W = ceil(truncate σ)``, scipy's truncation; under ``"auto"`` it reaches out to
  ``auto_radius``, far enough to be at least as accurate as scipy): numba loops on the
  CPU (:mod:`.fir`), ``torch.nn.functional.conv1d`` on other devices. ``W + 1``
  multiply-adds per sample: the fastest at small σ.
* ``"sft"``: the sliding Fourier transform bank with the engine that
  :func:`~fastmoments.signal._apply.resolve_engine` gives for ``engine="auto"`` on the
  device (and the untruncated kernel folded onto the boundary when the kernel is longer
  than the signal): a cost per
  sample independent of σ, the fastest from some σ on.

Which one is faster depends on the signal length ``N`` (the SFT's fixed cost per call), σ,
the order, the dtype and the device. ``benchmarks/signal_crossover.py`` times both on a grid
and writes :mod:`._crossover` (committed): for each ``(device, dtype, order)`` the largest σ
at which the FIR was still the faster, at each measured ``N``, on one signal and on a batch
(the SFT's fixed cost per call is amortised over a batch, e.g. the rows of an image).
Between measured lengths the crossover is interpolated linearly in ``log N``, beyond them
it is held. Rerun the script after a change of either engine
(``python benchmarks/signal_crossover.py``).

Devices without a measured table (a GPU before the script ran there) use
:data:`UNMEASURED_DIRECT_TAPS`: the FIR while its kernel has at most that many taps.
"""

from __future__ import annotations

import bisect
import math

from . import _crossover

__all__ = ["UNMEASURED_DIRECT_TAPS", "choose_gaussian", "crossover_sigma"]

#: taps ``2W + 1`` up to which a device without a measured table uses the FIR (a guess, not a
#: measurement: 4σ ≤ 12, i.e. σ ≤ 3 at truncate 4)
UNMEASURED_DIRECT_TAPS = 25


def crossover_sigma(n: int, order: int, dtype: str, device: str,
                    batch: int = 1) -> float | None:
    """The largest σ at which the FIR is the faster for ``batch`` signals of ``n`` samples,
    or ``None`` where no table was measured for ``(device, dtype, order)``.

    The table holds σ* for one signal and for a batch of ``BATCH`` samples at each measured
    ``n``; between them σ* is interpolated in ``log batch``, between measured lengths in
    ``log n`` (held beyond them).

    >>> s = crossover_sigma(1000, 0, "float64", "cpu")
    >>> s is None or s > 0
    True
    """
    points = _crossover.DIRECT_UP_TO.get((device, dtype, int(order)))
    if not points:
        return None
    one, many = _along_n(points, max(int(n), 1))
    big = max(1.0, _crossover.BATCH / max(int(n), 1))
    f = 0.0 if big <= 1.0 else min(1.0, math.log(max(batch, 1)) / math.log(big))
    return math.exp((1 - f) * math.log(one) + f * math.log(many))


def _along_n(points: tuple, n: int) -> tuple[float, float]:
    ns = [p[0] for p in points]
    if n <= ns[0]:
        return points[0][1], points[0][2]
    if n >= ns[-1]:
        return points[-1][1], points[-1][2]
    i = bisect.bisect_right(ns, n)
    a, b = points[i - 1], points[i]
    f = (math.log(n) - math.log(a[0])) / (math.log(b[0]) - math.log(a[0]))
    return (math.exp((1 - f) * math.log(a[1]) + f * math.log(b[1])),
            math.exp((1 - f) * math.log(a[2]) + f * math.log(b[2])))


def choose_gaussian(n: int, sigma: float, order: int, truncate: float, dtype: str,
                    device: str, batch: int = 1) -> str:
    """``"direct"`` or ``"sft"``: the faster method for a Gaussian filter of order ``order``
    along an axis of ``n`` samples (``batch`` of them in the call), in ``dtype``
    (``"float32"``/``"float64"``) on a device of type ``device`` (``"cpu"``, ``"cuda"``).

    >>> choose_gaussian(1000, 0.5, 0, 4.0, "float64", "cpu")
    'direct'
    >>> choose_gaussian(100_000, 8192.0, 0, 4.0, "float64", "cpu")
    'sft'
    """
    star = crossover_sigma(n, order, dtype, device, batch)
    if star is None:
        taps = 2 * math.ceil(truncate * sigma) + 1
        return "direct" if taps <= UNMEASURED_DIRECT_TAPS else "sft"
    # the table is measured at truncate = 4; the FIR's cost grows with truncate σ
    return "direct" if truncate * sigma <= 4.0 * star else "sft"
