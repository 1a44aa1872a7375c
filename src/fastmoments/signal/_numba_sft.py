"""The numba engine: a bank of SFT/ASFT filters as compiled CPU loops (``engine="numba"``).

This module imports numba at its top; :mod:`._apply` imports it only when the engine runs,
so ``import fastmoments`` never loads numba.

Notation as in :mod:`.chunked`: a row group (rows sharing the window ``L = 2K + 1``, the
offset ``off = n0 - K`` and the output channel) adds into its channel

    y[n] = Σ_r A_r Re S_r[n] + B_r Im S_r[n],    S_r[n] = Σ_{s<L} x̃[n + off + s] q_r^s,

``q_r = e^{-α_r + iω_r}`` (``|q_r| ≤ 1``), ``x̃`` the signal extended by the boundary mode.
Cut the outputs into chunks of ``C`` samples. Inside chunk ``c`` the window sums follow the
backward recursion of the (attenuated) sliding Fourier transform (paper Eqs. 22-25, 34-37)

    S[n] = x̃[n + off] + q S[n + 1] - q^L x̃[n + off + L],

started at the chunk's *anchor* ``S[(c + 1)C]`` and run for ``C`` steps in float64, every
factor of modulus ≤ 1. The anchors come from the chunk totals ``σ[p] = Σ_{s<C} x̃[pC + off +
s] q^s`` and the partial totals ``ρ[p]`` (the first ``L mod C`` terms):

    S[pC] = Σ_{j<F} Q^j σ[p + j] + Q^F ρ[p + F],    Q = q^C,  F = ⌊L/C⌋,

evaluated by Horner's rule (``F`` steps) every ``max(_RESET, F)`` chunks (so at most one
step per chunk on average) and, in between, by the same sliding recursion one level up,

    S[pC] = σ[p] + Q S[(p+1)C] - Q^F σ[p+F] + Q^F ρ[p+F] - Q^{F+1} ρ[p+F+1].

Error (float64, ``ε = 2^-53``): a recursion of ``k`` steps from an exact start is off by at
most about ``k ε`` times the window's ``Σ_s |x̃| |q|^s`` plus the drift ``k ε`` of the
rounded ``q`` against the exact ``q^L`` it removes with; both are reset after ``C`` samples
(near field) and after ``max(_RESET, F)`` chunks (anchors), so the output error stays within
a small multiple of ``(C + max(_RESET, F) + F) ε Σ_j |h_j| max|x̃|`` for any signal length
(no prefix sum grows with ``N``; tests/signal/test_numba.py checks twice that bound, and a
resonant 300000-sample signal). Float32 signals are widened on reading and the result is
rounded once to the output dtype, so a float32 result is within one float32 rounding
(``2^-24`` relative, per component) of the float64 result of the same samples.

Every table is computed in float64 from the bank's rows (:func:`.chunked._powers`: phases
reduced modulo 2π before the exponential). The recursions of :data:`_LANES` chunks run side
by side in the innermost loop (independent recursions: the loop is vectorised), two rows at a
time. The jobs (signal, channel) are independent; several run on numba's threads.
"""

from __future__ import annotations

import numpy as np
import torch
from numba import config as _nb_config
from numba import get_num_threads as _nb_get_threads
from numba import njit, prange
from numba import set_num_threads as _nb_set_threads

from .._threads import threads_for
from .boundary import MODES
from .chunked import _powers

__all__ = ["CHUNK", "apply_arrays", "numba_apply", "warm_up"]

CHUNK = 64  # near-field recursion length (error ∝ CHUNK ε; anchors cost ∝ 1/CHUNK)
_RESET = 16  # chunk-level recursion steps between two Horner re-anchorings
_LANES = 32  # chunks run side by side (the vectorised inner loops run over them)
# float flags for the compiled loops: contraction into FMAs and reassociation, never the
# no-NaN/no-inf assumptions (non-finite input must give non-finite output)
_FAST = {"contract", "reassoc", "nsz", "arcp"}
_MODE_CODE = {m: i for i, m in enumerate(MODES)}  # reflect, nearest, mirror, wrap, constant

