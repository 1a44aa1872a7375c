"""The NaN/inf verdict on a call's input, formed by the kernels that read it.

A one-axis call on a GPU (:func:`fastmoments.signal._apply.filter_along`) does not check its
input in a pass of its own: the kernels that filter it clear a flag byte when they read NaN or
infinity, and the call reads the flag once its work is queued. A :class:`Verdict` hands out
that byte in the form each kernel takes, made on first request:

* a device byte (:meth:`Verdict.device_flag`), for the Triton kernels and the torch passes;
* a byte of pinned host memory (:meth:`Verdict.host_pointer`), which the CUDA C++ kernel of
  :mod:`.cuda_sft` writes through unified addressing. Setting it costs a host store instead of
  a device allocation and fill, and reading it a stream synchronisation instead of a copy
  back.

Pinned bytes come from a per-thread pool. A byte is returned to the pool only once the
verdict has waited for the kernels that write it; the byte of a verdict that was never read
(a call that raised after its launch) is kept for good, so that no later allocation gets
memory that a kernel may still write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import torch

from .._launches import host_flag

__all__ = ["Verdict", "require_finite"]

_POOL = threading.local()


def _acquire() -> tuple[torch.Tensor, Any] | None:
    """A pinned host byte ``(tensor, NumPy view)`` of this thread's pool (``None`` when pinned
    memory cannot be had or is not mapped at its own address)."""
    free = getattr(_POOL, "free", None)
    if free is None:
        free = _POOL.free = []
    if free:
        return free.pop()
    return host_flag()


def _release(byte: tuple[torch.Tensor, Any]) -> None:
    _POOL.free.append(byte)


#: Bytes whose verdict was never read (a call that raised after its launch): kept alive, so
#: that torch's pinned-memory cache cannot hand their memory out while a kernel may write it.
_RETIRED: list[tuple[torch.Tensor, Any]] = []


class Verdict:
    """Whether a call's input is finite, cleared by the kernels that read it.

    Parameters
    ----------
    device : torch.device
        The GPU the call runs on.
    flag : torch.Tensor, optional
        An existing device byte (``uint8``, 1 = finite so far) to use as :meth:`device_flag`
        (the flag of a recording, :func:`fastmoments._launches.recorded_flag`).
    """

    __slots__ = ("_device", "_flag", "_host", "_wait")

    def __init__(self, device: torch.device, flag: torch.Tensor | None = None) -> None:
        self._device = device
        self._flag = flag
        self._host: tuple[torch.Tensor, Any] | None = None
        self._wait: Callable[[], Any] | None = None

    def device_flag(self) -> torch.Tensor:
        """The device byte (``uint8``, set to 1 when made) that kernels and torch passes clear
        on NaN or infinity."""
        if self._flag is None:
            self._flag = torch.ones((), dtype=torch.uint8, device=self._device)
        return self._flag

    def host_pointer(self, wait: Callable[[], Any]) -> int:
        """The address of a pinned host byte set to 1, for a kernel to clear on NaN or infinity
        through unified addressing; 0 when pinned memory cannot be had (the caller then uses
        :meth:`device_flag`). ``wait()`` must return once the kernels that write it are done
        (their stream's ``synchronize``)."""
        if self._host is None:
            self._host = _acquire()
            if self._host is None:
                return 0
            self._host[1][()] = 1
        self._wait = wait
        return self._host[0].data_ptr()

    def __del__(self) -> None:
        if self._host is not None:
            _RETIRED.append(self._host)

    def finite(self) -> bool:
        """Whether no kernel cleared a byte: waits for them (a stream synchronisation, or the
        read of the device byte)."""
        ok = True
        if self._host is not None:
            self._wait()
            ok = bool(self._host[1][()])
            _release(self._host)
            self._host = None
        if self._flag is not None:
            ok = bool(self._flag) and ok
        return ok


def require_finite(flag: torch.Tensor | Verdict | None, name: str = "x") -> None:
    """Raise the input error for a false :func:`~fastmoments._array.finite_flag` or
    :class:`Verdict` (``None``: the check was switched off)."""
    if flag is None:
        return
    if not (flag.finite() if isinstance(flag, Verdict) else bool(flag)):
        raise ValueError(f"{name} contains NaN or infinity")
