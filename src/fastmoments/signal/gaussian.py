"""Gaussian smoothing and its first and second derivatives, with scipy.ndimage's interface.

The paper's Sec. 2: ``x_G = G * x``, ``x_GD = G_D * x``, ``x_GDD = G_DD * x`` (Eqs. 4-6),
computed from ``P + 1`` sliding Fourier transform components (Eqs. 13-15, a cost independent
of σ), or from the attenuated transform shifted by ``n0`` samples (Eqs. 40-47), or by the
truncated kernel as a direct FIR (:mod:`.fir`); ``method="auto"`` picks the faster per call
(:mod:`.routes`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._array import ArrayKind, to_output
from .._cache import plan_cache
from .._cuda_graph import GraphCache, plain_key
from .._memory import below_minimum, rows_per_chunk
from .._memory import memory_budget as free_budget
from .._progress import check_progress
from .._route import Route
from .._validate import check_choice, check_int, check_positive_float
from ..parallel.plans import batched, free_axis
from ._apply import (
    BankPlan,
    as_signal,
    check_budget,
    check_cval,
    check_grad_out,
    filter_along,
    graphed_call,
    job_bar,
    normalize_axis,
    output_buffer,
    output_target,
    require_finite,
    resolve_engine,
)
from .boundary import MODES
from .coefficients import default_gaussian_terms, discrete_gaussian_kernel, fit_gaussian
from .direct import DirectBank
from .fir import MODE_CODES, all_finite, fir_passes, half_kernel
from .folded import FoldedKernel, apply_folded, folded_kernel, full_radius, truncation_radius
from .routes import (
    AUTO_TAIL_RMSE,
    DEEP_FOLD,
    FAST_SFT_MAX,
    WIDE_RADIUS,
    auto_sft_rmse,
    direct_backend,
    gaussian_route,
    sft_backend,
)
from .sliding import ENGINES, SFTBank

__all__ = ["METHODS", "GaussianFilter", "filtered_axes", "gaussian_filter", "gaussian_filter1d",
           "max_shift"]

METHODS = ("auto", "sft", "asft", "direct")


# the largest σ a plan is built for: its SFT fit grows with σ (2.5 min and ~0.5 GB of float64
# tables at σ = 1e6 on the development CPU; built only for signals longer than 4σ) and so does
# the folded kernel's O(10σ) sum (~0.15 s at 2^20, once per length and mode)
MAX_SIGMA = float(2**20)


def check_sigma(sigma: Any) -> float:
    """σ as a float: a finite real number in ``(0, MAX_SIGMA]``."""
    sigma = check_positive_float("sigma", sigma)
    if sigma > MAX_SIGMA:
        raise ValueError(f"sigma must be <= {MAX_SIGMA:g} (the plan's tables grow with sigma), "
                         f"got {sigma:g}")
    return sigma


# σ below which the filters apply their (few-sample) kernel directly, whatever the method: the
# ASFT's attenuation e^{n0 k/σ²} over [-K, K] costs float64 digits there (a constant came
# out 4e-9 off at σ = 0.5), and 2⌈4σ⌉ + 1 ≤ 9 taps cost less than an SFT bank
DIRECT_BELOW = 1.0


def max_shift(sigma: float) -> int:
    """The largest ASFT shift ``n0`` for which the fit is accurate and well conditioned:
    ``max(1, floor(σ/2))``.

    Measured on the development CPU (orders 0-2, σ from 0.5 to 2000, 20000-sample white
    noise): the applied kernel's relative RMSE stays ≤ 1e-4 up to ``n0 = σ`` (≤ 4e-4 at
    σ < 5), reaches 1.5e-3 (σ = 16) to 1 (σ = 2) at ``n0 = 2σ``, and from ``n0 ≈ 4σ`` the
    attenuation ``e^{n0 k/σ²}`` overflows (NaN): the window ``[-K - n0, K - n0]``
    (``K ≈ 4σ``) no longer holds the kernel. The rounding grows with ``e^{n0 K/σ²}``: float32
    results differ from float64 by ≤ 6e-7 up to ``n0 = σ/2`` but by 7e-6 at ``n0 = σ``
    (σ = 16 and 100, every engine). Hence σ/2.

    >>> max_shift(0.5), max_shift(2.0), max_shift(100.0)
    (1, 1, 50)
    """
    return max(1, math.floor(sigma / 2))


def default_shift(sigma: float) -> int:
    """Default ASFT shift ``n0 = max(1, round(σ/16))`` (the paper uses ``n0 = 10`` at σ ≈ 60-90).

    The attenuation is ``α = n0/σ²`` (Eq. 40 with ``n0 = α/(2γ)``), i.e. a memory of about
    ``σ²/n0 = 16σ`` samples, short enough that float32 filters do not drift, while the
    asymmetric window ``[-K - n0, K - n0]`` adds little error (at σ = 100 the relative RMSE of
    the smoothing kernel goes from 6.0e-5 to 6.3e-5 with ``n0 = 6``, to 7.0e-5 with ``n0 = 12``).
    """
    return max(1, round(sigma / 16.0))


#: Routes a plan keeps (one per key of length, batch, dtype, device, engine; oldest out).
_MAX_ROUTES = 64


class GaussianFilter(BankPlan):
    """Plan for Gaussian smoothing (``order`` 0, 1 or 2) along one axis.

    Build it once for ``σ`` and the options; call it on any number of signals.

    Parameters
    ----------
    sigma : float
        Standard deviation in samples (> 0).
    order : int
        0 (smoothing, Eq. 4), 1 (first derivative, Eq. 5) or 2 (second derivative, Eq. 6).
    method : {"auto", "sft", "asft", "direct"}
        ``"auto"`` (default) picks, per call, the faster of ``"direct"`` and ``"sft"`` for the
        signal length, σ, order, dtype and device from measured crossover points
        (:mod:`fastmoments.signal.routes`); :attr:`method` then tells which one ran, and
        :attr:`route` the method, backend and kernel (``plan.route_for(n, ...)`` for a call
        not made yet).
        ``"sft"``: sliding Fourier transform (Eqs. 13-15); ``"asft"``: attenuated SFT with
        shift ``n0`` (Eqs. 45-47); ``"direct"``: the truncated kernel as a separable FIR
        (numba loops on the CPU, :mod:`fastmoments.signal.fir`; ``conv1d`` on a GPU).
    terms : int, optional
        ``P``, the number of cosine terms beyond ``p = 0``. Default: the smallest ``P`` whose
        fitted kernel has relative RMSE ≤ 1e-4 (5 for order 0, 7 for orders 1 and 2 at the
        paper's K = 256; raised by up to 3 where this σ, method and shift need it); with
        ``method="auto"``, ≤ :func:`auto_sft_rmse` (also 0.8 times scipy.ndimage's own
        truncation error: one or two more terms for order 0 at σ ≲ 3).
    shift : int, optional
        ASFT shift ``n0`` (default ``max(1, round(σ/16))``), from 1 to
        :func:`max_shift` ``= max(1, floor(σ/2))``.
    truncate : float
        Half-width of the direct kernel in σ (default 4, as scipy.ndimage); also used below
        σ = 1, where every method applies its kernel directly.

    Attributes
    ----------
    radius : int
        ``W = ceil(truncate σ)``: the direct kernel's half-width; signals of at most ``W``
        samples are filtered by the kernel folded onto the boundary (:meth:`uses_folded`):
        the untruncated one (:attr:`folded_radius`) with ``"auto"`` and the SFT methods,
        the one truncated at ``W`` with ``"direct"``.
    K : int
        Window half-width of the SFT (``β = π/K``); for ``"direct"``, the kernel half-width.
    rmse : float
        Relative RMSE of the kernel of :attr:`bank` (the SFT fit; for ``"direct"`` the
        truncated kernel) against the target kernel on ``[-W, W]``, ``W = max(3K, 10σ)``
        (Eq. 48): scipy.ndimage's discrete Gaussian ``G[k] / Σ_j G[j]`` and its derivatives
        (:func:`~fastmoments.signal.coefficients.discrete_gaussian_kernel`; the absolute RMSE
        where that target is zero). The filtered output's relative error is about this value
        for broadband signals.

    Raises
    ------
    ValueError
        For σ ≤ 0, an order other than 0, 1, 2, an unknown method, a shift outside
        ``1..max_shift(σ)`` or given without ``method="asft"``.
    TypeError
        For a σ, order, terms or shift of the wrong type (bool, str, a float order).

    Notes
    -----
    After a call, the attribute ``method`` holds the method that call used (``"direct"``,
    ``"sft"`` or ``"asft"``; before the first call, the one requested, ``"auto"`` included)
    and ``requested`` the one given; :meth:`choose` tells the method of a call without
    running it.

    The kernels are normalised as scipy.ndimage's: the smoothing kernel sums to one, so a
    constant passes unchanged at every σ; the first derivative's sums to zero and the
    second's has zero sum and zero first moment (constants and ramps give zero). The
    sampled continuous Gaussian would not: it sums to ``1 + 2 Σ_m exp(-2π²σ²m²)`` (Poisson
    summation), 1.0144 at σ = 0.5. The fitted series is corrected to these moments exactly
    (a change of the size of the fit's error).

    ``G[k] = sqrt(γ/π) exp(-γk²)`` with ``γ = 1/(2σ²)`` is approximated on ``[-K, K]`` by
    ``Σ a_p cos(βpk)`` (Eq. 9), so ``x_G[n] ≈ Σ a_p c_p[n]`` with the SFT components
    ``c_p[n] = Σ_{|k|≤K} x[n-k] cos(βpk)`` (Eq. 13). With the ASFT, the weights ``e^{αk}``
    turn ``G[k]`` into ``e^{α²/(4γ)} G[k - n0]`` (Eq. 40), so the output is read ``n0`` samples
    later (Eq. 45); the derivatives pick up the terms ``α a_p`` and ``2α b_p, α² a_p``
    (Eqs. 46-47, derived here from ``G_D[k-n0] = E e^{αk} (G_D[k] + α G[k])`` and
    ``G_DD[k-n0] = E e^{αk} (G_DD[k] + 2α G_D[k] + α² G[k])``, ``E = e^{-α²/(4γ)}``).

    Signals no longer than the truncation radius ``W = ceil(truncate σ)`` are filtered by
    the kernel folded onto the boundary (see :func:`gaussian_filter`, Notes): with
    ``"auto"``, ``"sft"`` and ``"asft"`` the untruncated kernel (cut at ``10σ``, where its
    tail is below float64 rounding), so that their error against the exact convolution is
    rounding (~1e-16 in float64, the float32 rounding of input and output in float32) where
    scipy.ndimage's truncated kernel leaves its tail (relative RMSE ~1e-4 to ~1e-1 for the
    derivatives at σ ≫ N); with ``"direct"`` the kernel truncated at ``W``, as the FIR
    applies it. ``method="auto"`` reports ``"sft"`` for these calls. The SFT fit (``bank``,
    ``K``, ``terms``, ``rmse``) is built only on first use: ``GaussianFilter(1e6)`` costs
    nothing until it filters a signal longer than ``4·10⁶`` samples.

    The direct method applies the truncated kernel: its error against the untruncated kernel
    is the tail beyond ``W`` (relative RMSE ~1e-4 at ``truncate = 4``), the same kernel and
    truncation as scipy.ndimage's (``W = ceil(4σ)`` here, ``round(4σ)`` in scipy: never
    shorter), so scipy's accuracy for orders 0 and 1. The second derivative is corrected
    to zero sum (``h2 - (Σ h2) h0``), which adds the tail's sum times ``h0`` to the error:
    ~3% above scipy's error against its own untruncated kernel at ``truncate = 4`` (2.78e-3
    against 2.70e-3 at σ = 256 on 1000 samples). ``method="auto"`` widens the FIR's kernel
    (:func:`auto_radius`) and folds the untruncated one, so that it is at least as accurate
    as scipy everywhere.

    float32 results (engines ``"prefix"`` and ``"sliding"``, or ``"recursive"`` with ASFT)
    agree with float64 to a relative RMSE below 1e-5 (tested).

    Examples
    --------
    >>> import numpy as np
    >>> plan = GaussianFilter(100.0, method="sft")
    >>> plan.K, plan.terms, plan.rmse < 1e-4
    (424, 5, True)
    >>> y = plan(np.ones(1000))
    >>> bool(np.allclose(y, 1.0, atol=1e-4))
    True
    >>> auto = GaussianFilter(1.0)
    >>> auto.choose(1000, dtype="float64", device="cpu")
    'direct'
    >>> _ = auto(np.ones(1000)); auto.method
    'direct'
    """

    def __init__(self, sigma: float, *, order: int = 0, method: str = "auto",
                 terms: int | None = None, shift: int | None = None,
                 truncate: float = 4.0) -> None:
        self.sigma = check_sigma(sigma)
        self.order = check_int("order", order, minimum=0, maximum=2)
        self.requested = check_choice("method", method, METHODS)
        self.method = self.requested
        self._terms = (None if terms is None
                       else check_int("terms", terms, minimum=1, maximum=64))
        self.truncate = check_positive_float("truncate", truncate)
        self.shift = 0
        if self.requested == "asft":
            if shift is None:
                self.shift = default_shift(self.sigma)
            else:
                self.shift = check_int("shift", shift, minimum=1)
                top = max_shift(self.sigma)
                if self.shift > top:
                    raise ValueError(
                        f"shift must be in 1..{top} for sigma={self.sigma} (the ASFT's window "
                        f"[-K - shift, K - shift] cuts the kernel's tail and the attenuation "
                        f"e^(shift k / sigma^2) loses digits beyond max(1, floor(sigma / 2))), "
                        f"got {self.shift}")
        elif shift is not None:
            raise ValueError("shift is only used with method='asft'")
        # the bank of the SFT route ("auto" takes the plain SFT when it does not pick direct)
        self._sft = "asft" if self.requested == "asft" else "sft"
        self._bank_method = "direct" if self.requested == "direct" else self._sft
        self._terms_given = terms is not None
        self._built = False
        self._routes: dict[tuple, Route] = {}

    # The SFT bank (and its fit) is built on first use: a call whose kernel is longer than the
    # signal takes the folded path (:mod:`.folded`) and never needs it, which at σ = 1e6
    # saves minutes of fitting and ~0.5 GB of tables.
    def _build(self) -> None:
        if self._built:
            return
        # below σ = 1 the kernel spans a few samples: it is applied directly (see DIRECT_BELOW)
        # (for the SFT methods with the module's exact low moments, "direct-moments")
        kind = self._bank_method
        if self.sigma < DIRECT_BELOW:
            kind = "direct" if kind == "direct" else "direct-moments"
        terms = default_gaussian_terms(self.order) if self._terms is None else self._terms
        # "auto" fits its SFT route also below scipy.ndimage's own error (auto_sft_rmse)
        target = (auto_sft_rmse(self.sigma, self.order) if self.requested == "auto"
                  else 1e-4)
        for _ in range(4 if not self._terms_given and not kind.startswith("direct") else 1):
            bank = _gaussian_bank(self.sigma, self.order, kind, terms,
                                  self.shift if kind == "asft" else 0, self.truncate)
            K = int(bank.pad - (self.shift if kind == "asft" else 0))
            w = math.ceil(max(3 * K, 10 * self.sigma)) + self.shift
            j = np.arange(-w, w + 1)
            exact = discrete_gaussian_kernel(j, self.sigma, self.order)
            err2 = float(np.sum((bank.kernel(j)[0] - exact) ** 2))
            energy = float(np.sum(exact ** 2))
            # relative RMSE; the absolute one where the target is zero (derivatives, σ → 0)
            rmse = math.sqrt(err2 / energy) if energy > 0 else math.sqrt(err2)
            if rmse <= target:
                break
            terms += 1
        self._bank, self._K, self._rmse, self._terms = bank, K, rmse, terms
        self._built = True

    @property
    def bank(self):
        """The filter bank of the SFT route, built lazily.

        For ``method="direct"``, the direct kernel."""
        self._build()
        return self._bank

    @property
    def direct_truncate(self) -> float:
        """The truncation (in units of sigma) of the direct route.

        The truncation (in σ) of the direct route: ``truncate`` when ``method="direct"``
        was asked for; with ``"auto"``, widened where needed so that the truncated tail's
        relative RMSE is at most :data:`AUTO_TAIL_RMSE` (:func:`auto_radius`)."""
        if self.requested == "direct":
            return self.truncate
        return _auto_truncate(self.sigma, self.order, self.truncate)

    @property
    def direct_bank(self) -> DirectBank:
        """The truncated kernel of the direct route (float64).

        Its taps ``h[j]`` for ``|j| <= W``."""
        return _gaussian_bank(self.sigma, self.order, "direct", 1, 0, self.direct_truncate)

    @property
    def support(self) -> int:
        """Half-width of the widest kernel a call of this plan may apply.

        Half-width of the widest kernel a call of this plan may apply: the overlap that a
        caller filtering chunk by chunk needs (``dask.array.map_overlap`` depth). The direct
        kernel's ``W`` for ``method="direct"``, the SFT bank's ``pad`` for ``"sft"`` and
        ``"asft"``, the larger of the two for ``"auto"`` (whose direct kernel may be wider
        than scipy's, :func:`auto_radius`).

        >>> p = GaussianFilter(10.0, order=2)
        >>> p.support >= max(p.bank.pad, p.direct_bank.pad)
        True
        """
        if self.requested == "direct":
            return int(self.direct_bank.pad)
        if self.requested == "auto":
            return max(int(self.bank.pad), int(self.direct_bank.pad))
        return int(self.bank.pad)

    @property
    def K(self) -> int:
        """Window half-width of the SFT (see the class notes)."""
        self._build()
        return self._K

    @property
    def rmse(self) -> float:
        """Relative RMSE of the applied kernel against the target kernel."""
        self._build()
        return self._rmse

    @property
    def terms(self) -> int:
        """Number of cosine terms of the fit (see the class notes)."""
        self._build()
        return self._terms

    @property
    def radius(self) -> int:
        """``W = ceil(truncate σ)``: the direct kernel's truncation radius; signals of at most
        ``W`` samples take the folded path (:meth:`uses_folded`)."""
        return truncation_radius(self.sigma, self.truncate)

    @property
    def folded_radius(self) -> int:
        """Radius of the kernel that the folded path applies: :attr:`radius` for
        ``method="direct"`` (scipy's truncated kernel, as the FIR), else the untruncated
        kernel's :func:`~fastmoments.signal.folded.full_radius` (``max(W, ceil(10σ))``).

        >>> GaussianFilter(256.0).folded_radius
        2560
        >>> GaussianFilter(256.0, method="direct").folded_radius
        1024
        """
        if self.requested == "direct":
            return self.radius
        return full_radius(self.sigma, self.truncate)

    def choose(self, n: int, *, batch: int = 1, dtype: Any = "float64",
               device: Any = "cpu") -> str:
        """The method a call on ``batch`` signals of ``n`` samples runs.

        The requested one, or for ``"auto"`` the faster one measured
        (:func:`~fastmoments.signal.routes.gaussian_route`) for ``dtype`` (float32 or
        float64, NumPy or torch) on ``device``; ``"sft"`` where the kernel reaches beyond the
        signal (``W ≥ n``): the folded path then applies the SFT's target, the untruncated
        kernel, exactly."""
        n = check_int("n", n, minimum=0)
        batch = check_int("batch", batch, minimum=1)
        if self.requested != "auto":
            return self.requested
        name = _dtype_name(dtype)
        kind = torch.device(device).type if not isinstance(device, torch.device) else device.type
        method = self.route_for(n, batch=batch, dtype=name, device=kind).method
        return "sft" if method == "folded" else method

    def route_for(self, n: int, *, batch: int = 1, dtype: str = "float64", device: str = "cpu",
                  engine: str = "auto", grad: bool = False) -> Route:
        """The :class:`~fastmoments._route.Route` of a call on ``batch`` signals of ``n``
        samples of ``dtype`` (``"float32"``/``"float64"``) on a device of type ``device``,
        decided once per key by :mod:`fastmoments.signal.routes` and kept by the plan.

        >>> GaussianFilter(1.0).route_for(1000).method
        'direct'
        >>> str(GaussianFilter(8192.0).route_for(1000))
        'folded/torch:fft'
        """
        key = (n, batch, dtype, device, engine, grad)
        route = self._routes.get(key)
        if route is None:
            route = self._decide(n, batch, dtype, device, engine, grad)
            if len(self._routes) >= _MAX_ROUTES:
                self._routes.pop(next(iter(self._routes)))
            self._routes[key] = route
        return route

    def _decide(self, n: int, batch: int, dtype: str, device: str, engine: str,
                grad: bool) -> Route:
        m = gaussian_route(n=n, batch=batch, sigma=self.sigma, order=self.order,
                           truncate=self.truncate, requested=self.requested,
                           folds=n >= 1 and self.uses_folded(n), dtype=dtype, device=device,
                           sft_meets_peer=lambda: _sft_meets_peer(self.sigma, self.order,
                                                                  self.truncate))
        if m.method == "folded":
            return Route("folded", "torch", "fft", m.reason)
        if m.method == "direct":
            b = direct_backend(device, math.ceil(self.direct_truncate * self.sigma), grad,
                               _triton_runs(device))
        elif self.sigma < DIRECT_BELOW:  # a few-tap kernel with the fit's moments
            b = Route(m.method, "torch", "direct", "sigma < DIRECT_BELOW")
        else:
            b = sft_backend(m.method, device, True, engine, grad)
        reason = "; ".join(r for r in (m.reason, b.reason) if r)
        return Route(m.method, b.backend, b.kernel, reason)

    @property
    def route(self) -> Route | None:
        """The :class:`~fastmoments._route.Route` of the plan's latest call (``None`` before
        the first): the method, backend and kernel that ran, and why."""
        return self.__dict__.get("_route")

    def uses_folded(self, n: int) -> bool:
        """Whether signals of ``n`` samples take the folded path with the SFT methods: when
        the kernel's support ``2W + 1`` reaches beyond the signal (``W ≥ n``). The folded path
        then costs ``O(W)`` once (cached per ``n`` and mode) and ``O(n log n)`` per signal,
        where the SFT needs a fit and an extension of ``O(σ)`` samples per signal."""
        return self.radius >= n

    def folded(self, n: int, mode: str) -> FoldedKernel:
        """The folded kernel for signals of ``n`` samples in ``mode`` (see :mod:`.folded`)."""
        check_int("n", n, minimum=1)
        check_choice("mode", mode, MODES)
        return folded_kernel(self.sigma, self.order, self.folded_radius, int(n), mode)

    def __call__(self, x: Any, *, axis: int = -1, mode: str = "reflect", cval: float = 0.0,
                 engine: str = "auto", memory_budget: float | None = None,
                 check_finite: bool = True, out: Any = None,
                 progress: bool | None = None) -> Any:
        return graphed_call(self, x, self._call, axis=axis, mode=mode, cval=cval,
                            engine=engine, memory_budget=memory_budget,
                            check_finite=check_finite, out=out, progress=progress,
                            bytes_per_sample=8)

    def _call(self, x: Any, *, axis: int = -1, mode: str = "reflect", cval: float = 0.0,
              engine: str = "auto", memory_budget: float | None = None,
              check_finite: bool = True, out: Any = None,
              progress: bool | None = None) -> Any:
        """The eager body of :meth:`__call__`: the route of the call's key
        (:meth:`route_for`), then its path."""
        opts = dict(mode=mode, cval=cval, engine=engine, memory_budget=memory_budget,
                    check_finite=check_finite, out=out, progress=progress)
        n = _axis_length(x, axis)
        if n is None or type(engine) is not str:  # bad input: the SFT path's checks report it
            self.method = self._sft if self.requested == "auto" else self.requested
            return filter_along(self.bank, self._sft, x, axis=axis, desc=type(self).__name__,
                                **opts)
        dt, dev = _dtype_device(x)
        grad = isinstance(x, torch.Tensor) and x.requires_grad and torch.is_grad_enabled()
        route = self.route_for(n, batch=math.prod(_shape(x)) // max(n, 1), dtype=dt,
                               device=dev, engine=engine, grad=grad)
        self._route = route
        self.method = (self.requested if self.requested != "auto"
                       else "sft" if route.method == "folded" else route.method)
        lean = (type(x) is np.ndarray and out is None and progress is None and check_finite
                and memory_budget is None and engine == "auto" and type(mode) is str
                and type(cval) is float and x.dtype in _FLOATS and mode in MODE_CODES
                and math.isfinite(cval))
        if route.method == "direct":
            if lean:  # NumPy to the numba FIR
                y = _fast_direct(x, (axis,), self.sigma, self.order, mode, cval, self.truncate,
                                 self.requested, folded=False, plan=self)
                if y is not None:
                    return y
            return _run_direct(x, [axis], [self], [mode], **{
                k: v for k, v in opts.items() if k != "mode"})
        if route.method == "folded":
            return _folded_call(self, x, axis=axis, **opts)
        if lean and route.method == "sft" and route.backend == "numba":  # NumPy to numba
            y = _fast_sft(x, axis % x.ndim, self, mode, cval)
            if y is not None:
                return y
        return filter_along(self.bank, self._sft, x, axis=axis, desc=type(self).__name__,
                            **opts)

    __call__.__doc__ = BankPlan.__call__.__doc__

    def kernel(self, j: np.ndarray) -> np.ndarray:
        """The impulse response of :attr:`bank` at integer offsets ``j`` (float64)."""
        return self.bank.kernel(np.asarray(j))[0]

    def __repr__(self) -> str:
        route = f", route={str(self.route)!r}" if self.route is not None else ""
        if not self._built:  # not fitted yet (the fit may take long at huge σ)
            return (f"GaussianFilter(sigma={self.sigma}, order={self.order}, "
                    f"method={self.requested!r}, shift={self.shift}, truncate={self.truncate}"
                    f"{route})")
        return (f"GaussianFilter(sigma={self.sigma}, order={self.order}, "
                f"method={self.requested!r}, terms={self.terms}, K={self.K}, "
                f"shift={self.shift}, rmse={self.rmse:.2e}{route})")


def _dtype_name(dtype: Any) -> str:
    """``"float32"`` or ``"float64"``: the working dtype of data of ``dtype`` (the package's
    policy: float64 stays float64, everything else is computed in float32)."""
    if isinstance(dtype, torch.dtype):
        return "float64" if dtype == torch.float64 else "float32"
    try:
        return "float64" if np.dtype(dtype) == np.float64 else "float32"
    except TypeError:
        return "float64"


def _dtype_device(x: Any) -> tuple[str, str]:
    """The working dtype name and the device type of the input ``x``."""
    if isinstance(x, torch.Tensor):
        return ("float64" if x.dtype == torch.float64 else "float32"), x.device.type
    dt = getattr(x, "dtype", None)
    if dt is None:  # lists: NumPy's float64 unless they hold integers only
        return _dtype_name(np.asarray(x).dtype), "cpu"
    return _dtype_name(dt), "cpu"


def _axis_length(x: Any, axis: Any) -> int | None:
    """The length of ``x`` along ``axis``, or ``None`` where that is not (yet) known to be
    valid (the plan's checks then report the error)."""
    try:
        shape = tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
        if isinstance(axis, bool) or not isinstance(axis, int) or not shape:
            return None
        if not -len(shape) <= axis < len(shape):
            return None
        return int(shape[axis])
    except Exception:
        return None


@functools.lru_cache(maxsize=512)
def _sft_meets_peer(sigma: float, order: int, truncate: float) -> bool:
    """Whether the SFT route of the ``"auto"`` plan reaches :func:`auto_sft_rmse`; checked
    (fitting the plan, cheap at these σ) only where that is tighter than the fit's own 1e-4,
    i.e. at small σ (order 0: σ ≲ 16)."""
    if auto_sft_rmse(sigma, order) >= 1e-4:
        return True
    plan = _cached_plan(sigma, order, "auto", None, None, truncate)
    return plan.rmse <= auto_sft_rmse(sigma, order)


def auto_radius(sigma: float, order: int, truncate: float = 4.0) -> int:
    """Half-width ``W`` of the direct kernel that ``method="auto"`` applies: the smallest
    ``W ≥ ceil(truncate σ)`` (scipy's truncation or longer) whose truncated tail has relative
    RMSE ≤ :data:`AUTO_TAIL_RMSE` (70% of it, a margin for the moment correction) and at most
    half that of scipy's radius ``round(truncate σ)`` against the untruncated kernel, so that
    picking the FIR costs accuracy neither against the SFT nor against scipy (about 14% more
    taps than scipy's at large σ).

    >>> auto_radius(1.0, 0), auto_radius(10.0, 0), auto_radius(10.0, 2)
    (5, 45, 52)
    """
    return _auto_radius(float(sigma), int(order), float(truncate))


@functools.lru_cache(maxsize=512)
def _auto_radius(sigma: float, order: int, truncate: float) -> int:
    w0 = truncation_radius(sigma, truncate)
    wmax = max(w0, math.ceil(12 * sigma) + 2)
    j = np.arange(0, wmax + 1, dtype=np.float64)
    h2 = discrete_gaussian_kernel(j, sigma, order) ** 2
    h2[1:] *= 2  # both sides
    total = float(h2.sum())
    if not total > 0:
        return w0
    # energy beyond |k| = W, summed from the far end (no cancellation for tiny tails)
    tail = np.append(np.cumsum(h2[::-1])[::-1][1:], 0.0)
    # below the SFT's error, and at most half scipy's own truncation error (its radius
    # round(truncate σ)): the moment correction of a short kernel adds an error of the
    # tail's size, which would otherwise leave the FIR less accurate than scipy at σ ≈ 0.5
    w_scipy = min(int(truncate * sigma + 0.5), wmax)
    target = min((0.7 * AUTO_TAIL_RMSE) ** 2 * total, 0.25 * float(tail[w_scipy]))
    ok = np.nonzero(tail <= target)[0]
    return max(w0, int(ok[0]) if len(ok) else wmax)


@functools.lru_cache(maxsize=512)
def _auto_truncate(sigma: float, order: int, truncate: float) -> float:
    w = _auto_radius(sigma, order, truncate)
    if w <= truncation_radius(sigma, truncate):
        return truncate
    return (w - 0.5) / sigma  # ceil((w - 0.5)/σ · σ) = w


@functools.lru_cache(maxsize=512)
def _half_kernel(sigma: float, order: int, truncate: float, dtype: str) -> tuple[np.ndarray,
                                                                                  bool]:
    """The direct kernel's half ``h[0..W]`` in ``dtype`` (a NumPy dtype or its character
    code) and its parity (cached)."""
    hh, odd = half_kernel(_gaussian_bank(sigma, order, "direct", 1, 0, truncate).taps[0])
    if np.dtype(dtype) != np.float32 or len(hh) - 1 > WIDE_RADIUS:
        hh = hh.astype(dtype)
    hh.setflags(write=False)
    return hh, odd


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _host_array(x: Any) -> tuple[np.ndarray, ArrayKind] | None:
    """``x`` as a C-contiguous float32/float64 NumPy array (a view where possible) and its
    kind, when the direct FIR can run on it on the host; ``None`` otherwise (a GPU tensor, or
    a tensor whose gradient is recorded)."""
    if isinstance(x, np.ndarray) and x.dtype in _FLOATS and x.ndim >= 1:
        if not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)
        return x, _NUMPY_KIND
    if isinstance(x, torch.Tensor):
        if x.device.type != "cpu" or (x.requires_grad and torch.is_grad_enabled()):
            return None
    t, kind, _ = as_signal(x, check_finite=False)
    if t.device.type != "cpu" or (t.requires_grad and torch.is_grad_enabled()):
        return None
    a = t.detach().resolve_conj().resolve_neg().numpy()
    return (a if a.flags.c_contiguous else np.ascontiguousarray(a)), kind


_NUMPY_KIND = ArrayKind(numpy=True, device=torch.device("cpu"))


def _triton_runs(device: str) -> bool:
    """Whether the Triton FIR can run on a device of type ``device`` (CUDA with Triton)."""
    from . import triton_fir

    return device == "cuda" and triton_fir.available(torch.device("cuda"))


def _triton_fir_applies(t: torch.Tensor, plans: list[GaussianFilter]) -> bool:
    """Whether the direct method runs as :mod:`.triton_fir` kernels: a real float tensor
    whose every plan's direct route (:func:`~fastmoments.signal.routes.direct_backend`) is
    the Triton FIR."""
    if t.dtype not in (torch.float32, torch.float64):
        return False
    grad = torch.is_grad_enabled() and t.requires_grad
    dev = t.device.type
    runs = _triton_runs(dev)
    return all(direct_backend(dev, math.ceil(p.direct_truncate * p.sigma), grad,
                              runs).backend == "triton" for p in plans)


def _run_triton_fir(t: torch.Tensor, axes: list[int], plans: list[GaussianFilter],
                    modes: list[str], cval: float, target: torch.Tensor | None,
                    flag: torch.Tensor | None = None) -> torch.Tensor:
    """The direct method along ``axes`` by one :func:`.triton_fir.fir_axis` pass per axis
    (the same half kernels and sums as the CPU's numba passes); ``flag`` is cleared when
    ``t`` holds NaN or infinity."""
    from . import triton_fir

    char = "d" if t.dtype == torch.float64 else "f"
    return triton_fir.fir_passes(t.contiguous(), _plan_passes(axes, plans, modes, t.ndim, char),
                                 cval, target, flag)


def _plan_passes(axes: list[int], plans: list[GaussianFilter], modes: list[str], ndim: int,
                 char: str) -> list[tuple[int, np.ndarray, bool, int]]:
    """The direct FIR's passes ``(axis, half kernel, odd, mode code)`` of ``plans`` along
    ``axes`` for data of dtype code ``char`` (:func:`.fir.fir_passes` and
    :func:`.triton_fir.fir_passes` take them)."""
    passes = []
    for ax, plan, mode in zip(axes, plans, modes, strict=True):
        hh, odd = _half_kernel(plan.sigma, plan.order, plan.direct_truncate, char)
        passes.append((normalize_axis(ax, ndim), hh, odd,
                       MODE_CODES[check_choice("mode", mode, MODES)]))
    return passes


def _run_direct(x: Any, axes: list[int], plans: list[GaussianFilter], modes: list[str], *,
                cval: Any, engine: str, memory_budget: Any, check_finite: bool, out: Any,
                progress: Any) -> Any:
    """The direct method along ``axes`` (``plans``/``modes`` one per axis): numba FIR passes
    on the host, ``conv1d`` passes elsewhere (or where a gradient is recorded)."""
    if engine != "auto":
        check_choice("engine", engine, ("auto", *ENGINES))
    cval = cval if type(cval) is float and math.isfinite(cval) else check_cval(cval)
    if memory_budget is not None:
        check_budget(memory_budget)
    if progress is not None:
        check_progress(progress)
    host = _host_array(x)
    if host is None:  # torch route: one conv1d pass per axis, or the Triton FIR on a GPU
        t, kind, finite = as_signal(x, check_finite)
        for ax in axes:
            normalize_axis(ax, t.ndim)
        out, target = output_target(out, x, t, kind, tuple(t.shape), t.dtype)
        if _triton_fir_applies(t, plans):
            y = _run_triton_fir(t, axes, plans, modes, cval, target)
            require_finite(finite)
            return out if out is not None else to_output(y, kind)
        y = t
        for k, (ax, plan, mode) in enumerate(zip(axes, plans, modes, strict=True)):
            y = filter_along(plan.direct_bank, "direct", y, axis=ax, mode=mode, cval=cval,
                             engine="auto", memory_budget=memory_budget,
                             check_finite=False, progress=progress, desc="GaussianFilter",
                             out=target if k == len(axes) - 1 else None)
        require_finite(finite)
        return out if out is not None else to_output(y, kind)
    a, kind = host
    passes = _plan_passes(axes, plans, modes, a.ndim, a.dtype.char)
    tdt = torch.float64 if a.dtype == np.float64 else torch.float32
    if out is None:
        res = np.empty(a.shape, dtype=a.dtype)
        fir_passes(a, passes, cval, res)
        ret = res if kind.numpy else torch.from_numpy(res)
    else:
        if not kind.numpy and isinstance(x, torch.Tensor):
            check_grad_out(x, out)
        target = output_buffer(out, x, kind, a.shape, tdt, torch.device("cpu"))
        tn = target.numpy()
        if tn.flags.c_contiguous and not np.may_share_memory(tn, a):
            res = fir_passes(a, passes, cval, tn)
        else:
            res = fir_passes(a, passes, cval, np.empty(a.shape, dtype=a.dtype))
            tn[...] = res
        ret = out
    if check_finite and not all_finite(res) and not np.isfinite(a).all():
        raise ValueError("x contains NaN or infinity")
    return ret


def _folded_call(plan: GaussianFilter, x: Any, *, axis: int, mode: str, cval: Any,
                 engine: str, memory_budget: Any, check_finite: bool, out: Any,
                 progress: Any) -> Any:
    """:meth:`GaussianFilter.__call__` by the folded kernel (same checks, same outputs)."""
    t, kind, finite = as_signal(x, check_finite)
    axis = normalize_axis(axis, t.ndim)
    resolve_engine(engine, plan._sft, t.device)  # validated; the folded path has one engine
    check_choice("mode", mode, MODES)
    cval = check_cval(cval)
    budget = check_budget(memory_budget)
    check_progress(progress)
    out, target = output_target(out, x, t, kind, tuple(t.shape), t.dtype)
    if t.numel() == 0:
        y = t.clone()
    else:
        moved = torch.movedim(t, axis, -1)
        n = moved.shape[-1]
        rows = moved.reshape(-1, n)
        fk = plan.folded(n, mode)
        per_row = fk.apply_bytes(1, t.element_size())
        if below_minimum(per_row * rows.shape[0], budget):
            chunk = rows.shape[0]
        else:
            chunk = rows_per_chunk(per_row, free_budget(t.device, budget), rows.shape[0],
                                   what=f"filtering signals of {n} samples")
        bar = job_bar(rows.shape[0], rows.numel(), t.device, progress, type(plan).__name__)
        parts = []
        try:
            for i in range(0, rows.shape[0], chunk):
                parts.append(apply_folded(fk, rows[i:i + chunk], mode, cval))
                bar.update(parts[-1].shape[0])
        finally:
            bar.close()
        y = parts[0] if len(parts) == 1 else torch.cat(parts, dim=0)
        y = torch.movedim(y.reshape(moved.shape), -1, axis)
    if target is not None:
        target.copy_(y)
    require_finite(finite)
    return out if out is not None else to_output(y, kind)


def _moment_map(sigma: float, order: int, j: np.ndarray, columns: Any,
                weights: np.ndarray) -> np.ndarray:
    """Weights of a kernel of ``order`` corrected to keep the target's low moments exactly.

    The kernel is ``h = Σ_c w_c φ_c`` on the offsets ``j`` (its whole support); ``columns(j)``
    gives the ``φ_c`` (``None``: the taps themselves, ``h = w``). The result keeps the
    moments ``μ_m = Σ_j j^m h[j]`` of the target
    :func:`~fastmoments.signal.coefficients.discrete_gaussian_kernel`
    (:func:`~fastmoments.signal.coefficients.target_moments`) exactly for ``m = 0, 1``
    (order 0: ``Σ h0 = 1``, ``Σ j h0 = 0``), ``m = 0, 1`` (order 1: ``Σ h1 = 0``,
    ``Σ j h1 = -1``) and ``m = 0, 1, 2`` (order 2: ``Σ h2 = Σ j h2 = 0``, ``Σ j² h2 = 2``),
    the values from σ = 4 on; below, the discrete kernel's own (Poisson terms < 1e-7 from
    σ = 1 on). With ``y[n] = Σ_j h[j] x[n - j]``, constants pass unchanged (order 0) or give
    0, the ramp ``x = n`` gives ``+1`` (order 1, the sign of scipy.ndimage's
    ``gaussian_filter1d(order=1)``) and ``n²`` gives 2 (order 2), to rounding.

    The change is the smallest in the kernel's L2 norm
    (:func:`~fastmoments.signal.coefficients.constrain_moments`); for the plain SFT this is
    the equality-constrained least-squares fit. Its cost, measured at σ = 16-1000 with the
    default terms: the relative RMSE of G_D goes from 2.05e-5 to 2.23e-5 and that of G_DD
    from 8.9e-5 to 9.4e-5 (G: 6.4e-5 to 6.2e-5); the error on a random walk went from up to
    1.2x to at most 0.5x the (new) RMSE (issue 16).
    """
    from .coefficients import constrain_moments, target_moments

    target = target_moments(sigma, order)[:max(2, order + 1)]
    scale = max(sigma, 1.0)  # target_moments' units: (j / scale)^m
    if columns is None:  # free taps: Δh = Uᵀ (U Uᵀ)⁻¹ r, U[m] = (j/scale)^m
        u = np.stack([(j / scale) ** m for m in range(len(target))])
        resid = target - u @ weights
        return weights + u.T @ np.linalg.solve(u @ u.T, resid)
    return constrain_moments(columns, weights, j, scale, target)


@functools.lru_cache(maxsize=256)
def _gaussian_bank(sigma, order, method, terms, shift, truncate, exact_moments=True):
    """The bank of one Gaussian plan (``exact_moments=False``: the paper's raw fit, without
    :func:`_moment_map`, as its Table 1 measures it)."""
    if method in ("direct", "direct-moments"):
        w = math.ceil(truncate * sigma)
        j = np.arange(-w, w + 1, dtype=np.float64)
        # normalised over the truncated support as scipy.ndimage does: orders 0 and 1 are
        # scipy's gaussian_filter1d kernels exactly (method="direct" is scipy's filter); the
        # second derivative's loses its sum times h0, h2 = (k² - M2/S) g / (σ⁴ S), so that
        # constants and ramps give 0 (the kernel of the folded path, :mod:`.folded`). The few-
        # sample kernels that the SFT methods apply below σ = 1 ("direct-moments") keep the
        # target's low moments exactly, as the fitted kernels do (:func:`_moment_map`).
        if method == "direct-moments":
            taps = discrete_gaussian_kernel(j, sigma, order)
            if exact_moments and len(j) >= 3:
                taps = _moment_map(sigma, order, j, None, taps)
        else:
            with np.errstate(over="ignore", under="ignore", invalid="ignore",
                             divide="ignore"):
                g = np.exp(-0.5 * (j / sigma) ** 2)
                s = float(np.sum(g))
                if order == 0:
                    taps = g / s
                elif order == 1:
                    taps = -j * g / (sigma**2 * s)
                elif exact_moments:
                    taps = (j**2 - float(np.sum(j**2 * g)) / s) * g / (sigma**4 * s)
                else:  # scipy's own second-derivative kernel
                    taps = (j**2 / sigma**4 - 1 / sigma**2) * g / s
            if not np.all(np.isfinite(taps)):  # σ so small that σ² or σ⁴ underflows
                taps = discrete_gaussian_kernel(j, sigma, order)
        return DirectBank(taps[None, :], complex_output=False)
    fit = fit_gaussian(sigma, terms, discrete=True)
    p = np.arange(terms + 1)
    zeros = np.zeros(terms + 1)
    if method == "sft":
        weights = [(fit.a, zeros), (zeros, -fit.b), (fit.d, zeros)]
        alpha = 0.0
    else:
        alpha = shift / sigma**2
        e = math.exp(-0.5 * (shift / sigma) ** 2)  # exp(-α²/(4γ))
        weights = [
            (e * fit.a, zeros),
            (e * alpha * fit.a, -e * fit.b),
            (e * (fit.d + alpha**2 * fit.a), -e * 2 * alpha * fit.b),
        ]
    rows = terms + 1
    mu, nu = (np.asarray(v, dtype=np.float64) for v in weights[order])

    def bank(mu, nu, channels):
        return SFTBank(
            omega=np.tile(fit.beta * p, channels), alpha=np.full(rows * channels, alpha),
            half=np.full(rows * channels, fit.K), shift=np.full(rows * channels, shift),
            mu=mu.reshape(-1).astype(np.complex128), nu=nu.reshape(-1).astype(np.complex128),
            channel=np.repeat(np.arange(channels), rows), n_channels=channels,
            complex_output=False)

    if exact_moments:
        # one channel per column: μ_r = 1 (cosine part) and ν_r = 1 (sine part) of each row
        eye = np.eye(rows)
        zero = np.zeros((rows, rows))
        cols = bank(np.concatenate([eye, zero]), np.concatenate([zero, eye]), 2 * rows)
        j = np.arange(-cols.pad, cols.pad + 1, dtype=np.float64)
        w = _moment_map(sigma, order, j, cols.kernel, np.concatenate([mu, nu]))
        mu, nu = w[:rows], w[rows:]
    return bank(mu, nu, 1)


@plan_cache(maxsize=128)
def _cached_plan(sigma, order, method, terms, shift, truncate) -> GaussianFilter:
    return GaussianFilter(sigma, order=order, method=method, terms=terms, shift=shift,
                          truncate=truncate)


def _per_axis(name: str, value: Any, n: int) -> list:
    if type(value) in _SCALARS:  # the common case, without the ABC checks below
        return [value] * n
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != n:
            raise ValueError(f"{name} must be a scalar or have one entry per axis ({n} "
                             f"filtered), got {len(value)} entries")
        return list(value)
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return _per_axis(name, value.tolist(), n)
    return [value] * n


_SCALARS = (float, int, str)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def filtered_axes(axes: Any, channel_axis: Any, ndim: int) -> list[int]:
    """The axes :func:`gaussian_filter` filters: ``axes`` (checked, non-negative, no repeats),
    or every axis but ``channel_axis``.

    >>> filtered_axes(None, None, 3), filtered_axes(None, -1, 3), filtered_axes((0, -1), None, 3)
    ([0, 1, 2], [0, 1], [0, 2])
    """
    ch = None if channel_axis is None else normalize_axis(channel_axis, ndim, "channel_axis")
    if axes is None:
        return [a for a in range(ndim) if a != ch]
    if isinstance(axes, (bool, np.bool_)) or isinstance(axes, str):
        raise TypeError(f"axes must be an integer or a sequence of integers, got {axes!r}")
    if not isinstance(axes, (Sequence, np.ndarray)):
        axes = (axes,)
    out = [normalize_axis(a, ndim, "axes") for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"axes must not repeat an axis, got {tuple(axes)}")
    if ch is not None and ch in out:
        raise ValueError(f"axes must not include channel_axis={channel_axis} (the colour "
                         f"channels are not smoothed), got {tuple(axes)}")
    return out


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
            out: Any, progress: Any) -> Any:
    """The body of :func:`gaussian_filter` and :func:`gaussian_filter1d`."""
    if (type(x) is torch.Tensor and x.is_cuda and out is None and progress is None
            and memory_budget is None):  # a repeated GPU call: a replayed graph
        key = plain_key(axes, channel_axis, sigma, order, mode, cval, truncate, method,
                        terms, shift, engine)
        if key is not None:
            hit = _GRAPHS.call(
                x, key,
                lambda t: _filter_eager(t, axes, channel_axis, sigma, order, mode, cval,
                                        truncate, method, terms, shift, engine, None, None,
                                        None, check_finite=False),
                True, 8 * x.numel())
            if hit is not None:
                return hit[0]
    return _filter_eager(x, axes, channel_axis, sigma, order, mode, cval, truncate, method,
                         terms, shift, engine, memory_budget, out, progress)


