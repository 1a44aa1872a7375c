"""The CPU engine of the CWT: the SFT recursions of many chunks side by side in SIMD registers.

This module imports numba (and llvmlite) at its top; :mod:`._apply` imports it only when the
engine runs (``engine="numba"`` on a CWT bank, or ``engine="auto"`` for a large CPU CWT,
:func:`.routes.cwt_simd`), so ``import fastmoments`` never loads numba.

**The transform.** Notation as in :mod:`.chunked` and :mod:`._numba_sft`: a channel (one scale
of a CWT) is one row group of ``R`` rows (11 for the default Morlet fit) sharing the window
``L = 2K + 1`` and the offset ``off = n0 - K``,

    W[n] = Σ_r A_r Re S_r[n] + B_r Im S_r[n],    S_r[n] = Σ_{s<L} x̃[n + off + s] q_r^s,

``q_r = e^{-α_r + iω_r}`` (``|q_r| ≤ 1``), ``A_r``, ``B_r`` complex, ``x̃`` the signal extended
by the boundary mode (Yamashita & Wakahara 2022, Eqs. 22-25 and 34-37 for the recursion, Sec.
3 for the Morlet rows). Cut the outputs into chunks of ``C`` samples. Inside chunk ``c`` the
window sums follow the backward recursion

    S[n] = x̃[n + off] + q S[n + 1] - q^L x̃[n + off + L],

started at the chunk's anchor ``S[(c + 1)C]`` and run for ``C`` steps. The anchors come from
the chunk totals ``σ[p] = Σ_{s<C} x̃[pC + off + s] q^s`` and the partial totals ``ρ[p]`` (the
first ``L mod C`` terms) by the chunk-level recursion of :mod:`._numba_sft`: Horner's rule
over the window's ``F = ⌊L/C⌋`` chunks every ``max(16, F)`` chunks and the sliding step

    S[pC] = σ[p] + Q S[(p+1)C] - Q^F (σ[p+F] - ρ[p+F]) - Q^{F+1} ρ[p+F+1],   Q = q^C,

in between, in float64.

**The output basis.** Write row ``r``'s output map ``(Re S, Im S) → (Re W, Im W)`` as the
real 2 × 2 matrix ``M_r = [[Re A, Re B], [Im A, Im B]]`` and run the recursion on ``V_r = M_r
S_r`` instead: ``V[n] = G V[n+1] + M e_1 x̃[n+off] - M (q^L) x̃[n+off+L]`` with ``G = M R_q
M^{-1}`` (``R_q``: multiplication by ``q``), and ``W = Σ_r V_r``. That is 8 multiply-adds and
2 additions per row and sample instead of 10 multiply-adds. ``G`` is similar to ``R_q``; its
rounding moves its eigenvalues by about ``κ(M) ε``, and for the Morlet rows ``κ(M) = (|d| +
|c|)/(|d| - |c|) ≈ 1.01`` (``M z = c z + d z̄``, ``|c| ≤ 0.006 |d|``). Groups with a row of
``κ(M) >`` :data:`_KAPPA_MAX` keep the plain form.

**Periodic rows.** The SFT rows of the Morlet have ``ω_r = π p_r / K`` and no attenuation, so
``q_r^{2K} = 1`` and the window's last sample has the weight of its first. The sum of the
first ``2K`` samples, ``S' = S - x̃[n + off + 2K]``, then follows ``S'[n] = u[n] + q S'[n+1]``
with ``u[n] = x̃[n + off] - x̃[n + off + 2K]`` shared by every row, and in the output basis
``P = M S'``: ``P[n] = G P[n+1] + m u[n]`` (``m = M e_1``), ``W = Σ_r P_r + x̃[n + off + 2K]
Σ_r m_r``: 6 multiply-adds and 2 additions per row and sample. Groups whose rows all have
``|q^{2K} - 1| ≤`` ``_PERIODIC`` (1e-13; 1.4e-14 measured over the default fits) run this
form (:func:`_near_p3`); treating ``q^{2K}`` as 1 adds at most ``C · 1e-13 Σ_r |m_r|
max|x̃|`` between two anchors, far below the rounding bound below. Measured on the 145-scale
CWT of 65536 float64 samples (one thread, σ = 27-150): the near field of a scale took 0.18
instead of 0.21 ms, beside 0.07 ms of chunk totals, 0.01 ms of anchors and 0.04 ms of
stores.

**How it runs.** The signal is cut into ``V`` segments of ``⌈N / (V C)⌉`` chunks each, stored
side by side (``xs[j, l] = x̃[l N_s + j]``), so that one aligned vector load gives sample ``j``
of the ``V`` segments for every scale and both reads (``off`` and ``off + L``): the ``V``
lanes of a 256-bit register (``V = 8`` float32 or ``4`` float64 values, the AVX2 width) run
``V`` independent recursions. The kernels use LLVM vector intrinsics (numba's ``@intrinsic``)
so that the states of three rows stay in registers for the whole chunk. Per row and output
sample the near field costs the 8 multiply-adds above on ``V`` lanes; the chunk totals 2
more, in the working precision (each total is a sum of ``C`` products, read the same way
wherever it enters an anchor, so no error accumulates along the signal); the anchors a few
per chunk (float64, vectors of four lanes). Scales whose window is short (``L ≤``
:data:`DIRECT_MAX`) are cheaper as a direct convolution with the group's taps ``h[k] = Σ_r
A_r Re q_r^k + B_r Im q_r^k`` (the same kernel, :meth:`.chunked.GroupTables.taps`); the Morlet
taps satisfy ``h[K + j] = conj(h[K - j])`` to rounding (checked: :data:`_SYMMETRIC`), so each
pair of taps costs two multiply-adds. The outputs are transposed back in registers and each
output sample is written once, with streaming stores when the output is 32-byte aligned.
On a 2-core AMD EPYC virtual machine (one thread) the 64-scale CWT of 102400 float32
samples takes about a third of the torch chunked engine's time
(``benchmarks/signal_numba.py``).

**Error.** Float32 signals are computed in float32: the near-field recursion of ``C`` steps
(``C = 128``) from an anchor rounded once adds at most about ``(C + 2) ε_32`` times the rows'
``Σ_r (|A_r| + |B_r|) Σ_s |x̃| |q_r|^s`` (rounding of the states and of ``G``), reset at every
chunk, so the float32 error does not grow with the signal length; the totals add about ``2
max(16, F) ε_32`` times the same sum through the anchors. Float64 signals run the same loops
in float64. tests/signal/test_numba_cwt.py checks ``(C + 2 max(16, F) + 16) ε`` times that
sum against the float64 double sum with the fitted kernel, float32 against float64, and a
300000-sample signal. Measured on the 64-scale CWT of 102400 float32 samples: at most 3.3e-6
of each scale's largest coefficient (1.8e-6 with ``C = 64``, which runs 8 % slower), twenty
times below the fitted wavelet's own error (relative RMSE ≤ 1e-4).
"""

