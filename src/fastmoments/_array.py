"""Array handling shared by every transform: input conversion, the dtype policy, output kind.

One policy decides the working dtype everywhere (STYLE.md, convention 4):

* float32 stays float32, float64 stays float64;
* integers and booleans are computed in float32;
* half precision (float16, bfloat16) is computed in float32;
* complex input is refused unless the caller allows it (complex64 -> float32 working
  precision, complex128 -> float64).

NumPy in gives NumPy out; a torch tensor in gives a tensor out on the same device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = [
    "ArrayKind",
    "as_tensor",
    "complex_dtype",
    "real_dtype",
    "resolve_device",
    "to_output",
]


@dataclass(frozen=True)
class ArrayKind:
    """What the caller passed in, so that results go back in the same kind."""

    numpy: bool
    device: torch.device


def resolve_device(device: str | torch.device | None, fallback: torch.device | None = None):
    """Return a :class:`torch.device` from a user value.

    ``None`` keeps ``fallback`` (the input's device) or the CPU. ``"cuda"`` without a
    visible GPU raises :class:`ValueError` naming the parameter.
    """
    if device is None:
        return fallback if fallback is not None else torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was asked for but no CUDA device is available")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    return dev


def real_dtype(dtype: torch.dtype | np.dtype | str | None) -> torch.dtype:
    """The working real dtype for an input dtype (the one dtype policy of the package)."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, str):
        named = {"float32": torch.float32, "float64": torch.float64, "double": torch.float64,
                 "float": torch.float32, "single": torch.float32}
        if dtype not in named:
            raise ValueError(f"dtype must be one of {sorted(named)}, got {dtype!r}")
        return named[dtype]
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        dtype = torch.from_numpy(np.zeros(0, dtype=dtype)).dtype
    if dtype in (torch.float64, torch.complex128):
        return torch.float64
    return torch.float32


def complex_dtype(dtype: torch.dtype) -> torch.dtype:
    """The complex dtype with the same precision as real ``dtype``."""
    return torch.complex128 if dtype == torch.float64 else torch.complex64


def as_tensor(
    x: Any,
    name: str,
    *,
    min_ndim: int = 1,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
    allow_complex: bool = False,
    check_finite: bool = True,
) -> tuple[torch.Tensor, ArrayKind]:
    """Convert user input to a tensor in the working dtype, never modifying the input.

    Parameters
    ----------
    x : array_like or torch.Tensor
        The user's data.
    name : str
        The parameter name used in error messages.
    min_ndim : int
        Fewest dimensions accepted.
    dtype : torch.dtype, optional
        Force this working dtype instead of the policy's choice.
    device : str or torch.device, optional
        Move to this device (default: stay where the input is; NumPy goes to the CPU).
    allow_complex : bool
        Accept complex input.
    check_finite : bool
        Refuse NaN and infinity.

    Returns
    -------
    tensor : torch.Tensor
        A tensor that does not share memory with ``x`` when a conversion happened; when no
        conversion is needed it may be ``x`` itself, which callers must not modify.
    kind : ArrayKind
        Whether ``x`` was NumPy and which device it was on.

    Raises
    ------
    ValueError
        For too few dimensions, complex input where it is not allowed, NaN or infinity.
    TypeError
        For objects that are not arrays.
    """
    is_numpy = not isinstance(x, torch.Tensor)
    if is_numpy:
        try:
            arr = np.asarray(x)
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise TypeError(f"{name} must be an array or a tensor, got {type(x).__name__}") from exc
        if arr.dtype == object or arr.dtype.kind not in "biufc":
            raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}")
        if arr.dtype.kind == "b":
            arr = arr.astype(np.float32)
        elif not arr.flags.c_contiguous or not arr.flags.writeable:
            arr = arr.copy(order="C")  # (np.ascontiguousarray would make 0-d input 1-d)
        t = torch.from_numpy(arr)
        in_device = torch.device("cpu")
    else:
        t = x
        in_device = x.device
    if t.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions, got shape {tuple(t.shape)}")
    if t.is_complex() and not allow_complex:
        raise ValueError(f"{name} must be real, got complex dtype {t.dtype}")
    work = dtype if dtype is not None else real_dtype(t.dtype)
    if t.is_complex():
        work = complex_dtype(work)
    dev = resolve_device(device, in_device)
    t = t.to(device=dev, dtype=work)
    if check_finite and t.numel() and not _all_finite(t):
        raise ValueError(f"{name} contains NaN or infinity")
    return t, ArrayKind(numpy=is_numpy, device=in_device)


def finite_flag(t: torch.Tensor) -> torch.Tensor:
    """0-d bool tensor on ``t``'s device: whether every entry is finite, without waiting for it.

    One read pass: NaN and infinity propagate into the minimum or maximum. Callers on a GPU can
    queue their work first and read the flag afterwards (one synchronisation, overlapped).
    """
    if t.numel() == 0:
        return torch.ones((), dtype=torch.bool, device=t.device)
    r = torch.view_as_real(t) if t.is_complex() else t
    lo, hi = torch.aminmax(r)
    return torch.isfinite(torch.stack((lo, hi))).all()


def _all_finite(t: torch.Tensor) -> bool:
    return bool(finite_flag(t))


def to_output(t: torch.Tensor, kind: ArrayKind) -> Any:
    """Return ``t`` as the caller's kind: a NumPy array or a tensor (kept on its device)."""
    if kind.numpy:
        return t.detach().cpu().numpy()
    return t
