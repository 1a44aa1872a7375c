"""The route table of the signal family: which method, backend and kernel run a call, and why.

Every decision that picks what runs a signal call is made here, from constants measured by the
scripts in ``benchmarks/`` (each constant cites its script), as finufft's heuristics cite
their calibration. A plan asks once per key (length, batch, dtype, device, engine), keeps the
:class:`~fastmoments._route.Route`, shows it as ``plan.route`` and in ``repr(plan)``, and takes
it on every call of that key: the first call of a process as the hundredth. Nothing here
depends on timing.

Gaussian filters (:func:`gaussian_route`), per filtered axis:

* ``method``: ``"direct"`` (the truncated kernel as a separable FIR) up to the crossover σ
  measured for the axis length, batch, order, dtype and device (:func:`faster_method`),
  ``"sft"``/``"asft"`` (the sliding Fourier transform bank) beyond, ``"folded"`` (the
  untruncated kernel folded onto the boundary, exact) when the kernel reaches beyond the axis;
  the direct FIR where the SFT fit would be less accurate than scipy.ndimage (the accuracy
  guard :func:`auto_sft_rmse`). A truncated kernel (``truncate=``/``radius=`` given,
  ``kernel="scipy"``, orders above 2; :data:`GAUSSIAN_KERNELS`) takes ``"direct"`` or
  ``"folded"`` by :func:`truncated_route`, both exact.
* ``backend``: ``"numba"`` (compiled CPU loops: the FIR, the SFT recursions), ``"torch"``
  (the reference engines, conv1d, the FFT of the folded path), ``"triton"`` (the fused GPU
  kernels), ``"cuda"`` (the CUDA C++ batch kernel through CuPy, :func:`cuda_batch`).

The engine of an SFT bank (:func:`sft_engine`) and the CPU CWT's SIMD kernels
(:func:`cwt_simd`) are decided here too.
"""

from __future__ import annotations

import bisect
import functools
import importlib.util
import math
from collections.abc import Callable

import numpy as np

from .._route import Route

__all__ = [
    "AUTO_PEER_MARGIN",
    "AUTO_TAIL_RMSE",
    "BATCH",
    "CUDA_MIN_BYTES",
    "CUDA_MIN_SIGNALS",
    "DEEP_FOLD",
    "DEFAULT_ENGINE",
    "DIRECT_UP_TO",
    "FAST_SFT_MAX",
    "GAUSSIAN_KERNELS",
    "MEASURED",
    "SIMD_MIN_VALUES",
    "TRITON_FIR_RADIUS",
    "TRUNCATED_FFT_RADIUS",
    "UNMEASURED_DIRECT_TAPS",
    "WIDE_RADIUS",
    "auto_sft_rmse",
    "crossover_sigma",
    "cwt_hop_route",
    "cwt_route",
    "cwt_simd",
    "direct_backend",
    "faster_method",
    "gaussian_route",
    "morse_route",
    "numba_available",
    "peer_rmse",
    "sft_backend",
    "truncated_route",
]

# ---------------------------------------------------------------------- measured constants
#: The default engine of an SFT bank per device and method: the fastest accurate one measured
#: (``benchmarks/signal_gpu.py``, ``benchmarks/signal_cpu.py``): the chunked matrix products
#: (fused Triton kernels on CUDA) beat the row-by-row engines on both devices and are accurate
#: in float32 for the SFT and the ASFT. On the CPU real banks take the numba recursions
#: (:func:`sft_engine`).
DEFAULT_ENGINE = {
    ("cpu", "sft"): "chunked",
    ("cpu", "asft"): "chunked",
    ("cuda", "sft"): "chunked",
    ("cuda", "asft"): "chunked",
}

#: Output values from which a CPU CWT runs on the numba SIMD kernels (:mod:`._numba_cwt`);
#: smaller calls stay on the torch engine and never load numba. On the development machine
#: the 64-scale CWT of 102400 float32 samples takes about a third of the chunked engine's
#: time on one thread (``benchmarks/signal_numba.py``).
SIMD_MIN_VALUES = 1 << 18

