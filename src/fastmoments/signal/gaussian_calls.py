"""The one-call Gaussian filters, :func:`gaussian_filter` (every axis, as
:func:`scipy.ndimage.gaussian_filter`) and :func:`gaussian_filter1d`: each axis through a
cached :class:`~fastmoments.signal.gaussian.GaussianFilter` plan and its route.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._array import as_tensor, to_output
from .._cuda_graph import GraphCache, plain_key
from .._progress import check_progress
from .._threads import cpu_call, per_value
from .._validate import check_choice
from ..parallel.plans import batched, free_axis
from ._apply import as_signal, normalize_axis, output_target, require_finite
from .gaussian import _cached_plan, _dtype_device, _shape
from .gaussian_options import (
    MAX_ORDER,
    TRUNCATE,
    SequenceLengthError,
    checked_options,
    exact_kernel,
    filtered_axes,
    per_axis,
    unsmoothed,
)
from .gaussian_paths import _FLOATS, _fast_direct, _run_direct
from .gaussian_truncated import TruncatedGaussian, check_radius, scipy_radius
from .nan import MIN_WEIGHT, check_nan_options, smooth_nan
from .output import (
    complex_parts,
    deliver,
    dtype_is_complex,
    dtype_of,
    is_complex,
    join_complex,
    output_spec,
    widened,
    writes_directly,
)
from .routes import DEEP_FOLD
from .sliding import ENGINES

__all__ = [
    "MAX_ORDER",
    "TRUNCATE",
    "SequenceLengthError",
    "filtered_axes",
    "gaussian_filter",
    "gaussian_filter1d",
    "plan_filter1d",
]


def _split_axis(shape: tuple[int, ...], arguments: dict) -> int | None:
    """The axis a device list splits: the first one not filtered (``None``: every axis is
    filtered, and the call runs on the first device of the list)."""
    try:
        if "axis" in arguments and "axes" not in arguments:
            done = [normalize_axis(arguments["axis"], len(shape))]
        else:
            done = filtered_axes(arguments.get("axes"), arguments.get("channel_axis"),
                                 len(shape))
    except (TypeError, ValueError):
        return None
    free = [a for a in range(len(shape)) if a not in done]
    return free[0] if free else None


_AXIS_REMOVED = (
    "gaussian_filter filters every axis (like scipy.ndimage.gaussian_filter) and takes no "
    "axis=; for one axis use gaussian_filter1d(x, sigma, axis=...) or "
    "gaussian_filter(x, sigma, axes=(axis,))")


def _filter(x: Any, axes: Any, channel_axis: Any, sigma: Any, order: Any, mode: Any, cval: Any,
            truncate: Any, method: Any, terms: Any, shift: Any, engine: Any, memory_budget: Any,
            out: Any, progress: Any, exact: tuple | None = None) -> Any:
    """The body of :func:`gaussian_filter` and :func:`gaussian_filter1d` on real input
    (``exact``: ``(truncate, radius, kernel)`` of a truncated-kernel call, else ``None``)."""
    if (type(x) is torch.Tensor and x.is_cuda and out is None and progress is None
            and memory_budget is None):  # a repeated GPU call: a replayed graph
        key = plain_key(axes, channel_axis, sigma, order, mode, cval, truncate, method,
                        terms, shift, engine, exact)
        if key is not None:
            hit = _GRAPHS.call(
                x, key,
                lambda t: _filter_eager(t, axes, channel_axis, sigma, order, mode, cval,
                                        truncate, method, terms, shift, engine, None, None,
                                        None, check_finite=False, exact=exact),
                True, 8 * x.numel())
            if hit is not None:
                return hit[0]
    return _filter_eager(x, axes, channel_axis, sigma, order, mode, cval, truncate, method,
                         terms, shift, engine, memory_budget, out, progress, exact=exact)


def _nan_filter(x: Any, axes: Any, channel_axis: Any, sigma: Any, order: Any, mode: Any,
                cval: Any, truncate: Any, method: Any, terms: Any, shift: Any, engine: Any,
                memory_budget: Any, out: Any, progress: Any, nan_policy: Any,
                min_weight: Any, exact: tuple | None = None) -> Any:
    """:func:`_filter` under a ``nan_policy`` other than the default (or a ``min_weight``
    given): the policy's passes by :func:`~fastmoments.signal.nan.smooth_nan`."""
    policy, w = check_nan_options(nan_policy, min_weight, out)
    if policy == "raise" or (isinstance(x, np.ndarray) and x.dtype.kind in "biu"):
        return _filter(x, axes, channel_axis, sigma, order, mode, cval, truncate, method,
                       terms, shift, engine, memory_budget, out, progress, exact)
    t, kind = as_tensor(x, "x", check_finite=False)
    ax = filtered_axes(axes, channel_axis, t.ndim)
    sigmas, orders, modes, trunc, *_ = checked_options(sigma, order, mode, truncate, method, terms,
                                                shift, len(ax))
    if exact is not None and exact[1] is not None:  # "propagate" dilates by ≥ each radius
        radii = per_axis("radius", exact[1], len(ax))
        trunc = max((check_radius(r) + 0.5) / s for r, s in zip(radii, sigmas, strict=True))

    def filt(data: torch.Tensor, c: float | None) -> torch.Tensor:
        return _filter(data, ax, None, sigma, order, mode, cval if c is None else c,
                       truncate, method, terms, shift, engine, memory_budget, None, progress,
                       exact)

    return to_output(smooth_nan(t, filt, ax, sigmas, orders, modes, trunc, policy, w), kind)


