"""Triton, when it is installed, and where its kernels can run (shared by the fused kernels
of :mod:`fastmoments.disk.triton_radial` and :mod:`fastmoments.box.triton_gemm`)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import torch

try:  # pragma: no cover - depends on the installation
    import triton
    import triton.language as tl

    HAVE_TRITON = True
except ImportError:  # pragma: no cover
    triton = None
    tl = None
    HAVE_TRITON = False

__all__ = ["HAVE_TRITON", "available", "current_device", "loop_bound", "multiprocessors",
           "on_tensor_device", "other_device", "tl", "triton"]

def current_device() -> int:
    """``torch.cuda.current_device()`` (for callers holding a CUDA tensor: CUDA is
    initialised)."""
    return torch.cuda.current_device()


def other_device(args: tuple) -> int:
    """The CUDA device of the first tensor in ``args`` (or of a tensor descriptor's base)
    when it is not the current device, else -1.

    A Triton launch (``kernel[grid](...)``) goes to the
    *current* device and its current stream, whatever device its tensors are on; torch's
    own operations follow their tensors. A caller that gets an index here makes its launch
    under ``torch.cuda.device(index)``, so that a tensor on ``cuda:1`` is worked on by
    ``cuda:1`` in the order of ``cuda:1``'s stream while ``cuda:0`` is current (instead of
    a launch on the wrong device: an illegal address, or a read not ordered after the
    writes of the tensor's own stream). One comparison when the devices agree."""
    for a in args:
        if type(a) is torch.Tensor:
            index = a.get_device()
            return index if index >= 0 and index != current_device() else -1
    return -1


def on_tensor_device(fn: Callable) -> Callable:
    """Decorate ``fn`` so that it runs under ``torch.cuda.device(index)`` when the first
    tensor among its positional arguments is on a CUDA device ``index`` that is not the
    current one (:func:`other_device`), and as it is otherwise: the launch sites and the
    plan calls that capture or replay CUDA graphs, so that their work goes to the tensors'
    GPU."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        index = other_device(args)
        if index < 0:
            return fn(*args, **kwargs)
        with torch.cuda.device(index):
            return fn(*args, **kwargs)

    return run


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


def multiprocessors(device: torch.device) -> int:
    """Streaming multiprocessors of the CUDA ``device`` (asked once per device: the property
    query costs about 10 µs)."""
    idx = device.index if device.index is not None else torch.cuda.current_device()
    sms = _SMS.get(idx)
    if sms is None:
        sms = _SMS[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return sms


_SMS: dict[int, int] = {}
