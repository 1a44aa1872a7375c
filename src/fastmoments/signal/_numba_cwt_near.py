"""The near-field recursions of the compiled Morlet CWT (:mod:`._numba_cwt`): for one chunk
of every lane, the rows' states run forward from their anchors and are summed into the
chunk's outputs. Three variants: two rows at a time (the general case), three at a time, and
three at a time for rows whose ``q^{2K} = 1`` (the Morlet's rows: one input difference shared
by all rows, 6 multiply-adds and 2 additions per row and sample instead of 8 and 2). Each is
checked against the float64 double sum in ``tests/signal/test_numba_cwt.py``."""

from __future__ import annotations

from numba import njit

from ._numba_simd import (
    _vadd,
    _vfma,
    _vload,
    _vmul,
    _vsplat,
    _vstore,
    _vsub,
)

__all__: list[str] = []


@njit(cache=True, nogil=True)
def _near(xs, d, big_l, e, cpl, coef, row0, nr, chunk, c, y, v):  # pragma: no cover
    """The near-field recursions of local chunk ``c`` of every lane (segment), rows two at a
    time, summed into ``y[(i * 2 + j) * v + lane]`` (``j``: Re, Im) for the chunk's samples
    ``i``, which it overwrites."""
    for k in range(0, nr + nr % 2, 2):
        s0r = _vload(e, ((2 * k) * cpl + c) * v)
        s0i = _vload(e, ((2 * k + 1) * cpl + c) * v)
        s1r = _vload(e, ((2 * k + 2) * cpl + c) * v)
        s1i = _vload(e, ((2 * k + 3) * cpl + c) * v)
        cf = (row0 + k) * 8
        q0r = _vsplat(coef[cf])
        q0i = _vsplat(coef[cf + 1])
        l0r = _vsplat(coef[cf + 2])
        l0i = _vsplat(coef[cf + 3])
        a0r = _vsplat(coef[cf + 4])
        b0r = _vsplat(coef[cf + 5])
        a0i = _vsplat(coef[cf + 6])
        b0i = _vsplat(coef[cf + 7])
        q1r = _vsplat(coef[cf + 8])
        q1i = _vsplat(coef[cf + 9])
        l1r = _vsplat(coef[cf + 10])
        l1i = _vsplat(coef[cf + 11])
        a1r = _vsplat(coef[cf + 12])
        b1r = _vsplat(coef[cf + 13])
        a1i = _vsplat(coef[cf + 14])
        b1i = _vsplat(coef[cf + 15])
        first = k == 0
        x0row = (c * chunk + d) * v
        xqrow = x0row + big_l * v
        for ii in range(chunk):
            i = chunk - 1 - ii
            x0 = _vload(xs, x0row + i * v)
            xq = _vload(xs, xqrow + i * v)
            u = _vsub(x0, _vmul(l0r, xq))
            w = _vmul(l0i, xq)
            n0r = _vfma(q0r, s0r, _vsub(u, _vmul(q0i, s0i)))
            s0i = _vfma(q0i, s0r, _vsub(_vmul(q0r, s0i), w))
            s0r = n0r
            u = _vsub(x0, _vmul(l1r, xq))
            w = _vmul(l1i, xq)
            n1r = _vfma(q1r, s1r, _vsub(u, _vmul(q1i, s1i)))
            s1i = _vfma(q1i, s1r, _vsub(_vmul(q1r, s1i), w))
            s1r = n1r
            o = i * 2 * v
            if first:
                yr = _vmul(b1r, s1i)
                yi = _vmul(b1i, s1i)
            else:
                yr = _vfma(b1r, s1i, _vload(y, o))
                yi = _vfma(b1i, s1i, _vload(y, o + v))
            yr = _vfma(a0r, s0r, _vfma(b0r, s0i, _vfma(a1r, s1r, yr)))
            yi = _vfma(a0i, s0r, _vfma(b0i, s0i, _vfma(a1i, s1r, yi)))
            _vstore(y, o, yr)
            _vstore(y, o + v, yi)


