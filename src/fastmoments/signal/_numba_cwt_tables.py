"""The tables of the CPU CWT's numba kernels (:mod:`._numba_cwt`): which banks they take,
and each bank's row groups, output maps, powers and direct taps in the working precision.
"""

from __future__ import annotations

import numpy as np

from .chunked import _powers

__all__ = ["DIRECT_MAX", "eligible"]

_KAPPA_MAX = 4.0  # rows whose output map is this well conditioned run in its basis
_PERIODIC = 1e-13  # rows with |q^{2K} - 1| <= this share one input (._numba_cwt._near_p3)
_SYMMETRIC = 1e-13  # a direct kernel this close to h[-k] = conj(h[k]) is applied as such
DIRECT_MAX = 88  # windows up to this length: direct convolution (cheaper below ~11 L/8 ...)


# ---------------------------------------------------------------------------- tables
def eligible(bank) -> bool:
    """Whether this engine runs ``bank``: complex output, exactly one row group per
    channel."""
    key = "numba-cwt-eligible"
    if key not in bank._tables:
        chans = [g[2] for g in bank.groups]
        bank._tables[key] = (bool(bank.complex_output) and len(set(chans)) == len(chans)
                             == bank.n_channels)
    return bank._tables[key]


def _tables(bank, chunk: int, dtype: np.dtype):
    """Tables of ``bank`` for chunk length ``chunk`` in the working ``dtype`` (cached).

    Returns ``(gt, coef, qp, r64, taps, tap_ptr)``: per group ``gt[g] = (row0, rows padded to a
    multiple of 4, channel, L, off, F, rem, rows, direct)``; per (padded) row ``coef`` = (Re q,
    Im q, Re q^L, Im q^L, Re A, Re B, Im A, Im B) and ``qp[row, 0/1, s] = Re/Im q^s`` (``s <
    C``) in ``dtype``; ``r64`` = ``q^C``, ``q^{FC}``, ``q^{(F+1)C}`` (float64); the direct
    groups' taps ``h[k]`` (re, im interleaved) from ``tap_ptr[g]``.
    """
    key = ("numba-cwt", chunk, np.dtype(dtype).str)
    hit = bank._tables.get(key)
    if hit is not None:
        return hit
    gts, coefs, qps, r64s, taps, tap_ptr = [], [], [], [], [], [0]
    row = 0
    for r0, r1, ch, half, shift in bank.groups:
        nr = r1 - r0
        npad = -(-nr // 12) * 12  # whole pairs, triples and quads of rows (zero padding)
        big_l = 2 * half + 1
        f, rem = divmod(big_l, chunk)
        direct = big_l <= DIRECT_MAX
        alpha, omega = bank.alpha[r0:r1], bank.omega[r0:r1]
        wk = np.exp(half * (alpha - 1j * omega))
        a = np.asarray(bank.mu[r0:r1] * wk.real + bank.nu[r0:r1] * wk.imag, dtype=np.complex128)
        b = np.asarray(bank.nu[r0:r1] * wk.real - bank.mu[r0:r1] * wk.imag, dtype=np.complex128)
        pw = _powers(alpha, omega, np.array([1, big_l, chunk, f * chunk, (f + 1) * chunk]))
        # the output map of row r, (Re S, Im S) -> (Re W, Im W), as a real 2 x 2 matrix
        mm = np.zeros((nr, 2, 2))
        mm[:, 0, 0], mm[:, 0, 1], mm[:, 1, 0], mm[:, 1, 1] = a.real, b.real, a.imag, b.imag
        sv = np.linalg.svd(mm, compute_uv=False)
        form = int(bool(np.all(sv[:, 1] > sv[:, 0] / _KAPPA_MAX)))
        # rows with q^{2K} = 1 share the input difference of their recursions
        periodic = form and not direct and bool(np.all(
            np.abs(_powers(alpha, omega, np.array([2 * half]))[:, 0] - 1.0) <= _PERIODIC))
        gts.append((row, npad, ch, big_l, shift - half, f, rem, nr, int(direct), form,
                    int(periodic)))
        c = np.zeros((npad, 8))
        tr = np.zeros((npad, 4))
        if form:  # state V = M S: V[n] = G V[n+1] + M e_1 x0 - M q^L xq, output Σ V
            rot = np.zeros((nr, 2, 2))
            rot[:, 0, 0], rot[:, 0, 1] = pw[:, 0].real, -pw[:, 0].imag
            rot[:, 1, 0], rot[:, 1, 1] = pw[:, 0].imag, pw[:, 0].real
            g = mm @ rot @ np.linalg.inv(mm)
            n1 = -np.einsum("rij,rj->ri", mm, np.stack([pw[:, 1].real, pw[:, 1].imag], -1))
            c[:nr, 0], c[:nr, 1], c[:nr, 2], c[:nr, 3] = g[:, 0, 0], g[:, 0, 1], g[:, 1, 0], \
                g[:, 1, 1]
            c[:nr, 4], c[:nr, 5], c[:nr, 6], c[:nr, 7] = a.real, a.imag, n1[:, 0], n1[:, 1]
            tr[:nr] = mm.reshape(nr, 4)
        else:
            c[:nr, 0], c[:nr, 1] = pw[:, 0].real, pw[:, 0].imag
            c[:nr, 2], c[:nr, 3] = pw[:, 1].real, pw[:, 1].imag
            c[:nr, 4], c[:nr, 5], c[:nr, 6], c[:nr, 7] = a.real, b.real, a.imag, b.imag
            tr[:nr, 0] = tr[:nr, 3] = 1.0
        r64 = np.zeros((npad, 10))
        for j in range(3):
            r64[:nr, 2 * j], r64[:nr, 2 * j + 1] = pw[:, 2 + j].real, pw[:, 2 + j].imag
        r64[:, 6:] = tr
        qp = np.zeros((npad, 2, chunk))
        p = _powers(alpha, omega, np.arange(chunk))
        qp[:nr, 0], qp[:nr, 1] = p.real, p.imag
        if direct:
            k = _powers(alpha, omega, np.arange(big_l))  # (R, L)
            h = (a[:, None] * k.real + b[:, None] * k.imag).sum(0)
            sym = np.abs(h[::-1] - np.conj(h)).max() <= _SYMMETRIC * np.abs(h).max()
            if sym:  # h[K + j] = conj(h[K - j]) up to rounding: pairs of taps share products
                h = 0.5 * (h + np.conj(h[::-1]))[half:]
            gts[-1] = (*gts[-1][:9], int(sym), 0)
            taps.append(np.stack([h.real, h.imag], axis=-1).reshape(-1))
        else:
            taps.append(np.zeros(0))
        tap_ptr.append(tap_ptr[-1] + taps[-1].size)
        coefs.append(c)
        qps.append(qp)
        r64s.append(r64)
        row += npad
    out = (np.array(gts, dtype=np.int64),
           np.ascontiguousarray(np.concatenate(coefs).astype(dtype).reshape(-1)),
           np.ascontiguousarray(np.concatenate(qps).astype(dtype).reshape(-1)),
           np.ascontiguousarray(np.concatenate(r64s).T.reshape(-1)),
           np.ascontiguousarray(np.concatenate(taps).astype(dtype)),
           np.array(tap_ptr, dtype=np.int64))
    bank._tables[key] = out
    return out