#: Taps ``2W + 1`` up to which a device without a measured crossover table uses the FIR (a
#: guess, not a measurement: 4σ ≤ 12, i.e. σ ≤ 3 at truncate 4).
UNMEASURED_DIRECT_TAPS = 25

#: Longest half kernel (taps beyond the centre) that the Triton FIR applies on a GPU; longer
#: ones go through ``conv1d``. Measured on an H100 against conv1d, eager calls on 2048² and
#: 128³ (``benchmarks/signal_scipy_grid.py --device cuda``): the Triton FIR is faster up to
#: W = 21 in float32 and float64 (float64 2048², σ = 2, W = 9: 0.71 -> 0.36 ms); from W = 27
#: on, conv1d was faster in some cells (each tap reloads its inputs).
TRITON_FIR_RADIUS = 21

#: Radius up to which float32 signals are filtered by the FIR with float64 taps and sums (the
#: result rounded to float32 once, as scipy.ndimage does): for so short a kernel the float32
#: roundings of the sums would be most of the error (6.0e-8 against scipy's 4.8e-8 at
#: σ = 0.5, ``benchmarks/signal_scipy_grid.py --accuracy-only``); longer kernels sum in
#: float32, twice as fast.
WIDE_RADIUS = 8

#: NumPy input of at most this many samples, filtered along one axis by the SFT on the CPU,
#: goes straight to the numba recursions on NumPy arrays (the numba backend without the
#: tensor round trips: ~0.3 ms on 10^5 samples, a fifth of a σ = 8192 call,
#: ``benchmarks/signal_scipy_grid.py``); larger jobs are chunked by the general path.
FAST_SFT_MAX = 1 << 21

#: σ / N from which a float32 CPU call folded along every axis keeps float64 between the axes
#: (at σ/N ≤ 64, e.g. the 128³ volume at σ = 8192, scipy.ndimage's truncated tail is the larger
#: error and float32 passes suffice; from σ/N ≈ 250 on, rounding dominates both;
#: ``benchmarks/signal_scipy_grid.py --accuracy-only``).
DEEP_FOLD = 128.0

#: The CUDA C++ batch kernel (:mod:`.cuda_sft`) takes float32 batches of at least this many
#: signals (one block per signal: about 1000 blocks fill an H100; at 256 signals of 102400
#: samples it took half the Triton kernels' time, ``benchmarks/signal_batch_cuda.py``) ...
CUDA_MIN_SIGNALS = 256
#: ... whose input and result together exceed this many bytes: smaller calls are captured
#: into CUDA graphs on the Triton kernels (:mod:`fastmoments._cuda_graph`).
CUDA_MIN_BYTES = 256 << 20

# ------------------------------------------------------------------------ accuracy guards
#: Fraction of scipy.ndimage's own error (:func:`peer_rmse`) that the SFT route of
#: ``method="auto"`` fits its kernel to: the output's relative error on broadband signals is
#: about the kernel's (0.4-0.6 of scipy's where the SFT runs,
#: ``benchmarks/signal_scipy_grid.py --accuracy-only``).
AUTO_PEER_MARGIN = 0.8

#: Relative RMSE that the direct route of ``method="auto"`` keeps its truncated tail below:
#: the smallest SFT fit error measured from σ = 2 on (2.0e-5, order 1; orders 0 and 2:
#: 5-9e-5; the default fits' bound is 1e-4), so that picking the FIR does not cost accuracy
#: (``benchmarks/signal_scipy_grid.py --accuracy-only``).
AUTO_TAIL_RMSE = 2e-5


def numba_available() -> bool:
    """Whether the numba backend can run (numba importable; checked once, without importing
    it)."""
    return _numba_found()


@functools.lru_cache(maxsize=1)
def _numba_found() -> bool:
    return importlib.util.find_spec("numba") is not None


