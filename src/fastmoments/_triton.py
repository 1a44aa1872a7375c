"""Triton, when it is installed, and where its kernels can run (shared by the fused kernels
of :mod:`fastmoments.disk.triton_radial` and :mod:`fastmoments.box.triton_gemm`)."""

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

__all__ = ["HAVE_TRITON", "available", "loop_bound", "tl", "triton"]


def available(device: torch.device) -> bool:
    """True when Triton kernels can run on ``device``: CUDA, or the CPU under
    ``TRITON_INTERPRET=1`` (how the tests check them without a GPU)."""
    if not HAVE_TRITON:
        return False
    if device.type == "cuda":
        return True
    return os.environ.get("TRITON_INTERPRET", "") == "1"


def loop_bound(name: str, bound: int) -> dict[str, object]:
    """The constexpr arguments of a kernel loop whose bound is a runtime value: Triton's
    interpreter cannot loop to one (NumPy >= 2.4 refuses ``int()`` of its one-element
    arrays), so under ``TRITON_INTERPRET=1`` the kernel gets ``INTERPRET=True`` and the bound
    as the constexpr ``name``; compiled, ``INTERPRET=False`` and ``name=0`` (unused: one
    kernel serves every bound). The kernel loops to ``name if INTERPRET else <runtime>``."""
    interpret = os.environ.get("TRITON_INTERPRET", "") == "1"
    return {"INTERPRET": interpret, name: int(bound) if interpret else 0}
