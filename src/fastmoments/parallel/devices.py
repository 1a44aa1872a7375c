"""Device lists: what ``device=`` means when it names several devices.

``device=`` accepts, wherever it is accepted:

* one device (``None``, ``"cpu"``, ``"cuda"``, ``"cuda:1"``, a :class:`torch.device`): the
  one-device path, untouched;
* a sequence of devices (``["cuda:0", "cuda:1"]``, a tuple, torch devices);
* ``"cuda:all"``: every visible GPU.

Repeated entries are allowed on purpose (``["cpu", "cpu"]``, or ``["cuda:0", "cuda:0"]``): each
entry is one worker with its own plan replica (and, on a GPU, its own stream). On a CPU this
exercises the split-and-gather logic without a GPU; on one GPU two entries only overlap copies
with compute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .._array import resolve_device

__all__ = ["ALL_GPUS", "device_key", "device_list", "first_device", "is_multi",
           "resolve_devices"]

#: The spelling of "every visible GPU".
ALL_GPUS = "cuda:all"


def is_multi(device: Any) -> bool:
    """Whether ``device`` names a list of devices (a sequence, or ``"cuda:all"``).

    >>> is_multi("cpu"), is_multi(["cpu", "cpu"]), is_multi("cuda:all")
    (False, True, True)
    """
    if isinstance(device, str):
        return device.strip().lower() == ALL_GPUS
    return isinstance(device, Sequence) or (
        isinstance(device, (set, frozenset)) or _is_array_like(device))


def _is_array_like(device: Any) -> bool:
    return hasattr(device, "__iter__") and not isinstance(device, (torch.device, bytes, dict))


def device_list(device: Any) -> tuple[torch.device, ...]:
    """The devices named by a list value of ``device=``, in order (duplicates kept).

    Parameters
    ----------
    device : sequence of str or torch.device, or "cuda:all"
        The devices to spread the work over.

    Returns
    -------
    tuple of torch.device
        At least one device; ``"cuda"`` without an index means the current GPU.

    Raises
    ------
    ValueError
        An empty list, an unknown device string, a GPU index that is not visible, or
        ``"cuda:all"`` when no GPU is visible; the message names ``device``.
    TypeError
        A set (it has no order, so the first device, where results are gathered, would be
        arbitrary) or entries that are not strings or devices.

    Examples
    --------
    >>> device_list(["cpu", "cpu"])
    (device(type='cpu'), device(type='cpu'))
    """
    if isinstance(device, str):
        if device.strip().lower() != ALL_GPUS:
            raise ValueError(f"device must be a device, a list of devices or {ALL_GPUS!r}, "
                             f"got {device!r}")
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if n == 0:
            raise ValueError(f"device={ALL_GPUS!r} asks for every visible GPU, but no CUDA "
                             "device is visible")
        return tuple(torch.device("cuda", i) for i in range(n))
    if isinstance(device, (set, frozenset, dict)):
        raise TypeError(f"device must be an ordered sequence (list or tuple), got "
                        f"{type(device).__name__}: the first device is where results go")
    entries = list(device)
    if not entries:
        raise ValueError("device must name at least one device, got an empty list")
    out = []
    for i, d in enumerate(entries):
        if not isinstance(d, (str, torch.device)):
            raise TypeError(f"device[{i}] must be a string or a torch.device, got "
                            f"{type(d).__name__} {d!r}")
        if isinstance(d, str) and d.strip().lower() == ALL_GPUS:
            raise ValueError(f"device[{i}]={d!r}: {ALL_GPUS!r} stands alone, not in a list")
        try:
            dev = resolve_device(d)
        except ValueError as exc:
            raise ValueError(f"device[{i}]: {exc}") from exc
        if dev.type == "cuda":
            index = torch.cuda.current_device() if dev.index is None else dev.index
            if index >= torch.cuda.device_count():
                raise ValueError(f"device[{i}]={d!r}: only {torch.cuda.device_count()} CUDA "
                                 "device(s) are visible")
            dev = torch.device("cuda", index)
        out.append(dev)
    return tuple(out)


def resolve_devices(device: Any, fallback: torch.device | None = None):
    """``resolve_device`` for one device, :func:`device_list` for several.

    Returns a :class:`torch.device` (one device: today's path) or a tuple of them.
    """
    if is_multi(device):
        return device_list(device)
    return resolve_device(device, fallback)


def device_key(device: Any, fallback: Any = None) -> str | tuple[str, ...]:
    """A plain cache key for ``device=``: ``str`` of one device, a tuple of ``str`` for a list.

    ``fallback`` (when given) is the already resolved single device used for the key.
    """
    if is_multi(device):
        return tuple(str(d) for d in device_list(device))
    return str(fallback if fallback is not None else device)


def first_device(device: Any) -> torch.device:
    """Where results are gathered: the first device of a list (or the device itself)."""
    if is_multi(device):
        return device_list(device)[0]
    return resolve_device(device)