from __future__ import annotations

import numpy as np
import torch
from numba import config as _nb_config
from numba import njit, prange

from .._numba import threads as numba_threads
from .._threads import threads_for
from ._numba_cwt_near import _near, _near_p3, _near_t3
from ._numba_cwt_tables import DIRECT_MAX, _tables, eligible
from ._numba_sft import _extend
from ._numba_simd import (
    _tstore,
    _vadd,
    _vfma,
    _vload,
    _vmul,
    _vsplat,
    _vstore,
    _vstore_cplx,
    _vstore_narrow,
    _vstore_wide,
    _vsub,
)
from .boundary import MODES

__all__ = ["CHUNK", "DIRECT_MAX", "eligible", "numba_cwt_apply", "warm_up"]

CHUNK = 128  # near-field recursion length (float32 error ∝ CHUNK; per-chunk costs ∝ 1/CHUNK)
_RESET = 16  # chunk-level recursion steps between two Horner re-anchorings
_MODE_CODE = {m: i for i, m in enumerate(MODES)}

# ---------------------------------------------------------------------------- kernels
@njit(cache=True, nogil=True)
def _segments(xe, xs, ns, v):  # pragma: no cover - compiled
    """``xs[j * v + l] = xe[l * ns + j]``: the ``v`` segments of the extended signal side by
    side (zero past the end of ``xe``)."""
    m = xe.shape[0]
    rows = xs.shape[0] // v
    for l in range(v):
        base = l * ns
        for j in range(rows):
            t = base + j
            xs[j * v + l] = xe[t] if t < m else 0.0


@njit(cache=True, nogil=True, inline="always")
def _chunk_sums(xs, xa, xb, qa, qb, qc, qd, count, v, ar, ai, br, bi, cr, ci, dr,
                di):  # pragma: no cover - compiled
    """``count`` samples of two rows' chunk sums into the accumulators, for two chunks at
    once (lanes = segments): the chunk at ``xa`` into ``a``/``b``, the one at ``xb`` into
    ``c``/``d``; ``qa``, ``qb`` (``qc``, ``qd``) are Re, Im of the first (second) row's
    powers of ``q``."""
    for s in range(count):
        x = _vload(xs, xa + s * v)
        z = _vload(xs, xb + s * v)
        p = _vsplat(qa[s])
        ar = _vfma(x, p, ar)
        cr = _vfma(z, p, cr)
        p = _vsplat(qb[s])
        ai = _vfma(x, p, ai)
        ci = _vfma(z, p, ci)
        p = _vsplat(qc[s])
        br = _vfma(x, p, br)
        dr = _vfma(z, p, dr)
        p = _vsplat(qd[s])
        bi = _vfma(x, p, bi)
        di = _vfma(z, p, di)
    return ar, ai, br, bi, cr, ci, dr, di