# columns of the row table
(_QR, _QI, _QLR, _QLI, _QCR, _QCI, _QFR, _QFI, _QF1R, _QF1I, _AR, _BR, _AI, _BI) = range(14)
_ROW_COLS = 14
# columns of the group table
_G_R0, _G_R1, _G_CH, _G_L, _G_OFF, _G_F, _G_REM = range(7)


def _tables(bank, chunk: int) -> tuple[np.ndarray, ...]:
    """Float64 tables of ``bank`` for chunk length ``chunk`` (cached on the bank):
    ``(groups, rows, qs, ch_ptr, ch_groups)``."""
    key = ("numba", chunk)
    hit = bank._tables.get(key)
    if hit is not None:
        return hit
    groups = bank.groups
    ng = len(groups)
    gt = np.zeros((ng, 7), dtype=np.int64)
    rows = np.zeros((bank.n_rows, _ROW_COLS), dtype=np.float64)
    qs = np.zeros((bank.n_rows, 2, chunk), dtype=np.float64)
    s = np.arange(chunk)
    for k, (r0, r1, ch, half, shift) in enumerate(groups):
        big_l = 2 * half + 1
        f, rem = divmod(big_l, chunk)
        gt[k] = (r0, r1, ch, big_l, shift - half, f, rem)
        alpha, omega = bank.alpha[r0:r1], bank.omega[r0:r1]
        # comb_r(z) = A Re z + B Im z (A, B from Z = w^K S, as in SFTBank.tables)
        wk = np.exp(half * (alpha - 1j * omega))
        a = bank.mu[r0:r1] * wk.real + bank.nu[r0:r1] * wk.imag
        b = bank.nu[r0:r1] * wk.real - bank.mu[r0:r1] * wk.imag
        pw = _powers(alpha, omega, np.array([1, big_l, chunk, f * chunk, (f + 1) * chunk]))
        cols = [pw[:, 0], pw[:, 1], pw[:, 2], pw[:, 3], pw[:, 4]]
        for j, v in enumerate(cols):
            rows[r0:r1, 2 * j] = v.real
            rows[r0:r1, 2 * j + 1] = v.imag
        a = np.asarray(a, dtype=np.complex128)
        b = np.asarray(b, dtype=np.complex128)
        rows[r0:r1, _AR], rows[r0:r1, _BR] = a.real, b.real
        if bank.complex_output:
            rows[r0:r1, _AI], rows[r0:r1, _BI] = a.imag, b.imag
        p = _powers(alpha, omega, s)  # (R, C)
        qs[r0:r1, 0], qs[r0:r1, 1] = p.real, p.imag
    order = np.argsort(gt[:, _G_CH], kind="stable")
    ch_ptr = np.searchsorted(gt[order, _G_CH], np.arange(bank.n_channels + 1)).astype(np.int64)
    out = (gt, rows, qs, ch_ptr, order.astype(np.int64))
    bank._tables[key] = out
    return out


# ---------------------------------------------------------------------------- kernels
@njit(cache=True, nogil=True)
def _extend(x, b, xe, lo, mode, cval):  # pragma: no cover - compiled
    """``xe[t] = x̃[t + lo]``: signal ``b`` of ``x`` extended by ``mode`` (codes of
    :data:`_MODE_CODE`; 4 is ``"constant"``), in float64."""
    n = x.shape[1]
    m = xe.shape[0]
    t0 = min(max(-lo, 0), m)  # xe[t0:t1] is the signal itself
    t1 = min(max(n - lo, t0), m)
    xs = x[b]
    xe[t0:t1] = xs[t0 + lo:t1 + lo]
    if mode == 4:
        xe[:t0] = cval
        xe[t1:] = cval
        return
    if mode == 1 or (mode == 2 and n == 1):  # constant beyond each end
        xe[:t0] = xs[0]
        xe[t1:] = xs[n - 1]
        return
    # reflect, mirror, wrap: x̃ has period p. One period's worth on each side is read from x
    # (index arithmetic, no division), the rest copied from one period inwards.
    p = 2 * n if mode == 0 else (2 * n - 2 if mode == 2 else n)
    near_l = max(0, -(p - n) - lo)  # xe[near_l:t0] holds j in [-(p - n), 0)
    for t in range(t0 - 1, near_l - 1, -1):
        j = t + lo
        xe[t] = xs[-1 - j] if mode == 0 else (xs[-j] if mode == 2 else xs[j + n])
    for t in range(near_l - 1, -1, -1):
        xe[t] = xe[t + p]
    near_r = min(m, p - lo)  # xe[t1:near_r] holds j in [n, p)
    for t in range(t1, near_r):
        j = t + lo
        xe[t] = xs[2 * n - 1 - j] if mode == 0 else (xs[2 * n - 2 - j] if mode == 2
                                                       else xs[j - n])
    for t in range(max(near_r, t1), m):
        xe[t] = xe[t - p]