@functools.lru_cache(maxsize=512)
def peer_rmse(sigma: float, order: int) -> float:
    """Relative RMSE of scipy.ndimage's default kernel (``truncate = 4``: radius
    ``round(4σ)``, normalised over it) against its untruncated kernel: the error of
    ``scipy.ndimage.gaussian_filter1d(x, σ, order=order)`` on broadband signals, which
    ``method="auto"`` must not exceed. It grows with σ to a limit (order 0: 1.22e-4 at
    σ = 16, 1.38e-4 at σ = 256, 1.39e-4 at σ = 1024); beyond σ = 256 the value there is
    returned (within 1% of the limit).

    >>> [f"{peer_rmse(2.0, o):.2e}" for o in (0, 1, 2)]
    ['3.50e-05', '1.93e-04', '6.74e-04']
    """
    sigma = min(float(sigma), 256.0)
    w = math.ceil(12 * sigma) + 2
    k = np.arange(-w, w + 1, dtype=np.float64)
    inside = np.abs(k) <= int(4.0 * sigma + 0.5)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    full = [g, -k * g, (k * k / sigma**2 - 1.0) * g][int(order)]
    trunc = np.where(inside, full, 0.0)
    # each normalised by its own Gaussian sum (the 1/σ^order factors cancel in the ratio)
    full = full / g.sum()
    trunc = trunc / g[inside].sum()
    return float(np.linalg.norm(trunc - full) / np.linalg.norm(full))


def auto_sft_rmse(sigma: float, order: int) -> float:
    """The relative RMSE that the SFT route of ``method="auto"`` fits its kernel to:
    ``min(1e-4, 0.8 · peer_rmse(σ, order))`` (:data:`AUTO_PEER_MARGIN`), so that picking
    the SFT keeps the accuracy of scipy.ndimage's default; where the fit (or, below σ = 1,
    the few-tap kernel) does not reach it, ``"auto"`` takes the direct FIR instead.

    >>> auto_sft_rmse(32.0, 0), round(auto_sft_rmse(2.0, 0), 7)
    (0.0001, 2.8e-05)
    """
    return min(1e-4, AUTO_PEER_MARGIN * peer_rmse(float(sigma), int(order)))


# ------------------------------------------------------------------------ the crossover
def crossover_sigma(n: int, order: int, dtype: str, device: str,
                    batch: int = 1) -> float | None:
    """The largest σ at which the FIR is the faster for ``batch`` signals of ``n`` samples,
    or ``None`` where no table was measured for ``(device, dtype, order)``.

    :data:`DIRECT_UP_TO` holds σ* for one signal and for a batch of :data:`BATCH` samples at
    each measured ``n``; between them σ* is interpolated in ``log batch``, between measured
    lengths in ``log n`` (held beyond them).

    >>> s = crossover_sigma(1000, 0, "float64", "cpu")
    >>> s is None or s > 0
    True
    """
    points = DIRECT_UP_TO.get((device, dtype, int(order)))
    if not points:
        return None
    one, many = _along_n(points, max(int(n), 1))
    big = max(1.0, BATCH / max(int(n), 1))
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


def faster_method(n: int, sigma: float, order: int, truncate: float, dtype: str,
                  device: str, batch: int = 1) -> str:
    """``"direct"`` or ``"sft"``: the faster method measured for a Gaussian filter of order
    ``order`` along an axis of ``n`` samples (``batch`` of them in the call), in ``dtype``
    (``"float32"``/``"float64"``) on a device of type ``device`` (``"cpu"``, ``"cuda"``).

    >>> faster_method(1000, 0.5, 0, 4.0, "float64", "cpu")
    'direct'
    >>> faster_method(100_000, 8192.0, 0, 4.0, "float64", "cpu")
    'sft'
    """
    star = crossover_sigma(n, order, dtype, device, batch)
    if star is None:
        taps = 2 * math.ceil(truncate * sigma) + 1
        return "direct" if taps <= UNMEASURED_DIRECT_TAPS else "sft"
    # the table is measured at truncate = 4; the FIR's cost grows with truncate σ
    return "direct" if truncate * sigma <= 4.0 * star else "sft"


