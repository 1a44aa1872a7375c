r"""The parity folds of the box engine on the CPU, as one compiled pass (numba).

The same sums as :mod:`.fold_kernels` (see there and :func:`fastmoments.box.engine.fold`): the
part of parity class :math:`s` is :math:`f_s = \sum_a (-1)^{s \cdot a} f \circ \rho_a` over
the reflections :math:`\rho_a` of the folded axes, each sample read once and each part
written once, with the butterflies in the order of the torch folds (the first axis first;
the reverse for :func:`unfold`), so the three paths give the same bits. The torch folds
cost a flip, an addition and a subtraction per axis, several passes over the data each.

Arrays are ``(B, D, H, W)`` (images: ``D = 1``, not folded); parts are indexed
``4 s_D + 2 s_H + s_W`` and sized ``ceil(N/2)`` (even) or ``floor(N/2)`` (odd) on folded
axes. Imported lazily by the engine (``import fastmoments`` does not import numba);
compiled with ``cache=True``.
"""

from __future__ import annotations

from numba import njit, prange

__all__ = ["fold", "unfold"]


@njit(cache=True)
def _halves(d, h, w, fz, fy, fx):  # pragma: no cover - compiled
    """Sizes of the odd (``floor(N/2)``, 0 unfolded) and even (the rest) parts per axis."""
    hz, hy, hx = d // 2 if fz else 0, h // 2 if fy else 0, w // 2 if fx else 0
    return hz, hy, hx, d - hz, h - hy, w - hx


@njit(parallel=True, cache=True)
def fold(x, p0, p1, p2, p3, p4, p5, p6, p7, fz, fy, fx):  # pragma: no cover - compiled
    """Write the parts of ``x`` into ``p0 .. p7`` (unused ones are never touched)."""
    bsz, d, h, w = x.shape
    hz, hy, hx, cz, cy, cx = _halves(d, h, w, fz, fy, fx)
    zero = x.dtype.type(0)
    for bi in prange(bsz * cz):
        b = bi // cz
        i = bi - b * cz
        zi, zh = i, d - 1 - i
        mz = i < hz
        for j in range(cy):
            yh = h - 1 - j
            my = j < hy
            for k in range(cx):
                xh = w - 1 - k
                mx = k < hx
                v000 = x[b, zi, j, k]
                v001 = x[b, zi, j, xh] if mx else zero
                v010 = x[b, zi, yh, k] if my else zero
                v011 = x[b, zi, yh, xh] if my and mx else zero
                v100 = x[b, zh, j, k] if mz else zero
                v101 = x[b, zh, j, xh] if mz and mx else zero
                v110 = x[b, zh, yh, k] if mz and my else zero
                v111 = x[b, zh, yh, xh] if mz and my and mx else zero
                a000, a100 = v000 + v100, v000 - v100
                a001, a101 = v001 + v101, v001 - v101
                a010, a110 = v010 + v110, v010 - v110
                a011, a111 = v011 + v111, v011 - v111
                b000, b010 = a000 + a010, a000 - a010
                b001, b011 = a001 + a011, a001 - a011
                b100, b110 = a100 + a110, a100 - a110
                b101, b111 = a101 + a111, a101 - a111
                p0[b, i, j, k] = b000 + b001
                if fx and mx:
                    p1[b, i, j, k] = b000 - b001
                if fy and my:
                    p2[b, i, j, k] = b010 + b011
                    if fx and mx:
                        p3[b, i, j, k] = b010 - b011
                if fz and mz:
                    p4[b, i, j, k] = b100 + b101
                    if fx and mx:
                        p5[b, i, j, k] = b100 - b101
                    if fy and my:
                        p6[b, i, j, k] = b110 + b111
                        if fx and mx:
                            p7[b, i, j, k] = b110 - b111


@njit(parallel=True, cache=True)
def unfold(x, p0, p1, p2, p3, p4, p5, p6, p7, fz, fy, fx):  # pragma: no cover - compiled
    """Write into ``x`` the adjoint of :func:`fold` applied to the parts ``p0 .. p7``."""
    bsz, d, h, w = x.shape
    hz, hy, hx, cz, cy, cx = _halves(d, h, w, fz, fy, fx)
    zero = x.dtype.type(0)
    for bi in prange(bsz * cz):
        b = bi // cz
        i = bi - b * cz
        zh = d - 1 - i
        mz = i < hz
        for j in range(cy):
            yh = h - 1 - j
            my = j < hy
            for k in range(cx):
                xh = w - 1 - k
                mx = k < hx
                c000 = p0[b, i, j, k]
                c001 = p1[b, i, j, k] if fx and mx else zero
                c010 = p2[b, i, j, k] if fy and my else zero
                c011 = p3[b, i, j, k] if fy and my and fx and mx else zero
                c100 = p4[b, i, j, k] if fz and mz else zero
                c101 = p5[b, i, j, k] if fz and mz and fx and mx else zero
                c110 = p6[b, i, j, k] if fz and mz and fy and my else zero
                c111 = p7[b, i, j, k] if fz and mz and fy and my and fx and mx else zero
                b000, b001 = c000 + c001, c000 - c001
                b010, b011 = c010 + c011, c010 - c011
                b100, b101 = c100 + c101, c100 - c101
                b110, b111 = c110 + c111, c110 - c111
                a000, a010 = b000 + b010, b000 - b010
                a001, a011 = b001 + b011, b001 - b011
                a100, a110 = b100 + b110, b100 - b110
                a101, a111 = b101 + b111, b101 - b111
                x[b, i, j, k] = a000 + a100
                if mx:
                    x[b, i, j, xh] = a001 + a101
                if my:
                    x[b, i, yh, k] = a010 + a110
                    if mx:
                        x[b, i, yh, xh] = a011 + a111
                if mz:
                    x[b, zh, j, k] = a000 - a100
                    if mx:
                        x[b, zh, j, xh] = a001 - a101
                    if my:
                        x[b, zh, yh, k] = a010 - a110
                        if mx:
                            x[b, zh, yh, xh] = a011 - a111