@njit(cache=True, nogil=True, inline="always")
def _store_sums(tot, base, step, v, ar, ai, br, bi, cr, ci, dr,
                di):  # pragma: no cover - compiled
    """The accumulators of :func:`_chunk_sums` into ``tot`` (float64) at ``base``: the second
    chunk ``4 v`` further, the second row ``step`` further."""
    _vstore_wide(tot, base, ar)
    _vstore_wide(tot, base + v, ai)
    _vstore_wide(tot, base + 4 * v, cr)
    _vstore_wide(tot, base + 5 * v, ci)
    _vstore_wide(tot, base + step, br)
    _vstore_wide(tot, base + step + v, bi)
    _vstore_wide(tot, base + step + 4 * v, dr)
    _vstore_wide(tot, base + step + 5 * v, di)


@njit(cache=True, nogil=True)
def _totals(xs, d, chunk, rem, qp, row0, nr, npad, n_c, c_to, v, tot,
            zv):  # pragma: no cover - compiled
    """Chunk totals of the group's rows, lanes = segments, for the local chunks ``c < c_to``
    (``c_to`` even, at most ``n_c``; past ``cpl``: the next segment's first chunks, which the
    lane's anchors read): ``tot[((k n_c + c) 4 + j) v + l]`` with ``j`` = Re σ, Im σ, Re ρ,
    Im ρ (float64; each sum in the working precision), two rows of two chunks at a time (each
    power of ``q`` loaded once for both chunks)."""
    step = n_c * 4 * v
    for c in range(0, c_to, 2):
        xa = (c * chunk + d) * v
        xb = xa + chunk * v
        for k in range(0, nr + nr % 2, 2):
            q0 = (row0 + k) * 2 * chunk
            qa = qp[q0: q0 + chunk]
            qb = qp[q0 + chunk: q0 + 2 * chunk]
            qc = qp[q0 + 2 * chunk: q0 + 3 * chunk]
            qd = qp[q0 + 3 * chunk: q0 + 4 * chunk]
            zero = _vload(zv, 0)
            ar, ai, br, bi, cr, ci, dr, di = _chunk_sums(
                xs, xa, xb, qa, qb, qc, qd, rem, v, zero, zero, zero, zero, zero, zero, zero,
                zero)
            _store_sums(tot, ((k * n_c + c) * 4 + 2) * v, step, v, ar, ai, br, bi, cr, ci,
                        dr, di)
            # the rest from index 0 of shifted slices (LLVM schedules a loop from 0 better)
            ar, ai, br, bi, cr, ci, dr, di = _chunk_sums(
                xs, xa + rem * v, xb + rem * v, qa[rem:], qb[rem:], qc[rem:], qd[rem:],
                chunk - rem, v, ar, ai, br, bi, cr, ci, dr, di)
            _store_sums(tot, ((k * n_c + c) * 4) * v, step, v, ar, ai, br, bi, cr, ci, dr,
                        di)


@njit(cache=True, nogil=True, fastmath={"contract", "reassoc"})
def _totals_tail(xe, base, chunk, rem, qp, row0, nr, n_c, c_from, cpl, v, tot,
                 zero):  # pragma: no cover - compiled
    """The totals of the local chunks ``c_from .. n_c`` (``n_c - cpl ≤ cpl``) of every lane:
    for lane ``l < v - 1`` those of lane ``l + 1``'s chunk ``c - cpl`` (the same samples:
    the same stored values, copied), for the last lane dot products over ``xe`` from
    ``base``, that lane's first sample (in the working precision, like :func:`_totals`)."""
    for k in range(nr):
        for c in range(c_from, n_c):
            for j in range(4):
                o = ((k * n_c + c) * 4 + j) * v
                src = ((k * n_c + c - cpl) * 4 + j) * v + 1
                for lane in range(v - 1):
                    tot[o + lane] = tot[src + lane]
    m = chunk - rem
    for c in range(c_from, n_c):
        st = base + c * chunk
        xa = xe[st: st + rem]
        xb = xe[st + rem: st + chunk]
        for k in range(nr):
            q0 = (row0 + k) * 2 * chunk
            qa = qp[q0: q0 + rem]
            qb = qp[q0 + chunk: q0 + chunk + rem]
            qa2 = qp[q0 + rem: q0 + chunk]
            qb2 = qp[q0 + chunk + rem: q0 + 2 * chunk]
            a = zero
            b = zero
            for s_ in range(rem):
                a += xa[s_] * qa[s_]
                b += xa[s_] * qb[s_]
            e = zero
            f = zero
            for s_ in range(m):
                e += xb[s_] * qa2[s_]
                f += xb[s_] * qb2[s_]
            o = (k * n_c + c) * 4 * v + v - 1
            tot[o + 2 * v] = a
            tot[o + 3 * v] = b
            tot[o] = a + e
            tot[o + v] = b + f


