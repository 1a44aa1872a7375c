"""Argument checks of the disk API, run before any plan cache is consulted.

``functools.lru_cache`` treats ``True``, ``1`` and ``1.0`` as one key, so every argument that
reaches a cache must first be checked and turned into a plain value of its exact type (an
``int`` that is not a bool, a ``float``, a ``str``). These helpers do that for the arguments
the shared :mod:`fastmoments._validate` does not cover (sequences of integers, pairs, the
memory budget, the working dtype option).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from .._validate import check_int

__all__ = ["check_budget", "check_int_list", "check_pair_list", "check_work_dtype"]


def check_int_list(name: str, values: Any) -> tuple[int, ...]:
    """A sequence of integers (not bools, not floats, not a string) as a tuple of ``int``.

    >>> check_int_list("repetitions", [0, -2, np.int64(3)])
    (0, -2, 3)
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of integers, got {values!r}")
    if isinstance(values, (np.ndarray, torch.Tensor)) and values.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of integers, got shape "
                         f"{tuple(values.shape)}")
    out = []
    for v in values:
        if isinstance(v, torch.Tensor) and v.ndim == 0 and not v.is_floating_point() \
                and not v.is_complex() and v.dtype != torch.bool:
            v = int(v)
        out.append(check_int(name, v, minimum=None))
    return tuple(out)


def check_pair_list(name: str, pairs: Any, labels: tuple[str, str] = ("n", "m")
                    ) -> tuple[tuple[int, int], ...]:
    """A sequence of ``(n, m)`` integer pairs as a tuple of ``(int, int)``.

    >>> check_pair_list("pairs", [(4, 2), [3, -1]])
    ((4, 2), (3, -1))
    """
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise TypeError(f"{name} must be a sequence of ({labels[0]}, {labels[1]}) integer "
                        f"pairs, got {pairs!r}")
    out = []
    for p in pairs:
        if isinstance(p, (str, bytes)) or not isinstance(p, Iterable):
            raise TypeError(f"{name} must be a sequence of ({labels[0]}, {labels[1]}) integer "
                            f"pairs, got the element {p!r}")
        p = tuple(p)
        if len(p) != 2:
            raise ValueError(f"{name} must be a sequence of ({labels[0]}, {labels[1]}) pairs, "
                             f"got an element of length {len(p)}: {p!r}")
        try:
            out.append((check_int(labels[0], p[0], minimum=None),
                        check_int(labels[1], p[1], minimum=None)))
        except TypeError as exc:
            raise TypeError(f"{name} must hold integer pairs ({labels[0]}, {labels[1]}): "
                            f"{exc}") from exc
    return tuple(out)


def check_budget(value: Any, name: str = "memory_budget") -> float | None:
    """``None``, or a finite real number > 0 (bytes, or a fraction of free memory if <= 1).

    >>> check_budget(2**30)
    1073741824.0
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of bytes (or a fraction <= 1) or None, "
                        f"got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


_WORK_DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "float": torch.float32,
    "single": torch.float32, "double": torch.float64,
    torch.float32: torch.float32, torch.float64: torch.float64,
}


def check_work_dtype(value: Any, name: str = "dtype") -> torch.dtype | None:
    """The working precision a caller asks for: ``None`` (from the input) or a float32 /
    float64 dtype (torch, NumPy or their names). Integer, bool, complex and other dtypes are
    a ``ValueError`` rather than being coerced to float32.

    >>> check_work_dtype("float64")
    torch.float64
    """
    if value is None:
        return None
    if isinstance(value, (str, torch.dtype)):
        key = value
    elif isinstance(value, np.dtype) or (isinstance(value, type)
                                         and issubclass(value, np.generic)):
        try:
            key = torch.from_numpy(np.zeros(0, dtype=value)).dtype
        except TypeError:  # a NumPy dtype torch has no counterpart for
            key = None
    else:  # np.dtype() would also take a value such as np.float64(2.0): not a dtype
        raise TypeError(f"{name} must be a dtype such as 'float32' or 'float64', got "
                        f"{value!r}")
    if key not in _WORK_DTYPES:
        raise ValueError(f"{name} must be float32 or float64 (the working precision), got "
                         f"{value!r}")
    return _WORK_DTYPES[key]