@njit(cache=True, nogil=True)
def _near_t3(xs, d, big_l, e, cpl, coef, row0, nr, chunk, c, y, v):  # pragma: no cover
    """:func:`_near` in the rows' output basis ``V = M S`` (``M``: the row's output map; the
    recursion ``V[n] = G V[n+1] + m x0 + u xq`` with ``G = M R_q M^{-1}``, the output ``Σ_r
    V_r``: 8 multiply-adds and 2 additions per row and sample instead of 10 multiply-adds),
    three rows at a time (their states and most of their constants fit in the 16 vector
    registers: measured 20 % faster than four rows, whose constants are reloaded)."""
    for k in range(0, nr, 3):
        v0r = _vload(e, ((2 * k) * cpl + c) * v)
        v0i = _vload(e, ((2 * k + 1) * cpl + c) * v)
        v1r = _vload(e, ((2 * k + 2) * cpl + c) * v)
        v1i = _vload(e, ((2 * k + 3) * cpl + c) * v)
        v2r = _vload(e, ((2 * k + 4) * cpl + c) * v)
        v2i = _vload(e, ((2 * k + 5) * cpl + c) * v)
        cf = (row0 + k) * 8
        g000 = _vsplat(coef[cf])
        g001 = _vsplat(coef[cf + 1])
        g010 = _vsplat(coef[cf + 2])
        g011 = _vsplat(coef[cf + 3])
        m0r = _vsplat(coef[cf + 4])
        m0i = _vsplat(coef[cf + 5])
        u0r = _vsplat(coef[cf + 6])
        u0i = _vsplat(coef[cf + 7])
        g100 = _vsplat(coef[cf + 8])
        g101 = _vsplat(coef[cf + 9])
        g110 = _vsplat(coef[cf + 10])
        g111 = _vsplat(coef[cf + 11])
        m1r = _vsplat(coef[cf + 12])
        m1i = _vsplat(coef[cf + 13])
        u1r = _vsplat(coef[cf + 14])
        u1i = _vsplat(coef[cf + 15])
        g200 = _vsplat(coef[cf + 16])
        g201 = _vsplat(coef[cf + 17])
        g210 = _vsplat(coef[cf + 18])
        g211 = _vsplat(coef[cf + 19])
        m2r = _vsplat(coef[cf + 20])
        m2i = _vsplat(coef[cf + 21])
        u2r = _vsplat(coef[cf + 22])
        u2i = _vsplat(coef[cf + 23])
        first = k == 0
        three = k + 2 < nr  # else the third row is padding (zero): skipped
        x0row = (c * chunk + d) * v
        xqrow = x0row + big_l * v
        for ii in range(chunk):
            i = chunk - 1 - ii
            x0 = _vload(xs, x0row + i * v)
            xq = _vload(xs, xqrow + i * v)
            t = _vfma(m0r, x0, _vmul(u0r, xq))
            w = _vfma(m0i, x0, _vmul(u0i, xq))
            n0 = _vfma(g000, v0r, _vfma(g001, v0i, t))
            v0i = _vfma(g010, v0r, _vfma(g011, v0i, w))
            v0r = n0
            t = _vfma(m1r, x0, _vmul(u1r, xq))
            w = _vfma(m1i, x0, _vmul(u1i, xq))
            n1 = _vfma(g100, v1r, _vfma(g101, v1i, t))
            v1i = _vfma(g110, v1r, _vfma(g111, v1i, w))
            v1r = n1
            if three:
                t = _vfma(m2r, x0, _vmul(u2r, xq))
                w = _vfma(m2i, x0, _vmul(u2i, xq))
                n2 = _vfma(g200, v2r, _vfma(g201, v2i, t))
                v2i = _vfma(g210, v2r, _vfma(g211, v2i, w))
                v2r = n2
            o = i * 2 * v
            yr = _vadd(_vadd(v0r, v1r), v2r)
            yi = _vadd(_vadd(v0i, v1i), v2i)
            if not first:
                yr = _vadd(yr, _vload(y, o))
                yi = _vadd(yi, _vload(y, o + v))
            _vstore(y, o, yr)
            _vstore(y, o + v, yi)


