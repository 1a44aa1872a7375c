"""The stores shared by the box engine's float16-halves kernels: :func:`store_halves`, the
one rounding of a float32 value into ``hi + lo`` (the splits, the folds, the products),
:func:`store_tile`, the epilogue of the halves products (:mod:`.triton_gemm`,
:mod:`.halves_tma`): factors, the mask of entries outside the set, and the stores; and
:func:`raise_largest`, the largest magnitude a kernel finds on the way (the fold, the
interleave and the split of the parity classes), kept in a vector of :data:`MAXIMA`
slots (:func:`maxima`, :func:`maxima_view`). The kernels' helpers are defined only where
Triton is installed (the importers import them under ``HAVE_TRITON``)."""

from __future__ import annotations

import torch

from .._triton import HAVE_TRITON, tl, triton

__all__ = ["MAXIMA", "magnitude_bits", "maxima", "maxima_view", "raise_largest", "store_halves",
           "store_tile"]

#: Slots of the vectors in which kernels raise the largest magnitude they read or write: the
#: atomic maxima of hundreds of thousands of programs spread over this many addresses (on
#: one address they queued, and the interleave of the 512^3 job of
#: ``benchmarks/box_tensor_cores.py`` took 0.2 ms longer on an H100).
MAXIMA = 1024


def maxima(device: torch.device) -> torch.Tensor:
    """A new vector of :data:`MAXIMA` zeros (float32) for :func:`raise_largest`; its largest
    entry is the magnitude found (NaN when a NaN was seen)."""
    from .block_copy import zeros

    return zeros((MAXIMA,), torch.float32, device)


def maxima_view(top: torch.Tensor | None, data: torch.Tensor,
                what: str) -> torch.Tensor | None:
    """``top`` (see :func:`maxima`) as the int32 vector a kernel raises its maxima in, after
    checking it: a contiguous float32 vector, and float32 ``data`` (whose magnitudes the
    kernel compares as float32 bits); ``None`` for ``None``."""
    if top is None:
        return None
    if (top.dtype != torch.float32 or top.ndim != 1 or not top.numel()
            or not top.is_contiguous() or data.dtype != torch.float32):
        raise ValueError(f"{what}: a vector of maxima (float32, contiguous) takes float32 "
                         f"data, got {top.dtype} {tuple(top.shape)} for {data.dtype}")
    return top.view(torch.int32)


if HAVE_TRITON:

    @triton.jit
    def magnitude_bits(v):
        """``|v|`` (float32) as int32 bits: non-negative floats order as their bits, and
        NaN's bits beat every other (a float maximum on the GPU drops NaN)."""
        return tl.abs(v).to(tl.int32, bitcast=True)

    @triton.jit
    def raise_largest(top_ptr, bits, NTOP: tl.constexpr):
        """Raise the largest of this program's :func:`magnitude_bits` ``bits`` in slot
        ``program % NTOP`` of ``top_ptr`` (int32) by an atomic maximum. A program whose
        ``bits`` are all 0 takes no atomic."""
        m = tl.max(bits)
        if m > 0:
            pid = ((tl.program_id(0) * tl.num_programs(1) + tl.program_id(1))
                   * tl.num_programs(2) + tl.program_id(2))
            tl.atomic_max(top_ptr + pid % NTOP, m)

    @triton.jit
    def store_halves(hi_ptr, lo_ptr, off, y, mask):
        """Store the float32 ``y`` as float16 halves: ``hi`` its rounding, ``lo`` the rounded
        remainder, at ``off`` from each pointer. Every kernel that makes halves stores them
        here, so that a fold followed by a split and a fold into halves give the same bits."""
        hi = y.to(tl.float16)
        tl.store(hi_ptr + off, hi, mask=mask)
        tl.store(lo_ptr + off, (y - hi.to(tl.float32)).to(tl.float16), mask=mask)

    @triton.jit
    def store_tile(acc, rm, rn, batch, rowf_ptr, colf_ptr, oh_ptr, ol_ptr, z_ptr, M, N,
                   s_ob, s_om, s_on, W, s_ow, s_zm, s_zn, s_zw,
                   ROWF: tl.constexpr, COLF: tl.constexpr, HALVES: tl.constexpr,
                   SPLITN: tl.constexpr, ZERO: tl.constexpr):
        """The epilogue of the halves products (:func:`.triton_gemm._halves_kernel` and
        :mod:`.halves_tma`): the float32 tile ``acc`` of rows ``rm`` and columns ``rn`` of
        batch entry ``batch`` (int64) times the row factors ``rowf`` and the column factors
        ``colf`` (when given), stored as float32 or, with ``HALVES``, as float16 halves
        ``hi + lo`` (two outputs). With ``SPLITN`` column ``n`` is stored at
        ``(n // W) s_on + (n % W) s_ow`` (two strided axes); with ``ZERO``, entries whose
        boolean ``z`` (same decomposition, no batch) is set are 0."""
        mmask = rm[:, None] < M
        nmask = rn[None, :] < N
        if ROWF:
            acc = acc * tl.load(rowf_ptr + rm, mask=rm < M, other=0.0)[:, None]
        if COLF:
            acc = acc * tl.load(colf_ptr + rn, mask=rn < N, other=0.0)[None, :]
        if SPLITN:
            cols = (rn // W).to(tl.int64) * s_on + (rn % W).to(tl.int64) * s_ow
        else:
            cols = rn.to(tl.int64) * s_on
        o_off = batch * s_ob + rm[:, None].to(tl.int64) * s_om + cols[None, :]
        if ZERO:
            if SPLITN:
                zc = (rn // W).to(tl.int64) * s_zn + (rn % W).to(tl.int64) * s_zw
            else:
                zc = rn.to(tl.int64) * s_zn
            z = tl.load(z_ptr + rm[:, None].to(tl.int64) * s_zm + zc[None, :],
                        mask=mmask & nmask, other=0)
            acc = tl.where(z != 0, 0.0, acc)
        if HALVES:
            store_halves(oh_ptr, ol_ptr, o_off, acc, mmask & nmask)
        else:
            tl.store(oh_ptr + o_off, acc, mask=mmask & nmask)