@njit(cache=True, nogil=True, fastmath=_FAST)
def _anchor_row(xe, lo, g, rows, qs, n_pad, chunk, reset, k, ere, eim):  # pragma: no cover
    """Anchors ``S_r[(c+1)C]`` of row ``r = r0 + k`` of the group ``g`` (a row of the group
    table) for ``c < n_pad`` into ``ere/eim[k, c]`` (float64)."""
    r0, off, f, rem = g[0], g[4], g[5], g[6]
    r = r0 + k
    n_tot = n_pad + f + 2
    sre = np.empty(n_tot)
    sim = np.empty(n_tot)
    pre_r = np.empty(n_tot)
    pim = np.empty(n_tot)
    qr = qs[r, 0]
    qi = qs[r, 1]
    # the second part of each chunk through slices starting at 0: LLVM vectorises a
    # reduction loop from 0 and left ``range(rem, chunk)`` scalar (3-4x slower, measured)
    qr2 = qr[rem:]
    qi2 = qi[rem:]
    m = chunk - rem
    for p in range(1, n_tot):  # the chunk totals: dot products over the chunk (vectorised)
        base = p * chunk + off - lo
        xs = xe[base: base + rem]
        xs2 = xe[base + rem: base + chunk]
        a = 0.0
        b = 0.0
        for s in range(rem):
            a += xs[s] * qr[s]
            b += xs[s] * qi[s]
        c = 0.0
        d = 0.0
        for s in range(m):
            c += xs2[s] * qr2[s]
            d += xs2[s] * qi2[s]
        pre_r[p] = a
        pim[p] = b
        sre[p] = a + c
        sim[p] = b + d
    every = max(reset, f)  # Horner costs f steps: at most one step per chunk on average
    qcr, qci = rows[r, 4], rows[r, 5]
    qfr, qfi = rows[r, 6], rows[r, 7]
    qgr, qgi = rows[r, 8], rows[r, 9]
    hr = 0.0
    hi = 0.0
    for p in range(n_pad, 0, -1):
        if (n_pad - p) % every == 0:  # Horner over the window's chunks
            hr = pre_r[p + f]
            hi = pim[p + f]
            for j in range(f - 1, -1, -1):
                tr = sre[p + j] + qcr * hr - qci * hi
                hi = sim[p + j] + qci * hr + qcr * hi
                hr = tr
        else:  # one sliding step at the chunk level
            dr = (sre[p] - qfr * sre[p + f] + qfi * sim[p + f]
                  + qfr * pre_r[p + f] - qfi * pim[p + f]
                  - qgr * pre_r[p + f + 1] + qgi * pim[p + f + 1])
            di = (sim[p] - qfr * sim[p + f] - qfi * sre[p + f]
                  + qfr * pim[p + f] + qfi * pre_r[p + f]
                  - qgr * pim[p + f + 1] - qgi * pre_r[p + f + 1])
            tr = dr + qcr * hr - qci * hi
            hi = di + qci * hr + qcr * hi
            hr = tr
        ere[k, p - 1] = hr
        eim[k, p - 1] = hi