#: The CUDA graphs of the one-call functions (:mod:`fastmoments._cuda_graph`).
_GRAPHS = GraphCache(max_graphs=16)


def _filter_eager(x: Any, axes: Any, channel_axis: Any, sigma: Any, order: Any, mode: Any,
                  cval: Any, truncate: Any, method: Any, terms: Any, shift: Any, engine: Any,
                  memory_budget: Any, out: Any, progress: Any, *,
                  check_finite: bool = True) -> Any:
    """:func:`_filter` run eagerly (``check_finite=False``: the call inside a graph capture,
    whose finiteness flag the graph computes)."""
    if (type(x) is np.ndarray and out is None and progress is None and memory_budget is None
            and terms is None and shift is None and engine == "auto" and channel_axis is None
            and type(order) is int and type(mode) is str and type(cval) is float
            and type(truncate) is float and (method == "auto" or method == "direct")
            and type(sigma) in _PLAIN and x.dtype in _FLOATS and x.ndim >= 1):
        y = _fast_direct(x, axes, float(sigma), order, mode, cval, truncate, method)
        if y is not None:
            return y
    shape = _shape(x)
    if len(shape) < 1:
        as_signal(x)  # raises the scalar input error
    axes_list = filtered_axes(axes, channel_axis, len(shape))
    k = len(axes_list)
    sigmas = [check_sigma(s) for s in _per_axis("sigma", sigma, k)]
    orders = [check_int("order", o, minimum=0, maximum=2) for o in _per_axis("order", order, k)]
    modes = [check_choice("mode", m, MODES) for m in _per_axis("mode", mode, k)]
    truncate = check_positive_float("truncate", truncate)
    method = check_choice("method", method, METHODS)
    terms = None if terms is None else check_int("terms", terms, minimum=1, maximum=64)
    if shift is not None:
        if method != "asft":
            raise ValueError("shift is only used with method='asft'")
        shift = check_int("shift", shift, minimum=1)
    if k == 0:  # nothing to filter: a copy of the input, as scipy.ndimage returns
        t, kind, finite = as_signal(x, check_finite)
        check_choice("engine", engine, ("auto", *ENGINES))
        check_progress(progress)
        out, target = output_target(out, x, t, kind, tuple(t.shape), t.dtype)
        y = t.clone() if target is None else target.copy_(t)
        require_finite(finite)
        return out if out is not None else to_output(y, kind)
    dt, dev = _dtype_device(x)
    size = math.prod(shape)
    grad = isinstance(x, torch.Tensor) and x.requires_grad and torch.is_grad_enabled()
    # plans of the requested method: an "auto" plan widens its direct kernel (auto_radius);
    # each axis takes its plan's route (a kernel that reaches beyond its axis: "folded")
    plans = [_cached_plan(s, o, method, terms, shift, truncate)
             for s, o in zip(sigmas, orders, strict=True)]
    chosen = [p.route_for(shape[ax], batch=size // max(shape[ax], 1), dtype=dt, device=dev,
                          engine=engine if type(engine) is str else "auto", grad=grad).method
              for p, ax in zip(plans, axes_list, strict=True)]
    if all(m == "direct" for m in chosen):  # every axis by the FIR (the numba loops on a CPU)
        for p in plans:
            p.method = "direct"
        return _run_direct(x, axes_list, plans, modes, cval=cval, engine=engine,
                           memory_budget=memory_budget, check_finite=check_finite,
                           out=out, progress=progress)
    # one axis: the plan checks the input (on a GPU, inside its fused kernels); several: the
    # input is checked once here (read at the end) and the passes need not check again
    t, kind, finite = as_signal(x, check_finite and k > 1)
    out, target = output_target(out, x, t, kind, tuple(t.shape), t.dtype)
    # float32 on the CPU smoothed far beyond every axis (all folded, σ ≥ DEEP_FOLD · N): the
    # result is all but the mean, and the float32 rounding of each axis's result would be
    # most of its error (as in scipy.ndimage; which of the two is closer was a coin toss at
    # σ = 2^20 on 512²); between the axes the values stay float64, rounded once at the end
    deep = (k > 1 and t.dtype == torch.float32 and t.device.type == "cpu"
            and all(m == "folded" and s >= DEEP_FOLD * shape[ax]
                    for m, s, ax in zip(chosen, sigmas, axes_list, strict=True)))
    y = t.double() if deep else t
    for i, (ax, plan, m) in enumerate(zip(axes_list, plans, modes, strict=True)):
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