#: The CUDA graphs of the one-call functions (:mod:`fastmoments._cuda_graph`).
_GRAPHS = GraphCache(max_graphs=16)


def _lean_direct(x: Any, axes: Any, sigma: Any, order: Any, mode: Any, cval: Any,
                 truncate: Any, method: Any) -> Any:
    """The common call's direct route (:func:`_fast_direct`), or ``None`` where it does not
    apply (``sigma`` 0, an order above 2, a kernel the FIR should not take)."""
    if sigma == 0 or not 0 <= order <= 2:
        return None
    plan = (_cached_plan(float(sigma), order, "auto", None, None, truncate)
            if method == "auto" else None)
    return _fast_direct(x, axes, float(sigma), order, mode, cval, truncate, method, plan=plan)


def _axis_plans(sigmas: list, orders: list, radii: Any, exact: tuple | None, method: str,
                terms: Any, shift: Any, truncate: float) -> list:
    """One plan per filtered axis: the truncated kernel applied exactly (the FIR or the
    folded FFT) where ``exact`` is given, else a plan of the requested method (an ``"auto"``
    plan widens its direct kernel, :func:`auto_radius`; each axis then takes its plan's
    route, ``"folded"`` for a kernel that reaches beyond its axis)."""
    if exact is not None:
        radii = ([scipy_radius(s, exact[0]) for s in sigmas] if radii is None
                 else [check_radius(r) for r in radii])
        return [_truncated_plan(s, o, r, exact[2], method)
                for s, o, r in zip(sigmas, orders, radii, strict=True)]
    return [_cached_plan(s, o, method, terms, shift, truncate)
            for s, o in zip(sigmas, orders, strict=True)]


def _filter_eager(x: Any, axes: Any, channel_axis: Any, sigma: Any, order: Any, mode: Any,
                  cval: Any, truncate: Any, method: Any, terms: Any, shift: Any, engine: Any,
                  memory_budget: Any, out: Any, progress: Any, *,
                  check_finite: bool = True, exact: tuple | None = None) -> Any:
    """:func:`_filter` run eagerly (``check_finite=False``: the call inside a graph capture,
    whose finiteness flag the graph computes)."""
    if exact is None and _lean(x, channel_axis, sigma, order, mode, cval, truncate, method,
                               terms, shift, engine, memory_budget, out, progress):
        y = _lean_direct(x, axes, sigma, order, mode, cval, truncate, method)
        if y is not None:
            return y
    shape = _shape(x)
    if len(shape) < 1:
        as_signal(x)  # raises the scalar input error
    axes_list, sigma, order, mode, radii = unsmoothed(
        sigma, order, mode, filtered_axes(axes, channel_axis, len(shape)),
        None if exact is None else exact[1])
    k = len(axes_list)
    sigmas, orders, modes, truncate, method, terms, shift = checked_options(
        sigma, order, mode, truncate, method, terms, shift, k)
    if k == 0:  # nothing to filter: a copy of the input, as scipy.ndimage returns
        return _copy(x, engine, out, progress, check_finite)
    if exact is None and max(orders) > 2:  # orders above 2: scipy's truncated kernels
        exact = (truncate, None, "moments")
    dt, dev = _dtype_device(x)
    size = math.prod(shape)
    grad = isinstance(x, torch.Tensor) and x.requires_grad and torch.is_grad_enabled()
    plans = _axis_plans(sigmas, orders, radii, exact, method, terms, shift, truncate)
    chosen = [p.route_for(shape[ax], batch=size // max(shape[ax], 1), dtype=dt, device=dev,
                          engine=engine if type(engine) is str else "auto", grad=grad).method
              for p, ax in zip(plans, axes_list, strict=True)]
    if all(m == "direct" for m in chosen):  # every axis by the FIR (the numba loops on a CPU)
        for p in plans:
            p.method = "direct"
        return _run_direct(x, axes_list, plans, modes, cval=cval, engine=engine,
                           memory_budget=memory_budget, check_finite=check_finite,
                           out=out, progress=progress)
    # float32 on the CPU smoothed far beyond every axis (all folded, σ ≥ DEEP_FOLD · N): the
    # result is all but the mean, and the float32 rounding of each axis's result would be
    # most of its error (as in scipy.ndimage; which of the two is closer was a coin toss at
    # σ = 2^20 on 512²); between the axes the values stay float64, rounded once at the end
    deep = k > 1 and all(m == "folded" and s >= DEEP_FOLD * shape[ax]
                         for m, s, ax in zip(chosen, sigmas, axes_list, strict=True))
    return _by_plans(x, axes_list, plans, modes, cval=cval, engine=engine,
                     memory_budget=memory_budget, check_finite=check_finite, out=out,
                     progress=progress, deep=deep)