@njit(cache=True, nogil=True)
def _near_p3(xs, d, big_l, e, cpl, coef, row0, nr, chunk, c, y, v):  # pragma: no cover
    """:func:`_near_t3` for a group whose rows all have ``q^{2K} = 1`` (the SFT rows of the
    Morlet, ``ω_r = π p / K``, no attenuation): the state ``P = M S'`` of the window's first
    ``2K`` samples, ``S' = S - x̃[n + off + 2K]``, follows ``P[n] = G P[n+1] + m (x̃[n + off] -
    x̃[n + off + 2K])``, one input shared by every row (6 multiply-adds and 2 additions per
    row and sample instead of 8 and 2); the window's last sample enters the output once per
    sample, ``W = Σ_r P_r + x̃[n + off + 2K] Σ_r m_r``. Three rows at a time, as
    :func:`_near_t3`."""
    sr = coef[row0 * 8 + 4] - coef[row0 * 8 + 4]
    si = sr
    for k in range(nr):
        sr += coef[(row0 + k) * 8 + 4]
        si += coef[(row0 + k) * 8 + 5]
    msr = _vsplat(sr)
    msi = _vsplat(si)
    x0row = (c * chunk + d) * v
    xerow = x0row + (big_l - 1) * v
    xend = _vload(xs, xerow + chunk * v)  # x̃[(c + 1) C + off + 2K]: S' = S - xend there
    for k in range(0, nr, 3):
        cf = (row0 + k) * 8
        g000 = _vsplat(coef[cf])
        g001 = _vsplat(coef[cf + 1])
        g010 = _vsplat(coef[cf + 2])
        g011 = _vsplat(coef[cf + 3])
        m0r = _vsplat(coef[cf + 4])
        m0i = _vsplat(coef[cf + 5])
        g100 = _vsplat(coef[cf + 8])
        g101 = _vsplat(coef[cf + 9])
        g110 = _vsplat(coef[cf + 10])
        g111 = _vsplat(coef[cf + 11])
        m1r = _vsplat(coef[cf + 12])
        m1i = _vsplat(coef[cf + 13])
        g200 = _vsplat(coef[cf + 16])
        g201 = _vsplat(coef[cf + 17])
        g210 = _vsplat(coef[cf + 18])
        g211 = _vsplat(coef[cf + 19])
        m2r = _vsplat(coef[cf + 20])
        m2i = _vsplat(coef[cf + 21])
        v0r = _vsub(_vload(e, ((2 * k) * cpl + c) * v), _vmul(m0r, xend))
        v0i = _vsub(_vload(e, ((2 * k + 1) * cpl + c) * v), _vmul(m0i, xend))
        v1r = _vsub(_vload(e, ((2 * k + 2) * cpl + c) * v), _vmul(m1r, xend))
        v1i = _vsub(_vload(e, ((2 * k + 3) * cpl + c) * v), _vmul(m1i, xend))
        v2r = _vsub(_vload(e, ((2 * k + 4) * cpl + c) * v), _vmul(m2r, xend))
        v2i = _vsub(_vload(e, ((2 * k + 5) * cpl + c) * v), _vmul(m2i, xend))
        first = k == 0
        three = k + 2 < nr  # else the third row is padding (zero): skipped
        for ii in range(chunk):
            i = chunk - 1 - ii
            x0 = _vload(xs, x0row + i * v)
            xe = _vload(xs, xerow + i * v)
            u = _vsub(x0, xe)
            n0 = _vfma(g000, v0r, _vfma(g001, v0i, _vmul(m0r, u)))
            v0i = _vfma(g010, v0r, _vfma(g011, v0i, _vmul(m0i, u)))
            v0r = n0
            n1 = _vfma(g100, v1r, _vfma(g101, v1i, _vmul(m1r, u)))
            v1i = _vfma(g110, v1r, _vfma(g111, v1i, _vmul(m1i, u)))
            v1r = n1
            if three:
                n2 = _vfma(g200, v2r, _vfma(g201, v2i, _vmul(m2r, u)))
                v2i = _vfma(g210, v2r, _vfma(g211, v2i, _vmul(m2i, u)))
                v2r = n2
            o = i * 2 * v
            yr = _vadd(_vadd(v0r, v1r), v2r)
            yi = _vadd(_vadd(v0i, v1i), v2i)
            if first:
                yr = _vfma(msr, xe, yr)
                yi = _vfma(msi, xe, yi)
            else:
                yr = _vadd(yr, _vload(y, o))
                yi = _vadd(yi, _vload(y, o + v))
            _vstore(y, o, yr)
            _vstore(y, o + v, yi)