@njit(cache=True, nogil=True, fastmath=_FAST)
def _near(xa, xb, ere, eim, c0, w, rows, r0, r1, yr, yi, chunk,
          cplx):  # pragma: no cover - compiled
    """The near-field recursions of rows ``r0 .. r1`` over the ``w`` chunks from ``c0`` side
    by side (chunk ``c0 + l`` in column ``l`` of ``xa``, ``xb``, ``yr``, ``yi``), added into
    ``yr`` (and ``yi`` for complex output), float64. Rows go two at a time (one pass over the
    inputs and the outputs for both). Their states live in arrays allocated here: LLVM then
    knows they alias neither the inputs nor the outputs (a micro-benchmark of the lane loops
    measured 13-23 µs per block of 32 chunks × 8 rows with the states in the caller's
    scratch array, 11-19 µs with them here)."""
    s0r = np.empty(w)
    s0i = np.empty(w)
    s1r = np.empty(w)
    s1i = np.empty(w)
    for r in range(r0, r1, 2):
        pair = r + 1 < r1
        k = r - r0
        r2 = r + 1 if pair else r
        for lane in range(w):
            s0r[lane] = ere[k, c0 + lane]
            s0i[lane] = eim[k, c0 + lane]
            s1r[lane] = ere[k + 1, c0 + lane] if pair else 0.0
            s1i[lane] = eim[k + 1, c0 + lane] if pair else 0.0
        qr, qi, lr, li = rows[r, 0], rows[r, 1], rows[r, 2], rows[r, 3]
        ar, br, ai, bi = rows[r, 10], rows[r, 11], rows[r, 12], rows[r, 13]
        pr, pi, mr, mi = rows[r2, 0], rows[r2, 1], rows[r2, 2], rows[r2, 3]
        cr, dr, ci, di = rows[r2, 10], rows[r2, 11], rows[r2, 12], rows[r2, 13]
        if not pair:  # the second state stays 0 and adds nothing
            cr = dr = ci = di = 0.0
        for ii in range(chunk):
            i = chunk - 1 - ii
            xai = xa[i, :w]
            xbi = xb[i, :w]
            yri = yr[i, :w]
            if cplx:
                yii = yi[i, :w]
                for lane in range(w):
                    x0 = xai[lane]
                    b = xbi[lane]
                    u_r, u_i, v_r, v_i = s0r[lane], s0i[lane], s1r[lane], s1i[lane]
                    nr = qr * u_r - qi * u_i + (x0 - lr * b)
                    ni = qi * u_r + qr * u_i - li * b
                    mr2 = pr * v_r - pi * v_i + (x0 - mr * b)
                    mi2 = pi * v_r + pr * v_i - mi * b
                    s0r[lane] = nr
                    s0i[lane] = ni
                    s1r[lane] = mr2
                    s1i[lane] = mi2
                    yri[lane] += ar * nr + br * ni + cr * mr2 + dr * mi2
                    yii[lane] += ai * nr + bi * ni + ci * mr2 + di * mi2
            else:
                for lane in range(w):
                    x0 = xai[lane]
                    b = xbi[lane]
                    u_r, u_i, v_r, v_i = s0r[lane], s0i[lane], s1r[lane], s1i[lane]
                    nr = qr * u_r - qi * u_i + (x0 - lr * b)
                    ni = qi * u_r + qr * u_i - li * b
                    mr2 = pr * v_r - pi * v_i + (x0 - mr * b)
                    mi2 = pi * v_r + pr * v_i - mi * b
                    s0r[lane] = nr
                    s0i[lane] = ni
                    s1r[lane] = mr2
                    s1i[lane] = mi2
                    yri[lane] += ar * nr + br * ni + cr * mr2 + dr * mi2