def _fast_direct(x: np.ndarray, axes: Any, sigma: float, order: int, mode: str, cval: float,
                 truncate: float, method: str, folded: bool = True,
                 plan: GaussianFilter | None = None) -> np.ndarray | None:
    """The lean path of the common call (a float NumPy array, scalar options, defaults):
    plain checks, the route of ``plan`` (by default the one-call function's plan) per axis,
    the kernel from caches keyed by plain values, and the numba backend of the route: the
    FIR passes, the SFT recursions (:func:`_fast_sft`, one axis), or for one axis shorter
    than the kernel and ``folded``, :func:`_fast_folded`. ``None`` where an option needs the
    general path (which then reports any error)."""
    if not (0.0 < sigma <= MAX_SIGMA and 0 <= order <= 2 and mode in MODE_CODES
            and 0.0 < truncate < math.inf and math.isfinite(cval)):
        return None
    ndim = x.ndim
    if axes is None:
        axes_list = range(ndim)
    elif type(axes) is tuple and all(type(a) is int and -ndim <= a < ndim for a in axes):
        axes_list = [a % ndim for a in axes]
        if len(set(axes_list)) != len(axes_list):
            return None
    else:
        return None
    shape = x.shape
    size = x.size
    char = x.dtype.char
    if len(axes_list) == 1 and shape[axes_list[0]] > 0:
        n = shape[axes_list[0]]
        radius = truncation_radius(sigma, truncate)
        if radius >= n and method == "auto" and folded:  # a kernel beyond the signal: folded
            # (the untruncated kernel, as GaussianFilter.folded_radius for "auto")
            return _fast_folded(x, axes_list[0], sigma, order, full_radius(sigma, truncate),
                                mode, cval)
    passes = []
    for ax in axes_list:
        n = shape[ax]
        if method == "auto":  # the route of the plan (by default the one-call function's)
            if plan is None:
                plan = _cached_plan(sigma, order, "auto", None, None, truncate)
            route = plan.route_for(n, batch=size // max(n, 1),
                                   dtype="float64" if char == "d" else "float32")
            plan._route = route
            if (route.method == "sft" and route.backend == "numba" and len(axes_list) == 1
                    and folded):
                plan.method = "sft"
                return _fast_sft(x, ax, plan, mode, cval)
            if route.method != "direct":
                return None
        hh, odd = _half_kernel(sigma, order, _auto_truncate(sigma, order, truncate)
                               if method == "auto" else truncate, char)
        if len(hh) - 1 >= n:  # the kernel reaches beyond the signal: the folded path
            return None
        passes.append((ax, hh, odd, MODE_CODES[mode]))
    a = x if x.flags.c_contiguous else np.ascontiguousarray(x)
    res = np.empty(shape, dtype=x.dtype)
    if not passes:
        res[...] = a
        return res
    fir_passes(a, passes, cval, res)
    if not all_finite(res) and not np.isfinite(a).all():
        raise ValueError("x contains NaN or infinity")
    return res


