"""Plain Triton launches on the tensors' own GPU.

:func:`launch` is ``fn[grid](*args, **kwargs)`` made with the device of its first tensor
argument current (:func:`~fastmoments._triton.on_tensor_device`): a Triton launch goes to the
*current* device, whatever device its tensors are on. Repeated calls are made cheap by
capturing them into CUDA graphs (:mod:`fastmoments._cuda_graph`), not by replaying launches.

:class:`Recording` is kept only so that code written against the former launch recording
still imports; it records nothing and refuses every call (its callers then run eagerly).
"""

from __future__ import annotations

from typing import Any

import torch

from ._triton import on_tensor_device

__all__ = ["Recording", "launch"]


@on_tensor_device
def launch(fn: Any, grid: tuple[int, ...], *args: Any, **kwargs: Any) -> Any:
    """``fn[grid](*args, **kwargs)`` for a Triton kernel ``fn`` on the device of the first
    tensor argument. Returns what the launch returns (the compiled kernel; ``None`` under
    the interpreter)."""
    return fn[grid](*args, **kwargs)


class Recording:
    """A context manager that records no launch: every call it watches is refused (``refused``
    says why), so that its callers run eagerly.

    Parameters
    ----------
    x : torch.Tensor
        The call's input.
    flag : torch.Tensor, optional
        Unused.
    """

    def __init__(self, x: torch.Tensor, flag: torch.Tensor | None = None) -> None:
        self.x, self.flag = x, flag
        self.launches: list[Any] = []
        self.allocations: list[Any] = []
        self.refused = ["launches are not recorded (repeated calls use CUDA graphs)"]

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def check_launches(self) -> None:
        """Nothing to check: no launch is recorded."""

    def program(self, out: Any) -> None:
        """No program: the call is not replayed."""
        return None