@functools.lru_cache(maxsize=128)
def _truncated_plan(sigma: float, order: int, radius: int, kernel: str,
                    method: str) -> TruncatedGaussian:
    return TruncatedGaussian(sigma, order=order, radius=radius, kernel=kernel, method=method)


def _lean(x: Any, channel_axis: Any, sigma: Any, order: Any, mode: Any, cval: Any,
          truncate: Any, method: Any, terms: Any, shift: Any, engine: Any, memory_budget: Any,
          out: Any, progress: Any) -> bool:
    """Whether the call is the common one that
    :func:`~fastmoments.signal.gaussian_paths._fast_direct` may take: a float NumPy
    array, scalar options of exact types, the defaults otherwise."""
    return (type(x) is np.ndarray and out is None and progress is None
            and memory_budget is None and terms is None and shift is None and engine == "auto"
            and channel_axis is None and type(order) is int and type(mode) is str
            and type(cval) is float and type(truncate) is float
            and (method == "auto" or method == "direct") and type(sigma) in _PLAIN
            and x.dtype in _FLOATS and x.ndim >= 1)


def _copy(x: Any, engine: Any, out: Any, progress: Any, check_finite: bool) -> Any:
    """A call that filters no axis: a copy of the input (or into ``out``), checked."""
    t, kind, finite = as_signal(x, check_finite)
    check_choice("engine", engine, ("auto", *ENGINES))
    check_progress(progress)
    out, target = output_target(out, x, t, kind, tuple(t.shape), t.dtype)
    y = t.clone() if target is None else target.copy_(t)
    require_finite(finite)
    return out if out is not None else to_output(y, kind)


def _by_plans(x: Any, axes: list[int], plans: list, modes: list[str], *, cval: Any,
              engine: Any, memory_budget: Any, check_finite: bool, out: Any, progress: Any,
              deep: bool) -> Any:
    """Every axis by its plan's call, one after the other (``deep``: a float32 CPU input kept
    in float64 between the axes, rounded once at the end)."""
    k = len(axes)
    # one axis: the plan checks the input (on a GPU, inside its fused kernels); several: the
    # input is checked once here (read at the end) and the passes need not check again
    t, kind, finite = as_signal(x, check_finite and k > 1)
    out, target = output_target(out, x, t, kind, tuple(t.shape), t.dtype)
    deep = deep and t.dtype == torch.float32 and t.device.type == "cpu"
    y = t.double() if deep else t
    for i, (ax, plan, m) in enumerate(zip(axes, plans, modes, strict=True)):
        y = plan(y, axis=ax, mode=m, cval=cval, engine=engine, memory_budget=memory_budget,
                 check_finite=check_finite and k == 1,
                 out=target if i == k - 1 and not deep else None,
                 progress=progress)
    if deep:
        y = y.to(torch.float32)
        if target is not None:
            target.copy_(y)
    require_finite(finite)
    return out if out is not None else to_output(y, kind)


_PLAIN = (float, int)


