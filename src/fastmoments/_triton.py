"""Triton, when it is installed, and where its kernels can run (shared by the fused kernels
of :mod:`fastmoments.disk.triton_radial`, :mod:`fastmoments.box.triton_gemm` and
:mod:`fastmoments.signal.triton_sft`), and the split of float32 tiles into float16 halves
that the float16 tensor-core products of the last two share."""

from __future__ import annotations

import os

import torch

try:  # pragma: no cover - depends on the installation
    import triton
    import triton.language as tl

    HAVE_TRITON = True
except ImportError:  # pragma: no cover
    triton = None
    tl = None
    HAVE_TRITON = False

__all__ = ["HAVE_TRITON", "available", "scaled_halves", "tl", "triton"]


def available(device: torch.device) -> bool:
    """True when Triton kernels can run on ``device``: CUDA, or the CPU under
    ``TRITON_INTERPRET=1`` (how the tests check them without a GPU)."""
    if not HAVE_TRITON:
        return False
    if device.type == "cuda":
        return True
    return os.environ.get("TRITON_INTERPRET", "") == "1"


if HAVE_TRITON:

    @triton.jit
    def scaled_halves(d, AXIS: tl.constexpr):
        """Split the float32 tile ``d`` into float16 ``hi + lo`` after scaling each row
        (``AXIS=1``) or column (``AXIS=0``) by a power of two that brings its largest
        magnitude into [2^14, 2^15); returns ``hi, lo`` and the two factors of the inverse
        scale (each a normal float32, their product may not be).

        float16 keeps 11 significant bits, so ``hi + lo`` holds 22 of each entry (up to
        :math:`2^{-24}` of the row's largest magnitude; entries far below it keep that
        absolute precision). Three products ``hi·H + hi·L + lo·H`` against a table split
        the same way are then as accurate as a float32 product, at the float16 tensor-core
        rate."""
        m = tl.max(tl.abs(d), axis=AXIS)
        e = (m.to(tl.int32, bitcast=True) >> 23) & 0xFF  # biased exponent, 0 for m = 0
        big = 141 - e  # m * 2^big < 2^15: float16 holds 65504
        e1 = big >> 1
        e2 = big - e1
        s1 = ((e1 + 127) << 23).to(tl.float32, bitcast=True)
        s2 = ((e2 + 127) << 23).to(tl.float32, bitcast=True)
        r1 = ((127 - e1) << 23).to(tl.float32, bitcast=True)
        r2 = ((127 - e2) << 23).to(tl.float32, bitcast=True)
        if AXIS == 1:
            y = d * s1[:, None] * s2[:, None]
        else:
            y = d * s1[None, :] * s2[None, :]
        hi = y.to(tl.float16)
        lo = (y - hi.to(tl.float32)).to(tl.float16)
        return hi, lo, r1, r2
