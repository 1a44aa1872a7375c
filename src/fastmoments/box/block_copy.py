"""Zero fills and block copies of the box engine as Triton launches.

The halves pipeline of the box engine (``precision="fp16x3"``) is Triton launches on
allocations, except for three torch operations: the zero fill of the dense coefficients
(the blocks that total-degree truncation never computes stay 0), the copy of a block whose
rows do not split into aligned groups into its place in them (with the entries outside
the set written as 0), and the zero fill of the parity classes' halves for odd sizes. A
job made of Triton launches alone can be recorded and replayed
(:mod:`fastmoments.box.replay`), so on Triton devices these are Triton kernels too; the
results are the same (a copy and zeros). Elsewhere they are the torch operations.
"""

from __future__ import annotations

import math

import torch

from .._launches import launch
from .._triton import HAVE_TRITON, available, tl, triton

__all__ = ["copy_block", "zeros"]

_BLOCK = 1024

if HAVE_TRITON:
    @triton.jit
    def _zero_kernel(ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        tl.store(ptr + i, tl.zeros((BLOCK,), dtype=ptr.dtype.element_ty), mask=i < n)

    @triton.jit
    def _copy_kernel(src_ptr, dst_ptr, zero_ptr, N1, N2, W, d_0, d_1, d_2, d_3,
                     z_1, z_2, z_3, ZERO: tl.constexpr, BLOCK: tl.constexpr):
        """``dst[i0, i1, i2, w] = src[i0, i1, i2, w]`` (``src`` contiguous), 0 where
        ``zero[i1, i2, w]`` is set (with ``ZERO``): one program per row and block of
        ``BLOCK`` columns."""
        row = tl.program_id(0).to(tl.int64)
        i2 = row % N2
        i1 = (row // N2) % N1
        i0 = row // (N2 * N1)
        w = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        inside = w < W
        v = tl.load(src_ptr + row * W + w, mask=inside)
        if ZERO:
            z = tl.load(zero_ptr + i1 * z_1 + i2 * z_2 + w * z_3, mask=inside, other=0)
            v = tl.where(z != 0, 0.0, v)
        tl.store(dst_ptr + i0 * d_0 + i1 * d_1 + i2 * d_2 + w * d_3, v, mask=inside)


def _triton_on(t: torch.Tensor) -> bool:
    """CUDA, or the CPU under ``TRITON_INTERPRET=1`` (the tests), and no gradient."""
    return available(t.device) and not t.requires_grad


def zeros(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A new contiguous tensor of zeros (:func:`torch.zeros`; one Triton launch on CUDA)."""
    t = torch.empty(shape, dtype=dtype, device=device)
    n = t.numel()
    if not _triton_on(t):
        return t.zero_()
    if n:
        launch(_zero_kernel, (triton.cdiv(n, _BLOCK),), t, n, BLOCK=_BLOCK, num_warps=4)
    return t


def copy_block(dst: torch.Tensor, src: torch.Tensor, zero: torch.Tensor | None) -> None:
    """``dst.copy_(src)`` with the entries under ``zero`` (a boolean mask of ``dst``'s
    shape less its first axis, broadcast over it) written as 0; ``src`` contiguous, ``dst``
    of at most 4 axes and any strides, ``src`` left as it is."""
    if tuple(dst.shape) != tuple(src.shape) or dst.ndim > 4 or dst.dtype != src.dtype:
        raise ValueError(f"copy_block: {tuple(src.shape)} {src.dtype} into "
                         f"{tuple(dst.shape)} {dst.dtype}")
    if not (_triton_on(dst) and src.is_contiguous()):
        dst.copy_(src if zero is None else src.masked_fill(zero, 0.0))
        return
    pad = 4 - dst.ndim
    shape = (1,) * pad + tuple(dst.shape)
    d = (0,) * pad + dst.stride()
    z_st = (0, 0, 0)
    if zero is not None:
        if tuple(zero.shape) != tuple(dst.shape[1:]) or zero.dtype != torch.bool:
            raise ValueError(f"copy_block: a mask of {tuple(zero.shape)} for {tuple(dst.shape)}")
        z_st = (0,) * (3 - zero.ndim) + zero.stride()
    rows = math.prod(shape[:3])
    if rows and shape[3]:
        launch(_copy_kernel, (rows, triton.cdiv(shape[3], 256)), src, dst,
               src if zero is None else zero.view(torch.uint8), shape[1], shape[2], shape[3],
               *d, *z_st, ZERO=zero is not None, BLOCK=256, num_warps=4)
