r"""float32-accurate box products on float16 tensor cores through cuBLAS (``"fp16x3-blas"``).

Each product :math:`C = A B` of the box engine (:func:`.engine._product`; ``A`` the data, ``B``
a plan's table) is computed as one float16 GEMM with float32 output over a tripled inner axis:

.. math:: C = s^{-1} t^{-1}\,[A_h \mid A_l \mid A_h]\,[B_h;\; B_h;\; B_l],

where :math:`sA = A_h + A_l` and :math:`tB = B_h + B_l` are split into float16 halves after
scaling by powers of two :math:`s` (per item of the batch, from its largest magnitude) and
:math:`t` (per table). The dropped term :math:`A_l B_l` and the halves' rounding are each about
:math:`2^{-22}` of :math:`\max|A| \sum_k |B_{kj}|`, so the result is as accurate as a float32
product relative to the item's largest entry (entries far below it keep that absolute
accuracy, not their own relative one).

One Triton pass (:func:`split_data`) writes the three copies of the data's halves, in the
memory order of the data (the engine's operands are transposed views: cuBLAS reads either
order); the tables' halves are stacked once and cached on the table.
"""

from __future__ import annotations

import torch

from .._triton import HAVE_TRITON, tl, triton
from .._triton import available as triton_available

__all__ = ["available", "bmm_split"]


def available(device: torch.device) -> bool:
    """Whether the split pass (Triton) can run: on CUDA, or on the CPU interpreter (where the
    product of the halves is a float32 ``matmul``, for the tests)."""
    return triton_available(device)


if HAVE_TRITON:

    @triton.jit
    def _split_kernel(x_ptr, o_ptr, s_ptr, P, Q, sxb, sxp, sxq, sob, sop, soq, scopy,
                      BP: tl.constexpr, BQ: tl.constexpr):
        """``o[b, c] = (hi, lo, hi)[c]`` of ``x[b] * s[b]`` for the three copies ``c``."""
        b = tl.program_id(2).to(tl.int64)
        rp = tl.program_id(0) * BP + tl.arange(0, BP)
        rq = tl.program_id(1) * BQ + tl.arange(0, BQ)
        m = (rp[:, None] < P) & (rq[None, :] < Q)
        x = tl.load(x_ptr + b * sxb + rp[:, None].to(tl.int64) * sxp
                    + rq[None, :].to(tl.int64) * sxq, mask=m, other=0.0)
        y = x * tl.load(s_ptr + b)
        hi = y.to(tl.float16)
        lo = (y - hi.to(tl.float32)).to(tl.float16)
        o = o_ptr + b * sob + rp[:, None].to(tl.int64) * sop + rq[None, :].to(tl.int64) * soq
        tl.store(o, hi, mask=m)
        tl.store(o + scopy, lo, mask=m)
        tl.store(o + 2 * scopy, hi, mask=m)


def _scales(data: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per item: the power of two ``s`` that puts ``max|data[b]|`` in [2^14, 2^15), and
    ``1 / s``, as float32 device tensors (no host synchronisation)."""
    top = torch.linalg.vector_norm(data, ord=float("inf"), dim=(1, 2))
    _, e = torch.frexp(top)  # top = m 2^e, m in [0.5, 1); top = 0 gives e = 0
    one = torch.ones_like(top)
    return torch.ldexp(one, 15 - e), torch.ldexp(one, e - 15)


def split_data(data: torch.Tensor, k_axis: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The float16 copies ``[A_h | A_l | A_h]`` of ``data`` ``(B, P, Q)`` along ``k_axis``
    (1 or 2), in ``data``'s memory order, and the per-item inverse scales."""
    bsz, p, q = data.shape
    scale, inv = _scales(data)
    rows_major = data.stride(2) == 1 or q == 1
    shape = [bsz, p, q]
    shape[k_axis] *= 3
    if rows_major:
        buf = torch.empty(shape, dtype=torch.float16, device=data.device)
    else:  # the data is column-major per item: keep that order
        buf = torch.empty((bsz, shape[2], shape[1]), dtype=torch.float16,
                          device=data.device).mT
    scopy = (q * buf.stride(2)) if k_axis == 2 else (p * buf.stride(1))
    bp, bq = (32, 128) if rows_major else (128, 32)
    grid = (triton.cdiv(p, bp), triton.cdiv(q, bq), bsz)
    _split_kernel[grid](data, buf, scale, p, q, data.stride(0), data.stride(1), data.stride(2),
                        buf.stride(0), buf.stride(1), buf.stride(2), scopy, BP=bp, BQ=bq,
                        num_warps=4)
    return buf, inv


def _stack_of(mat: torch.Tensor, mat_first: bool) -> tuple[torch.Tensor, float]:
    """``[B_h | B_h | B_l]`` (``mat_first``: columns) or ``[B_h; B_h; B_l]`` (rows) of a
    table view, and its inverse scale; cached on the tensor that owns the memory."""
    base = mat if mat._base is None else mat._base
    key = (tuple(mat.shape), tuple(mat.stride()), mat.storage_offset(), mat_first)
    cache = getattr(base, "_fastmoments_blas_splits", None)
    if cache is None or cache[0] != base._version:
        cache = (base._version, {})
        base._fastmoments_blas_splits = cache
    hit = cache[1].get(key)
    if hit is None:
        m64 = mat.detach().double()
        top = float(m64.abs().max()) if m64.numel() else 0.0
        _, e = torch.frexp(torch.tensor(top if top > 0 else 1.0, dtype=torch.float64))
        scale = 2.0 ** (15 - int(e))
        y = m64 * scale
        hi = y.half()
        lo = (y - hi.double()).half()
        hit = (torch.cat([hi, hi, lo], dim=1 if mat_first else 0).contiguous(), 1.0 / scale)
        cache[1][key] = hit
    return hit


def bmm_split(data: torch.Tensor, mat: torch.Tensor, mat_first: bool) -> torch.Tensor:
    """``mat @ data[i]`` (``mat_first``) or ``data[i] @ mat`` for every item of the 3-D float32
    ``data``, float32 accurate, on float16 tensor cores (see the module docstring)."""
    buf, inv = split_data(data, 1 if mat_first else 2)
    stack, tinv = _stack_of(mat, mat_first)
    bsz = data.shape[0]
    if not data.is_cuda:  # the Triton interpreter (tests): the same sums in float32
        out = torch.matmul(stack.float(), buf.float()) if mat_first else torch.matmul(
            buf.float(), stack.float())
    elif bsz == 1:
        out = (torch.mm(stack, buf[0], out_dtype=torch.float32) if mat_first
               else torch.mm(buf[0], stack, out_dtype=torch.float32))[None]
    elif mat_first:
        out = torch.bmm(stack.expand(bsz, *stack.shape), buf, out_dtype=torch.float32)
    else:
        out = torch.bmm(buf, stack.expand(bsz, *stack.shape), out_dtype=torch.float32)
    return out.mul_((inv * tinv).view(bsz, 1, 1))
