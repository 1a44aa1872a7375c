"""Argument checks shared by every transform. Errors always name the parameter.

The rules (BRIEF, STYLE.md convention 6): bools are not numbers, floats are not integers
(2.5 is an error, never truncated, and so is 2.0), strings are not numbers, NaN and infinity
are refused where a finite value is needed. Check arguments **before** any cache lookup:
``functools.lru_cache`` treats ``True``, ``1`` and ``1.0`` as one key.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Iterable, Sequence
from typing import Any

_INF = math.inf

__all__ = [
    "check_bool",
    "check_channel_axis",
    "check_choice",
    "check_int",
    "check_int_list",
    "check_int_pairs",
    "check_positive_float",
    "check_real",
    "check_shape",
    "check_shape_tail",
    "colour_hint",
]


def _is_bool(value: Any) -> bool:
    """Python, NumPy and torch booleans (0-d bool arrays included)."""
    if isinstance(value, bool):
        return True
    dt = getattr(value, "dtype", None)
    return dt is not None and str(dt) in ("bool", "torch.bool")


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """Check an option string against its table of valid values.

    >>> check_choice("quadrature", "gauss", ("midpoint", "gauss"))
    'gauss'
    >>> check_choice("quadrature", "Gauss", ("midpoint", "gauss"))
    Traceback (most recent call last):
    ...
    ValueError: quadrature must be one of 'midpoint', 'gauss'; got 'Gauss'
    """
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {valid}; got {value!r}")
    return value


def check_int(name: str, value: Any, *, minimum: int | None = 0, maximum: int | None = None) -> int:
    """Check that ``value`` is an integer (not a bool, not a float) within bounds.

    Python and NumPy integers and 0-d integer tensors are integers; ``True``, ``2.0`` and
    ``"2"`` are not.

    >>> check_int("order", 10)
    10
    >>> check_int("order", 2.5)
    Traceback (most recent call last):
    ...
    TypeError: order must be an integer, got 2.5
    >>> check_int("order", True)
    Traceback (most recent call last):
    ...
    TypeError: order must be an integer, got the bool True
    """
    if _is_bool(value):
        raise TypeError(f"{name} must be an integer, got the bool {value!r}")
    if isinstance(value, numbers.Integral):
        value = int(value)
    else:
        try:
            if isinstance(value, (float, complex, str, bytes)) or value is None:
                raise TypeError
            value = operator.index(value)  # NumPy integers, 0-d integer tensors
        except TypeError:
            raise TypeError(f"{name} must be an integer, got {value!r}") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_real(name: str, value: Any, *, minimum: float | None = None,
               maximum: float | None = None, strict_minimum: bool = False,
               allow_inf: bool = False) -> float:
    """Check that ``value`` is a real number (not a bool, string or complex; not NaN) and
    return it as a float.

    Parameters
    ----------
    name : str
        The parameter name for the messages.
    value : object
        The user's value: a Python or NumPy real number (or a 0-d array of one).
    minimum, maximum : float, optional
        Bounds; ``minimum`` is exclusive when ``strict_minimum``.
    allow_inf : bool
        Accept ``inf`` and ``-inf`` (NaN is never accepted).

    Raises
    ------
    TypeError
        For bools, strings, complex numbers and other non-numbers.
    ValueError
        For NaN, infinity (unless allowed) and values out of bounds.

    Examples
    --------
    >>> check_real("alpha", 0.3)
    0.3
    >>> check_real("alpha", -1, minimum=-1, strict_minimum=True)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be > -1, got -1.0
    >>> check_real("alpha", "0.3")
    Traceback (most recent call last):
    ...
    TypeError: alpha must be a real number, got '0.3'
    """
    if _is_bool(value):
        raise TypeError(f"{name} must be a real number, got the bool {value!r}")
    if not isinstance(value, numbers.Real):
        shape = getattr(value, "shape", None)
        kind = getattr(getattr(value, "dtype", None), "kind", None)
        if shape == () and kind in ("i", "u", "f"):
            value = float(value)  # 0-d NumPy arrays
        else:
            raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got nan")
    if math.isinf(value) and not allow_inf:
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None and (value < minimum or (strict_minimum and value == minimum)):
        raise ValueError(f"{name} must be {'>' if strict_minimum else '>='} {minimum}, "
                         f"got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_positive_float(name: str, value: Any, *, allow_zero: bool = False) -> float:
    """Check that ``value`` is a finite real number > 0 (or >= 0).

    >>> check_positive_float("sigma", 2)
    2.0
    >>> check_positive_float("sigma", 0)
    Traceback (most recent call last):
    ...
    ValueError: sigma must be > 0, got 0.0
    """
    if isinstance(value, float) and 0.0 < value < _INF:  # the usual case (NumPy's float64
        return float(value)  # is a float too), without the ABC check
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be finite, got {value}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Check a flag: ``True`` or ``False`` (NumPy booleans too), not ``1`` or ``"yes"``.

    >>> check_bool("normalize", False)
    False
    >>> check_bool("normalize", 1)
    Traceback (most recent call last):
    ...
    TypeError: normalize must be True or False, got 1
    """
    if _is_bool(value) and getattr(value, "shape", ()) == ():
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r}")


