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
from typing import Any

import numpy as np
import torch

from .._array import input_shape
from .._cache import plan_cache
from .._route import Route
from .._threads import cpu_call, per_value
from .._validate import check_choice, check_int, check_positive_float
from . import cuda_sft, triton_sft
from ._apply import (
    BankPlan,
    filter_along,
    graphed_call,
)
from .boundary import MODES
from .chunked import fused_eligible
from .coefficients import default_gaussian_terms, discrete_gaussian_kernel
from .direct import DirectBank
from .fir import MODE_CODES
from .folded import FoldedKernel, folded_kernel, full_radius, truncation_radius
from .gaussian_kernels import (
    DIRECT_BELOW,
    MAX_SIGMA,
    _auto_truncate,
    _gaussian_bank,
)
from .gaussian_paths import (
    _FLOATS,
    _fast_direct,
    _fast_sft,
    _folded_call,
    _run_direct,
    _triton_runs,
)
from .routes import (
    auto_sft_rmse,
    direct_backend,
    gaussian_route,
    sft_backend,
)

__all__ = ["METHODS", "GaussianFilter", "check_sigma", "max_shift"]


METHODS = ("auto", "sft", "asft", "direct")


def check_sigma(sigma: Any) -> float:
    """σ as a float: a finite real number in ``(0, MAX_SIGMA]``."""
    sigma = check_positive_float("sigma", sigma)
    if sigma > MAX_SIGMA:
        raise ValueError(f"sigma must be <= {MAX_SIGMA:g} (the plan's tables grow with sigma), "
                         f"got {sigma:g}")
    return sigma


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
        ``method="auto"``, ≤ :func:`~fastmoments.signal.routes.auto_sft_rmse` (also 0.8 times
        scipy.ndimage's own
        truncation error: one or two more terms for order 0 at σ ≲ 3).
    shift : int, optional
        ASFT shift ``n0`` (default ``max(1, round(σ/16))``), from 1 to
        :func:`max_shift` ``= max(1, floor(σ/2))``.
    truncate : float
        Half-width of the direct kernel in σ (default 4, as scipy.ndimage); also used below
        σ = 1, where every method applies its kernel directly. The SFT methods apply the
        untruncated Gaussian to their fit's error whatever ``truncate`` is; scipy's kernel
        cut at ``round(truncate σ)``, for every method, is
        :class:`~fastmoments.signal.TruncatedGaussian` (what the one-call functions run when
        given ``truncate=`` or ``radius=``).

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
    (:func:`~fastmoments.signal.gaussian_kernels.auto_radius`) and folds the untruncated one, so
    that it is at least as accurate
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
        relative RMSE is at most :data:`~fastmoments.signal.routes.AUTO_TAIL_RMSE`
        (:func:`~fastmoments.signal.gaussian_kernels.auto_radius`)."""
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
        than scipy's, :func:`~fastmoments.signal.gaussian_kernels.auto_radius`).

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
            fused = (device == "cuda" and triton_sft.available()
                     and fused_eligible(self.bank, triton_sft.FUSED_CHUNK))
            b = sft_backend(m.method, device, True, engine, grad, fused)
            if b.backend == "triton" and dtype == "float32" and cuda_sft.takes_shape(
                    self.bank, batch, n):  # a large float32 batch: the CUDA C++ kernel
                b = Route(m.method, "cuda", "sft_rows", "cuda_batch")
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

    def stream(self, *, mode: str = "reflect", cval: float = 0.0, axis: int = -1,
               chunk: int = 65536) -> Any:
        """A :class:`~fastmoments.signal.GaussianStream` of this plan's σ, order and truncation:
        chunks in, the one-shot filter's output out with a fixed delay.

        Parameters
        ----------
        mode : {"reflect", "mirror", "nearest", "constant"}
            Extension before the first and after the last sample (``"wrap"`` needs the end
            before the first output and is refused).
        cval : float
            The value outside the signal for ``mode="constant"``.
        axis : int
            The time axis of the chunks.
        chunk : int
            The chunk length expected; a plan of ``method="auto"`` streams with the method
            its route picks for one signal of ``chunk`` samples (:meth:`choose`).

        Returns
        -------
        GaussianStream
            Of method ``"direct"`` (scipy's kernel truncated at ``ceil(truncate σ)``) or
            ``"sft"`` (this plan's ``terms``): the plan's own for those, the choice above for
            ``"auto"``, fixed for the stream's life.

        Raises
        ------
        ValueError
            For ``method="asft"`` (its window is shifted: not a stream's), an unknown
            ``mode``, ``chunk < 1``.

        Examples
        --------
        >>> x = np.random.default_rng(0).standard_normal(5000)
        >>> stream = GaussianFilter(40.0, method="sft").stream()
        >>> y = np.concatenate([stream.push(c) for c in np.array_split(x, 9)] + [stream.flush()])
        >>> bool(np.allclose(y, GaussianFilter(40.0, method="sft")(x), rtol=0, atol=1e-10))
        True
        >>> GaussianFilter(2.0).stream(chunk=4096).method  # "auto": the route's choice
        'direct'
        """
        from .stream import GaussianStream  # imports no Gaussian: no cycle

        chunk = check_int("chunk", chunk, minimum=1)
        if self.requested == "asft":
            raise ValueError("method must be 'direct', 'sft' or 'auto' for a stream, got "
                             "'asft'")
        method = self.choose(chunk) if self.requested == "auto" else self.requested
        plan = self if method == self.requested else _cached_plan(
            self.sigma, self.order, method, self._terms if method == "sft" else None, None,
            self.truncate)
        return GaussianStream(plan, mode=mode, cval=cval, axis=axis)

    @cpu_call(per_value(16, arg=1))
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
        lean = _lean_call(x, mode, cval, engine, memory_budget, check_finite, out, progress)
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


def _lean_call(x: Any, mode: Any, cval: Any, engine: Any, memory_budget: Any,
               check_finite: bool, out: Any, progress: Any) -> bool:
    """Whether a plan's call may take the NumPy fast paths (the numba backend on NumPy
    arrays): a float NumPy array, plain options, the defaults otherwise."""
    return (type(x) is np.ndarray and out is None and progress is None and check_finite
            and memory_budget is None and engine == "auto" and type(mode) is str
            and type(cval) is float and x.dtype in _FLOATS and mode in MODE_CODES
            and math.isfinite(cval))


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
        shape = input_shape(x, "x")
        if isinstance(axis, bool) or not isinstance(axis, int) or not shape:
            return None
        if not -len(shape) <= axis < len(shape):
            return None
        return int(shape[axis])
    except Exception:
        return None


@functools.lru_cache(maxsize=512)
def _sft_meets_peer(sigma: float, order: int, truncate: float) -> bool:
    """Whether the SFT route of the ``"auto"`` plan reaches
    :func:`~fastmoments.signal.routes.auto_sft_rmse`; checked
    (fitting the plan, cheap at these σ) only where that is tighter than the fit's own 1e-4,
    i.e. at small σ (order 0: σ ≲ 16)."""
    if auto_sft_rmse(sigma, order) >= 1e-4:
        return True
    plan = _cached_plan(sigma, order, "auto", None, None, truncate)
    return plan.rmse <= auto_sft_rmse(sigma, order)


@plan_cache(maxsize=128)
def _cached_plan(sigma, order, method, terms, shift, truncate) -> GaussianFilter:
    return GaussianFilter(sigma, order=order, method=method, terms=terms, shift=shift,
                          truncate=truncate)


def _shape(x: Any) -> tuple[int, ...]:
    return input_shape(x, "x")