@njit(cache=True, nogil=True, inline="always")
def _horner(tot, o, f, v, qcr, qci):  # pragma: no cover - compiled
    """``S[pC] = Σ_{j<F} Q^j σ[p+j] + Q^F ρ[p+F]`` by Horner's rule (``o``: the offset of
    chunk ``p``'s totals in ``tot``)."""
    hr = _vload(tot, o + f * 4 * v + 2 * v)
    hi = _vload(tot, o + f * 4 * v + 3 * v)
    for j in range(f - 1, -1, -1):
        oj = o + j * 4 * v
        t = _vfma(qcr, hr, _vsub(_vload(tot, oj), _vmul(qci, hi)))
        hi = _vfma(qci, hr, _vfma(qcr, hi, _vload(tot, oj + v)))
        hr = t
    return hr, hi


@njit(cache=True, nogil=True, inline="always")
def _slide(tot, o, f, v, hr, hi, qcr, qci, qfr, qfi, qgr, qgi):  # pragma: no cover
    """``S[pC] = σ[p] + Q S[(p+1)C] - Q^F (σ - ρ)[p+F] - Q^{F+1} ρ[p+F+1]`` (``o``: the offset
    of chunk ``p``'s totals; ``hr``, ``hi``: ``S[(p+1)C]``)."""
    of = o + f * 4 * v
    og = of + 4 * v
    sr1 = _vsub(_vload(tot, of), _vload(tot, of + 2 * v))
    si1 = _vsub(_vload(tot, of + v), _vload(tot, of + 3 * v))
    pr2 = _vload(tot, og + 2 * v)
    pi2 = _vload(tot, og + 3 * v)
    dr = _vsub(_vfma(qfi, si1, _vfma(qgi, pi2, _vload(tot, o))),
               _vfma(qfr, sr1, _vmul(qgr, pr2)))
    di = _vsub(_vload(tot, o + v),
               _vfma(qfr, si1, _vfma(qfi, sr1, _vfma(qgr, pi2, _vmul(qgi, pr2)))))
    t = _vfma(qcr, hr, _vsub(dr, _vmul(qci, hi)))
    return t, _vfma(qci, hr, _vfma(qcr, hi, di))


@njit(cache=True, nogil=True)
def _anchors(tot, r64, n_rows, row0, nr, npad, f, cpl, n_c, v, reset,
             e):  # pragma: no cover - compiled
    """``E_k = T_k S_k[(c+1)C]`` of every local chunk ``c < cpl`` of every lane into
    ``e[((2k + j) cpl + c) v + l]`` (``j``: Re, Im; ``T_k``: the basis of the near field;
    rounded once to the working precision; padding rows zero): per row, backward over the
    chunks, float64 vectors of four lanes (two of them interleaved for float32's eight):
    Horner over the window's chunks every ``max(reset, F)`` chunks and at the lane's end, the
    chunk-level sliding step in between."""
    every = max(reset, f)
    two = v == 8
    for k in range(nr, npad):
        for j in range(2 * cpl * v):
            e[(2 * k) * cpl * v + j] = 0.0
    for k in range(nr):
        r = row0 + k
        qcr = _vsplat(r64[r])
        qci = _vsplat(r64[n_rows + r])
        qfr = _vsplat(r64[2 * n_rows + r])
        qfi = _vsplat(r64[3 * n_rows + r])
        qgr = _vsplat(r64[4 * n_rows + r])
        qgi = _vsplat(r64[5 * n_rows + r])
        t00 = _vsplat(r64[6 * n_rows + r])
        t01 = _vsplat(r64[7 * n_rows + r])
        t10 = _vsplat(r64[8 * n_rows + r])
        t11 = _vsplat(r64[9 * n_rows + r])
        tk = k * n_c * 4 * v
        ar = qcr
        ai = qcr
        br = qcr
        bi = qcr
        left = 0  # chunk-level steps until the next Horner re-anchoring
        for cc in range(cpl):
            c = cpl - 1 - cc  # E = S[(c + 1) C]: window from local chunk c + 1
            o = tk + (c + 1) * 4 * v
            if left == 0:
                ar, ai = _horner(tot, o, f, v, qcr, qci)
                if two:
                    br, bi = _horner(tot, o + 4, f, v, qcr, qci)
                left = every
            else:
                ar, ai = _slide(tot, o, f, v, ar, ai, qcr, qci, qfr, qfi, qgr, qgi)
                if two:
                    br, bi = _slide(tot, o + 4, f, v, br, bi, qcr, qci, qfr, qfi, qgr, qgi)
            left -= 1
            er = ((2 * k) * cpl + c) * v
            ei = ((2 * k + 1) * cpl + c) * v
            _vstore_narrow(e, er, _vfma(t00, ar, _vmul(t01, ai)))
            _vstore_narrow(e, ei, _vfma(t10, ar, _vmul(t11, ai)))
            if two:
                _vstore_narrow(e, er + 4, _vfma(t00, br, _vmul(t01, bi)))
                _vstore_narrow(e, ei + 4, _vfma(t10, br, _vmul(t11, bi)))


