"""Helpers shared by the signal benchmarks: the timer, the float64 FFT reference, the relative
error, CUDA-graph capture and the paper's reference time."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from disk_common import time_samples
from fastmoments.signal.boundary import extend

# The paper's Morlet transform: N = 102400, σ = 8192 on an RTX 3090 (Yamashita & Wakahara 2022)
PAPER_MORLET_MS = 0.545


def fft_reference(x64: torch.Tensor, taps: np.ndarray, mode: str = "reflect") -> torch.Tensor:
    """``y[n] = Σ_j h[j] x[n - j]`` in float64 by FFT; ``taps`` holds h on [-W, W]."""
    w = (len(taps) - 1) // 2
    n = x64.shape[-1]
    xp = extend(x64, w, w, mode)
    size = xp.shape[-1] + len(taps) - 1
    h = torch.as_tensor(taps, device=x64.device)
    if h.is_complex():
        y = torch.fft.ifft(torch.fft.fft(xp.to(torch.complex128), size) * torch.fft.fft(h, size))
    else:
        y = torch.fft.irfft(torch.fft.rfft(xp, size) * torch.fft.rfft(h, size), size)
    return y[..., 2 * w: 2 * w + n]


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    """Relative RMSE of ``a`` against ``b`` (in ``b``'s dtype)."""
    a = a.to(b.dtype)
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


def capture_graph(fn: Callable[[], Any]) -> tuple[torch.cuda.CUDAGraph, Any]:
    """Warm ``fn`` (static inputs) up on a side stream and capture it in a CUDA graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    return g, out


def timer(fn, *, warmup=3, repeat=20, cuda=True, device_only=False):
    """Median and spread (min, max) in milliseconds of ``fn()`` after warm-up (``device_only``:
    the GPU's time alone, see :func:`time_samples`)."""
    dev = torch.device("cuda" if cuda else "cpu")
    times = [1e3 * t for t in time_samples(fn, dev, warmup=warmup, repeat=repeat,
                                           device_only=device_only)]
    return statistics.median(times), min(times), max(times)


def fcwt_plan(fcwt: Any, xi: float, scales: Any, n: int, fs: float, f0: float, f1: float,
              threads: int, plans: bool) -> tuple[Any, Any, Any, float | None]:
    """fCWT's transform object and log scales for the Morlet of centre ``xi`` (fCWT's
    Morlet(σ_f) carries exp(2πi t) under an envelope σ_f: ξ = 2π σ_f), ``len(scales)`` scales
    from ``f0`` to ``f1`` at sampling rate ``fs``; with ``plans``, its FFTW_MEASURE plans made
    for ``n`` samples. Returns the transform, the scales, the wavelet (keep it alive as long
    as the transform: fCWT holds a pointer to it) and the seconds the plans took (else
    ``None``)."""
    import time

    morl = fcwt.Morlet(xi / (2 * np.pi))
    sc = fcwt.Scales(morl, fcwt.FCWT_LOGSCALES, fs, f0, f1, len(scales))
    obj = fcwt.FCWT(morl, threads, plans, True)
    plan_s = None
    if plans:
        t0 = time.perf_counter()
        obj.create_FFT_optimization_plan(n, "FFTW_MEASURE")
        plan_s = time.perf_counter() - t0
    return obj, sc, morl, plan_s


def cpu_times(fn: Callable[[], Any], repeat: int = 3, scale: float = 1.0
              ) -> tuple[float, float, float]:
    """Median, min and max wall time of ``fn()`` over ``repeat`` calls after one warm-up,
    in seconds times ``scale`` (``1e3``: milliseconds)."""
    import time

    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(scale * (time.perf_counter() - t0))
    return statistics.median(times), min(times), max(times)