_NOTES = """
    *Method.* ``method="auto"`` picks, for each filtered axis, the faster of the direct FIR
    and the SFT for its length, σ, order, the dtype and the device, from crossover points
    measured by ``benchmarks/signal_crossover.py`` (:mod:`fastmoments.signal.routes`):
    the FIR at small σ (numba loops on the CPU, all axes in one call, no axis moved), the SFT
    from some σ on (a cost per sample independent of σ). ``GaussianFilter(...).choose(n)``
    tells the choice. Its result is at least as accurate as scipy.ndimage's default
    (``truncate = 4``) against the exact convolution by the untruncated kernel: the FIR
    applies the kernel out to :func:`~fastmoments.signal.gaussian_kernels.auto_radius` (its
    truncated tail at most half scipy's), the SFT is fitted to relative RMSE
    ``≤ min(1e-4, 0.8 ε_scipy)`` (:func:`~fastmoments.signal.routes.auto_sft_rmse`,
    ``ε_scipy`` scipy's own truncation error, :func:`~fastmoments.signal.routes.peer_rmse`:
    3.5e-5 for smoothing at σ = 2, ~1.3e-4 from σ = 32 on) or else not picked, and an axis
    no longer than ``W = ceil(truncate σ)`` is filtered by the untruncated kernel folded onto
    its boundary (float rounding). Measured on the scipy comparison grid (orders 0-2, σ = 0.5-8192,
    10³-10⁶ samples, 512², 2048², 128³, float32 and float64): no cell less accurate than
    scipy.ndimage (``python benchmarks/signal_scipy_grid.py --accuracy-only``,
    ``benchmarks/results/signal_scipy_grid_accuracy_cpu.md``).

    *dtype.* float32 stays float32 and float64 stays float64; integer (and bool, float16)
    input is filtered in float32 and returned as float32, the package's dtype policy, where
    scipy.ndimage returns the input's integer dtype. The result of smoothing is not an integer
    and a derivative (``order`` 1, 2) is negative where the signal falls: scipy's integer
    output rounds away the fraction and wraps negative values of unsigned types around (a
    silent wrong answer); pass ``x.astype(float)`` to get float64, or ``output=`` the dtype
    you want (scipy's integer result: ``output=x.dtype``). float16 input is filtered in
    float32, where scipy.ndimage raises.

    *Truncated kernel.* Given ``truncate`` or ``radius`` (or ``kernel="scipy"``, or an
    order above 2), every axis applies scipy.ndimage's kernel cut at ``r = radius`` or
    ``round(truncate σ)``, zero beyond, exactly: the FIR for ``r`` up to
    :data:`~fastmoments.signal.routes.TRUNCATED_FFT_RADIUS` (or any ``r`` with
    ``method="direct"``), else the kernel folded onto the boundary and one FFT per signal
    (``O(N log N)`` whatever ``r``; :mod:`~fastmoments.signal.gaussian_truncated`). The
    error against the direct float64 convolution with that kernel is float rounding
    (tested at ``1e-14 Σ|h| max|x|``). The SFT is never used: its fitted window does not end
    at ``r``.

    *Where the default departs from scipy.ndimage.* (1) The default applies the untruncated
    Gaussian (to the method's stated error), scipy the kernel cut at ``round(4σ)``: the
    results differ by scipy's truncation error (relative RMSE ~1e-4 for smoothing, up to
    ~1e-1 for derivatives of axes shorter than the kernel), fastmoments being the closer to
    the exact convolution. (2) The second derivative has zero sum (``kernel="moments"``):
    scipy's kernel sums to ``(M2/S - σ²)/σ⁴`` (-0.56 at σ = 0.5, -5.0e-3 at σ = 0.7, -7.2e-5
    at σ = 1, -4.3e-11 at σ = 5000), and the results differ by that sum times the smoothed
    input: up to 285 on the 0-255 camera image at σ = 0.5 (:func:`gaussian_laplace`, whose
    range is ±626; scipy gives -285 on a constant 255 image), 2.5 at σ = 0.7; at σ = 5000 a
    linear trend leaks into scipy's second derivative (1.2e-7 on a signal whose true one is
    1.8e-8; here 9e-13). ``kernel="scipy"`` gives scipy's numbers:

    >>> import numpy as np
    >>> from scipy import ndimage
    >>> flat = np.full((8, 8), 255.0)
    >>> abs(float(gaussian_filter(flat, 0.5, order=[2, 0])[4, 4])) < 1e-9  # zero sum
    True
    >>> round(float(gaussian_filter(flat, 0.5, order=[2, 0], kernel="scipy")[4, 4]), 1)
    -142.7
    >>> round(float(ndimage.gaussian_filter(flat, 0.5, order=[2, 0])[4, 4]), 1)
    -142.7
"""


_FOLDED_NOTES = """
    *SFT.* Filters ``x_G[n] = Σ_k G[k] x[n-k]`` (Eqs. 4-6 of Yamashita & Wakahara 2022) with
    ``G`` replaced by its least-squares Fourier fit on ``[-K, K]`` (Eqs. 9-15, 45-47). The
    relative error against the exact Gaussian is :attr:`GaussianFilter.rmse` (≤ 1e-4 by
    default) for every σ; float32 adds less than 1e-5.

    *Kernels longer than the signal* (truncation radius ``W = ceil(truncate σ) ≥ N``, the
    ``N`` samples along the filtered axis) are applied exactly, folded onto the boundary
    (:mod:`fastmoments.signal.folded`). The kernel is scipy.ndimage's normalised discrete
    Gaussian cut at a radius ``R``: with ``g[k] = exp(-k²/(2σ²))``,
    ``S = Σ_{|k|≤R} g[k]`` and ``M2 = Σ_{|k|≤R} k² g[k]``, ``h0 = g/S``,
    ``h1 = -k g/(σ² S)`` and ``h2 = (k² - M2/S) g/(σ⁴ S)`` (scipy's ``(k²/σ⁴ - 1/σ²) g/S``
    minus its sum times ``h0``, so that ``Σ h2 = Σ k h2 = 0`` as in the rest of the module).
    With ``method="auto"``, ``"sft"`` and ``"asft"``, ``R = max(W, ceil(10σ))``: the
    untruncated kernel (its tail beyond ``10σ`` is below ``e^-50`` of the peak), which the
    SFT fit approximates and scipy truncates, so the error against the exact convolution is
    float rounding (relative RMSE ~1e-16 in float64; in float32 the rounding of the input and
    the output, ~6e-8), where scipy's truncated kernel leaves its tail (~1e-4 for smoothing,
    up to ~1e-1 for a first derivative at σ ≫ N). With ``method="direct"``, ``R = W``:
    scipy's truncated kernel, as the FIR applies it (orders 0 and 1 are scipy's
    ``gaussian_filter1d`` kernels with the same ``truncate``).
    With the reflect, mirror and wrap modes the extended signal has period ``P = 2N, 2N - 2,
    N``, so ``y[n] = Σ_k h[k] x_ext[n-k] = Σ_{q<P} f[q] x_P[(n-q) mod P]`` with the folded
    kernel ``f[q] = Σ_{k ≡ q (mod P)} h[k]`` and ``x_P`` one period of the extension: a
    circular convolution (a direct sum for ``P ≤ 64``, else ``torch.fft``). With nearest and
    constant, samples beyond the ends are a constant ``a`` (before) and ``b`` (after):
    ``y[n] = Σ_{j<N} h[n-j] x[j] + a R[n] + b L[n]`` with the tail masses
    ``R[n] = Σ_{k=n+1}^{W} h[k]`` and ``L[n] = Σ_{k=-W}^{n-N} h[k] = ±R[N-1-n]``. ``f``,
    ``R`` and ``L`` are cached per ``(σ, order, R, N, mode)``: ``O(N)`` memory, ~0.15 s at
    σ = 2^20 on one CPU core, then ``O(N log N)`` per signal. As σ → ∞ the folded kernel
    tends to ``1/P``: reflect and wrap give the signal's mean (order 0), mirror the mean of
    its period, nearest the mean of the two end values and constant ``cval``. Accuracy
    against the convolution by the kernel cut at ``R``: float64 rounding,
    ``|Δy| ≲ 10⁻¹⁵ · Σ|h| · max|x|``.
"""