@njit(cache=True, nogil=True)
def _store(y, o, ch, c, chunk, n, ns, v, nt):  # pragma: no cover - compiled
    """Samples of local chunk ``c`` of every lane (``y`` as :func:`_near` leaves it) into row
    ``ch`` of ``o`` (re, im interleaved), up to sample ``n``: transposed in registers
    (:func:`_tstore`) where every lane's samples exist, else one by one."""
    row = o[ch]
    if (v - 1) * ns + (c + 1) * chunk <= n:
        for i0 in range(0, chunk, v):
            _tstore(y, 2 * i0 * v, row, 2 * (c * chunk + i0), 2 * ns, nt)
        return
    for lane in range(v):
        start = lane * ns + c * chunk
        stop = min(start + chunk, n)
        for j in range(start, stop):
            i = j - start
            row[2 * j] = y[(2 * i) * v + lane]
            row[2 * j + 1] = y[(2 * i + 1) * v + lane]


@njit(cache=True, nogil=True)
def _direct(xe, d, taps, t0, big_l, o, ch, n, v, acc, zv, nt):  # pragma: no cover - compiled
    """``W[n] = Σ_{k<L} h[k] x̃[n + off + k]`` (``xe`` from ``off = d + lo``) into row ``ch`` of
    ``o``, four vectors of outputs at a time."""
    blk = 4 * v
    for n0 in range(0, n, blk):
        z = _vload(zv, 0)
        r0 = z
        r1 = z
        r2 = z
        r3 = z
        i0 = z
        i1 = z
        i2 = z
        i3 = z
        base = n0 + d
        for k in range(big_l):
            hr = _vsplat(taps[t0 + 2 * k])
            hi = _vsplat(taps[t0 + 2 * k + 1])
            x0 = _vload(xe, base + k)
            x1 = _vload(xe, base + k + v)
            x2 = _vload(xe, base + k + 2 * v)
            x3 = _vload(xe, base + k + 3 * v)
            r0 = _vfma(hr, x0, r0)
            i0 = _vfma(hi, x0, i0)
            r1 = _vfma(hr, x1, r1)
            i1 = _vfma(hi, x1, i1)
            r2 = _vfma(hr, x2, r2)
            i2 = _vfma(hi, x2, i2)
            r3 = _vfma(hr, x3, r3)
            i3 = _vfma(hi, x3, i3)
        if n0 + blk <= n:
            row = o[ch]
            p = 2 * n0
            _vstore_cplx(row, p, r0, i0, nt)
            _vstore_cplx(row, p + 2 * v, r1, i1, nt)
            _vstore_cplx(row, p + 4 * v, r2, i2, nt)
            _vstore_cplx(row, p + 6 * v, r3, i3, nt)
            continue
        _vstore(acc, 0, r0)
        _vstore(acc, v, r1)
        _vstore(acc, 2 * v, r2)
        _vstore(acc, 3 * v, r3)
        _vstore(acc, 4 * v, i0)
        _vstore(acc, 5 * v, i1)
        _vstore(acc, 6 * v, i2)
        _vstore(acc, 7 * v, i3)
        for j in range(n - n0):
            o[ch, 2 * (n0 + j)] = acc[j]
            o[ch, 2 * (n0 + j) + 1] = acc[blk + j]


