"""The finiteness flag of a GPU tensor as one Triton kernel (captured into the CUDA graphs of
:mod:`fastmoments._cuda_graph`).

``torch.isfinite(x).all()`` is five kernels on CUDA (four elementwise passes and a reduction),
and for the 10^5 samples of one signal they took 17 µs of GPU time on an H100 inside the
replayed graph of a Gaussian filter whose own two kernels take 8.5 µs
(a profile of that call). Here a flag byte is set to 1 and one kernel reads
every entry once; a block that holds NaN or infinity writes 0 into it (every such block writes
the same value, so no atomic operation is needed).

A value is finite exactly when ``|x| < inf``: NaN compares false and infinity is not below
itself. Complex tensors are read as their real and imaginary parts.

Eager calls use :func:`fastmoments._array.finite_flag` instead: outside a graph, Triton's
Python launch costs more host time (tens of microseconds per kernel on the H100 machine) than
the two torch launches of that check. The eager calls of the one-axis signal plans check
inside their own fused kernels (:func:`fastmoments.signal.triton_sft.fused_apply`'s ``flag``).
"""

from __future__ import annotations

import torch

from ._launches import launch
from ._triton import HAVE_TRITON, available, tl, triton

__all__ = ["BLOCK", "clear_if_nonfinite", "fused_finite_flag", "usable"]

#: Entries read by one program.
BLOCK = 2048

if HAVE_TRITON:  # pragma: no branch - depends on the installation

    @triton.jit
    def _clear_if_nonfinite(x_ptr, n, flag_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        finite = (tl.abs(x) < float("inf")).to(tl.int32)
        bad = tl.min(finite, axis=0) == 0
        tl.store(flag_ptr, tl.zeros((), dtype=tl.uint8), mask=bad)


def usable(t: torch.Tensor) -> bool:
    """Whether :func:`fused_finite_flag` runs on ``t``: a contiguous float32/float64 (or
    complex64/128) tensor on a device where Triton runs, with no gradient recorded."""
    dt = t.dtype
    return (dt in (torch.float32, torch.float64, torch.complex64, torch.complex128)
            and t.is_contiguous() and not (t.requires_grad and torch.is_grad_enabled())
            and t.numel() > 0 and available(t.device))


def fused_finite_flag(t: torch.Tensor) -> torch.Tensor:
    """0-d bool tensor on ``t``'s device: whether every entry of ``t`` is finite.

    Two GPU operations: a fill of the flag byte and one kernel reading ``t`` once. Nothing
    waits for the result, so it can be queued (or captured into a CUDA graph) with the work
    that reads ``t`` and read afterwards. ``t`` must satisfy :func:`usable`.

    Examples
    --------
    >>> import torch
    >>> if usable(torch.zeros(1)):  # a GPU, or TRITON_INTERPRET=1
    ...     assert not bool(fused_finite_flag(torch.tensor([0.0, float("nan")])))
    """
    flag = torch.ones((), dtype=torch.uint8, device=t.device)
    clear_if_nonfinite(t, flag)
    return flag.view(torch.bool)


def clear_if_nonfinite(t: torch.Tensor, flag: torch.Tensor) -> None:
    """Queue the kernel that sets the ``uint8`` byte ``flag`` to 0 when ``t`` holds NaN or
    infinity (one read of ``t``, which must satisfy :func:`usable`)."""
    r = torch.view_as_real(t) if t.is_complex() else t
    n = r.numel()
    launch(_clear_if_nonfinite, (triton.cdiv(n, BLOCK),), r, n, flag, BLOCK=BLOCK, num_warps=4)