@batched(name="x", split_axis=_split_axis)
@cpu_call(per_value(32))
def gaussian_filter(x: Any, sigma: float | Sequence[float], order: int | Sequence[int] = 0,
                    output: Any = None, mode: str | Sequence[str] = "reflect",
                    cval: float | complex = 0.0, truncate: float = TRUNCATE, *,
                    radius: int | Sequence[int] | None = None,
                    axes: Sequence[int] | None = None, channel_axis: int | None = None,
                    method: str = "auto", kernel: str = "moments", terms: int | None = None,
                    shift: int | None = None, engine: str = "auto",
                    memory_budget: float | None = None, out: Any = None,
                    progress: bool | None = None, nan_policy: str = "raise",
                    min_weight: float = MIN_WEIGHT) -> Any:
    """Multi-dimensional Gaussian filter, as :func:`scipy.ndimage.gaussian_filter`: every
    axis by default.

    Parameters
    ----------
    x : array_like or torch.Tensor
        Real or complex input of any shape; never modified. Complex input is filtered as its
        real and imaginary parts (the filter is linear and its kernel real).
    sigma : float or sequence of float
        Standard deviation(s) in samples: one for every filtered axis, or one per axis (a
        0-d array is its value). ``0`` on an axis leaves that axis alone, as in
        scipy.ndimage; every other σ must be positive.
    order : int or sequence of int
        Derivative order (per filtered axis): 0, 1 or 2 with every method; 3 to
        :data:`MAX_ORDER` with scipy's truncated kernel, exactly (as ``truncate`` given).
    output : numpy.ndarray, torch.Tensor or dtype, optional
        scipy.ndimage's ``output``: an array of ``x``'s shape and kind to write the result
        into (returned; it may be ``x`` itself; integer arrays get the result truncated, as
        scipy casts), or the result's dtype (NumPy's or torch's). A float64, complex128 or
        integer ``output`` is computed in float64. Default: the dtype policy (Notes).
    mode : {"reflect", "nearest", "mirror", "wrap", "constant"} or sequence of them
        Extension beyond the ends, as in :func:`scipy.ndimage.gaussian_filter` (per axis;
        scipy's ``"grid-mirror"``, ``"grid-wrap"``, ``"grid-constant"`` are the same as
        ``"reflect"``, ``"wrap"``, ``"constant"``).
    cval : float or complex
        Value outside the signal for ``mode="constant"`` (complex for complex input: its
        parts go to the real and imaginary parts).
    truncate : float
        Left at its default (4.0), the direct route's kernel half-width in σ; every method
        then applies the untruncated Gaussian to its stated error (Notes: Method). Given
        (even as 4.0), scipy.ndimage's meaning: the kernel is cut at radius
        ``round(truncate σ)`` and is zero beyond, for every method, and applied exactly
        (Notes: Truncated kernel).
    radius : int or sequence of int, optional
        The truncated kernel's radius per axis (overrides ``truncate``), as scipy.ndimage's.
    axes : sequence of int, optional
        The axes filtered (default: all of them, but ``channel_axis``), one after the other.
    channel_axis : int, optional
        The axis holding colour channels (scikit-image's convention): never filtered.
    method : {"auto", "sft", "asft", "direct"}
        ``"auto"`` (default): per axis, the faster method measured (Notes); the others force
        one (see :class:`GaussianFilter`). With a truncated kernel every method is exact:
        ``"direct"`` takes the FIR, the others the FIR or the folded FFT
        (:func:`~fastmoments.signal.routes.truncated_route`).
    kernel : {"moments", "scipy"}
        ``"moments"`` (default): the second derivative with zero sum and zero first moment
        (constants and ramps give exactly 0); ``"scipy"``: scipy.ndimage's own sampled
        kernel, truncated at ``round(truncate σ)`` (or ``radius``) and applied exactly:
        scipy's numbers to float rounding (Notes: Truncated kernel).
    terms : int, optional
        ``P`` (default: relative RMSE ≤ 1e-4) of the SFT methods.
    shift : int, optional
        ASFT shift ``n0`` (``method="asft"`` only).
    engine : {"auto", "chunked", "prefix", "recursive", "sliding"}
        How the SFT components are computed (see :mod:`fastmoments.signal.sliding`);
        ``"auto"`` uses the fastest accurate engine measured on the device.
    memory_budget : float, optional
        Scratch memory in bytes (or a fraction of the free memory) of the SFT methods.
    out : numpy.ndarray or torch.Tensor, optional
        Preallocated output of ``x``'s shape and the result dtype, of the input's kind (and
        device): written in place and returned (see :meth:`GaussianFilter.__call__`); one
        of ``out`` and ``output``.
    progress : bool, optional
        tqdm progress bar of the SFT passes: ``True`` always, ``False`` never, ``None``
        (default) for large jobs once they have run for a second.
    nan_policy : {"raise", "omit", "propagate"}
        Missing (NaN) samples: ``"raise"`` (default): :class:`ValueError` on NaN or infinity;
        ``"omit"``: normalised convolution ``G*(x m) / G*m`` with ``m`` the mask of the finite
        samples (smoothing, ``order=0``, only); ``"propagate"``: NaN at every output within
        ``ceil(truncate σ)`` samples (per axis) of a non-finite one, elsewhere the filter of
        the signal with its non-finite samples set to zero (Notes: NaN policy).
    min_weight : float
        ``nan_policy="omit"`` only: outputs where ``G*m``, the fraction of the kernel's weight
        on finite samples, is at most this (``0 <= min_weight < 1``, default 0.01) are NaN.

    Returns
    -------
    numpy.ndarray or torch.Tensor
        Same shape as ``x``, float32 or float64 (Notes: dtype) (``out`` when given).

    Raises
    ------
    ValueError
        For σ ≤ 0, bad axes (repeated, out of range, or ``channel_axis`` among them), a
        sequence of σ, orders, modes or radii of the wrong length (a
        :class:`SequenceLengthError`, also the :class:`RuntimeError` scipy raises), a
        ``radius`` that is not a non-negative integer, an ``output`` of the wrong shape,
        an order above :data:`MAX_ORDER`, unknown ``kernel``,
        ``mode``/``method``/``engine``/``nan_policy``, NaN or infinity in ``x`` with
        ``nan_policy="raise"``, infinity or ``order != 0`` with ``"omit"``, ``min_weight``
        outside ``[0, 1)``, or a bad ``out`` (wrong shape or device, read-only, overlapping
        ``x``).
    TypeError
        For the removed ``axis=`` keyword (use :func:`gaussian_filter1d` or ``axes=``), an
        ``output`` of the wrong kind, a non-numeric or real ``output`` dtype for complex
        input, both ``output`` and ``out``, an ``out`` of the wrong kind or dtype or given
        with ``nan_policy`` other than ``"raise"``, a ``min_weight`` that is not a real
        number, or a ``progress`` other than ``True``, ``False`` or ``None``.

    Notes
    -----
    Every axis is filtered, as scipy.ndimage does: on an image, rows and columns. A colour
    image ``(H, W, 3)`` needs ``channel_axis=-1`` (else its channels are smoothed into each
    other, as scipy would). With a device list (``device=[...]``) the batch is split along the
    first axis that is not filtered (``channel_axis``, or an axis left out of ``axes``);
    when every axis is filtered there is none, and the whole call runs on the first device
    of the list.

    *NaN policy.* ``"omit"`` is the normalised convolution of Knutsson & Westin (CVPR 1993)
    with the applicability ``G``: two passes of the same filter, ``num = G*(x m)`` and
    ``den = G*m`` (with ``mode="constant"`` the mask is extended by 1: ``cval`` is data), as
    astropy's ``convolve(..., nan_treatment="interpolate")``. Where every sample is finite it
    is the plain filter. The error of ``y = num/den`` is about ``ε (|x| + |y|) / den`` for a
    kernel of absolute error ``ε`` (~1.5e-4 for the SFT fits of relative RMSE 1e-4, rounding
    for ``method="direct"``): it grows where few finite samples remain, hence ``min_weight``.
    ``"propagate"`` dilates the non-finite mask by ``ceil(truncate σ_i)`` along each filtered
    axis ``i`` (extended by ``mode``; a box, the truncated separable kernel's support).
    Integer input holds no NaN and is filtered as with ``"raise"``.
    {notes}{folded}
    Examples
    --------
    >>> import numpy as np
    >>> from scipy import ndimage
    >>> img = np.random.default_rng(0).random((32, 32))
    >>> y = gaussian_filter(img, 2.0, method="direct")  # scipy's kernel and truncation
    >>> bool(np.abs(y - ndimage.gaussian_filter(img, 2.0)).max() < 1e-12)
    True
    >>> y = gaussian_filter(img, 2.0)  # "auto": a slightly longer kernel, more accurate
    >>> bool(np.abs(y - ndimage.gaussian_filter(img, 2.0)).max() < 1e-4)
    True
    >>> gaussian_filter(img, [2.0, 3.0], order=[1, 0]).shape
    (32, 32)
    >>> rgb = np.random.default_rng(1).random((16, 16, 3), dtype=np.float32)
    >>> gaussian_filter(rgb, 1.5, channel_axis=-1).dtype
    dtype('float32')
    >>> holes = np.ones((20, 20)); holes[5, 5] = np.nan
    >>> bool(np.allclose(gaussian_filter(holes, 1.5, nan_policy="omit"), 1.0))
    True
    """
    return _public(x, axes, channel_axis, sigma, order, output, mode, cval, truncate, radius,
                   method, kernel, terms, shift, engine, memory_budget, out, progress,
                   nan_policy, min_weight)