# ------------------------------------------------------------------------------ backends
def direct_backend(device: str, radius: int, grad: bool = False,
                   triton: bool = False) -> Route:
    """The backend of the direct FIR: the numba loops on the CPU (``"fir"``), on a GPU the
    Triton FIR for half kernels of at most :data:`TRITON_FIR_RADIUS` taps when Triton runs
    there (``triton``), else ``conv1d`` (also wherever a gradient is recorded: ``grad``)."""
    if grad:
        return Route("direct", "torch", "conv1d", "a gradient is recorded")
    if device == "cpu":
        return Route("direct", "numba", "fir", "")
    if triton and radius <= TRITON_FIR_RADIUS:
        return Route("direct", "triton", "fir", f"W = {radius} <= TRITON_FIR_RADIUS")
    return Route("direct", "torch", "conv1d", f"W = {radius}")


def sft_backend(method: str, device: str, real_bank: bool, engine: str = "auto",
                grad: bool = False, fused: bool = True) -> Route:
    """The backend and engine of an SFT bank: with ``engine="auto"`` the numba recursions for
    a real bank (the Gaussians) on the CPU (the recursions cost a fixed number of operations
    per row and sample, the chunked products a number per sample that grows with their chunk:
    they win for real banks of 6-8 rows and lose for a complex Morlet bank of 11 rows,
    ``benchmarks/signal_numba.py``), else :data:`DEFAULT_ENGINE` (on CUDA the fused Triton
    kernels, or the CUDA C++ kernel for the batches of :func:`cuda_batch`, decided per call
    by the rows; ``fused``: whether the bank and the device take the fused kernels at all); a
    forced engine as given. A recorded gradient takes the torch engines."""
    if engine != "auto":
        if engine == "chunked" and device == "cuda" and not grad and fused:
            return Route(method, "triton", "fused", "engine given")
        backend = "numba" if engine == "numba" and not grad else "torch"
        return Route(method, backend, engine, "engine given")
    if device == "cpu" and real_bank and numba_available() and not grad:
        return Route(method, "numba", "recursions", "real bank on the CPU")
    eng = DEFAULT_ENGINE.get((device, method), "chunked")
    if device == "cuda" and not grad and fused:
        return Route(method, "triton", "fused", "DEFAULT_ENGINE")
    return Route(method, "torch", eng, "DEFAULT_ENGINE")


def cuda_batch(n_signals: int, n: int) -> bool:
    """Whether a float32 batch of ``n_signals`` signals of ``n`` samples is large enough for
    the CUDA C++ kernel (:data:`CUDA_MIN_SIGNALS`, :data:`CUDA_MIN_BYTES`); the kernel also
    needs CuPy and a bank it takes (:func:`.cuda_sft.eligible_layout`)."""
    return n_signals >= CUDA_MIN_SIGNALS and 8 * n_signals * n > CUDA_MIN_BYTES


def cwt_simd(device: str, method: str, n_scales: int, values: int, grad: bool) -> bool:
    """Whether ``engine="auto"`` runs a CWT on the numba SIMD kernels: on the CPU, for the SFT
    and ASFT, several scales, at least :data:`SIMD_MIN_VALUES` outputs, no gradient recorded,
    numba installed. A fixed rule: the first such call of a process compiles the kernels it
    needs (or loads them from numba's cache) and takes the same route as every later one."""
    return (device == "cpu" and method in ("sft", "asft") and n_scales >= 2
            and values >= SIMD_MIN_VALUES and not grad and numba_available())


