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

__all__ = ["HAVE_TRITON", "available", "libcuda", "loop_bound", "multiprocessors",
           "resident_programs", "tl", "triton"]


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


def libcuda() -> object | None:
    """The CUDA driver library through ``ctypes`` (loaded once), or ``None`` when it cannot be
    loaded under its usual name."""
    global _LIBCUDA
    if _LIBCUDA is None:
        import ctypes

        try:
            _LIBCUDA = ctypes.CDLL("libcuda.so.1")
        except OSError:  # pragma: no cover - no driver library under that name
            _LIBCUDA = False
    return _LIBCUDA or None


_LIBCUDA: object = None


def multiprocessors(device: torch.device) -> int:
    """Streaming multiprocessors of the CUDA ``device`` (asked once per device: the property
    query costs about 10 µs)."""
    idx = device.index if device.index is not None else torch.cuda.current_device()
    sms = _SMS.get(idx)
    if sms is None:
        sms = _SMS[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return sms


_SMS: dict[int, int] = {}


def resident_programs(kernel: object, num_warps: int, device: torch.device) -> int:
    """How many programs of the compiled Triton ``kernel`` (launched with ``num_warps``
    warps) the CUDA ``device`` holds at once: the driver's occupancy per multiprocessor
    (``cuOccupancyMaxActiveBlocksPerMultiprocessor``, with the kernel's registers and shared
    memory) times the multiprocessors. A grid no larger than this can wait at a barrier of
    all its programs (a cooperative launch refuses a larger one). 0 when the driver cannot
    say."""
    import ctypes

    kernel._init_handles()  # loads the binary: ``function`` is its handle
    cuda = libcuda()
    if cuda is None:  # pragma: no cover - no driver library under that name
        return 0
    blocks = ctypes.c_int(0)
    status = cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        ctypes.byref(blocks), ctypes.c_void_p(kernel.function), ctypes.c_int(32 * num_warps),
        ctypes.c_size_t(kernel.metadata.shared))
    if status != 0:  # pragma: no cover - a driver error: no single launch
        return 0
    return blocks.value * multiprocessors(device)
