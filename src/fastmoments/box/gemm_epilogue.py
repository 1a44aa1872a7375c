"""The stores shared by the box engine's float16-halves kernels: :func:`store_halves`, the
one rounding of a float32 value into ``hi + lo`` (the splits, the folds, the products),
and :func:`store_tile`, the epilogue of the halves product (:mod:`.triton_gemm`): factors,
the mask of entries outside the set, and the stores. Defined only where Triton is
installed (the importers import them under ``HAVE_TRITON``)."""

from __future__ import annotations

from .._triton import HAVE_TRITON, tl, triton

__all__ = ["store_halves", "store_tile"]

if HAVE_TRITON:

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
        """The epilogue of the halves product (:func:`.triton_gemm._halves_kernel`): the
        float32 tile ``acc`` of rows ``rm`` and columns ``rn`` of
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