def cwt_route(method: str, engine: str, simd: bool, device: str, grad: bool) -> Route:
    """The route of a CWT call whose engine resolved to ``engine``: the SIMD kernels
    (``simd``, :func:`cwt_simd`), the direct kernels of ``method="direct"``, or the SFT
    engine (:func:`sft_backend`, for the complex banks of the scales)."""
    if simd:
        return Route(method, "numba", "simd", "cwt_simd")
    if engine == "direct":
        return Route(method, "torch", "direct", "method given")
    if engine != "chunked":
        return sft_backend(method, device, False, engine, grad)
    return sft_backend(method, device, False, "auto", grad)


# ------------------------------------------------------------------------- the Gaussians
def gaussian_route(*, n: int, batch: int, sigma: float, order: int, truncate: float,
                   requested: str, folds: bool, dtype: str, device: str,
                   sft_meets_peer: Callable[[], bool]) -> Route:
    """The method of a Gaussian plan's call along an axis of ``n`` samples (``batch`` of them
    in the call) in ``dtype`` on ``device``: the ``requested`` method, or for ``"auto"`` the
    faster one measured (:func:`faster_method`), the direct FIR where the SFT fit misses the
    accuracy guard (``sft_meets_peer()``, asked only where it binds: :func:`auto_sft_rmse`
    below 1e-4), and ``"folded"`` where the kernel reaches beyond the axis (``folds``: the
    SFT methods' target, the untruncated kernel, exactly; a forced ``"direct"`` folds
    scipy's truncated kernel). The backend is left to :func:`direct_backend` and
    :func:`sft_backend` (``Route.backend`` is ``""`` here).

    >>> gaussian_route(n=1000, batch=1, sigma=0.5, order=0, truncate=4.0, requested="auto",
    ...                folds=False, dtype="float64", device="cpu",
    ...                sft_meets_peer=lambda: True).method
    'direct'
    """
    if folds:
        return Route("folded", "", "", "the kernel reaches beyond the axis (W >= N)")
    if requested != "auto":
        return Route(requested, "", "", "method given")
    method = faster_method(n, sigma, order, truncate, dtype, device, batch)
    star = crossover_sigma(n, order, dtype, device, batch)
    why = ("UNMEASURED_DIRECT_TAPS" if star is None
           else f"DIRECT_UP_TO[{device}, {dtype}, {order}]: sigma* = {star:.3g}")
    if method == "sft" and auto_sft_rmse(sigma, order) < 1e-4 and not sft_meets_peer():
        return Route("direct", "", "", "accuracy guard: the SFT fit misses auto_sft_rmse")
    return Route(method, "", "", why)


#: The Gaussian kernels a one-call filter applies (``kernel=``): ``"moments"`` (default: the
#: second derivative with zero sum and zero first moment, as every Gaussian of the package)
#: and ``"scipy"`` (scipy.ndimage's own sampled kernel, truncated at ``round(truncate σ)``,
#: applied exactly by :func:`truncated_route`; :mod:`.gaussian_truncated`).
GAUSSIAN_KERNELS = ("moments", "scipy")

#: Radius above which a truncated kernel (``truncate=``/``radius=`` given, ``kernel="scipy"``,
#: order > 2) is applied by the folded FFT rather than the FIR, unless ``method="direct"``:
#: both are exact. Measured once on the (shared, noisy) development CPU, one thread, float64,
#: 10^6 samples, ``TruncatedGaussian`` calls: the numba FIR took 0.02 s at r = 64, 0.6 s at
#: r = 1024 and 2.6 s at r = 4096; the folded FFT (torch) 0.3-1.2 s at every r. Not from a
#: committed benchmark: a conservative crossover, where the FIR is still no slower.
TRUNCATED_FFT_RADIUS = 1024


