r"""Parity classes as one batch on float16 halves (``precision="fp16x3"``, large jobs).

With :math:`\alpha = \beta` the box engine folds its input into :math:`2^d` parity classes
(:func:`fastmoments.box.engine.fold`), each a problem on half of the pixels per axis with
the even or the odd rows of every axis's table: half of the multiply-adds of the plain
products. Run class by class, a 512^3 volume's classes are small products (one wave of
tiles or less on an H100) and a few hundred launches, slower than no parity at all
(``git show e675642:benchmarks/results/box_tensor_cores.md``). Here the classes are one
batch instead:

* every axis's two tables are stacked into one :class:`StackedOp`, the odd one padded with
  zero rows and columns to the even one's size, split into float16 halves with one scale
  and with row and column exponents that bound both tables (the larger of the two sums),
  so that the classes share every scale of the halves pipeline; the products read the
  table of each batch entry's class (:attr:`StackedOp.split`, one table per batch entry);
* the folded parts are written side by side, class-major, into one buffer
  (``(2^d B, ...)``), split into halves at once, and every stage is one product per
  block of degrees for all classes;
* the block limits of the total-degree saving use the even class's degrees, which cover
  the odd class's (one degree higher); what a class computes beyond its set is dropped by
  :func:`interleave`, which writes the dense coefficients from the class-major ones and
  zeroes every entry outside the set (no zero fill first);
* the reconstruction's coefficients go the other way in one pass,
  :func:`split_classes`: gathered per class, masked to the set and split into halves.

Class ``c`` holds the parity bits ``(c >> (d - 1 - a)) & 1`` per axis ``a`` (the order of
:func:`fastmoments.box.engine._classes`); the batch index of item ``b`` of class ``c``
is ``c B + b``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from .._launches import launch
from .._triton import HAVE_TRITON, tl, triton
from . import triton_gemm

__all__ = ["StackedOp", "interleave", "split_classes", "stacked"]


@dataclass(frozen=True)
class StackedOp:
    """One axis's even and odd tables for a batch of parity classes (see the module notes).

    Duck-types the parts of :class:`~fastmoments.box.engine.AxisOp` that the halves stages
    use: ``degrees`` (the even class's, ``0, 2, 4, ...``), ``npix``, ``nrows``, ``spacing``
    and :meth:`rows_upto`; :meth:`rows` gives the split table rows of every batch entry and
    ``exponents`` the shared row and column exponents (as
    :func:`~fastmoments.box.triton_gemm.table_exponents`)."""

    split: triton_gemm.SplitOperand
    exponents: tuple[torch.Tensor, torch.Tensor, int]
    degrees: tuple[int, ...]
    npix: int

    @property
    def nrows(self) -> int:
        return len(self.degrees)

    @property
    def spacing(self) -> int:
        return 2

    @property
    def symmetric(self) -> bool:
        return False

    def rows_upto(self, degree: int) -> int:
        """Rows whose even degree is ``<= degree`` (the odd class's rows of a degree up to
        ``degree`` are among them)."""
        return max(0, min(self.nrows, degree // 2 + 1)) if degree >= 0 else 0

    def rows(self, j0: int, j1: int) -> triton_gemm.SplitOperand:
        """Rows ``j0:j1`` of every batch entry's table, as halves (views)."""
        s = self.split
        return triton_gemm.SplitOperand(s.hi[:, j0:j1], s.lo[:, j0:j1], s.inv_scale)


def stacked(op, axis: int, nsp: int, batch: int) -> StackedOp:
    """The :class:`StackedOp` of the symmetric :class:`~fastmoments.box.engine.AxisOp`
    ``op`` (axis ``axis`` of ``nsp``) for ``batch`` items per class; kept with ``op``
    (:meth:`~fastmoments.box.engine.AxisOp.memo`)."""
    even, odd = op.halves

    def make() -> StackedOp:
        r, c = even.nrows, even.npix
        a = torch.zeros((2, r, c), dtype=torch.float64, device=even.full.device)
        a[0] = even.full.double()
        a[1, :odd.nrows, :odd.npix] = odd.full.double()
        s = triton_gemm.split_constant(a.float())
        bits = torch.tensor([(k >> (nsp - 1 - axis)) & 1 for k in range(1 << nsp)],
                            device=a.device).repeat_interleave(batch)
        hi = triton_gemm._padded((bits.numel(), r, c), torch.float16, a.device)
        lo = triton_gemm._padded((bits.numel(), r, c), torch.float16, a.device)
        hi.copy_(s.hi.index_select(0, bits))
        lo.copy_(s.lo.index_select(0, bits))
        m = a.abs()  # exponents for the larger of the two tables' sums: both fit
        return StackedOp(triton_gemm.SplitOperand(hi, lo, s.inv_scale),
                         triton_gemm.l1_exponents(m.sum(2).amax(0), m.sum(1).amax(0)),
                         tuple(range(0, 2 * r, 2)), c)

    return op.memo(("stacked", axis, nsp, batch), make)


if HAVE_TRITON:
    from .gemm_epilogue import store_halves

    @triton.jit
    def _interleave_kernel(src_ptr, dst_ptr, B, P0, P1, P2, s_c, s_0, s_1, order,
                           TOTAL: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
        """Dense ``dst[b, n0, n1, n2]`` (contiguous) from class-major ``src[c B + b, n0 // 2,
        n1 // 2, n2 // 2]`` (rows contiguous), ``c`` the parity bits of ``(n0, n1, n2)``;
        0 outside the set; ``ROWS`` rows ``(b, n0, n1)`` per program."""
        first = tl.program_id(0).to(tl.int64) * ROWS
        row = first + tl.arange(0, ROWS)[:, None]
        n1 = row % P1
        n0 = (row // P1) % P0
        b = row // (P1 * P0)
        n2 = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[None, :]
        inside = (n2 < P2) & (row < B * P0 * P1)
        if TOTAL:
            keep = inside & (n0 + n1 + n2 <= order)
        else:
            keep = inside & (n0 <= order) & (n1 <= order) & (n2 <= order)
        cls = 4 * (n0 % 2) + 2 * (n1 % 2) + (n2 % 2)
        off = (cls * B + b) * s_c + (n0 // 2) * s_0 + (n1 // 2) * s_1 + n2 // 2
        v = tl.where(keep, tl.load(src_ptr + off, mask=keep, other=0.0), 0.0)
        tl.store(dst_ptr + row * P2 + n2, v, mask=inside)

    @triton.jit
    def _split_classes_kernel(src_ptr, hi_ptr, lo_ptr, B, P0, P1, P2, R0, R1, R2,
                              s_b, s_0, s_1, d_c, d_0, d_1, order, scale, NCLS: tl.constexpr,
                              TOTAL: tl.constexpr, BLOCK: tl.constexpr):
        """Class-major halves ``hi + lo = scale * src[b, 2 r0 + s0, 2 r1 + s1, 2 r2 + s2]``
        at ``[c B + b, r0, r1, r2]`` (``c`` the parity bits ``s0 s1 s2``), 0 outside the
        set and beyond the coefficients. One program makes the rows of the two classes
        ``s2 = 0, 1`` that read one row of ``src``: it reads ``2 BLOCK`` entries of it at
        once and splits them into the even and the odd ones (0.43 against 0.63 ms for the
        coefficients of the 512^3 job on an H100 when each class read every other entry
        of the row itself; measured by ``benchmarks/box_tensor_cores.py``)."""
        pid = tl.program_id(0).to(tl.int64)
        pair = pid % (NCLS // 2)  # the class bits but the last: 2 pair + s2 is the class
        row = pid // (NCLS // 2)
        r1 = row % R1
        r0 = (row // R1) % R0
        b = row // (R1 * R0)
        c0 = 2 * pair
        n0 = 2 * r0 + (c0 >> 2) % 2
        n1 = 2 * r1 + (c0 >> 1) % 2
        n2 = tl.program_id(1) * (2 * BLOCK) + tl.arange(0, 2 * BLOCK)
        inside = (n0 < P0) & (n1 < P1) & (n2 < P2)
        if TOTAL:
            keep = inside & (n0 + n1 + n2 <= order)
        else:
            keep = inside & (n0 <= order) & (n1 <= order) & (n2 <= order)
        v = tl.load(src_ptr + b * s_b + n0 * s_0 + n1 * s_1 + n2, mask=keep, other=0.0)
        even, odd = tl.split(tl.reshape(tl.where(keep, v * scale, 0.0), (BLOCK, 2)))
        r2 = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        at = r0 * d_0 + r1 * d_1 + r2
        store_halves(hi_ptr, lo_ptr, (c0 * B + b) * d_c + at, even, r2 < R2)
        store_halves(hi_ptr, lo_ptr, ((c0 + 1) * B + b) * d_c + at, odd, r2 < R2)


def _tiles(width: int, what: str) -> tuple[int, int, int]:
    """``(ROWS, BLOCK, warps)`` of the interleave and the split of the classes: one block
    across a row of up to 1024 entries; the interleave takes rows per program up to about
    4096 entries, with 8 warps (0.33 against 0.53 ms with one row of 256 and 4 warps on an
    H100, 512^3 job), the split one source row per program (its ``ROWS`` is not used:
    several rows per program ran 1.5-2x slower,
    ``benchmarks/box_tensor_cores.py``); small tiles under the
    interpreter."""
    if os.environ.get("TRITON_INTERPRET", "") == "1":
        return 2, 32, 1
    block = min(triton.next_power_of_2(max(width, 16)), 1024)
    if what == "split":
        return 1, block, 4
    return max(4096 // block, 1), block, 8


def _as_volumes(t: torch.Tensor, nsp: int) -> torch.Tensor:
    """``(B, [D,] H, W)`` as ``(B, D, H, W)`` (a depth of 1 for images)."""
    return t if nsp == 3 else t.unsqueeze(1)


def interleave(cm: torch.Tensor, nsp: int, batch: int, shape: tuple[int, ...], order: int,
               total: bool) -> torch.Tensor:
    """The dense coefficients ``(batch, *shape)`` from the class-major ``cm``
    ``(2^nsp batch, R_0, ..., R_{nsp-1})`` (rows contiguous), 0 outside the set (total
    degree ``<= order`` with ``total``, else every degree ``<= order``)."""
    src = _as_volumes(cm, nsp)
    if src.stride(-1) != 1:
        src = src.contiguous()
    dst = torch.empty((batch, *shape), dtype=cm.dtype, device=cm.device)
    p = (1, *shape) if nsp == 2 else tuple(shape)
    rows = batch * p[0] * p[1]
    if rows and p[2]:
        nrows, block, warps = _tiles(p[2], "interleave")
        grid = (triton.cdiv(rows, nrows), triton.cdiv(p[2], block))
        launch(_interleave_kernel, grid, src, dst, batch, *p, src.stride(0), src.stride(1),
               src.stride(2), order, TOTAL=total, ROWS=nrows, BLOCK=block, num_warps=warps)
    return dst


def split_classes(c: torch.Tensor, nsp: int, rows: tuple[int, ...], order: int, total: bool,
                  top: float) -> triton_gemm.Halves | None:
    """The parity classes of the dense coefficients ``c`` ``(B, P_0, ..., P_{nsp-1})``
    side by side, class-major ``(2^nsp B, *rows)``, masked to the set and split into
    float16 halves with one scale that brings the bound ``top`` of ``|c|`` into
    :math:`[2^{14}, 2^{15})` (as :func:`~fastmoments.box.triton_gemm.split_scaled`,
    rows of 64 entries or more start 16-aligned); ``None`` when that scale is beyond
    :data:`~fastmoments.box.triton_gemm.MAX_EXPONENT` or ``top`` is not finite."""
    base = triton_gemm.scale_exponent(top)
    if base is None:
        return None
    b, ncls = c.shape[0], 1 << nsp
    src = _as_volumes(c, nsp)
    if src.stride(-1) != 1:
        src = src.contiguous()
    r = (1, *rows) if nsp == 2 else tuple(rows)
    p = tuple(src.shape[1:])
    row = r[2]
    prow = triton_gemm.padded_row(row)
    hi = torch.empty((ncls * b, *r[:2], prow), dtype=torch.float16, device=c.device)
    lo = torch.empty_like(hi)
    if hi.numel():
        _, block, warps = _tiles(row, "split")
        grid = (ncls // 2 * b * r[0] * r[1], triton.cdiv(row, block))
        launch(_split_classes_kernel, grid, src, hi, lo, b, *p, *r, src.stride(0),
               src.stride(1), src.stride(2), hi.stride(0), hi.stride(1), hi.stride(2),
               order, 2.0 ** base, NCLS=ncls, TOTAL=total, BLOCK=block, num_warps=warps)
    hi, lo = hi[..., :row], lo[..., :row]
    if nsp == 2:
        hi, lo = hi.squeeze(1), lo.squeeze(1)
    return triton_gemm.Halves(hi, lo, base, (None,) * nsp)