def _no_axis(fn):
    """Refuse the old one-axis keyword ``axis=`` of :func:`gaussian_filter` with a
    TypeError that says what to use instead."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "axis" in kwargs:
            raise TypeError(_AXIS_REMOVED)
        return fn(*args, **kwargs)

    return wrapper


gaussian_filter.__doc__ = gaussian_filter.__doc__.replace("{notes}", _NOTES).replace(
    "{folded}", _FOLDED_NOTES)


gaussian_filter = _no_axis(gaussian_filter)


@batched(name="x", split_axis=free_axis(lambda a: a["axis"]))
@cpu_call(per_value(16))
def gaussian_filter1d(x: Any, sigma: float, axis: int = -1, order: int = 0, output: Any = None,
                      mode: str = "reflect", cval: float | complex = 0.0,
                      truncate: float = TRUNCATE, *, radius: int | None = None,
                      method: str = "auto", kernel: str = "moments", terms: int | None = None,
                      shift: int | None = None, engine: str = "auto",
                      memory_budget: float | None = None, out: Any = None,
                      progress: bool | None = None, nan_policy: str = "raise",
                      min_weight: float = MIN_WEIGHT) -> Any:
    """One-dimensional Gaussian filter along ``axis``, as :func:`scipy.ndimage.gaussian_filter1d`.

    Parameters
    ----------
    x : array_like or torch.Tensor
        Real or complex input of any shape; never modified.
    sigma : float
        Standard deviation in samples (``0``: the input is returned unfiltered, a copy).
    axis : int
        The axis filtered (default: the last).
    order : int
        Derivative order: 0, 1 or 2; 3 to :data:`MAX_ORDER` with scipy's truncated kernel.
    output, mode, cval, truncate
        As in :func:`gaussian_filter` (scipy.ndimage's positional order).
    radius : int, optional
        The truncated kernel's radius (overrides ``truncate``).
    method, kernel, terms, shift, engine, memory_budget, out, progress
        As in :func:`gaussian_filter`.
    nan_policy : {"raise", "omit", "propagate"}
        Missing (NaN) samples, as in :func:`gaussian_filter`: ``"raise"`` (default),
        ``"omit"`` (normalised convolution, ``order=0`` only) or ``"propagate"`` (NaN within
        ``ceil(truncate σ)`` samples of a non-finite one).
    min_weight : float
        ``"omit"`` only: outputs where less than this fraction of the kernel's weight falls
        on finite samples are NaN (``0 <= min_weight < 1``, default 0.01).

    Returns
    -------
    numpy.ndarray or torch.Tensor
        Same shape as ``x``, float32 or float64 (see :func:`gaussian_filter`, Notes).

    Raises
    ------
    ValueError
        As :func:`gaussian_filter`; also for an ``axis`` out of range.
    TypeError
        For an ``axis`` that is not an integer, and as :func:`gaussian_filter`.

    Notes
    -----
    ``method="auto"`` picks the faster of the direct FIR and the SFT (see
    :func:`gaussian_filter`, Notes, and :class:`GaussianFilter` for the math); the NaN
    policies are described there too.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.zeros(201); x[100] = 1.0
    >>> y = gaussian_filter1d(x, 10.0)
    >>> round(float(y[100]), 4), round(float(1 / np.sqrt(2 * np.pi) / 10), 4)
    (0.0399, 0.0399)
    >>> gaussian_filter1d(np.ones((4, 50)), 3.0, axis=0, order=1).shape
    (4, 50)
    >>> x = np.ones(50); x[20:23] = np.nan
    >>> bool(np.allclose(gaussian_filter1d(x, 2.0, nan_policy="omit"), 1.0))  # gap filled
    True
    >>> y = gaussian_filter1d(x, 2.0, nan_policy="propagate")
    >>> int(np.isnan(y).sum())                       # 3 + 2 * ceil(4 * 2)
    19
    """
    if not (type(axis) is int and type(sigma) in _PLAIN and type(order) is int
            and radius is None):  # (the usual call needs none of these checks)
        axis = _scalar_arguments(axis, sigma, order, radius)
    if (type(axis) is int and type(x) in (np.ndarray, torch.Tensor)
            and -x.ndim <= axis < x.ndim):  # the usual call: a NumPy array or a tensor
        ax = axis
    else:
        ndim = len(_shape(x))
        if ndim < 1:
            as_signal(x)
        ax = normalize_axis(axis, ndim)
    return _public(x, (ax,), None, sigma, order, output, mode, cval, truncate, radius,
                   method, kernel, terms, shift, engine, memory_budget, out, progress,
                   nan_policy, min_weight)


def _scalar_arguments(axis: Any, sigma: Any, order: Any, radius: Any) -> Any:
    """:func:`gaussian_filter1d`'s checks that ``axis``, ``sigma``, ``order`` and ``radius``
    are single values (scipy.ndimage's errors for sequences); the axis, a 0-d array read."""
    if isinstance(axis, (Sequence, np.ndarray)) and not isinstance(axis, str) and not (
            isinstance(axis, np.ndarray) and axis.ndim == 0):
        raise TypeError(f"axis must be an integer (gaussian_filter1d filters one axis; "
                        f"gaussian_filter(x, sigma, axes=...) filters several), got {axis!r}")
    if isinstance(axis, np.ndarray):
        axis = axis.item()
    if isinstance(sigma, (Sequence, np.ndarray)) and not isinstance(sigma, str) and not (
            isinstance(sigma, np.ndarray) and sigma.ndim == 0):
        raise TypeError(f"sigma must be a real number for gaussian_filter1d, got {sigma!r}")
    if isinstance(order, (Sequence, np.ndarray)) and not isinstance(order, str) and not (
            isinstance(order, np.ndarray) and order.ndim == 0):
        raise TypeError(f"order must be an integer for gaussian_filter1d, got {order!r}")
    if isinstance(radius, (Sequence, np.ndarray)) and not isinstance(radius, str):
        raise ValueError(f"radius must be a non-negative integer, got {radius!r}")
    return axis


def _public(x: Any, axes: Any, channel_axis: Any, sigma: Any, order: Any, output: Any,
            mode: Any, cval: Any, truncate: Any, radius: Any, method: Any, kernel: Any,
            terms: Any, shift: Any, engine: Any, memory_budget: Any, out: Any, progress: Any,
            nan_policy: Any, min_weight: Any) -> Any:
    """The one-call functions' body: ``output``/``out``, complex input and the truncated
    kernel (``truncate``/``radius`` given, ``kernel="scipy"``) sorted out, then
    :func:`_filter` (or :func:`_nan_filter`) on real data."""
    if (output is None and radius is None and truncate is TRUNCATE and kernel == "moments"
            and not is_complex(x)):  # the common call, as before
        return _real(x, axes, channel_axis, sigma, order, mode, cval, 4.0, method, terms,
                     shift, engine, memory_budget, out, progress, nan_policy, min_weight, None)
    truncate, exact = exact_kernel(truncate, radius, kernel)
    if output is not None and out is not None:
        raise TypeError("give output= (scipy.ndimage's name: an array or a dtype) or out= (an "
                        "array), not both")
    array, dtype = output_spec(output if output is not None else out, x)
    want = None if array is None and dtype is None else (
        dtype_of(array) if array is not None else dtype)
    cplx = is_complex(x)
    if want is not None and cplx and not dtype_is_complex(want):
        raise TypeError(f"output must be complex for complex input (the imaginary part would "
                        f"be lost), got {want}")
    data = widened(x, want, cplx)
    direct = (array is not None and not cplx and data is x and nan_policy == "raise"
              and min_weight is MIN_WEIGHT and writes_directly(array, x))
    if cplx:  # a linear filter: the real and imaginary parts apart, each with its cval
        cre, cim = complex_parts(cval)
        y = join_complex(*(_real(part, axes, channel_axis, sigma, order, mode, c, truncate,
                                 method, terms, shift, engine, memory_budget, None, progress,
                                 nan_policy, min_weight, exact)
                           for part, c in ((data.real, cre), (data.imag, cim))))
    else:
        y = _real(data, axes, channel_axis, sigma, order, mode, cval, truncate, method, terms,
                  shift, engine, memory_budget, array if direct else None, progress,
                  nan_policy, min_weight, exact)
        if direct:
            return array
    return deliver(y, array, dtype)


def _real(x: Any, axes: Any, channel_axis: Any, sigma: Any, order: Any, mode: Any, cval: Any,
          truncate: float, method: Any, terms: Any, shift: Any, engine: Any,
          memory_budget: Any, out: Any, progress: Any, nan_policy: Any, min_weight: Any,
          exact: tuple | None) -> Any:
    if nan_policy != "raise" or min_weight is not MIN_WEIGHT:
        return _nan_filter(x, axes, channel_axis, sigma, order, mode, cval, truncate, method,
                           terms, shift, engine, memory_budget, out, progress, nan_policy,
                           min_weight, exact)
    return _filter(x, axes, channel_axis, sigma, order, mode, cval, truncate, method, terms,
                   shift, engine, memory_budget, out, progress, exact)


def plan_filter1d(x: Any, sigma: float, axis: int = -1, order: int = 0, mode: str = "reflect",
                  cval: float = 0.0, truncate: float = 4.0, *, method: str = "auto",
                  terms: int | None = None, shift: int | None = None, engine: str = "auto",
                  memory_budget: float | None = None, out: Any = None,
                  progress: bool | None = None, nan_policy: str = "raise",
                  min_weight: float = MIN_WEIGHT) -> Any:
    """:func:`gaussian_filter1d` on real input with ``truncate`` in the plans' meaning (the
    direct route's radius ``ceil(truncate σ)``, every method its own kernel): the Gaussian
    derivatives of the DoG wavelet transform (:mod:`.dog`), whose ``truncate`` is that."""
    return _real(x, (axis,), None, sigma, order, mode, cval, truncate, method, terms, shift,
                 engine, memory_budget, out, progress, nan_policy, min_weight, None)
