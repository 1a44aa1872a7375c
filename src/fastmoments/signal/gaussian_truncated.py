"""Gaussian filters with scipy.ndimage's truncated kernel, applied exactly.

A one-call Gaussian filter given ``truncate=`` or ``radius=`` (or ``kernel="scipy"``, or an
order above 2) applies the kernel of :func:`scipy.ndimage.gaussian_filter1d`: the sampled
Gaussian ``g[k] = exp(-k²/(2σ²))`` on ``|k| ≤ r`` (``r = radius``, or
``round(truncate σ) = int(truncate σ + 0.5)``), normalised to ``Σ g = 1``, and zero beyond
``r``. Whatever the method, it is applied exactly (to float rounding): by the direct FIR
(:mod:`.fir`) for short kernels, by the kernel folded onto the boundary and one FFT
(:mod:`.folded`) for long ones (:func:`~fastmoments.signal.routes.truncated_route`); the SFT's
fitted window does not end at ``r``, so it never applies a truncated kernel.

The derivative kernels (:func:`truncated_taps`), for ``kernel="moments"`` (the default) and
``kernel="scipy"``:

* order 0: ``h0 = g / S``, ``S = Σ_{|k|≤r} g[k]`` (both kernels);
* order 1: ``h1 = -k g / (σ² S)`` (both);
* order 2: ``"scipy"``: ``(k²/σ⁴ - 1/σ²) g / S``; ``"moments"``: that kernel minus its sum
  times ``h0``, ``(k² - M2/S) g / (σ⁴ S)`` with ``M2 = Σ k² g``, so that constants and ramps
  give exactly 0 and ``Σ k² h2 = 2`` (the rest of :mod:`fastmoments.signal` keeps these
  moments). The two differ by ``(M2/S - σ²)/σ⁴ · h0``, the scipy kernel's sum times
  ``h0``: -0.56 at σ = 0.5, -5.0e-3 at σ = 0.7, -7.2e-5 at σ = 1, -4.3e-11 at σ = 5000
  (``M2/S``, the sampled Gaussian's variance, falls short of σ² where σ is small and where
  the kernel is cut);
* order ``m ≥ 3``: ``(d/dk)^m`` of the Gaussian, ``q_m(k) g / S`` with ``q_0 = 1`` and
  ``q_{j+1} = q_j' - k q_j / σ²`` (both kernels: no moment is corrected).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import torch

from .._route import Route
from .._validate import check_choice, check_int
from .direct import DirectBank
from .fir import half_kernel
from .folded import FLAT, FOLD_BLOCK, FoldedKernel, fold_period
from .routes import GAUSSIAN_KERNELS, direct_backend, truncated_route

__all__ = ["EFFECTIVE_TRUNCATE", "TruncatedGaussian", "check_radius", "scipy_radius",
           "truncated_taps"]

#: Radius, in σ, beyond which the truncated kernel's samples are not formed: below
#: ``e^-200`` of the peak (``20^m e^-200`` for order ``m``), zero to float64 rounding; a
#: larger ``truncate`` or ``radius`` (up to 1e300σ, say) changes nothing and costs nothing.
EFFECTIVE_TRUNCATE = 20.0


def scipy_radius(sigma: float, truncate: float) -> int:
    """scipy.ndimage's kernel radius ``int(truncate σ + 0.5)``: ``truncate σ`` rounded.

    >>> scipy_radius(2.0, 4.0), scipy_radius(1.1, 4.0), scipy_radius(0.5, 3.5)
    (8, 4, 2)
    """
    return int(truncate * sigma + 0.5)


def check_radius(radius: Any) -> int:
    """``radius`` as an int: a non-negative integer (a NumPy integer too; ``1.1``, ``2.0``,
    ``-1``, ``True`` are refused, as scipy.ndimage refuses them)."""
    if isinstance(radius, (bool, np.bool_)) or not isinstance(radius, (int, np.integer)):
        raise ValueError(f"radius must be a non-negative integer, got {radius!r}")
    if radius < 0:
        raise ValueError(f"radius must be a non-negative integer, got {radius!r}")
    return int(radius)


def _polynomial(order: int, sigma: float) -> np.ndarray:
    """Coefficients ``c_j`` (of ``k^j``) of ``q_order``, the polynomial with
    ``(d/dk)^order exp(-k²/(2σ²)) = q_order(k) exp(-k²/(2σ²))``."""
    q = np.zeros(order + 1)
    q[0] = 1.0
    inv = -1.0 / (sigma * sigma)
    for _ in range(order):
        nxt = np.zeros(order + 1)
        nxt[:-1] += q[1:] * np.arange(1, order + 1)  # q'
        nxt[1:] += inv * q[:-1]  # - k q / σ²
        q = nxt
    return q


@functools.lru_cache(maxsize=256)
def truncated_taps(sigma: float, order: int, radius: int, kernel: str = "moments") -> np.ndarray:
    """The truncated kernel ``h[k]``, ``k = -r..r`` (float64, read-only; see the module notes).

    ``y[n] = Σ_k h[k] x[n - k]``: for ``kernel="scipy"`` the kernel of
    :func:`scipy.ndimage.gaussian_filter1d` (``truncate``/``radius`` as given there), to
    float64 rounding.

    >>> h = truncated_taps(1.0, 2, 4, "moments")
    >>> abs(float(h.sum())) < 1e-15, round(float(truncated_taps(1.0, 2, 4, "scipy").sum()), 6)
    (True, -7.2e-05)
    """
    k = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-0.5 / (sigma * sigma) * k * k)
    s = float(g.sum())
    h0 = g / s
    if order == 0:
        taps = h0
    elif order == 2 and kernel == "moments":
        m2 = float(np.sum(k * k * g))
        taps = (k * k - m2 / s) * g / (sigma**4 * s)
    else:
        taps = np.polynomial.polynomial.polyval(k, _polynomial(order, sigma)) * h0
    taps = np.ascontiguousarray(taps)
    taps.setflags(write=False)
    return taps


@functools.lru_cache(maxsize=128)
def _folded(sigma: float, order: int, radius: int, kernel: str, n: int,
            mode: str) -> FoldedKernel:
    """:func:`truncated_taps` folded for ``n`` samples in ``mode`` (the tables of
    :class:`~fastmoments.signal.folded.FoldedKernel`; any radius, longer or shorter than
    ``n``)."""
    h = truncated_taps(sigma, order, radius, kernel)
    period = fold_period(n, mode)
    if mode in ("nearest", "constant"):
        # h[q] for |q| < n at q mod 2n, and the tail masses R[i] = Σ_{k>i} h[k],
        # L[i] = Σ_{k=-r}^{i-n} h[k]
        taps = np.zeros(period)
        m = min(n - 1, radius)
        taps[:m + 1] = h[radius:radius + m + 1]
        if m:
            taps[period - m:] = h[radius - m:radius]
        # suffix sums from the far end: R[i] = Σ_{k=i+1}^{r} h[k]
        pos = h[radius:]
        suffix = np.append(np.cumsum(pos[::-1])[::-1], 0.0)  # suffix[j] = Σ_{k≥j} h[k]
        i = np.arange(n)
        right = suffix[np.minimum(i + 1, radius + 1)]
        neg = h[:radius + 1]  # h[-r..0]
        prefix = np.concatenate([[0.0], np.cumsum(neg)])  # prefix[j] = Σ_{k=-r}^{-r+j-1} h
        left = prefix[np.clip(i - n + radius + 1, 0, radius + 1)]
        right = np.ascontiguousarray(right)
        left = np.ascontiguousarray(left)
        right.setflags(write=False)
        left.setflags(write=False)
        level = 0.0
    else:
        taps = np.zeros(period)
        k = np.arange(-radius, radius + 1)
        for i in range(0, len(k), FOLD_BLOCK):
            taps += np.bincount(k[i:i + FOLD_BLOCK] % period, weights=h[i:i + FOLD_BLOCK],
                                minlength=period)
        right = left = None
        level = float(np.mean(taps))
        if not np.max(np.abs(taps - level)) <= FLAT * abs(level):
            level = 0.0
    taps.setflags(write=False)
    varying = taps - level
    varying.setflags(write=False)
    return FoldedKernel(int(n), int(period), int(radius), taps, right, left, FOLD_BLOCK, level,
                        varying)


class TruncatedGaussian:
    """Plan of a Gaussian filter (or derivative) with scipy.ndimage's truncated kernel along
    one axis, applied exactly (the module notes give the kernels).

    Parameters
    ----------
    sigma : float
        Standard deviation in samples (> 0).
    order : int
        Derivative order (≥ 0; any order, as scipy.ndimage).
    radius : int
        The kernel's support ``-radius..radius`` (≥ 0).
    kernel : {"moments", "scipy"}
        ``"moments"`` (default): the second derivative corrected to zero sum and zero first
        moment; ``"scipy"``: scipy.ndimage's own samples (module notes).
    method : {"auto", "sft", "asft", "direct"}
        ``"direct"`` applies the FIR up to ``radius < N`` (the folded kernel beyond); the
        others take the FIR or the folded FFT by
        :func:`~fastmoments.signal.routes.truncated_route`: both exact.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import ndimage
    >>> x = np.random.default_rng(0).standard_normal(500)
    >>> plan = TruncatedGaussian(300.0, order=2, radius=1200, kernel="scipy")
    >>> y = plan(x)
    >>> plan.route.method, plan.route.backend
    ('folded', 'torch')
    >>> z = ndimage.gaussian_filter1d(x, 300.0, order=2, radius=1200)
    >>> bool(np.abs(y - z).max() < 1e-15)
    True
    """

    _sft = "sft"

    def __init__(self, sigma: float, *, order: int = 0, radius: int, kernel: str = "moments",
                 method: str = "auto") -> None:
        self.sigma = float(sigma)
        self.order = check_int("order", order, minimum=0)
        self.radius = check_radius(radius)
        # the samples beyond 20σ are below e^-200 of the peak (times k^order/σ^(2 order)
        # for a derivative): zero to float64 rounding, so they are not formed
        self._r = min(self.radius, math.ceil(EFFECTIVE_TRUNCATE * self.sigma))
        self.kernel = check_choice("kernel", kernel, GAUSSIAN_KERNELS)
        self.requested = method
        self.method = method
        self._route: Route | None = None

    @property
    def taps(self) -> np.ndarray:
        """The kernel ``h[-r..r]`` (float64, read-only)."""
        return truncated_taps(self.sigma, self.order, self._r, self.kernel)

    @property
    def direct_bank(self) -> DirectBank:
        """The kernel as a :class:`~fastmoments.signal.direct.DirectBank` (``conv1d``)."""
        return _bank(self.sigma, self.order, self._r, self.kernel)

    @property
    def direct_truncate(self) -> float:
        """A truncation in σ whose ``ceil(· σ)`` is :attr:`radius` (the direct routes' key)."""
        return 0.0 if self._r == 0 else (self._r - 0.5) / self.sigma

    def half_kernel(self, char: str) -> tuple[np.ndarray, bool]:
        """``(h[0..r], odd)`` in the dtype of code ``char`` (float64 sums for float32 data with
        a short kernel, as the Gaussian FIR)."""
        return _half(self.sigma, self.order, self._r, self.kernel, char)

    def folded(self, n: int, mode: str) -> FoldedKernel:
        """The kernel folded for ``n`` samples in ``mode``."""
        return _folded(self.sigma, self.order, self._r, self.kernel, int(n), mode)

    @property
    def route(self) -> Route | None:
        """The route of the latest call."""
        return self._route

    def route_for(self, n: int, *, batch: int = 1, dtype: str = "float64", device: str = "cpu",
                  engine: str = "auto", grad: bool = False) -> Route:
        """The route of a call along an axis of ``n`` samples
        (:func:`~fastmoments.signal.routes.truncated_route`)."""
        m = truncated_route(n, self._r, self.requested)
        if m.method == "folded":
            return Route("folded", "torch", "fft", m.reason)
        b = direct_backend(device, self._r, grad, _triton(device))
        return Route("direct", b.backend, b.kernel, "; ".join(r for r in (m.reason, b.reason)
                                                               if r))

    def __call__(self, x: Any, *, axis: int = -1, mode: str = "reflect", cval: float = 0.0,
                 engine: str = "auto", memory_budget: float | None = None,
                 check_finite: bool = True, out: Any = None,
                 progress: bool | None = None) -> Any:
        """Filter ``x`` along ``axis`` (as :meth:`GaussianFilter.__call__
        <fastmoments.signal.GaussianFilter.__call__>`)."""
        from .gaussian import _axis_length, _dtype_device
        from .gaussian_paths import _folded_call, _run_direct

        n = _axis_length(x, axis)
        dt, dev = _dtype_device(x)
        grad = isinstance(x, torch.Tensor) and x.requires_grad and torch.is_grad_enabled()
        route = self.route_for(0 if n is None else n, dtype=dt, device=dev, grad=grad)
        self._route = route
        self.method = route.method
        if route.method == "folded" and n:
            return _folded_call(self, x, axis=axis, mode=mode, cval=cval, engine=engine,
                                memory_budget=memory_budget, check_finite=check_finite,
                                out=out, progress=progress)
        return _run_direct(x, [axis], [self], [mode], cval=cval, engine=engine,
                           memory_budget=memory_budget, check_finite=check_finite, out=out,
                           progress=progress)

    def __repr__(self) -> str:
        route = f", route={str(self.route)!r}" if self.route is not None else ""
        return (f"TruncatedGaussian(sigma={self.sigma}, order={self.order}, "
                f"radius={self.radius}, kernel={self.kernel!r}{route})")


def _triton(device: str) -> bool:
    from .gaussian_paths import _triton_runs

    return _triton_runs(device)


@functools.lru_cache(maxsize=128)
def _bank(sigma: float, order: int, radius: int, kernel: str) -> DirectBank:
    return DirectBank(np.array(truncated_taps(sigma, order, radius, kernel))[None, :],
                      complex_output=False)


@functools.lru_cache(maxsize=256)
def _half(sigma: float, order: int, radius: int, kernel: str,
          char: str) -> tuple[np.ndarray, bool]:
    from .routes import WIDE_RADIUS

    taps = truncated_taps(sigma, order, radius, kernel)
    hh, _ = half_kernel(taps)
    odd = order % 2 == 1
    hh = 0.5 * (taps[radius:] - taps[radius::-1]) if odd else hh
    if np.dtype(char) != np.float32 or radius > WIDE_RADIUS:
        hh = hh.astype(char)
    hh = np.ascontiguousarray(hh)
    hh.setflags(write=False)
    return hh, odd