def _fast_sft(x: np.ndarray, axis: int, plan: GaussianFilter, mode: str,
              cval: float) -> np.ndarray | None:
    """The SFT route of a plan (the one-call functions' or the user's) for a NumPy array along
    one axis, on NumPy arrays: ``plan.bank`` applied by the numba engine
    (:func:`._numba_sft.apply_arrays`) into a NumPy result, as the general path does through
    tensors (the same bank, engine and sums: the same values bit for bit) without its round
    trips (~0.3 ms on 10^5 samples, a fifth of a σ = 8192 call): the numba backend of the
    plan's route, taken only where the route says ``numba``. ``None`` (the general path) for
    more than :data:`FAST_SFT_MAX` samples (chunking and progress bars are the general
    path's)."""
    if not 0 < x.size <= FAST_SFT_MAX:
        return None
    from ._numba_sft import apply_arrays

    n = x.shape[axis]
    last = axis in (-1, x.ndim - 1)
    moved = x if last else np.moveaxis(x, axis, -1)
    rows = np.ascontiguousarray(moved.reshape(-1, n))
    res = np.empty(rows.shape, dtype=x.dtype)
    apply_arrays(plan.bank, rows, res.reshape(rows.shape[0], 1, n), mode, cval)
    if not all_finite(res) and not np.isfinite(x).all():
        raise ValueError("x contains NaN or infinity")
    res = res.reshape(moved.shape)
    return res if last else np.ascontiguousarray(np.moveaxis(res, -1, axis))