@njit(cache=True, nogil=True)
def _setup(x, b, ch, mode, cval, gt, ch_ptr, ch_groups, chunk):  # pragma: no cover - compiled
    """The extended signal ``xe`` (``xe[t] = x̃[t + lo]``) that channel ``ch`` of signal ``b``
    reads, ``lo`` and the largest group's row count."""
    n = x.shape[1]
    n_out = (n + chunk - 1) // chunk
    lo = 0
    hi = n
    r_max = 0
    for k in range(ch_ptr[ch], ch_ptr[ch + 1]):
        g = gt[ch_groups[k]]
        lo = min(lo, g[4])
        hi = max(hi, (n_out + g[5] + 2) * chunk + g[4])
        r_max = max(r_max, g[1] - g[0])
    xe = np.empty(hi - lo)
    _extend(x, b, xe, lo, mode, cval)
    return xe, lo, r_max


@njit(cache=True, nogil=True)
def _job(x, out, b, ch, mode, cval, gt, rows, qs, ch_ptr, ch_groups, chunk,
         reset):  # pragma: no cover - compiled
    """Channel ``ch`` of signal ``b``: ``out[b, ch]`` (real, or re/im interleaved)."""
    n = x.shape[1]
    n_out = (n + chunk - 1) // chunk
    g0, g1 = ch_ptr[ch], ch_ptr[ch + 1]
    if g0 == g1:  # no rows feed this channel
        for j in range(out.shape[2]):
            out[b, ch, j] = 0.0
        return
    xe, lo, r_max = _setup(x, b, ch, mode, cval, gt, ch_ptr, ch_groups, chunk)
    ere = np.empty((g1 - g0, r_max, n_out))
    eim = np.empty((g1 - g0, r_max, n_out))
    for k in range(g1 - g0):
        g = gt[ch_groups[g0 + k]]
        for j in range(g[1] - g[0]):
            _anchor_row(xe, lo, g, rows, qs, n_out, chunk, reset, j, ere[k], eim[k])
    _near_blocks(out, b, ch, n, xe, lo, ere, eim, 0, n_out, gt, rows, ch_ptr, ch_groups, chunk)


@njit(cache=True, nogil=True)
def _near_blocks(out, b, ch, n, xe, lo, ere, eim, c_from, c_to, gt, rows, ch_ptr, ch_groups,
                 chunk):  # pragma: no cover - compiled
    """Outputs of the chunks ``c_from .. c_to`` of channel ``ch`` of signal ``b`` (``n``
    samples) into ``out`` (real, or re/im interleaved), :data:`_LANES` chunks at a time."""
    cplx = out.shape[2] == 2 * n
    g0, g1 = ch_ptr[ch], ch_ptr[ch + 1]
    lanes = min(_LANES, c_to - c_from)
    xa = np.empty((chunk, lanes))
    xb = np.empty((chunk, lanes))
    yr = np.empty((chunk, lanes))
    yi = np.empty((chunk, lanes))
    for c0 in range(c_from, c_to, lanes):
        w = min(lanes, c_to - c0)
        yr[:] = 0.0
        yi[:] = 0.0
        for k in range(g1 - g0):
            g = gt[ch_groups[g0 + k]]
            big_l, off = g[3], g[4]
            # sample i of the w chunks into row i of xa, xb: each row written whole, the
            # chunks read at their stride; unsigned indices, which numba does not wrap
            # around (chunk by chunk into the columns, with signed indices, LLVM wrote the
            # columns with vector scatters: 64 signals of 100,000 samples, sigma 20, one
            # call 34.8 against 29.7 ms)
            base = np.uint64(c0 * chunk + off - lo)
            for i in range(chunk):
                at = base + np.uint64(i)
                for lane in range(w):
                    xa[i, lane] = xe[at]
                    xb[i, lane] = xe[at + np.uint64(big_l)]
                    at += np.uint64(chunk)
            _near(xa, xb, ere[k], eim[k], c0, w, rows, g[0], g[1], yr, yi, chunk, cplx)
        for lane in range(w):
            start = (c0 + lane) * chunk
            stop = min(start + chunk, n)
            for t in range(np.uint64(stop - start)):
                j = np.uint64(start) + t
                if cplx:
                    out[b, ch, np.uint64(2) * j] = yr[t, lane]
                    out[b, ch, np.uint64(2) * j + np.uint64(1)] = yi[t, lane]
                else:
                    out[b, ch, j] = yr[t, lane]