def _as_sequence(name: str, values: Any, what: str) -> list[Any]:
    if values is None or isinstance(values, (str, bytes, numbers.Number)) or _is_bool(values):
        raise TypeError(f"{name} must be a sequence of {what}, got {values!r}")
    if hasattr(values, "ndim") and values.ndim == 0:
        raise TypeError(f"{name} must be a sequence of {what}, got a 0-d array")
    try:
        return list(values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of {what}, got {values!r}") from None


def check_int_list(name: str, values: Any, *, minimum: int | None = 0,
                   maximum: int | None = None, allow_empty: bool = False,
                   unique: bool = False) -> tuple[int, ...]:
    """Check a sequence of integers (a list, tuple, range or 1-d integer array or tensor).

    Each entry obeys :func:`check_int`. The result is a tuple of Python ints (hashable, so
    it can be a cache key). An array with more than one dimension is a ``ValueError`` naming
    its shape.

    >>> check_int_list("repetitions", [0, 2, 4])
    (0, 2, 4)
    >>> check_int_list("repetitions", [2.5])
    Traceback (most recent call last):
    ...
    TypeError: repetitions[0] must be an integer, got 2.5
    >>> check_int_list("repetitions", [True])
    Traceback (most recent call last):
    ...
    TypeError: repetitions[0] must be an integer, got the bool True
    """
    ndim = getattr(values, "ndim", None)
    if isinstance(ndim, int) and ndim > 1:
        raise ValueError(f"{name} must be a 1-D sequence of integers, got shape "
                         f"{tuple(values.shape)}")
    items = _as_sequence(name, values, "integers")
    if not items and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    out = tuple(check_int(f"{name}[{i}]", v, minimum=minimum, maximum=maximum)
                for i, v in enumerate(items))
    if unique and len(set(out)) != len(out):
        dup = sorted({v for v in out if out.count(v) > 1})
        raise ValueError(f"{name} must not repeat values, got {dup} more than once")
    return out


def check_int_pairs(name: str, values: Any, *, allow_empty: bool = False,
                    labels: tuple[str, str] = ("n", "m")) -> tuple[tuple[int, int], ...]:
    """Check a sequence of integer pairs such as ``[(n, m), ...]`` (bounds are the caller's).

    ``labels`` name the two members in the messages (``("n", "l")`` for polar harmonic
    moments). A ``(k, 2)`` integer array is a sequence of ``k`` pairs.

    >>> check_int_pairs("pairs", [(2, 0), (3, -1)])
    ((2, 0), (3, -1))
    >>> check_int_pairs("pairs", [(1.5, 2)])
    Traceback (most recent call last):
    ...
    TypeError: pairs[0][0] (n) must be an integer, got 1.5
    >>> check_int_pairs("pairs", [(2, 0, 1)])
    Traceback (most recent call last):
    ...
    ValueError: pairs[0] must be a pair (n, m), got (2, 0, 1) of length 3
    """
    a, b = labels
    items = _as_sequence(name, values, f"({a}, {b}) integer pairs")
    if not items and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    out = []
    for i, p in enumerate(items):
        pair = _as_sequence(f"{name}[{i}]", p, f"two integers ({a}, {b})")
        if len(pair) != 2:
            raise ValueError(f"{name}[{i}] must be a pair ({a}, {b}), got {p!r} of length "
                             f"{len(pair)}")
        out.append((check_int(f"{name}[{i}][0] ({a})", pair[0], minimum=None),
                    check_int(f"{name}[{i}][1] ({b})", pair[1], minimum=None)))
    return tuple(out)


def check_shape(name: str, value: Any, *, ndim: int | Sequence[int] | None = None,
                minimum: int = 1) -> tuple[int, ...]:
    """Check a shape: a sequence of integers ``>= minimum`` (an int is a 1-d shape).

    >>> check_shape("shape", (16, 16), ndim=2)
    (16, 16)
    >>> check_shape("shape", (16.7, 16))
    Traceback (most recent call last):
    ...
    TypeError: shape[0] must be an integer, got 16.7
    """
    if not _is_bool(value) and isinstance(value, numbers.Integral):
        value = (value,)
    out = check_int_list(name, value, minimum=minimum)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if len(out) not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise ValueError(f"{name} must have {want} entries, got {out}")
    return out


def check_shape_tail(name: str, shape: Sequence[int], expected: Sequence[int], what: str) -> None:
    """Check the trailing dimensions of ``shape`` against ``expected``.

    >>> check_shape_tail("moments", (2, 5, 3), (5, 3), "order 4")
    """
    tail = tuple(shape[-len(expected):]) if len(shape) >= len(expected) else None
    if tail != tuple(expected):
        raise ValueError(
            f"{name} must have shape (..., {', '.join(map(str, expected))}) for {what}, "
            f"got {tuple(shape)}"
        )


def check_channel_axis(channel_axis: Any, ndim: int, core: int, name: str = "image"
                       ) -> int | None:
    """Check ``channel_axis`` (scikit-image's convention) for an input of ``ndim`` axes whose
    last ``core`` non-channel axes are the image (or volume) axes; return it as a
    non-negative axis, or None.

    >>> check_channel_axis(-1, 3, 2)
    2
    >>> check_channel_axis(None, 2, 2) is None
    True
    >>> check_channel_axis(2, 2, 2)
    Traceback (most recent call last):
    ...
    ValueError: channel_axis=2 is out of range for image of 2 dimensions: with channel_axis, \
image needs at least 3 dimensions (the channels and the 2 image axes)
    """
    if channel_axis is None:
        return None
    axis = check_int("channel_axis", channel_axis, minimum=None)
    if ndim < core + 1 or not -ndim <= axis < ndim:
        raise ValueError(f"channel_axis={axis} is out of range for {name} of {ndim} "
                         f"dimensions: with channel_axis, {name} needs at least {core + 1} "
                         f"dimensions (the channels and the {core} image axes)")
    return axis % ndim


def colour_hint(shape: Sequence[int], name: str = "image") -> str | None:
    """The message for a colour image ``(..., H, W, 3)`` or ``(..., H, W, 4)`` given where
    square images ``(..., N, N)`` are expected without ``channel_axis``; None when the
    shape does not look like one (a square last pair of axes is a valid batch).

    >>> colour_hint((32, 48, 3)).split(";")[0]
    'image of shape (32, 48, 3) looks like a colour image (3 colour channels last)'
    >>> colour_hint((3, 32, 32)) is None
    True
    """
    shape = tuple(int(s) for s in shape)
    if len(shape) >= 3 and shape[-1] in (3, 4) and shape[-1] != shape[-2]:
        return (f"{name} of shape {shape} looks like a colour image ({shape[-1]} colour "
                f"channels last); pass channel_axis=-1 to treat each channel as an image "
                f"of the batch (or convert it to grey levels first)")
    return None