#: the low-frequency route of :func:`_fast_folded` keeps the Fourier components of the folded
#: kernel above ``LOW_CUTOFF · ‖h‖₁`` (float64 rounding of the folding sums: the FFT route's
#: own error is of that size; ``‖h‖₁`` from :func:`_kernel_l1`) and runs when at most
#: :data:`LOW_COMPONENTS` remain and its two tables take at most :data:`LOW_TABLE_BYTES`
#: (they are cached with the folded kernel, up to 64 entries)
LOW_CUTOFF = 2.0**-52
LOW_COMPONENTS = 16
LOW_TABLE_BYTES = 2 << 20


@functools.lru_cache(maxsize=64)
def _folded_spectrum(sigma: float, order: int, radius: int, n: int,
                     mode: str) -> tuple[FoldedKernel, np.ndarray, tuple | None]:
    """The folded kernel, the real FFT of its taps (one period) and, where few of its Fourier
    components matter, the tables of the low-frequency route (:func:`_low_components`);
    cached on plain values."""
    fk = folded_kernel(sigma, order, radius, n, mode)
    spec = np.fft.rfft(fk.taps, n=fk.period)
    spec.setflags(write=False)
    return fk, spec, _low_components(fk, spec, n, mode, sigma, order)


def _low_components(fk: FoldedKernel, spec: np.ndarray, n: int, mode: str, sigma: float,
                    order: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Tables ``(A, B)`` with ``y = (x @ A) @ B`` for the reflect, mirror and wrap modes when
    the folded kernel (smoothed far beyond the signal, σ ≳ N/4) has at most
    :data:`LOW_COMPONENTS` Fourier components above ``LOW_CUTOFF · ‖h‖₁``; else ``None``.

    The circular convolution of period ``P`` is ``y[t] = (1/P) Σ_k F_k X_k e^{iθ_k t}``
    (``θ_k = 2πk/P``, ``F`` the kernel's and ``X`` the extended signal's DFT). Keeping the
    components ``k ∈ K`` of the real FFT (weight 2 for ``0 < k < P/2``) changes ``y`` by at
    most ``max_{k∉K} |F_k| ‖x_P‖₂ ≤ √2 · 2^-52 ‖h‖₁ ‖x‖₂`` in the 2-norm (Parseval), the
    size of the FFT route's own rounding (the folded taps are sums of the kernel's samples,
    rounded relative to ``‖h‖₁``). A derivative folded far beyond the signal keeps no
    component at all: its result is 0, exact to that size. With ``C = cos θ_k t`` and
    ``S = sin θ_k t``, ``X_k = Σ_t x_P[t] (C - iS)``; the extension is folded into the
    analysis table (``x_P[t]`` is ``x[j(t)]``), and the kernel's ``F_k`` with it, so ``A``
    is ``(N, 2K)`` and ``B`` ``(2K, N)``: ``2 · 2K · N`` multiply-adds per signal instead of
    two FFTs of ``P`` samples. Angles are reduced exactly
    (``(k t) mod P``) before the cosines, in float64."""
    if mode not in ("reflect", "mirror", "wrap"):
        return None  # nearest/constant: the kernel's cut at ±N makes a broad spectrum
    period = fk.period
    keep = np.nonzero(np.abs(spec) > LOW_CUTOFF * _kernel_l1(sigma, order))[0]
    m = len(keep)
    if m > LOW_COMPONENTS or 2 * (2 * m * n) * 8 > LOW_TABLE_BYTES:
        return None
    t = np.arange(period, dtype=np.int64)
    ang = 2.0 * np.pi * ((keep[:, None] * t[None, :]) % period) / period  # (m, P)
    weight = np.where((keep == 0) | (2 * keep == period), 1.0, 2.0) / period
    coef = weight * spec[keep]  # (m,) complex
    # analysis on the period, real: [Re X, Im X] = x_P @ [C, -S]ᵀ
    ana = np.concatenate([np.cos(ang), -np.sin(ang)]).T  # (P, 2m)
    if mode == "reflect":  # x_P = x, then x reversed
        ana = ana[:n] + ana[period - 1:period - 1 - n:-1]
    elif mode == "mirror" and n > 1:  # x_P = x, then x[n-2:0:-1]
        fold = ana[:n].copy()
        fold[1:n - 1] += ana[period - 1:n - 1:-1]
        ana = fold
    # synthesis: y = Re(coef X e^{iθt}) = [Re(cX), Im(cX)] @ [C, -S] at t < N
    a_t, b_t = ana[:, :m], ana[:, m:]
    ana = np.concatenate([a_t * coef.real - b_t * coef.imag,
                          a_t * coef.imag + b_t * coef.real], axis=1)  # x @ ana = [Re, Im]
    syn = np.concatenate([np.cos(ang[:, :n]), -np.sin(ang[:, :n])])  # (2m, N)
    ana = np.ascontiguousarray(ana)
    ana.setflags(write=False)
    syn.setflags(write=False)
    return ana, syn


def _kernel_l1(sigma: float, order: int) -> float:
    """``‖h‖₁`` of the continuous Gaussian kernel of ``order`` (1, ``√(2/π)/σ``,
    ``4 e^{-1/2}/(√(2π) σ²)``): within a factor 2 of the discrete kernel's from σ = 0.5 on
    (0.54-1.4 at σ = 0.5, within 5% from σ = 2), the scale of the folding's rounding.

    >>> round(_kernel_l1(2.0, 1), 4)
    0.3989
    """
    return [1.0, math.sqrt(2.0 / math.pi) / sigma,
            4.0 * math.exp(-0.5) / (math.sqrt(2.0 * math.pi) * sigma * sigma)][int(order)]


def _fast_folded(x: np.ndarray, axis: int, sigma: float, order: int, radius: int, mode: str,
                 cval: float) -> np.ndarray:
    """The folded path (:mod:`.folded`) of a NumPy array along one axis, in NumPy: one period
    of the extension, one real FFT product with the cached spectrum of the folded taps
    (float64; the result in ``x``'s dtype), plus the tail masses for nearest and constant;
    or, where few Fourier components of the folded kernel matter (σ ≳ N/4 in the reflect,
    mirror and wrap modes), two small matrix products (:func:`_low_components`). The same
    sums as :func:`~fastmoments.signal.folded.apply_folded`, without the torch round trip and
    the general checks (~0.5 ms per call on 10^3 samples by FFT, ~0.02 ms by the
    low-frequency route)."""
    n = x.shape[axis]
    fk, spec, low = _folded_spectrum(sigma, order, radius, n, mode)
    last = axis in (-1, x.ndim - 1)
    moved = x if last else np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, n).astype(np.float64)
    if low is not None:
        # x is finite where its sum is (else the full check decides: a sum can overflow);
        # checked first, as a product may never see a sample (no component kept)
        if not math.isfinite(rows.sum()) and not np.isfinite(x).all():
            raise ValueError("x contains NaN or infinity")
        y = ((rows @ low[0]) @ low[1]).reshape(moved.shape)
        return np.ascontiguousarray(y if last else np.moveaxis(y, -1, axis), dtype=x.dtype)
    if mode == "reflect":
        xe = np.concatenate([rows, rows[:, ::-1]], axis=1)
    elif mode == "mirror":
        xe = rows if n == 1 else np.concatenate([rows, rows[:, n - 2:0:-1]], axis=1)
    elif mode == "wrap":
        xe = rows
    else:
        xe = np.concatenate([rows, np.zeros((rows.shape[0], fk.period - n))], axis=1)
    y = np.fft.irfft(np.fft.rfft(xe, n=fk.period, axis=1) * spec, n=fk.period, axis=1)[:, :n]
    if mode == "nearest":
        y = y + rows[:, :1] * fk.right + rows[:, n - 1:] * fk.left
    elif mode == "constant":
        y = y + cval * (fk.right + fk.left)
    y = y.reshape(moved.shape)
    res = np.ascontiguousarray(y if last else np.moveaxis(y, -1, axis), dtype=x.dtype)
    if not np.isfinite(res).all() and not np.isfinite(x).all():
        raise ValueError("x contains NaN or infinity")
    return res


_NOTES = """
    *Method.* ``method="auto"`` picks, for each filtered axis, the faster of the direct FIR
    and the SFT for its length, σ, order, the dtype and the device, from crossover points
    measured by ``benchmarks/signal_crossover.py`` (:mod:`fastmoments.signal.routes`):
    the FIR at small σ (numba loops on the CPU, all axes in one call, no axis moved), the SFT
    from some σ on (a cost per sample independent of σ). ``GaussianFilter(...).choose(n)``
    tells the choice. Its result is at least as accurate as scipy.ndimage's default
    (``truncate = 4``) against the exact convolution by the untruncated kernel: the FIR
    applies the kernel out to :func:`~fastmoments.signal.gaussian.auto_radius` (its
    truncated tail at most half scipy's), the SFT is fitted to relative RMSE
    ``≤ min(1e-4, 0.8 ε_scipy)`` (:func:`~fastmoments.signal.gaussian.auto_sft_rmse`,
    ``ε_scipy`` scipy's own truncation error, :func:`~fastmoments.signal.gaussian.peer_rmse`:
    3.5e-5 for smoothing at σ = 2, ~1.3e-4 from σ = 32 on) or else not picked, and an axis
    no longer than ``W = ceil(truncate σ)`` is filtered by the untruncated kernel folded onto
    its boundary (float rounding). Measured on the issue-18 grid (orders 0-2, σ = 0.5-8192,
    10³-10⁶ samples, 512², 2048², 128³, float32 and float64): no cell less accurate than
    scipy.ndimage (``python benchmarks/signal_scipy_grid.py --accuracy-only``,
    ``benchmarks/results/signal_scipy_grid_accuracy_cpu.md``).

    *dtype.* float32 stays float32 and float64 stays float64; integer (and bool, float16)
    input is filtered in float32 and returned as float32, the package's dtype policy, where
    scipy.ndimage returns the input's integer dtype. The result of smoothing is not an integer
    and a derivative (``order`` 1, 2) is negative where the signal falls: scipy's integer
    output rounds away the fraction and wraps negative values of unsigned types around (a
    silent wrong answer); pass ``x.astype(float)`` to get float64.
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
def gaussian_filter(x: Any, sigma: float | Sequence[float], order: int | Sequence[int] = 0,
                    mode: str | Sequence[str] = "reflect", cval: float = 0.0,
                    truncate: float = 4.0, *, axes: Sequence[int] | None = None,
                    channel_axis: int | None = None, method: str = "auto",
                    terms: int | None = None, shift: int | None = None, engine: str = "auto",
                    memory_budget: float | None = None, out: Any = None,
                    progress: bool | None = None) -> Any:
    """Multi-dimensional Gaussian filter, as :func:`scipy.ndimage.gaussian_filter`: every
    axis by default.

    Parameters
    ----------
    x : array_like or torch.Tensor
        Real input of any shape; never modified.
    sigma : float or sequence of float
        Standard deviation(s) in samples: one for every filtered axis, or one per axis.
    order : int or sequence of int
        Derivative order 0, 1 or 2 (per filtered axis).
    mode : {"reflect", "nearest", "mirror", "wrap", "constant"} or sequence of them
        Extension beyond the ends, as in :func:`scipy.ndimage.gaussian_filter` (per axis).
    cval : float
        Value outside the signal for ``mode="constant"``.
    truncate : float
        Kernel half-width in σ of the direct method (and of the folded kernel), as scipy's.
    axes : sequence of int, optional
        The axes filtered (default: all of them, but ``channel_axis``), one after the other.
    channel_axis : int, optional
        The axis holding colour channels (scikit-image's convention): never filtered.
    method : {"auto", "sft", "asft", "direct"}
        ``"auto"`` (default): per axis, the faster method measured (Notes); the others force
        one (see :class:`GaussianFilter`).
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
        device): written in place and returned (see :meth:`GaussianFilter.__call__`).
    progress : bool, optional
        tqdm progress bar of the SFT passes: ``True`` always, ``False`` never, ``None``
        (default) for large jobs once they have run for a second.

    Returns
    -------
    numpy.ndarray or torch.Tensor
        Same shape as ``x``, float32 or float64 (Notes: dtype) (``out`` when given).

    Raises
    ------
    ValueError
        For σ ≤ 0, bad axes (repeated, out of range, or ``channel_axis`` among them), a
        sequence of σ, orders or modes of the wrong length, unknown
        ``mode``/``method``/``engine``, NaN or infinity in ``x``, or a bad ``out`` (wrong
        shape or device, read-only, overlapping ``x``).
    TypeError
        For the removed ``axis=`` keyword (use :func:`gaussian_filter1d` or ``axes=``), an
        ``out`` of the wrong kind or dtype, or a ``progress`` other than ``True``, ``False``
        or ``None``.

    Notes
    -----
    Every axis is filtered, as scipy.ndimage does: on an image, rows and columns. A colour
    image ``(H, W, 3)`` needs ``channel_axis=-1`` (else its channels are smoothed into each
    other, as scipy would). With a device list (``device=[...]``) the batch is split along the
    first axis that is not filtered (``channel_axis``, or an axis left out of ``axes``);
    when every axis is filtered there is none, and the whole call runs on the first device
    of the list.
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
    """
    return _filter(x, axes, channel_axis, sigma, order, mode, cval, truncate, method, terms,
                   shift, engine, memory_budget, out, progress)


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
def gaussian_filter1d(x: Any, sigma: float, axis: int = -1, order: int = 0,
                      mode: str = "reflect", cval: float = 0.0, truncate: float = 4.0, *,
                      method: str = "auto", terms: int | None = None, shift: int | None = None,
                      engine: str = "auto", memory_budget: float | None = None,
                      out: Any = None, progress: bool | None = None) -> Any:
    """One-dimensional Gaussian filter along ``axis``, as :func:`scipy.ndimage.gaussian_filter1d`.

    Parameters
    ----------
    x : array_like or torch.Tensor
        Real input of any shape; never modified.
    sigma : float
        Standard deviation in samples.
    axis : int
        The axis filtered (default: the last).
    order : int
        Derivative order 0, 1 or 2.
    mode, cval, truncate, method, terms, shift, engine, memory_budget, out, progress
        As in :func:`gaussian_filter`.

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
    :func:`gaussian_filter`, Notes, and :class:`GaussianFilter` for the math).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.zeros(201); x[100] = 1.0
    >>> y = gaussian_filter1d(x, 10.0)
    >>> round(float(y[100]), 4), round(float(1 / np.sqrt(2 * np.pi) / 10), 4)
    (0.0399, 0.0399)
    >>> gaussian_filter1d(np.ones((4, 50)), 3.0, axis=0, order=1).shape
    (4, 50)
    """
    if (type(axis) is int and type(sigma) in _PLAIN and type(order) is int
            and (type(x) is np.ndarray or type(x) is torch.Tensor)
            and -x.ndim <= axis < x.ndim):  # the usual call: a NumPy array or a tensor
        return _filter(x, (axis,), None, sigma, order, mode, cval, truncate, method, terms,
                       shift, engine, memory_budget, out, progress)
    if isinstance(axis, (Sequence, np.ndarray)) and not isinstance(axis, str):
        raise TypeError(f"axis must be an integer (gaussian_filter1d filters one axis; "
                        f"gaussian_filter(x, sigma, axes=...) filters several), got {axis!r}")
    ndim = len(_shape(x))
    if ndim < 1:
        as_signal(x)
    ax = normalize_axis(axis, ndim)
    if isinstance(sigma, (Sequence, np.ndarray)) and not isinstance(sigma, str):
        raise TypeError(f"sigma must be a real number for gaussian_filter1d, got {sigma!r}")
    if isinstance(order, (Sequence, np.ndarray)) and not isinstance(order, str):
        raise TypeError(f"order must be an integer for gaussian_filter1d, got {order!r}")
    return _filter(x, (ax,), None, sigma, order, mode, cval, truncate, method, terms, shift,
                   engine, memory_budget, out, progress)