def truncated_route(n: int, radius: int, requested: str) -> Route:
    """The method of a truncated-kernel call along an axis of ``n`` samples: ``"folded"``
    (the kernel folded onto the boundary, one FFT) where the kernel reaches beyond the axis
    (``radius >= n``) or, unless ``requested="direct"``, is longer than
    :data:`TRUNCATED_FFT_RADIUS`; else ``"direct"`` (the FIR). Both apply the truncated kernel
    exactly: the SFT's window does not end at the radius (:mod:`.gaussian_truncated`).

    >>> truncated_route(10**5, 8, "sft").method, truncated_route(10**5, 4000, "auto").method
    ('direct', 'folded')
    >>> truncated_route(10**5, 4000, "direct").method, truncated_route(10, 12, "direct").method
    ('direct', 'folded')
    """
    why = "truncate/radius given: the truncated kernel, exactly"
    if radius >= n > 0:
        return Route("folded", "", "", why + "; the kernel reaches beyond the axis (r >= N)")
    if requested != "direct" and radius > TRUNCATED_FFT_RADIUS:
        return Route("folded", "", "", why + "; r > TRUNCATED_FFT_RADIUS")
    return Route("direct", "", "", why)


# --------------------------------------------------------- the measured crossover table
# Written by ``benchmarks/signal_crossover.py`` between the two marker lines; rerun it instead
# of editing. ``DIRECT_UP_TO[(device, dtype, order)]``: ``(N, σ*_one, σ*_batch)``, the largest
# σ at which the direct FIR was faster than the SFT for signals of N samples: one signal, and
# a batch of ``BATCH`` samples. ``MEASURED``: where and when.
# BEGIN MEASURED TABLE
BATCH = 262144

MEASURED: dict = {
    'cpu': {
        'date': '2026-11-22T21:23:32+00:00',
        'device': 'cpu',
        'load': 1.71337890625,
        'name': 'x86_64',
        'numba': '0.68.1',
        'numpy': '2.4.6',
        'python': '3.11.7',
        'quick': False,
        'threads': 2,
        'torch': '2.13.0+cpu',
    },
    'cuda': {
        'date': '2026-11-24T02:04:47+00:00',
        'device': 'cuda',
        'load': 0.89794921875,
        'name': 'NVIDIA H100 80GB HBM3',
        'numba': '0.68.0',
        'numpy': '2.5.2',
        'python': '3.12.3',
        'quick': False,
        'threads': 4,
        'torch': '2.11.0+cu130',
    },
}

DIRECT_UP_TO: dict = {
    ('cpu', 'float32', 0): (
        (100, 512, 22.6274),
        (1000, 512, 64),
        (10000, 64, 45.2548),
        (100000, 45.2548, 45.2548),
        (1000000, 45.2548, 45.2548),
    ),
    ('cpu', 'float32', 1): (
        (100, 512, 22.6274),
        (1000, 512, 32),
        (10000, 45.2548, 32),
        (100000, 45.2548, 45.2548),
        (1000000, 32, 32),
    ),
    ('cpu', 'float32', 2): (
        (100, 512, 22.6274),
        (1000, 512, 32),
        (10000, 64, 32),
        (100000, 45.2548, 32),
        (1000000, 32, 32),
    ),
    ('cpu', 'float64', 0): (
        (100, 512, 22.6274),
        (1000, 362.039, 32),
        (10000, 45.2548, 22.6274),
        (100000, 11.3137, 8),
        (1000000, 11.3137, 11.3137),
    ),
    ('cpu', 'float64', 1): (
        (100, 512, 22.6274),
        (1000, 256, 22.6274),
        (10000, 32, 22.6274),
        (100000, 8, 22.6274),
        (1000000, 16, 16),
    ),
    ('cpu', 'float64', 2): (
        (100, 512, 22.6274),
        (1000, 256, 16),
        (10000, 32, 22.6274),
        (100000, 16, 22.6274),
        (1000000, 16, 16),
    ),
    ('cuda', 'float32', 0): (
        (100, 1.41421, 22.6274),
        (1000, 2.82843, 1),
        (10000, 1.41421, 4),
        (100000, 2.82843, 2.82843),
        (1000000, 4, 4),
    ),
    ('cuda', 'float32', 1): (
        (100, 4, 22.6274),
        (1000, 1, 1),
        (10000, 2.82843, 4),
        (100000, 2.82843, 2),
        (1000000, 4, 4),
    ),
    ('cuda', 'float32', 2): (
        (100, 4, 22.6274),
        (1000, 1, 1.41421),
        (10000, 2.82843, 4),
        (100000, 2, 2.82843),
        (1000000, 2.82843, 2.82843),
    ),
    ('cuda', 'float64', 0): (
        (100, 4, 32),
        (1000, 2, 2),
        (10000, 4, 4),
        (100000, 2.82843, 2),
        (1000000, 4, 4),
    ),
    ('cuda', 'float64', 1): (
        (100, 4, 22.6274),
        (1000, 1.41421, 1.41421),
        (10000, 2.82843, 4),
        (100000, 2, 2.82843),
        (1000000, 4, 4),
    ),
    ('cuda', 'float64', 2): (
        (100, 4, 22.6274),
        (1000, 1, 2),
        (10000, 0.5, 4),
        (100000, 4, 2),
        (1000000, 2.82843, 2.82843),
    ),
}
# END MEASURED TABLE


