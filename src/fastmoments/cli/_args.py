"""Option values of the commands, checked by argparse ``type=`` functions.

Each function turns one command-line string into a value or raises
:class:`argparse.ArgumentTypeError`; argparse then prints the usage and
``fastmoments CMD: error: argument --NAME: ...`` and exits with status 2, so a bad option
value never reaches the command (nor the library, where it could fail deep inside).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["MIN_IMAGE_SIDE", "device", "disk_family", "image_side", "natural",
           "nonnegative_float", "number_list", "parse_numbers", "positive_float", "positive_int"]


def _int(text: str) -> int:
    """An integer written as one: ``"2.5"``, ``"1e3"``, ``"true"`` are not integers."""
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def _float(text: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (``--size``, ``--num-scales``, ``--limit``)."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


#: The smallest square image whose inscribed disk holds a pixel centre.
MIN_IMAGE_SIDE = 3


def image_side(text: str) -> int:
    """The side of a square image: an integer >= 3 (``--size`` of ``demo``, ``reconstruct``)."""
    value = _int(text)
    if value < MIN_IMAGE_SIDE:
        raise argparse.ArgumentTypeError(
            f"must be an integer >= {MIN_IMAGE_SIDE} (the disk of a smaller image holds no "
            f"pixel centre), got {text!r}")
    return value


def natural(text: str) -> int:
    """An integer >= 0 (``--column``, ``--frame``, ``--seed``)."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0 (``--rate``, ``--min-scale``, ``--xi``)."""
    value = _float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def nonnegative_float(text: str) -> float:
    """A finite number >= 0 (``--noise``)."""
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return value


def _numbers(text: str, kind: type, minimum: float | None, strict: bool) -> list:
    noun = "integers" if kind is int else "numbers"
    try:
        values = [kind(v.strip()) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"must be comma-separated {noun}, got {text!r}") from None
    if not values:
        raise ValueError(f"must list at least one {noun[:-1]}, got {text!r}")
    if kind is float and not all(math.isfinite(v) for v in values):
        raise ValueError(f"must be finite numbers, got {text!r}")
    if minimum is not None:
        bad = [v for v in values if v < minimum or (strict and v == minimum)]
        if bad:
            raise ValueError(f"must be {noun} {'>' if strict else '>='} {minimum}, "
                             f"got {bad[0]!r} in {text!r}")
    return values


def parse_numbers(text: str, name: str, kind: type = int, minimum: float | None = None,
                  *, strict: bool = False) -> list:
    """``"100,300,700"`` -> ``[100, 300, 700]`` (``kind`` int or float, every value finite and
    at least ``minimum``, or above it if ``strict``); a :class:`ValueError` naming the option
    ``--name`` otherwise.

    Examples
    --------
    >>> parse_numbers("100, 300,700", "orders")
    [100, 300, 700]
    >>> parse_numbers("2,0.5", "scales", float, minimum=0, strict=True)
    [2.0, 0.5]
    """
    try:
        return _numbers(text, kind, minimum, strict)
    except ValueError as exc:
        raise ValueError(f"--{name} {exc}") from None


def number_list(name: str, kind: type = int, minimum: float | None = None, *,
                strict: bool = False) -> Callable[[str], list]:
    """An argparse ``type=`` for :func:`parse_numbers`: argparse reports a bad list as
    ``argument --name: must be ...``."""
    def parse(text: str) -> list:
        try:
            return _numbers(text, kind, minimum, strict)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def device(text: str) -> str:
    """``cpu``, ``cuda`` or ``cuda:N``, with CUDA only where a GPU is visible."""
    from .._array import resolve_device

    try:
        resolve_device(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def disk_family(text: str) -> str:
    """The name of a registered disk family (``zernike``, ``pseudo-zernike``, ...)."""
    from ..disk import get_family

    try:
        get_family(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text
