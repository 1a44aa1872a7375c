"""Option parsing shared by the commands: comma-separated lists of numbers."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def parse_numbers(text: str, name: str, kind: type = int) -> list:
    """``"100,300,700"`` -> ``[100, 300, 700]`` (``kind`` int or float), with an error naming
    the option ``--name``."""
    noun = "integers" if kind is int else "numbers"
    try:
        values = [kind(v) for v in text.split(",") if v.strip()]
    except ValueError as exc:
        raise ValueError(f"--{name} must be comma-separated {noun}, got {text!r}") from exc
    if not values:
        raise ValueError(f"--{name} must list at least one {noun[:-1]}")
    return values


def number_list(name: str, kind: type = int) -> Callable[[str], list]:
    """An argparse ``type=`` for :func:`parse_numbers` (its message kept as the usage error)."""
    def parse(text: str) -> list:
        try:
            return parse_numbers(text, name, kind)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse
