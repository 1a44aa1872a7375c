"""Gaussian filters whose kernel is longer than the signal: the kernel folded onto the boundary.

With the boundary modes of :mod:`scipy.ndimage` the extended signal is periodic (``reflect``:
period ``2N``, ``mirror``: ``2N - 2``, ``wrap``: ``N``) or constant beyond the ends
(``nearest``, ``constant``). A kernel longer than the signal therefore acts through a kernel of
the signal's length: the sum of its samples over each residue class (periodic modes), or its
central ``2N - 1`` samples plus the two tail sums (constant extensions). Building these costs
``O(W)`` kernel evaluations (``W`` the kernel's radius) in blocks of whole periods, and
applying them ``O(N log N)`` per signal with ``O(N)`` memory, whatever σ.

The radius is the caller's: :class:`~fastmoments.signal.gaussian.GaussianFilter` folds
scipy.ndimage's truncated kernel (``W = ceil(truncate σ)``) for ``method="direct"`` and the
untruncated one (:func:`full_radius`, ``W = max(ceil(truncate σ), ceil(10σ))``) for the SFT
methods and ``"auto"``, whose error against the exact convolution is then float rounding
rather than the truncated tail.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["FOLD_BLOCK", "FULL_TRUNCATE", "FoldedKernel", "apply_folded", "fold_period",
           "folded_kernel", "full_radius"]

# kernel samples evaluated at once while folding (2 MiB of float64): the fold's scratch is
# max(FOLD_BLOCK, period) values, independent of σ
FOLD_BLOCK = 1 << 18

# periods up to which the circular convolution is a direct sum (conv1d), above by FFT
DIRECT_PERIOD = 64

# relative variation up to which a folded kernel's level is applied apart (FoldedKernel.level):
# the FFT's float32 error then scales with at most a tenth of the kernel
FLAT = 0.1


def fold_period(n: int, mode: str) -> int:
    """Length of the circular convolution that applies a folded kernel to ``n`` samples.

    ``2n`` for reflect, ``2n - 2`` for mirror (1 for ``n = 1``), ``n`` for wrap; ``2n`` for
    nearest and constant (a zero-padded linear convolution by the kernel's ``2n - 1`` central
    samples).

    >>> [fold_period(5, m) for m in ("reflect", "mirror", "wrap", "nearest", "constant")]
    [10, 8, 5, 10, 10]
    """
    if mode == "mirror":
        return max(1, 2 * n - 2)
    if mode == "wrap":
        return n
    return 2 * n


@dataclass(frozen=True, eq=False)
class FoldedKernel:
    """A Gaussian kernel folded for signals of ``n`` samples in one boundary ``mode``.

    Attributes
    ----------
    n, period : int
        Signal length and the circular convolution's length (:func:`fold_period`).
    radius : int
        The kernel's truncation radius ``W`` (samples ``-W..W``).
    taps : numpy.ndarray
        ``(period,)`` float64: ``f[q]``, the kernel folded onto residues mod ``period``
        (periodic modes) or its samples ``h[q]`` for ``|q| < n`` at ``q mod period``
        (nearest, constant).
    right, left : numpy.ndarray or None
        ``(n,)`` float64 (nearest and constant only): ``R[i] = Σ_{k=i+1}^{W} h[k]`` and
        ``L[i] = Σ_{k=-W}^{i-n} h[k]``, the weights of the value before the first and after the
        last sample at output ``i``.
    block : int
        Kernel samples evaluated at once while folding (the fold's scratch).
    level : float
        Periodic modes, where the folded kernel is all but flat (``|f - mean f| ≤ FLAT ·
        mean f``: smoothing at σ ≳ 0.4 P): the mean of ``taps``, ``1/P``; else 0.
    varying : numpy.ndarray
        ``taps - level``: what the circular convolution applies, the level being applied as
        ``level · Σ_q x_P[q]`` (summed in float64). At σ ≫ N the folded smoothing kernel is
        all but constant, the result all but the signal's mean, and float32 FFTs of the whole
        taps would leave an error of ``~ε32 |x|`` on it (64³ at σ = 1e5: 1.2e-7 relative,
        three times scipy.ndimage's 4.0e-8); of ``taps - level`` the FFT's error scales with
        the kernel's variation instead (2.3e-9 there).
    """

    n: int
    period: int
    radius: int
    taps: np.ndarray
    right: np.ndarray | None
    left: np.ndarray | None
    block: int
    level: float = 0.0
    varying: np.ndarray | None = None

    @property
    def table_bytes(self) -> int:
        """Bytes of the float64 tables kept (``O(n)``)."""
        return 8 * (self.taps.size + (0 if self.right is None else 2 * self.n))

    @property
    def fold_bytes(self) -> int:
        """Peak scratch of building the tables: a few float64 blocks of ``block`` values."""
        return 8 * 4 * self.block

    def apply_bytes(self, rows: int, itemsize: int) -> int:
        """Scratch of applying the kernel to ``rows`` signals of ``itemsize``-byte values:
        the periodic signal, its spectrum, the product and the inverse (``O(rows n)``)."""
        return rows * itemsize * 6 * (self.period + 2)


def _fold_sums(sigma: float, radius: int, period: int, order: int):
    """Folded raw sums over ``k = 0..W``: ``g[k] = exp(-k²/(2σ²))`` and ``k^order g[k]``
    (order 0: ``g`` twice) by residue ``k mod period``, in blocks of whole periods."""
    rows = radius // period + 1
    per = max(1, FOLD_BLOCK // period)
    q = np.arange(period, dtype=np.float64)
    pos_g = np.zeros(period)
    pos_u = np.zeros(period)
    for j0 in range(0, rows, per):
        j1 = min(rows, j0 + per)
        k = np.arange(j0, j1, dtype=np.float64)[:, None] * period + q
        g = np.exp(-0.5 * (k / sigma) ** 2)
        g[k > radius] = 0.0
        pos_g += g.sum(axis=0)
        if order:
            pos_u += (k ** order * g).sum(axis=0)
    return pos_g, pos_u, min(rows, per) * period


def _kernel_head(sigma: float, radius: int, n: int, order: int, s: float, m2: float):
    """The normalised kernel ``h[k]`` for ``k = 0..n-1`` (zero beyond ``W``)."""
    k = np.arange(n, dtype=np.float64)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    g[k > radius] = 0.0
    if order == 0:
        return g / s
    if order == 1:
        return -k * g / (sigma**2 * s)
    return (k * k * g - (m2 / s) * g) / (sigma**4 * s)


@functools.lru_cache(maxsize=128)
def folded_kernel(sigma: float, order: int, radius: int, n: int, mode: str) -> FoldedKernel:
    """Fold scipy.ndimage's normalised Gaussian kernel (truncated at ``radius``) for ``n``
    samples in ``mode`` (cached on plain values; float64 tables of ``O(n)`` values).

    The kernel is ``h0 = g/S``, ``h1 = -k g/(σ² S)``, ``h2 = (k² - M2/S) g/(σ⁴ S)`` on
    ``|k| ≤ W`` with ``g = exp(-k²/(2σ²))``, ``S = Σ g`` and ``M2 = Σ k² g`` over ``|k| ≤ W``:
    the kernels of :func:`~fastmoments.signal.coefficients.discrete_gaussian_kernel`
    truncated at ``W`` and corrected to exact moments as the direct method does (``Σ h0 = 1``,
    ``Σ h1 = Σ h2 = Σ k h2 = 0``; ``h2`` is scipy's ``(k²/σ⁴ - 1/σ²) g/S`` minus its sum
    times ``h0``).

    >>> fk = folded_kernel(1e6, 0, 4_000_000, 4, "wrap")
    >>> fk.period, [round(float(v), 6) for v in fk.taps]
    (4, [0.25, 0.25, 0.25, 0.25])
    """
    period = fold_period(n, mode)
    p = 2 * n if mode in ("nearest", "constant") else period
    pos_g, pos_u, block = _fold_sums(sigma, radius, p, order)
    rev = (-np.arange(p)) % p
    s = 2.0 * float(pos_g.sum()) - 1.0  # Σ_{|k|≤W} g (k = 0 counted once)
    m2 = 2.0 * float(pos_u.sum()) if order == 2 else 0.0
    sign = -1.0 if order == 1 else 1.0
    if mode in ("nearest", "constant"):
        head = _kernel_head(sigma, radius, n, order, s, m2)  # h[0..n-1]
        taps = np.zeros(period)
        taps[:n] = head
        taps[period - n + 1:] = sign * head[1:][::-1]  # h[-k] = ±h[k] at -k mod 2n
        # total of h over k = 0..W, then R[i] = Σ_{k>i} h[k]
        if order == 0:
            total = float(pos_g.sum()) / s
        elif order == 1:
            total = -float(pos_u.sum()) / (sigma**2 * s)
        else:
            total = (float(pos_u.sum()) - (m2 / s) * float(pos_g.sum())) / (sigma**4 * s)
        csum = np.cumsum(head)
        right = total - csum  # Σ_{k=i+1}^{W} h[k]
        left = sign * right[::-1]
        right.setflags(write=False)
        left = np.ascontiguousarray(left)
        left.setflags(write=False)
    else:
        fg = pos_g + pos_g[rev]
        fg[0] -= 1.0  # k = 0 counted on both sides
        if order == 0:
            taps = fg / s
        elif order == 1:
            taps = -(pos_u - pos_u[rev]) / (sigma**2 * s)
        else:
            taps = ((pos_u + pos_u[rev]) - (m2 / s) * fg) / (sigma**4 * s)
        right = left = None
    taps.setflags(write=False)
    # an all but flat folded kernel (smoothing at σ ≳ 0.4 P): its level apart (see level)
    level = 0.0 if right is not None else float(np.mean(taps))
    if not np.max(np.abs(taps - level)) <= FLAT * abs(level):
        level = 0.0
    varying = taps - level
    varying.setflags(write=False)
    return FoldedKernel(int(n), int(period), int(radius), taps, right, left, int(block),
                        level, varying)


#: Folded taps copied to a device, by (id of the host array, dtype, device); each entry keeps
#: its host array, so an id is never reused while its entry lives.
_ON_DEVICE: dict[tuple, tuple[np.ndarray, torch.Tensor]] = {}


def _on_device(a: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    """The read-only host array ``a`` (the taps of a cached folded kernel) as a tensor on
    ``like``'s device and dtype, copied once: a copy from host memory in every call would
    also keep the call out of a CUDA graph (:mod:`.graphs`)."""
    if like.device.type == "cpu":
        return torch.tensor(a, dtype=like.dtype)
    key = (id(a), like.dtype, like.device)
    hit = _ON_DEVICE.get(key)
    if hit is None or hit[0] is not a:
        if len(_ON_DEVICE) > 64:
            _ON_DEVICE.clear()
        hit = _ON_DEVICE[key] = (a, torch.tensor(a, dtype=like.dtype, device=like.device))
    return hit[1]


def _circular(xe: torch.Tensor, f: np.ndarray, n: int) -> torch.Tensor:
    """``y[i] = Σ_q f[q] xe[(i - q) mod P]`` for ``i < n``, rows ``xe`` ``(B, P)``."""
    period = xe.shape[-1]
    w = _on_device(f, xe)
    if period <= DIRECT_PERIOD:
        # z[m] = xe[(m - P + 1) mod P]; conv1d correlates, so the taps are reversed
        z = torch.cat([xe[:, 1:], xe[:, :n]], dim=-1)
        return torch.nn.functional.conv1d(z[:, None, :], w.flip(0)[None, None, :])[:, 0]
    spec = torch.fft.rfft(xe, n=period) * torch.fft.rfft(w, n=period)
    return torch.fft.irfft(spec, n=period)[:, :n]


def apply_folded(fk: FoldedKernel, rows: torch.Tensor, mode: str, cval: float) -> torch.Tensor:
    """Apply a folded kernel to signals ``rows`` ``(B, n)`` (differentiable in ``rows``)."""
    n = fk.n
    if mode == "reflect":
        xe = torch.cat([rows, rows.flip(-1)], dim=-1)
    elif mode == "mirror":
        xe = rows if n == 1 else torch.cat([rows, rows[:, 1:n - 1].flip(-1)], dim=-1)
    elif mode == "wrap":
        xe = rows
    else:
        xe = torch.cat([rows, rows.new_zeros(rows.shape[0], fk.period - n)], dim=-1)
    varying = fk.taps if fk.varying is None else fk.varying
    y = _circular(xe, varying, n)
    if fk.level != 0.0:  # the constant part of the folded kernel: level · Σ over one period
        total = xe.sum(dim=-1, keepdim=True, dtype=torch.float64) * fk.level
        y = y + total.to(y.dtype)
    if mode in ("nearest", "constant"):
        right = _on_device(fk.right, rows)
        left = _on_device(fk.left, rows)
        if mode == "nearest":
            y = y + rows[:, :1] * right + rows[:, n - 1:] * left
        else:
            y = y + cval * (right + left)
    return y


def truncation_radius(sigma: float, truncate: float) -> int:
    """``W = ceil(truncate σ)``: the kernel's half-width, as the direct method and
    scipy.ndimage (``int(truncate σ + 0.5)`` there; equal where ``truncate σ`` is an
    integer)."""
    return math.ceil(truncate * sigma)


#: Half-width, in σ, of the *untruncated* kernel that the folded path applies for the SFT
#: methods and ``method="auto"``: beyond ``10σ`` the samples are below ``e^-50 ≈ 2e-22`` of
#: the peak (``k² e^{-k²/(2σ²)}/σ⁴`` for the second derivative: ~2e-20 of its scale), so
#: the kernel cut there equals the infinite one to float64 rounding. Folding it costs
#: ``O(10σ)`` exponentials once per ``(σ, order, N, mode)`` (~0.15 s at σ = 2^20 on one core).
FULL_TRUNCATE = 10.0


def full_radius(sigma: float, truncate: float = 4.0) -> int:
    """Radius of the untruncated kernel of the folded path: ``max(ceil(truncate σ),
    ceil(10σ))`` (:data:`FULL_TRUNCATE`; a longer ``truncate`` is kept).

    >>> full_radius(256.0), full_radius(256.0, 12.0), full_radius(0.3)
    (2560, 3072, 3)
    """
    return max(truncation_radius(sigma, truncate), math.ceil(FULL_TRUNCATE * sigma))
