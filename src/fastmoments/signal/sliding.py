"""Banks of (attenuated) sliding Fourier transform filters and the three engines computing them.

A *row* ``r`` of a bank is one SFT/ASFT component (the paper's Eqs. 7-8 and 32-33),

    Z_r[n] = Σ_{k=-K_r}^{K_r} x[n - k] e^{α_r k} e^{-i ω_r k}  =  c_r[n] - i s_r[n],

with ``ω_r = β p`` (or any real frequency, Eqs. 58-59, for the multiplication method) and
``α_r ≥ 0`` (``α = 0`` is the plain SFT). A bank adds its rows into output channels,

    y_ch[n] = Σ_{r ∈ ch} μ_r Re Z_r[n + n0_r] + ν_r Im Z_r[n + n0_r],

with complex weights ``μ, ν`` and the integer shift ``n0`` of the ASFT (Eq. 45). Writing
``q = e^{-α + iω}``, ``Z_r[n] = w^K S_r[n - K]`` with ``w = 1/q`` and the *weighted sliding sum*

    S[m] = Σ_{s=0}^{2K} x[m + s] q^s.

Four engines compute ``S`` row by row (select with ``engine=``); the fifth,
``"chunked"`` (:mod:`.chunked`, with fused GPU kernels in :mod:`.triton_sft`), computes the
whole bank at once as small matrix products and is the default on every device:

``"prefix"``
    Kernel integrals (Sec. 2.2, Eqs. 16-20): ``S[m] = e^{-iωm} (U[m + 2K + 1] - U[m])`` with the
    prefix sum ``U[j] = Σ_{i<j} x[i] e^{iωi}``. One cumulative sum per row; plain SFT only
    (``α = 0``). The prefix sums are accumulated in float64 whatever the input dtype, so float32
    inputs do not suffer the drift of long prefix sums (the cost is float64 traffic).
``"recursive"``
    The first-order recursive filter (Secs. 2.3-2.4, Eqs. 22-25 and 34-37), run backwards:
    ``v[m] = x[m] + q v[m + 1]`` and ``S[m] = v[m] - q^{2K+1} v[m + 2K + 1]``. It is evaluated
    as a blocked linear scan (each block of ``B`` samples is a small triangular matrix product,
    the block carries are a scan of their own), so it runs in parallel and in the working dtype.
    With ``α = 0`` in float32, ``v`` accumulates the whole history and the difference drifts
    (the instability the ASFT was designed to remove); with ``α > 0`` it stays bounded.
``"recursive2"``
    The second-order recursive filter on the window sums (Secs. 2.3-2.4, Eqs. 29-31 and 39):
    ``S[m] = 2 Re(q) S[m + 1] - |q|² S[m + 2] + d[m] - q̄ d[m + 1]`` with the drive
    ``d[m] = x[m] - q^{2K+1} x[m + 2K + 1]``, run sequentially in the working dtype
    (:mod:`.recursive2`, a numba kernel; CUDA tensors go through the host). It is there to
    reproduce the paper's filters and their float32 error growth, not for speed.
``"sliding"``
    The paper's GPU sliding-sum algorithm (Sec. 4.1, Eqs. 62-65, Algorithm 1), generalised to
    geometric weights: ``⌈log2(2K+1)⌉`` doubling passes, each output summing only the
    ``2K + 1`` samples it needs, so it is stable in float32 for SFT and ASFT alike.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
import torch

from .._array import complex_dtype

__all__ = ["ENGINES", "SFTBank", "scan_linear"]

#: How the SFT components are computed: "chunked" (the default on GPUs: small matrix products,
#: :mod:`.chunked`), "numba" (compiled CPU loops, :mod:`._numba_sft`), the row engines of
#: this module, and "recursive2" (the ASFT paper's second-order recursive filters, Eqs.
#: 29-31 and 39, :mod:`.recursive2`).
ENGINES = ("chunked", "prefix", "recursive", "sliding", "recursive2", "numba")
#: The engines that :meth:`SFTBank.apply` runs itself.
ROW_ENGINES = ("prefix", "recursive", "sliding", "recursive2")

_SCAN_BLOCK = 32


def scan_linear(x: torch.Tensor, r: torch.Tensor, dtype: torch.dtype | None = None, *,
                block: int = _SCAN_BLOCK) -> torch.Tensor:
    """First-order linear recurrence ``v[j] = x[j] + r v[j - 1]`` along the last axis.

    ``x`` is ``(..., R, M)`` (real or complex), ``r`` ``(R,)`` complex128 and ``dtype`` the
    complex working dtype of the result (default ``r.dtype``). The scan is blocked: within a
    block of ``block`` samples it is the product with the lower triangular Toeplitz matrix
    ``T[i, j] = r^{i-j}``; the block ends are scanned recursively with ``r^block`` and added back
    with the powers ``r^{i+1}``. All powers are computed in float64 from ``r`` and rounded once,
    so the working precision only enters through the accumulation itself.

    >>> x = torch.ones(1, 5, dtype=torch.float64)
    >>> scan_linear(x, torch.tensor([0.5 + 0j], dtype=torch.complex128)).real
    tensor([[1.0000, 1.5000, 1.7500, 1.8750, 1.9375]], dtype=torch.float64)
    """
    cdt = r.dtype if dtype is None else dtype
    m = x.shape[-1]
    if m == 0:
        return x.to(cdt)
    b = min(block, m)
    nb = -(-m // b)
    xr = x.to(cdt)
    if nb * b != m:
        xr = torch.nn.functional.pad(torch.view_as_real(xr), (0, 0, 0, nb * b - m))
        xr = torch.view_as_complex(xr)
    xb = xr.reshape(*x.shape[:-1], nb, b)
    # powers r^0 .. r^b, computed in float64 from the (float64) phase and modulus
    r64 = r.to(torch.complex128)
    e = torch.arange(b + 1, device=r.device, dtype=torch.float64)
    # |r|^e e^{i e arg r}; 0^0 = 1 keeps underflowed powers (strong attenuation) finite
    pw64 = torch.polar(r64.abs()[:, None] ** e, r64.angle()[:, None] * e)  # (R, b+1)
    pw = pw64.to(cdt)
    i = torch.arange(b, device=r.device)
    diff = i[:, None] - i[None, :]
    tri = pw[:, diff.clamp(min=0)] * (diff >= 0)  # (R, b, b)
    local = torch.einsum("rij,...rbj->...rbi", tri, xb)
    if nb > 1:
        ends = local[..., -1]  # (..., R, nb)
        carry = scan_linear(ends, pw64[:, b], cdt, block=block)  # state at each block's end
        prev = torch.nn.functional.pad(torch.view_as_real(carry[..., :-1]), (0, 0, 1, 0))
        prev = torch.view_as_complex(prev)  # state before each block
        local = local + prev[..., None] * pw[:, None, 1:]
    return local.reshape(*x.shape[:-1], nb * b)[..., :m]


def _cumsum(f: torch.Tensor, block: int = 1024, two_level: bool | None = None) -> torch.Tensor:
    """Inclusive cumulative sum along the last axis, in two levels (blocks, then block totals).

    Same result as :func:`torch.cumsum` up to rounding; it keeps the GPU busy when there are
    few long rows (one SFT row per order ``p``), where a row-per-block scan would not (on the
    H100 the Gaussian's graph time went from 0.30 to 0.16 ms). CPU tensors use one pass.
    """
    m = f.shape[-1]
    if two_level is None:
        two_level = f.device.type == "cuda"
    if m <= 2 * block or not two_level:
        # on the CPU one pass is faster (measured with benchmarks/signal_gpu.py)
        return torch.cumsum(f, dim=-1)
    nb = -(-m // block)
    fr = torch.view_as_real(f) if f.is_complex() else f
    extra = (0, 0) if f.is_complex() else ()
    padded = torch.nn.functional.pad(fr, (*extra, 0, nb * block - m))
    if f.is_complex():
        padded = torch.view_as_complex(padded)
    blocks = torch.cumsum(padded.reshape(*f.shape[:-1], nb, block), dim=-1)
    totals = torch.cumsum(blocks[..., -1], dim=-1)  # (..., nb)
    offset = torch.nn.functional.pad(
        torch.view_as_real(totals[..., :-1]) if f.is_complex() else totals[..., :-1],
        (*extra, 1, 0))
    if f.is_complex():
        offset = torch.view_as_complex(offset)
    out = blocks + offset[..., None]
    return out.reshape(*f.shape[:-1], nb * block)[..., :m]


@dataclass(eq=False)
class SFTBank:
    """Rows of SFT/ASFT filters and how they add into output channels (all float64 tables).

    Parameters
    ----------
    omega, alpha : numpy.ndarray
        Frequencies ``ω_r`` and attenuations ``α_r ≥ 0``.
    half : numpy.ndarray of int
        Window half-widths ``K_r``.
    shift : numpy.ndarray of int
        Output shifts ``n0_r``.
    mu, nu : numpy.ndarray of complex
        Weights of ``Re Z_r`` and ``Im Z_r``.
    channel : numpy.ndarray of int
        Output channel of each row.
    n_channels : int
        Number of output channels.
    complex_output : bool
        Whether the output is complex (Morlet) or real (Gaussian).
    """

    omega: np.ndarray
    alpha: np.ndarray
    half: np.ndarray
    shift: np.ndarray
    mu: np.ndarray
    nu: np.ndarray
    channel: np.ndarray
    n_channels: int
    complex_output: bool
    _tables: dict = field(default_factory=dict, repr=False)

    @property
    def pad(self) -> int:
        """Samples needed on each side of the signal (computed once, like :attr:`groups`)."""
        pad = self._tables.get("pad")
        if pad is None:
            pad = self._tables["pad"] = int(np.max(self.half + np.abs(self.shift)))
        return pad

    @property
    def n_rows(self) -> int:
        return len(self.omega)

    # ------------------------------------------------------------------ exact description
    def kernel(self, j: np.ndarray) -> np.ndarray:
        """Effective impulse responses ``h_ch[j]`` with ``y_ch[n] = Σ_j h_ch[j] x[n - j]``.

        Float64 (complex128 if the output is complex), shape ``(n_channels, len(j))``;
        used to measure the approximation error (Eqs. 48 and 66) and in tests.
        """
        j = np.asarray(j, dtype=np.float64)
        out = np.zeros((self.n_channels, len(j)), dtype=np.complex128)
        for r in range(self.n_rows):
            k = j + self.shift[r]
            inside = np.abs(k) <= self.half[r]
            env = np.exp(self.alpha[r] * k) * inside
            om = self.omega[r]
            h = env * (self.mu[r] * np.cos(om * k) - self.nu[r] * np.sin(om * k))
            out[self.channel[r]] += h
        return out if self.complex_output else out.real

    # ------------------------------------------------------------------ device tables
    @property
    def groups(self) -> list[tuple[int, int, int, int, int]]:
        """Runs of consecutive rows sharing ``(channel, K, n0)``: ``(r0, r1, channel, K, n0)``
        (computed once; the bank's arrays are not changed after construction)."""
        if "groups" in self._tables:
            return self._tables["groups"]
        out = []
        r0 = 0
        for r in range(1, self.n_rows + 1):
            if r == self.n_rows or (self.channel[r], self.half[r], self.shift[r]) != (
                    self.channel[r0], self.half[r0], self.shift[r0]):
                out.append((r0, r, int(self.channel[r0]), int(self.half[r0]),
                            int(self.shift[r0])))
                r0 = r
        self._tables["groups"] = out
        return out

    @property
    def max_group_rows(self) -> int:
        return max(r1 - r0 for r0, r1, *_ in self.groups)

    def tables(self, dtype: torch.dtype, device: torch.device) -> dict:
        key = (dtype, str(device))
        if key not in self._tables:
            cdt = complex_dtype(dtype)
            q = np.exp(-self.alpha + 1j * self.omega)
            # Z = w^K S with w = 1/q; output = μ Re Z + ν Im Z = A Re S + B Im S
            wk = np.exp(self.half * (self.alpha - 1j * self.omega))
            a = self.mu * wk.real + self.nu * wk.imag
            b = self.nu * wk.real - self.mu * wk.imag
            if not self.complex_output:
                a, b = a.real, b.real
            as_t = functools.partial(torch.as_tensor, device=device)
            t = {
                "q": as_t(q, dtype=torch.complex128).to(cdt),
                "q64": as_t(q, dtype=torch.complex128),
                "omega": as_t(self.omega, dtype=torch.float64),
                "a": as_t(a).to(cdt if self.complex_output else dtype),
                "b": as_t(b).to(cdt if self.complex_output else dtype),
            }
            self._tables[key] = t
        return self._tables[key]

    def _rotation(self, r0: int, r1: int, m: int, device: torch.device) -> torch.Tensor:
        """``e^{iω_r j}`` for ``j = 0 .. m - 1`` (complex128), cached when small."""
        key = ("rot", m, str(device))
        if key in self._tables:
            return self._tables[key][r0:r1]
        small = self.n_rows * m * 16 <= 2**26
        rows = slice(None) if small else slice(r0, r1)
        j = torch.arange(m, dtype=torch.float64, device=device)
        om = self.tables(torch.float64, device)["omega"][rows]
        ph = torch.remainder(om[:, None] * j, 2 * math.pi)  # phases reduced mod 2π in float64
        rot = torch.polar(torch.ones_like(ph), ph)
        if small:
            self._tables[key] = rot
            return rot[r0:r1]
        return rot

    # ------------------------------------------------------------------ application
    def apply(self, xp: torch.Tensor, n: int, engine: str) -> torch.Tensor:
        """Filter extended signals.

        Parameters
        ----------
        xp : torch.Tensor
            ``(B, n + 2 * pad)`` real signals, extended by :attr:`pad` samples on each side.
        n : int
            Output length.
        engine : str
            ``"prefix"``, ``"recursive"``, ``"recursive2"`` or ``"sliding"`` (the row-by-row
            engines; the chunked engine takes unextended signals:
            :func:`.chunked.chunked_apply`).

        Returns
        -------
        torch.Tensor
            ``(B, n_channels, n)``, real or complex in the working precision.
        """
        if engine not in ROW_ENGINES:  # pragma: no cover - checked by callers
            raise ValueError(f"engine must be one of {ROW_ENGINES}, got {engine!r}")
        if engine == "prefix" and np.any(self.alpha != 0):
            raise ValueError("engine='prefix' computes the plain SFT only (alpha = 0); "
                             "use method='sft', or engine='recursive' or 'sliding' for the ASFT")
        t = self.tables(xp.dtype, xp.device)
        outs = []
        for r0, r1, ch, half, shift in self.groups:
            start = self.pad + shift - half  # first index of S in the extended signal
            length = 2 * half + 1
            s = getattr(self, "_" + engine)(xp, n, r0, r1, start, length, t)  # (B, g, n)
            y = (t["a"][r0:r1, None] * s.real + t["b"][r0:r1, None] * s.imag).sum(1)
            outs.append((ch, y))
        if len(outs) == self.n_channels and all(c == i for i, (c, _) in enumerate(outs)):
            return torch.stack([y for _, y in outs], dim=1)
        out = torch.zeros(xp.shape[0], self.n_channels, n, dtype=outs[0][1].dtype,
                          device=xp.device)
        for ch, y in outs:
            out[:, ch] += y
        return out

    def _prefix(self, xp, n, r0, r1, start, length, t):
        m = xp.shape[-1]
        rot = self._rotation(r0, r1, m, xp.device)
        f = xp.to(torch.float64)[:, None, :] * rot
        u = _cumsum(f)  # U[j + 1] = Σ_{i<=j}
        hi = u[..., start + length - 1: start + length - 1 + n]
        if start == 0:
            lo = torch.nn.functional.pad(torch.view_as_real(u[..., : n - 1]), (0, 0, 1, 0))
            lo = torch.view_as_complex(lo)
        else:
            lo = u[..., start - 1: start - 1 + n]
        s = (hi - lo) * rot[:, start: start + n].conj()
        return s.to(t["q"].dtype)

    def _recursive(self, xp, n, r0, r1, start, length, t):
        q = t["q"][r0:r1]
        q64 = t["q64"][r0:r1]
        g = r1 - r0
        xr = torch.flip(xp, dims=(-1,))[:, None, :].expand(-1, g, -1)
        v = torch.flip(scan_linear(xr, q64, q.dtype), dims=(-1,))  # v[m] = x[m] + q v[m+1]
        ql = torch.polar(q64.abs() ** length, q64.angle() * length).to(q.dtype)
        lo = v[..., start: start + n]
        end = start + length + n
        hi = v[..., start + length: end]
        if hi.shape[-1] < n:  # v is zero past the end of the extended signal
            hi = torch.view_as_complex(torch.nn.functional.pad(
                torch.view_as_real(hi), (0, 0, 0, n - hi.shape[-1])))
        return lo - ql[:, None] * hi

    def _recursive2(self, xp, n, r0, r1, start, length, t):
        from .recursive2 import recursive_sums

        seg = xp[:, start: start + n + length - 1]
        return recursive_sums(seg, t["q64"][r0:r1], length, n, order=2, windowed=True)

    def _sliding(self, xp, n, r0, r1, start, length, t):
        nbits = int(length).bit_length()
        cdt = t["q"].dtype
        g = r1 - r0
        # only the samples [start, start + n + length) are read
        seg = xp[:, start: start + n + length - 1]
        m = seg.shape[-1]
        cur = seg.to(cdt)[:, None, :].expand(-1, g, -1)
        h = None
        q64 = t["q64"][r0:r1]
        for r in range(nbits):
            step = 1 << r
            qs = torch.polar(q64.abs() ** step, q64.angle() * step).to(cdt)[:, None]
            if (length >> r) & 1:
                if h is None:
                    h = cur
                else:
                    shifted = torch.view_as_complex(torch.nn.functional.pad(
                        torch.view_as_real(h[..., step:]), (0, 0, 0, min(step, m))))
                    h = cur + qs * shifted
            if r + 1 < nbits:
                shifted = torch.view_as_complex(torch.nn.functional.pad(
                    torch.view_as_real(cur[..., step:]), (0, 0, 0, min(step, m))))
                cur = cur + qs * shifted
        return h[..., :n]
