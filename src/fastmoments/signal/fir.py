"""The direct separable FIR of the Gaussian filters (``method="direct"``) on NumPy arrays.

``y[n] = Σ_{|k|≤W} h[k] x[n-k]`` along one axis after another, with the kernel of
:class:`~fastmoments.signal.GaussianFilter` (scipy.ndimage's normalised discrete Gaussian,
truncated at ``W = ceil(truncate σ)``). On the CPU this is the fastest route at small σ: it
costs ``W + 1`` multiply-adds per sample (the kernel is even or odd, so ``h[k]`` and
``h[-k]`` share one), against the SFT's fixed cost of a few dozen operations plus the torch
dispatch of each of its steps.

The loops are numba functions (:mod:`._numba_fir`, compiled once and cached on disk):

* along the last axis, each line is cut into tiles of 2048 samples; inside, the sum over
  ``k`` is the outer loop and the samples the inner one, which LLVM vectorises;
* along any other axis of a C-contiguous ``(pre, n, post)`` array, an output row is the sum
  of ``2W + 1`` input rows, vectorised along the contiguous ``post`` axis: no axis is moved
  and nothing is transposed;
* the boundary modes are applied inside the loops: only the ``W`` outputs at each end read a
  small buffer of mode-extended samples, never a copy of the whole signal.

Several axes are filtered one after the other through one scratch array (the last pass writes
the result). float32 stays float32 (sums in float32: their rounding, ~1e-7, is far below the
truncation's ~1e-4).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._threads import GRAIN, threads_for

__all__ = ["MODE_CODES", "PARALLEL_WORK", "fir_passes", "half_kernel", "numba_kernels"]

MODE_CODES = {"reflect": 0, "nearest": 1, "mirror": 2, "wrap": 3, "constant": 4}

#: tap-sample products (``Σ numel · (W + 1)`` over the passes) from which the work is spread
#: over numba's threads (:func:`fastmoments._threads.threads_for`: one more thread per
#: :data:`~fastmoments._threads.GRAIN` of work): below, a thread pool's wake-up, and the
#: wait for a thread whose CPU is busy, cost more than they save.
PARALLEL_WORK = GRAIN

_KERNELS: Any = None


def numba_kernels():
    """The numba module :mod:`._numba_fir`, imported on first use (``import fastmoments``
    does not import numba)."""
    global _KERNELS
    if _KERNELS is None:
        from . import _numba_fir

        _KERNELS = _numba_fir
    return _KERNELS


def half_kernel(taps: np.ndarray) -> tuple[np.ndarray, bool]:
    """``(hh, odd)``: a kernel ``h[-W..W]`` (float64, even or odd) as its half ``h[0..W]``.

    The kernel's parity is its order's (0 and 2 even, 1 odd); the half is the mean of the two
    sides, which removes the rounding by which they differ (~1e-17).

    >>> hh, odd = half_kernel(np.array([-1.0, 0.0, 1.0]))
    >>> hh.tolist(), odd
    ([0.0, 1.0], True)
    """
    taps = np.asarray(taps, dtype=np.float64)
    w = (taps.shape[0] - 1) // 2
    right, left = taps[w:], taps[w::-1]
    odd = bool(np.abs(right[1:] + left[1:]).sum() < np.abs(right[1:] - left[1:]).sum())
    hh = 0.5 * (right - left) if odd else 0.5 * (right + left)
    return np.ascontiguousarray(hh), odd


def fir_passes(a: np.ndarray, passes: list[tuple[int, np.ndarray, bool, int]], cval: float,
               out: np.ndarray) -> np.ndarray:
    """Filter the C-contiguous array ``a`` along several axes into ``out``.

    Parameters
    ----------
    a : numpy.ndarray
        C-contiguous float32 or float64 input; never modified.
    passes : list of (axis, hh, odd, mode code)
        One entry per filtered axis (non-negative, in the order applied): the half kernel in
        ``a``'s dtype (or float64 for float32 ``a``: the sums are then formed in float64 and
        rounded once), its parity and the boundary mode (:data:`MODE_CODES`).
    cval : float
        Value outside the array for the constant mode.
    out : numpy.ndarray
        C-contiguous result of ``a``'s shape and dtype, not overlapping ``a``.

    Returns
    -------
    numpy.ndarray
        ``out``.
    """
    shape = a.shape
    if a.size == 0 or not passes:
        if a.size:
            out[...] = a
        return out
    k = _KERNELS if _KERNELS is not None else numba_kernels()
    fn = k.fir_serial
    work = a.size * sum(p[1].shape[0] for p in passes)
    if work >= PARALLEL_WORK:
        threads = threads_for(work)
        if threads > 1:
            k.set_threads(threads)
            fn = k.fir_parallel
    c = a.dtype.type(cval)
    tmp = np.empty_like(out) if len(passes) > 1 else None
    src = a
    if len(passes) == 1 and passes[0][0] == len(shape) - 1:  # one pass along the last axis
        ax, hh, odd, mode = passes[0]
        n = shape[-1]
        fn(a.reshape(-1, n, 1), out.reshape(-1, n, 1), hh, odd, mode, c)
        return out
    for i, (ax, hh, odd, mode) in enumerate(passes):
        dst = out if (len(passes) - i) % 2 == 1 else tmp
        pre = math.prod(shape[:ax])
        post = math.prod(shape[ax + 1:])
        fn(src.reshape(pre, shape[ax], post), dst.reshape(pre, shape[ax], post), hh, odd,
           mode, c)
        src = dst
    return out


def all_finite(y: np.ndarray) -> bool:
    """Whether ``y`` (C-contiguous) holds only finite values (one vectorised pass)."""
    return y.size == 0 or bool(numba_kernels().all_finite(y.reshape(-1)))
