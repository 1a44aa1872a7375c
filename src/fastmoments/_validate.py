"""Argument checks shared by every transform. Errors always name the parameter."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["check_choice", "check_int", "check_positive_float", "check_shape_tail"]


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """Check an option string against its table of valid values.

    >>> check_choice("quadrature", "gauss", ("midpoint", "gauss"))
    'gauss'
    """
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {valid}; got {value!r}")
    return value


def check_int(name: str, value: Any, *, minimum: int | None = 0, maximum: int | None = None) -> int:
    """Check that ``value`` is an integer (not a bool, not a float) within bounds.

    >>> check_int("order", 10)
    10
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            raise TypeError(f"{name} must be an integer, got the float {value!r}")
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_positive_float(name: str, value: Any, *, allow_zero: bool = False) -> float:
    """Check that ``value`` is a finite real number > 0 (or >= 0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be finite, got {value}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return value


def check_shape_tail(name: str, shape: Sequence[int], expected: Sequence[int], what: str) -> None:
    """Check the trailing dimensions of ``shape`` against ``expected``."""
    tail = tuple(shape[-len(expected):]) if len(shape) >= len(expected) else None
    if tail != tuple(expected):
        raise ValueError(
            f"{name} must have shape (..., {', '.join(map(str, expected))}) for {what}, "
            f"got {tuple(shape)}"
        )
