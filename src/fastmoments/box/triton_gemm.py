r"""Batched float32 GEMMs on tensor cores with float32 accuracy (3xTF32), for the box engine.

The box engine's work is matrix products (:mod:`.engine`). On CUDA cores float32 products
run at the card's float32 rate; tensor cores run TF32 (10 mantissa bits) about seven times
faster on an H100, but one TF32 product is only accurate to about :math:`10^{-3}`. Splitting
each operand into a TF32 head and a remainder, :math:`a = a_h + a_l` with
:math:`a_h = \operatorname{tf32}(a)` and :math:`|a_l| \le 2^{-11}|a|`, and summing three
TF32 products

.. math:: a b \approx a_h b_h + a_h b_l + a_l b_h

drops only :math:`a_l b_l` (:math:`\le 2^{-22}|ab|`) and the TF32 rounding of the remainders
(:math:`\le 2^{-22}|ab|` each), so the result is as accurate as a float32 product with float32
accumulation, at about three TF32 products' cost. Triton's ``tl.dot`` does this split itself
with ``input_precision="tf32x3"``; this module is one batched GEMM kernel around it,

.. math:: C_b = A_b B_b, \qquad A_b \in \mathbb{R}^{M \times K},\; B_b \in \mathbb{R}^{K \times N},

with arbitrary strides (a zero batch stride shares an operand between the batch entries, and
transposes cost nothing). It runs only when a plan asks for it (``precision="tf32x3"``):
measured on an H100 (``benchmarks/results/box_tensor_cores.md``), the 512^3, order-500 job
is more accurate this way than with cuBLAS's float32 products (reconstruction error against
float64 below 1e-6 instead of above), but not faster, so cuBLAS float32 stays the default
and the torch ``matmul`` the reference and the CPU path.
"""

from __future__ import annotations

import os

import torch

from .._triton import HAVE_TRITON as _HAVE_TRITON
from .._triton import available, tl, triton

__all__ = ["available", "bmm"]

_MAX_GRID_Y = 65535

if _HAVE_TRITON:

    @triton.jit
    def _bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                    s_ab, s_am, s_ak, s_bb, s_bk, s_bn, s_cb, s_cm, s_cn,
                    PRECISION: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                    BK: tl.constexpr, GROUP: tl.constexpr):
        pid = tl.program_id(0)
        batch = tl.program_id(1).to(tl.int64)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        # grouped order: GROUP row tiles share their column tiles in L2
        per_group = GROUP * tiles_n
        group = pid // per_group
        first_m = group * GROUP
        size_m = min(tiles_m - first_m, GROUP)
        pid_m = first_m + (pid % per_group) % size_m
        pid_n = (pid % per_group) // size_m
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a_ptrs = a_ptr + batch * s_ab + rm[:, None].to(tl.int64) * s_am + rk[None, :] * s_ak
        b_ptrs = b_ptr + batch * s_bb + rk[:, None] * s_bk + rn[None, :].to(tl.int64) * s_bn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            left = K - k * BK
            a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
            b = tl.load(b_ptrs, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
            a_ptrs += BK * s_ak
            b_ptrs += BK * s_bk
        c_ptrs = c_ptr + batch * s_cb + rm[:, None].to(tl.int64) * s_cm + rn[None, :] * s_cn
        tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _tile(m: int, n: int) -> tuple[int, int, int, int, int]:
    """``(BM, BN, BK, warps, stages)``: one fixed tile per shape class, no autotuning (whose
    compilations took minutes on the first calls, for a kernel that is used on request)."""
    if os.environ.get("TRITON_INTERPRET", "") == "1":
        return 16, 16, 16, 1, 1
    bm = 64 if m <= 64 else 128
    bn = 128 if n >= 128 else 64
    return bm, bn, 32, 4 if bm * bn <= 8192 else 8, 3


def bmm(a: torch.Tensor, b: torch.Tensor, precision: str = "tf32x3") -> torch.Tensor:
    """``a @ b`` for float32 ``a`` ``(Ba, M, K)`` and ``b`` ``(Bb, K, N)`` (``Ba``/``Bb`` equal,
    or 1 to share the operand), on tensor cores with ``precision`` ``"tf32x3"`` (float32
    accuracy, see the module notes) or ``"ieee"`` (CUDA cores, for comparison).

    Returns a new contiguous ``(B, M, N)`` float32 tensor. Strided operands are read in
    place (no copies).
    """
    if a.dtype != torch.float32 or b.dtype != torch.float32:
        raise TypeError(f"bmm needs float32 operands, got {a.dtype} and {b.dtype}")
    if a.ndim != 3 or b.ndim != 3 or a.shape[2] != b.shape[1]:
        raise ValueError(f"bmm needs (B, M, K) @ (B, K, N), got {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    if precision not in ("tf32x3", "ieee", "tf32"):
        raise ValueError(f"precision must be 'tf32x3', 'tf32' or 'ieee', got {precision!r}")
    batch = max(a.shape[0], b.shape[0])
    if a.shape[0] not in (1, batch) or b.shape[0] not in (1, batch):
        raise ValueError(f"bmm batch sizes {a.shape[0]} and {b.shape[0]} do not broadcast")
    m, k = a.shape[1], a.shape[2]
    n = b.shape[2]
    c = torch.empty((batch, m, n), dtype=torch.float32, device=a.device)
    if c.numel() == 0:
        return c
    if k == 0:
        return c.zero_()
    s_ab = a.stride(0) if a.shape[0] > 1 else 0
    s_bb = b.stride(0) if b.shape[0] > 1 else 0

    bm, bn, bk, warps, stages = _tile(m, n)
    for start in range(0, batch, _MAX_GRID_Y):  # the grid's second axis holds 65535 programs
        stop = min(batch, start + _MAX_GRID_Y)
        aa = a[start:stop] if s_ab else a
        bb = b[start:stop] if s_bb else b

        grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn), stop - start)
        _bmm_kernel[grid](aa, bb, c[start:stop], m, n, k, s_ab, a.stride(1), a.stride(2), s_bb,
                          b.stride(1), b.stride(2), c.stride(0), c.stride(1), c.stride(2),
                          PRECISION=precision, BM=bm, BN=bn, BK=bk, GROUP=8,
                          num_warps=warps, num_stages=stages)
    return c