@njit(cache=True, nogil=True)
def _direct_seg(xs, dc, taps, t0, half, cpl, chunk, c, y, v):  # pragma: no cover - compiled
    """A direct kernel with ``h[K + j] = conj(h[K - j])`` (``taps`` from ``t0``: ``h[K + j]``,
    ``j ≤ K``) on the segments side by side (``xs``; ``dc``: the row of the window's centre
    for local sample 0): ``W[n] = h[K] x̃[c] + Σ_{j≥1} Re h[K+j] (x̃[c+j] + x̃[c-j]) + i Im
    h[K+j] (x̃[c+j] - x̃[c-j])``, two multiply-adds per pair of taps, for local chunk ``c`` of
    every lane into ``y`` (as :func:`_near` leaves it), two samples and two taps at a time
    (aligned loads, each shared by two taps)."""
    hs = taps[t0: t0 + 2 * half + 2]
    h0r = _vsplat(hs[0])
    h0i = _vsplat(hs[1])
    pairs = half // 2
    for i0 in range(0, chunk, 2):
        r = c * chunk + i0 + dc
        x0 = _vload(xs, r * v)
        x1 = _vload(xs, (r + 1) * v)
        a0 = _vmul(h0r, x0)
        b0 = _vmul(h0i, x0)
        a1 = _vmul(h0r, x1)
        b1 = _vmul(h0i, x1)
        e0 = _vmul(h0r, _vsub(x0, x0))
        f0 = e0
        e1 = e0
        f1 = e0
        for jj in range(pairs):
            j = 2 * jj + 1
            hr = _vsplat(hs[2 * j])
            hi = _vsplat(hs[2 * j + 1])
            gr = _vsplat(hs[2 * j + 2])
            gi = _vsplat(hs[2 * j + 3])
            pa = _vload(xs, (r + j) * v)
            pb = _vload(xs, (r + j + 1) * v)
            pc = _vload(xs, (r + j + 2) * v)
            ma = _vload(xs, (r - j - 1) * v)
            mb = _vload(xs, (r - j) * v)
            mc = _vload(xs, (r - j + 1) * v)
            a0 = _vfma(hr, _vadd(pa, mb), a0)
            b0 = _vfma(hi, _vsub(pa, mb), b0)
            a1 = _vfma(hr, _vadd(pb, mc), a1)
            b1 = _vfma(hi, _vsub(pb, mc), b1)
            e0 = _vfma(gr, _vadd(pb, ma), e0)
            f0 = _vfma(gi, _vsub(pb, ma), f0)
            e1 = _vfma(gr, _vadd(pc, mb), e1)
            f1 = _vfma(gi, _vsub(pc, mb), f1)
        if half % 2:
            j = half
            hr = _vsplat(hs[2 * j])
            hi = _vsplat(hs[2 * j + 1])
            pa = _vload(xs, (r + j) * v)
            pb = _vload(xs, (r + j + 1) * v)
            mb = _vload(xs, (r - j) * v)
            mc = _vload(xs, (r - j + 1) * v)
            a0 = _vfma(hr, _vadd(pa, mb), a0)
            b0 = _vfma(hi, _vsub(pa, mb), b0)
            a1 = _vfma(hr, _vadd(pb, mc), a1)
            b1 = _vfma(hi, _vsub(pb, mc), b1)
        o = i0 * 2 * v
        _vstore(y, o, _vadd(a0, e0))
        _vstore(y, o + v, _vadd(b0, f0))
        _vstore(y, o + 2 * v, _vadd(a1, e1))
        _vstore(y, o + 3 * v, _vadd(b1, f1))


@njit(cache=True, nogil=True)
def _sizes(n, gt, chunk, v):  # pragma: no cover - compiled
    """``(lo, hi, cpl, rows, tot_len)``: the extended signal covers positions ``lo .. hi``;
    each of the ``v`` segments holds ``cpl`` output chunks and ``rows`` samples side by side
    (the segments overlap by the windows); ``tot_len`` floats of chunk totals."""
    n_out = (n + chunk - 1) // chunk
    cpl = (n_out + v - 1) // v
    ns = cpl * chunk
    lo = 0
    for g in range(gt.shape[0]):
        lo = min(lo, gt[g, 4])
    hi = n
    rows = 0
    tot_len = 0
    for g in range(gt.shape[0]):
        big_l, off, f, npad = gt[g, 3], gt[g, 4], gt[g, 5], gt[g, 1]
        if gt[g, 8]:
            hi = max(hi, v * ns + 4 * v + off + big_l + v)
            if gt[g, 9]:  # symmetric: on the segments
                rows = max(rows, ns + off - lo + big_l + 2)
        else:
            d = off - lo
            rows = max(rows, ns + d + big_l + 1, (cpl + f + 3) * chunk + d + 1)
            tot_len = max(tot_len, (cpl + f + 3) * 4 * npad * v)
    if rows:
        hi = max(hi, lo + (v - 1) * ns + rows)
    return lo, hi, cpl, rows, tot_len


