"""Plain Triton launches on the tensors' own GPU.

:func:`launch` is ``fn[grid](*args, **kwargs)`` made with the device of its first tensor
argument current (:func:`~fastmoments._triton.on_tensor_device`): a Triton launch goes to the
*current* device, whatever device its tensors are on. Repeated calls are made cheap by
capturing them into CUDA graphs (:mod:`fastmoments._cuda_graph`), not by replaying launches.
"""

from __future__ import annotations

from typing import Any

from ._triton import on_tensor_device

__all__ = ["launch"]


@on_tensor_device
def launch(fn: Any, grid: tuple[int, ...], *args: Any, **kwargs: Any) -> Any:
    """``fn[grid](*args, **kwargs)`` for a Triton kernel ``fn`` on the device of the first
    tensor argument. Returns what the launch returns (the compiled kernel; ``None`` under
    the interpreter)."""
    return fn[grid](*args, **kwargs)