# ------------------------------------------------------------------ the Morse wavelets
def real_transforms(device: str, mode: str, hop: int, grad: bool) -> bool:
    """Whether a Morse CWT runs on real transforms of length ``N``
    (:func:`fastmoments.signal.morse.morse_cwt`): on the CPU, for ``mode="reflect"`` and
    ``hop=1``, with no gradient recorded (the route :func:`morse_route` names).

    >>> real_transforms("cpu", "reflect", 1, False), real_transforms("cpu", "wrap", 1, False)
    (True, False)
    """
    return device == "cpu" and mode == "reflect" and hop == 1 and not grad


def morse_route(device: str = "cpu", mode: str = "reflect", hop: int = 1,
                grad: bool = False) -> Route:
    """The route of a CWT with a :class:`~fastmoments.signal.GeneralizedMorse` wavelet: the
    frequency domain, exact up to rounding. On the CPU, for ``mode="reflect"`` and ``hop=1``
    with no gradient recorded, real transforms of length ``N`` (a DCT-II of the signals once,
    then per scale a DCT-III and a DST-III: :func:`real_transforms`)
    in place of complex FFTs of the period ``2N``; otherwise one FFT of the boundary-extended
    signal, then a product and an inverse FFT per scale (``O(N log N)`` per scale). No
    σ-independent fit is used: the Morse kernels decay only algebraically in time, so the
    window holding all but 1e-4 of a kernel's RMS is 16 scales wide on each side at (β, γ) =
    (20, 3) and 400 at (1, 3) (``benchmarks/signal_dog.py``; :mod:`~fastmoments.signal.morse`,
    notes).

    >>> morse_route().kernel, morse_route("cuda").kernel, morse_route(mode="wrap").kernel
    ('dct', 'fft', 'fft')
    """
    why = "analytic wavelet of algebraic decay: no finite-window fit (signal.morse)"
    if real_transforms(device, mode, hop, grad):
        return Route("dct", "scipy", "dct", why + "; reflect on the CPU: real transforms of N")
    return Route("fft", "torch", "fft", why)


def cwt_hop_route(prefix: bool) -> Route:
    """The route of ``cwt(..., hop=h)`` for the Morlet: ``prefix`` (SFT banks without
    attenuation, the default ``method="sft"``): only the kept samples are computed, from
    prefix sums over segments of ``h`` samples in matrix products
    (:func:`~fastmoments.signal.hop.cwt_hop_prefix`), time falling with ``h``; else the full
    transform of blocks with halos, every ``h``-th sample kept
    (:func:`~fastmoments.signal.hop.cwt_hop`).

    >>> cwt_hop_route(True).kernel
    'prefix'
    """
    if prefix:
        return Route("sft", "torch", "prefix", "hop > 1, SFT rows without attenuation")
    return Route("blocks", "torch", "blocks", "hop > 1 (attenuated rows or DoG)")