@njit(cache=True, nogil=True, parallel=True)
def _run_split(x, out, mode, cval, gt, rows, qs, ch_ptr, ch_groups, chunk, reset,
               n_parts):  # pragma: no cover - compiled
    """One (signal, channel) job (``x`` holds one signal, ``out`` one channel) spread over
    numba's threads: the anchors row by row, the outputs in ``n_parts`` runs of chunks."""
    n = x.shape[1]
    n_out = (n + chunk - 1) // chunk
    g0, g1 = ch_ptr[0], ch_ptr[1]
    xe, lo, r_max = _setup(x, 0, 0, mode, cval, gt, ch_ptr, ch_groups, chunk)
    ng = g1 - g0
    ere = np.empty((ng, r_max, n_out))
    eim = np.empty((ng, r_max, n_out))
    for t in prange(ng * r_max):
        k = t // r_max
        j = t % r_max
        g = gt[ch_groups[g0 + k]]
        if j < g[1] - g[0]:
            _anchor_row(xe, lo, g, rows, qs, n_out, chunk, reset, j, ere[k], eim[k])
    per = (n_out + n_parts - 1) // n_parts
    for part in prange(n_parts):
        c_from = part * per
        c_to = min(n_out, c_from + per)
        if c_from < c_to:
            _near_blocks(out, 0, 0, n, xe, lo, ere, eim, c_from, c_to, gt, rows, ch_ptr,
                         ch_groups, chunk)


@njit(cache=True, nogil=True)
def _run_serial(x, out, mode, cval, gt, rows, qs, ch_ptr, ch_groups, chunk,
                reset):  # pragma: no cover - compiled
    """Every (signal, channel) job, in order."""
    n_ch = out.shape[1]
    for job in range(x.shape[0] * n_ch):
        _job(x, out, job // n_ch, job % n_ch, mode, cval, gt, rows, qs, ch_ptr, ch_groups,
             chunk, reset)


@njit(cache=True, nogil=True, parallel=True)
def _run_parallel(x, out, mode, cval, gt, rows, qs, ch_ptr, ch_groups, chunk,
                  reset):  # pragma: no cover - compiled
    """Every (signal, channel) job, spread over numba's threads."""
    n_ch = out.shape[1]
    for job in prange(x.shape[0] * n_ch):
        _job(x, out, job // n_ch, job % n_ch, mode, cval, gt, rows, qs, ch_ptr, ch_groups,
             chunk, reset)