@njit(cache=True, nogil=True)
def _signal(x, o, b, mode, cval, gt, coef, qp, r64, taps, tap_ptr, chunk, reset, v, nt, g_from,
            g_to):  # pragma: no cover - compiled
    """The groups ``g_from .. g_to`` of signal ``b`` of ``x`` into ``o`` ``(n_channels,
    2N)`` (re, im interleaved)."""
    n = x.shape[1]
    lo, hi, cpl, rows, tot_len = _sizes(n, gt, chunk, v)
    ns = cpl * chunk
    xe = np.empty(hi - lo, dtype=x.dtype)
    _extend(x, b, xe, lo, mode, cval)
    xs = np.empty(max(rows, 1) * v, dtype=x.dtype)
    if rows:
        _segments(xe, xs, ns, v)
    rmax = 4
    for g in range(gt.shape[0]):
        rmax = max(rmax, gt[g, 1])
    n_rows = r64.shape[0] // 10
    tot = np.empty(max(tot_len, 1))
    e = np.empty(2 * rmax * cpl * v, dtype=x.dtype)
    y = np.empty(2 * chunk * v, dtype=x.dtype)
    acc = np.empty(8 * v, dtype=x.dtype)
    zv = np.zeros(v, dtype=x.dtype)
    for g in range(g_from, g_to):
        row0, npad, ch, big_l, off, f, rem, nr = gt[g, 0], gt[g, 1], gt[g, 2], gt[g, 3], \
            gt[g, 4], gt[g, 5], gt[g, 6], gt[g, 7]
        d = off - lo
        if gt[g, 8]:
            if gt[g, 9]:
                half = (big_l - 1) // 2
                for c in range(cpl):
                    _direct_seg(xs, d + half, taps, tap_ptr[g], half, cpl, chunk, c, y, v)
                    _store(y, o, ch, c, chunk, n, ns, v, nt)
            else:
                _direct(xe, d, taps, tap_ptr[g], big_l, o, ch, n, v, acc, zv, nt)
            continue
        n_c = (cpl + f + 3) // 2 * 2
        head = cpl + cpl % 2
        if n_c - cpl <= cpl and head < n_c:  # the tails are the next lanes' heads
            _totals(xs, d, chunk, rem, qp, row0, nr, npad, n_c, head, v, tot, zv)
            _totals_tail(xe, (v - 1) * ns + d, chunk, rem, qp, row0, nr, n_c, head, cpl, v,
                         tot, zv[0])
        else:
            _totals(xs, d, chunk, rem, qp, row0, nr, npad, n_c, n_c, v, tot, zv)
        _anchors(tot, r64, n_rows, row0, nr, npad, f, cpl, n_c, v, reset, e)
        for c in range(cpl):
            if gt[g, 10]:
                _near_p3(xs, d, big_l, e, cpl, coef, row0, nr, chunk, c, y, v)
            elif gt[g, 9]:
                _near_t3(xs, d, big_l, e, cpl, coef, row0, nr, chunk, c, y, v)
            else:
                _near(xs, d, big_l, e, cpl, coef, row0, nr, chunk, c, y, v)
            _store(y, o, ch, c, chunk, n, ns, v, nt)


