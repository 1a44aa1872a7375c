"""Sequential recursive filters for the SFT/ASFT components: the ``"recursive2"`` engine.

The weighted sliding sum of a bank row (see :mod:`.sliding`),

    S[m] = Σ_{s=0}^{L-1} x[m + s] q^s,   q = e^{-α + iω},   L = 2K + 1,

obeys the first-order recursion ``S[m] = q S[m + 1] + d[m]`` with the drive
``d[m] = x[m] - q^L x[m + L]`` (the paper's Eq. 28, and Eq. 37 for the ASFT, run backwards in
``m`` because our sums look forward). Multiplying ``(1 - q E)`` by ``(1 - q̄ E)``, where ``E``
advances by one sample, gives the second-order recursion with *real* coefficients

    S[m] = 2 Re(q) S[m + 1] - |q|² S[m + 2] + d[m] - q̄ d[m + 1]

(Sugimoto et al.'s filter, the ASFT paper's Eqs. 29-31 and 39). Its real and imaginary parts
are two independent real recursions, so each step costs four real multiplications instead of
the complex product of the first-order filter. Its poles sit at ``q`` and ``q̄``: on the unit
circle for the SFT (``α = 0``), a double pole at 1 for ``ω = 0``. Rounding errors made at one
step are never damped, and near ``ω = 0`` they are amplified by about ``1/|sin ω|``; the error
of a float32 run grows with the number of samples, which is the instability the paper warns
about (measured in ``benchmarks/asft_filters.py``).

The paper writes the window as ``2K`` samples with ``e^{iω 2K} = 1`` (``ω = πp/K``, the direct
method) and adds the remaining sample separately (Eq. 27). We keep the ``2K + 1`` window with the
factor ``q^L`` in the drive, which is the same recursion for those frequencies and stays exact
for any real ``ω`` (the multiplication method's frequencies, Eqs. 58-59).

Four variants are provided for the benchmark: ``order`` 1 or 2, and ``windowed`` (the sums
``S`` recurse directly, Eqs. 28/31/37/39) or not (the running sum ``v[m] = x[m] + q v[m + 1]``
over the whole signal, Eqs. 22/30/34/38, then ``S[m] = v[m] - q^L v[m + L]``, Eq. 24). The
engine ``"recursive2"`` is the windowed second-order filter. All run strictly sequentially in
the working precision (float32 stays float32), in a numba kernel compiled on first use; CUDA
tensors are filtered on the host and copied back (this engine exists to study the paper's
filters, not to be fast on a GPU). It does not propagate gradients.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

__all__ = ["VARIANTS", "recursive_sums"]

#: ``(order, windowed)`` of each named variant (the benchmark's rows).
VARIANTS = {
    "first-order": (1, False),
    "first-order windowed": (1, True),
    "second-order": (2, False),
    "second-order windowed": (2, True),
}


@functools.cache
def _kernel():
    """The numba kernel (compiled, and cached on disk, on first use)."""
    from numba import njit  # lazy: importing fastmoments must not import numba

    @njit(cache=True, nogil=True)
    def run(seg, qr, qi, c1, c2, lr, li, out_re, out_im, n, length, order):
        # the window sums S directly. seg (B, M) real; q = qr + i qi, c1 = 2 Re q,
        # c2 = |q|^2, q^L = lr + i li per row; out (B, R, n). Every scalar comes from an
        # array of the working dtype, so no float64 literal enters the float32 arithmetic.
        nb, m = seg.shape
        nr = qr.shape[0]
        for b in range(nb):
            for r in range(nr):
                zero = qr[r] - qr[r]
                a_r, a_i, b_r, b_i = zero, zero, zero, zero  # S at j + 1 and j + 2
                d1r, d1i = zero, zero  # the drive at j + 1
                for j in range(m - 1, -1, -1):
                    dr = seg[b, j]
                    di = zero
                    if j + length < m:  # d[j] = x[j] - q^L x[j + L]
                        xl = seg[b, j + length]
                        dr = dr - lr[r] * xl
                        di = di - li[r] * xl
                    if order == 1:
                        sr = qr[r] * a_r - qi[r] * a_i + dr
                        si = qr[r] * a_i + qi[r] * a_r + di
                    else:  # drive d[j] - conj(q) d[j + 1], real coefficients
                        er = dr - (qr[r] * d1r + qi[r] * d1i)
                        ei = di - (qr[r] * d1i - qi[r] * d1r)
                        sr = c1[r] * a_r - c2[r] * b_r + er
                        si = c1[r] * a_i - c2[r] * b_i + ei
                    d1r, d1i = dr, di
                    b_r, b_i = a_r, a_i
                    a_r, a_i = sr, si
                    if j < n:
                        out_re[b, r, j] = sr
                        out_im[b, r, j] = si
        return 0

    @njit(cache=True, nogil=True)
    def run_full(seg, qr, qi, c1, c2, lr, li, v_re, v_im, order):
        # the running sums v over the whole segment (B, R, M), first or second order
        nb, m = seg.shape
        nr = qr.shape[0]
        for b in range(nb):
            for r in range(nr):
                zero = qr[r] - qr[r]
                a_r, a_i, b_r, b_i = zero, zero, zero, zero
                x1 = zero
                for j in range(m - 1, -1, -1):
                    x0 = seg[b, j]
                    if order == 1:
                        sr = qr[r] * a_r - qi[r] * a_i + x0
                        si = qr[r] * a_i + qi[r] * a_r
                    else:
                        sr = c1[r] * a_r - c2[r] * b_r + x0 - qr[r] * x1
                        si = c1[r] * a_i - c2[r] * b_i + qi[r] * x1
                    x1 = x0
                    b_r, b_i = a_r, a_i
                    a_r, a_i = sr, si
                    v_re[b, r, j] = sr
                    v_im[b, r, j] = si
        return 0

    return run, run_full


def _power(q64: np.ndarray, e: int) -> np.ndarray:
    """``q^e`` in float64 from the modulus and phase (no repeated products)."""
    return np.abs(q64) ** e * np.exp(1j * np.angle(q64) * e)


def recursive_sums(seg: torch.Tensor, q64: torch.Tensor, length: int, n: int, *,
                   order: int = 2, windowed: bool = True) -> torch.Tensor:
    """Weighted sliding sums ``S[m] = Σ_{s<L} seg[m + s] q^s`` by a sequential recursion.

    Parameters
    ----------
    seg : torch.Tensor
        ``(B, M)`` real signals (float32 or float64), ``M ≥ n + length - 1``; samples past
        the end count as zero.
    q64 : torch.Tensor
        ``(R,)`` complex128 ratios ``q_r = e^{-α_r + iω_r}``, ``|q_r| ≤ 1``.
    length : int
        Window length ``L = 2K + 1``.
    n : int
        Number of sums wanted (``m = 0 .. n - 1``).
    order : {1, 2}
        First-order (complex) or second-order (real-coefficient) recursion.
    windowed : bool
        Recurse on the window sums directly (Eqs. 28/31/37/39) rather than on the running sum
        over the whole signal (Eqs. 22/30/34/38, then Eq. 24).

    Returns
    -------
    torch.Tensor
        ``(B, R, n)`` complex (complex64 for float32 input), on ``seg``'s device.

    Raises
    ------
    ValueError
        If ``order`` is not 1 or 2, or ``seg`` requires a gradient (this engine has none).

    Notes
    -----
    The coefficients ``q``, ``2 Re q``, ``|q|²`` and ``q^L`` are computed in float64 and rounded
    once to the working dtype; every step of the recursion then runs in that dtype, in order,
    as the filters of the ASFT paper (Sec. 2.3-2.4) do.

    Examples
    --------
    >>> x = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)
    >>> q = torch.tensor([0.5 + 0j], dtype=torch.complex128)
    >>> recursive_sums(x, q, 2, 3).real  # x[m] + x[m + 1] / 2
    tensor([[[2.0000, 3.5000, 5.0000]]], dtype=torch.float64)
    """
    if order not in (1, 2) or isinstance(order, bool):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    if seg.requires_grad and torch.is_grad_enabled():
        raise ValueError("engine='recursive2' does not propagate gradients; use "
                         "engine='chunked', 'recursive' or 'sliding' for a differentiable "
                         "filter")
    dtype = seg.dtype if seg.dtype in (torch.float32, torch.float64) else torch.float32
    npdt = np.float32 if dtype == torch.float32 else np.float64
    cdt = torch.complex64 if dtype == torch.float32 else torch.complex128
    device = seg.device
    x = np.ascontiguousarray(seg.detach().to("cpu", dtype).numpy())
    q = q64.detach().cpu().numpy().astype(np.complex128)
    ql = _power(q, int(length))
    coef = [np.ascontiguousarray(c, dtype=npdt) for c in (
        q.real, q.imag, 2 * q.real, np.abs(q) ** 2, ql.real, ql.imag)]
    nb, m = x.shape
    nr = len(q)
    run, run_full = _kernel()
    if windowed:
        out_re = np.zeros((nb, nr, n), dtype=npdt)
        out_im = np.zeros((nb, nr, n), dtype=npdt)
        run(x, *coef, out_re, out_im, int(n), int(length), int(order))
        s = torch.complex(torch.from_numpy(out_re), torch.from_numpy(out_im))
    else:
        v_re = np.zeros((nb, nr, m), dtype=npdt)
        v_im = np.zeros((nb, nr, m), dtype=npdt)
        run_full(x, *coef, v_re, v_im, int(order))
        v = torch.complex(torch.from_numpy(v_re), torch.from_numpy(v_im))
        hi = v[..., length: length + n]
        if hi.shape[-1] < n:  # v is zero past the end of the segment
            hi = torch.cat([hi, v.new_zeros(nb, nr, n - hi.shape[-1])], dim=-1)
        ql_t = torch.as_tensor(ql, dtype=torch.complex128).to(cdt)
        s = v[..., :n] - ql_t[:, None] * hi
    return s.to(device=device, dtype=cdt)