# ---------------------------------------------------------------------------- entry point
def numba_apply(bank, rows: torch.Tensor, mode: str, cval: float = 0.0, *,
                out: torch.Tensor | None = None, chunk: int = CHUNK) -> torch.Tensor:
    """Apply ``bank`` to the CPU signals ``rows`` ``(B, N)`` with compiled loops.

    Parameters
    ----------
    bank : SFTBank
        The filter bank.
    rows : torch.Tensor
        ``(B, N)`` real float32 or float64 signals on the CPU (no gradient is recorded:
        callers needing one use the torch engines).
    mode : str
        Boundary mode (:data:`fastmoments.signal.boundary.MODES`), applied inside the loops.
    cval : float
        Value outside the signal for ``mode="constant"``.
    out : torch.Tensor, optional
        ``(B, n_channels, N)`` in the result dtype; written in place when C-contiguous, else
        through a temporary.
    chunk : int
        Near-field recursion length ``C`` (tests vary it).

    Returns
    -------
    torch.Tensor
        ``(B, n_channels, N)``: float32/float64 for a real bank, complex64/complex128 for a
        complex one, in the precision of ``rows`` (``out`` when given).

    Notes
    -----
    The work is ``(B × n_channels)`` independent jobs; they run on
    ``min(torch.get_num_threads(), numba's thread count)`` threads when there are several,
    never more (numba's own setting is restored afterwards). A single long job (one signal,
    one channel: a Gaussian) is split instead: its anchors row by row, its outputs in one run
    of chunks per thread.

    Examples
    --------
    >>> from fastmoments.signal import GaussianFilter
    >>> bank = GaussianFilter(3.0).bank
    >>> x = torch.zeros(1, 41, dtype=torch.float64)
    >>> x[0, 20] = 1.0
    >>> y = numba_apply(bank, x, "reflect")
    >>> y.shape, round(float(y.sum()), 6)
    (torch.Size([1, 1, 41]), 1.0)
    """
    if rows.dtype not in (torch.float32, torch.float64):  # pragma: no cover - callers cast
        raise TypeError(f"rows must be float32 or float64, got {rows.dtype}")
    bsz, n = rows.shape
    cplx = bool(bank.complex_output)
    rdt = (torch.complex64 if rows.dtype == torch.float32 else torch.complex128) if cplx \
        else rows.dtype
    shape = (bsz, bank.n_channels, n)
    target = out
    if out is None or not out.is_contiguous():
        target = torch.empty(shape, dtype=rdt)
    if bsz == 0 or n == 0:
        return out if out is not None else target
    onp = (torch.view_as_real(target) if cplx else target).numpy().reshape(
        bsz, bank.n_channels, -1)
    apply_arrays(bank, rows.detach().contiguous().numpy(), onp, mode, cval, chunk=chunk)
    if out is not None and target is not out:
        out.copy_(target)
        return out
    return target


def apply_arrays(bank, xnp: np.ndarray, onp: np.ndarray, mode: str, cval: float = 0.0, *,
                 chunk: int = CHUNK) -> None:
    """The body of :func:`numba_apply` on NumPy arrays: ``xnp`` ``(B, N)`` C-contiguous
    float32/float64 signals, ``onp`` ``(B, n_channels, N)`` (real; complex results as
    ``(B, n_channels, 2N)`` re/im interleaved) written in place, on
    ``min(torch.get_num_threads(), numba's thread count)`` threads (see :func:`numba_apply`).
    """
    gt, rtab, qs, ch_ptr, ch_groups = _tables(bank, chunk)
    bsz, n = xnp.shape
    jobs = bsz * bank.n_channels
    threads = min(threads_for(8.0 * xnp.size * bank.n_channels), _nb_config.NUMBA_NUM_THREADS)
    split = jobs == 1 and -(-n // chunk) >= 2 * _LANES  # one long job: split it over time
    threads = threads if split else min(threads, jobs)
    args = (xnp, onp, _MODE_CODE[mode], float(cval), gt, rtab, qs, ch_ptr, ch_groups, chunk,
            _RESET)
    if threads > 1:
        before = _nb_get_threads()
        _nb_set_threads(threads)
        try:
            if split:
                _run_split(*args, threads)
            else:
                _run_parallel(*args)
        finally:
            _nb_set_threads(before)
    else:
        _run_serial(*args)


def warm_up() -> None:
    """Load (compile and cache the first time) the kernels for float32 and float64 signals,
    serial and parallel, on a tiny bank."""
    from .sliding import SFTBank

    bank = SFTBank(omega=np.array([0.5]), alpha=np.zeros(1), half=np.array([2]),
                   shift=np.zeros(1, dtype=np.int64), mu=np.ones(1, dtype=complex),
                   nu=np.zeros(1, dtype=complex), channel=np.zeros(1, dtype=np.int64),
                   n_channels=1, complex_output=False)
    for dtype in (torch.float32, torch.float64):
        x = torch.zeros(2, 3, dtype=dtype)
        gt, rtab, qs, ch_ptr, ch_groups = _tables(bank, CHUNK)
        o = np.empty((2, 1, 3), dtype=x.numpy().dtype)
        args = (x.numpy(), o, 0, 0.0, gt, rtab, qs, ch_ptr, ch_groups, CHUNK, _RESET)
        _run_serial(*args)
        _run_parallel(*args)
        _run_split(*args, 2)