@njit(cache=True, nogil=True)
def _run_serial(x, out, mode, cval, gt, coef, qp, r64, taps, tap_ptr, chunk, reset,
                v, nt):  # pragma: no cover - compiled
    """Every signal, every group, in order (``out`` ``(B, n_channels, 2N)``)."""
    for b in range(x.shape[0]):
        _signal(x, out[b], b, mode, cval, gt, coef, qp, r64, taps, tap_ptr, chunk, reset, v,
                nt, 0, gt.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def _run_parallel(x, out, mode, cval, gt, coef, qp, r64, taps, tap_ptr, chunk, reset, v,
                  nt, parts):  # pragma: no cover - compiled
    """Every signal split into ``parts`` runs of groups (channels), the (signal, run) jobs
    spread over numba's threads."""
    ng = gt.shape[0]
    per = (ng + parts - 1) // parts
    for job in prange(x.shape[0] * parts):
        b = job // parts
        g0 = (job % parts) * per
        g1 = min(ng, g0 + per)
        if g0 < g1:
            _signal(x, out[b], b, mode, cval, gt, coef, qp, r64, taps, tap_ptr, chunk,
                    reset, v, nt, g0, g1)


# ---------------------------------------------------------------------------- entry point
def numba_cwt_apply(bank, rows: torch.Tensor, mode: str, cval: float = 0.0, *,
                    out: torch.Tensor | None = None, chunk: int = CHUNK) -> torch.Tensor:
    """Apply the complex ``bank`` (one row group per channel: :func:`eligible`) to the CPU
    signals ``rows`` ``(B, N)``.

    Parameters
    ----------
    bank : SFTBank
        A complex-output bank, one row group per channel (a Morlet transform or CWT).
    rows : torch.Tensor
        ``(B, N)`` real float32 or float64 signals on the CPU.
    mode : str
        Boundary mode (:data:`fastmoments.signal.boundary.MODES`), applied inside the loops.
    cval : float
        Value outside the signal for ``mode="constant"``.
    out : torch.Tensor, optional
        ``(B, n_channels, N)`` complex64/complex128; written in place when C-contiguous,
        else through a temporary.
    chunk : int
        Near-field recursion length ``C``, a multiple of 8 (tests vary it).

    Returns
    -------
    torch.Tensor
        ``(B, n_channels, N)`` complex64 (float32 signals) or complex128 (``out`` when
        given).

    Raises
    ------
    ValueError
        For a bank this engine does not run (:func:`eligible`) or a ``chunk`` that is not a
        positive multiple of 8.

    Notes
    -----
    The (signal, channel) work runs on ``min(torch.get_num_threads(), numba's thread
    count)`` threads: each signal's channels are split into as many runs as threads.

    Examples
    --------
    >>> from fastmoments.signal import MorletTransform
    >>> bank = MorletTransform(40.0).bank
    >>> x = torch.zeros(1, 801, dtype=torch.float64)
    >>> x[0, 400] = 1.0
    >>> y = numba_cwt_apply(bank, x, "reflect")
    >>> h = bank.kernel(np.arange(-5, 6))[0]  # y[n] = Σ_j h[j] x[n - j]
    >>> bool(np.allclose(y[0, 0, 395:406].numpy(), h, atol=1e-12))  # y[400 + j] = h[j]
    True
    """
    if rows.dtype not in (torch.float32, torch.float64):  # pragma: no cover - callers cast
        raise TypeError(f"rows must be float32 or float64, got {rows.dtype}")
    if not eligible(bank):  # pragma: no cover - callers check
        raise ValueError("numba_cwt_apply needs a complex bank with one row group per channel")
    if chunk <= 0 or chunk % 8:
        raise ValueError(f"chunk must be a positive multiple of 8, got {chunk}")
    bsz, n = rows.shape
    rdt = torch.complex64 if rows.dtype == torch.float32 else torch.complex128
    shape = (bsz, bank.n_channels, n)
    target = out
    if out is None or not out.is_contiguous():
        target = torch.empty(shape, dtype=rdt)
    if bsz == 0 or n == 0:
        return out if out is not None else target
    xnp = rows.detach().contiguous().numpy()
    onp = torch.view_as_real(target).numpy().reshape(bsz, bank.n_channels, 2 * n)
    apply_arrays(bank, xnp, onp, mode, cval, chunk=chunk)
    if out is not None and target is not out:
        out.copy_(target)
        return out
    return target


def apply_arrays(bank, xnp: np.ndarray, onp: np.ndarray, mode: str, cval: float = 0.0, *,
                 chunk: int = CHUNK) -> None:
    """The body of :func:`numba_cwt_apply` on NumPy arrays: ``xnp`` ``(B, N)`` C-contiguous
    float32/float64, ``onp`` ``(B, n_channels, 2N)`` (re, im interleaved) written in place."""
    v = 8 if xnp.dtype == np.float32 else 4
    gt, coef, qp, r64, taps, tap_ptr = _tables(bank, chunk, xnp.dtype)
    threads = min(threads_for(16.0 * xnp.size * gt.shape[0]), _nb_config.NUMBA_NUM_THREADS,
                  gt.shape[0] * xnp.shape[0])
    # streaming stores need 32-byte aligned rows (the results this package allocates are
    # 64-byte aligned); they skip the read of the output's cache lines (a 64-scale CWT of
    # 10^5 samples writes 52 MB: 27 against 50 ms on a 2-core AMD EPYC)
    nt = onp.ctypes.data % 32 == 0 and (onp.shape[-1] * onp.itemsize) % 32 == 0
    args = (xnp, onp, _MODE_CODE[mode], float(cval), gt, coef, qp, r64, taps, tap_ptr, chunk,
            _RESET, v, nt)
    if threads > 1:  # four runs of groups per thread, handed out one at a time
        with numba_threads(threads):  # (each group's output the same whatever run has it)
            _run_parallel(*args, min(gt.shape[0], max(1, -(-4 * threads // xnp.shape[0]))))
    else:
        _run_serial(*args)


def warm_up() -> None:
    """Load (compile and cache the first time) the kernels for float32 and float64 signals,
    serial and parallel, on a tiny bank."""
    from .sliding import SFTBank

    half = np.array([2, 2, 60, 60])
    bank = SFTBank(omega=np.array([0.5, 0.7, 0.05, 0.07]), alpha=np.zeros(4), half=half,
                   shift=np.zeros(4, dtype=np.int64), mu=np.ones(4, dtype=complex),
                   nu=np.zeros(4, dtype=complex), channel=np.array([0, 0, 1, 1]),
                   n_channels=2, complex_output=True)
    for dtype in (np.float32, np.float64):
        x = np.zeros((2, 3), dtype=dtype)
        o = np.empty((2, 2, 6), dtype=dtype)
        v = 8 if dtype == np.float32 else 4
        gt, coef, qp, r64, taps, tap_ptr = _tables(bank, CHUNK, dtype)
        args = (x, o, 0, 0.0, gt, coef, qp, r64, taps, tap_ptr, CHUNK, _RESET, v, False)
        _run_serial(*args)
        _run_parallel(*args, 2)
