"""Option values of the commands, checked by argparse ``type=`` functions, and the option
conventions every command follows.

Each ``type=`` function turns one command-line string into a value or raises
:class:`argparse.ArgumentTypeError`; argparse then prints the usage and
``fastmoments CMD: error: argument --NAME: ...`` and exits with status 2, so a bad option
value never reaches the command (nor the library, where it could fail deep inside).

Conventions (every ``cmd_*.py``, including ones written later, follows them)
-----------------------------------------------------------------------------
- **Parser**: ``sub.add_parser(..., formatter_class=HelpFormatter)``; every option has a help
  text, and :class:`HelpFormatter` appends ``(default: ...)`` to it. A default that depends
  on the device or on the input is ``None`` and its help text says what it becomes.
- **Order lists** (``--orders``, and ``--k``, ``--noise``, ``--scales``, any list of numbers):
  one token, comma-separated; integers may also be written as inclusive ranges ``A-B`` or
  ``A-B:STEP`` (``"2-12:2"`` is ``2,4,6,8,10,12``; ``"50,100-102"`` is ``50,100,101,102``).
  Register with :func:`add_orders` (``--orders``), :func:`int_list`/:func:`number_list`.
  The old spellings still parse but print one ``fastmoments: note: ... is deprecated`` line
  to stderr (not a Python warning): see :class:`DeprecatedAlias` and :class:`SpacedList`.
- **Output**: :func:`add_out` gives ``--out DIR``, default ``fastmoments-<command>`` in the
  current directory; the command prints the folder at the end
  (:func:`fastmoments.cli._outputs.done`). Check it with
  :class:`fastmoments.cli._outputs.OutputFolder` before the work.
- **Device**: :func:`add_device` gives ``--device`` (``auto``: CUDA where a GPU is visible,
  else the CPU); :func:`pick_device` resolves it; defaults that must suit the device (orders,
  k, sizes) are chosen after it from a per-device table (``DEFAULTS`` in the command).
- **Progress**: ``--progress/--no-progress`` (:func:`add_progress`), default: shown when
  stderr is a terminal (:func:`want_progress`).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = [
    "MIN_IMAGE_SIDE",
    "DeprecatedAlias",
    "HelpFormatter",
    "SpacedList",
    "add_device",
    "add_orders",
    "add_out",
    "add_progress",
    "cuda_available",
    "deprecated",
    "device",
    "device_kind",
    "disk_family",
    "image_side",
    "int_list",
    "jacobi_parameter",
    "natural",
    "nonnegative_float",
    "number_list",
    "parse_numbers",
    "pick_device",
    "positive_float",
    "positive_int",
    "want_progress",
]


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows ``(default: X)`` after every option's help, lists as ``1,3,5``; says nothing for
    a ``None`` default (its help text says what it means) or a flag."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "%(default)" in text or any(action.default is v for v in
                                           (None, argparse.SUPPRESS, False, True)):
            return text
        if action.option_strings and action.nargs != 0:
            default = action.default
            if isinstance(default, (list, tuple)):
                default = ",".join(f"{v:g}" if isinstance(v, float) else str(v)
                                   for v in default)
            return f"{text} (default: {str(default).replace('%', '%%')})"
        return text


def deprecated(old: str, new: str) -> None:
    """Print ``fastmoments: note: OLD is deprecated; use NEW`` to stderr (one line).

    Not :func:`warnings.warn`: a command-line user reads stderr, and a test suite run with
    ``filterwarnings = error`` would turn the note into a failure.
    """
    import sys

    print(f"fastmoments: note: {old} is deprecated and will be removed; use {new}",
          file=sys.stderr)


class DeprecatedAlias(argparse.Action):
    """An old option name kept working: stores into the new option's ``dest`` and prints a
    one-line deprecation note (``add_argument("--order", dest="orders",
    action=DeprecatedAlias, new="--orders", type=...)``)."""

    def __init__(self, option_strings: list, dest: str, new: str = "", **kwargs) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        deprecated(f"{option_string}", self.new)
        setattr(namespace, self.dest, values)


class SpacedList(argparse.Action):
    """A list option that also takes the old space-separated form (``--orders 2 4 6``,
    ``nargs="+"``): the tokens are joined (each token is a list itself) and a deprecation
    note says to write them with commas."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if len(values) > 1:
            deprecated(f"space-separated values after {option_string}",
                       f"commas: {option_string} "
                       + ",".join(",".join(map(_fmt, v)) for v in values))
        setattr(namespace, self.dest, [x for v in values for x in v])


def _fmt(v: float) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


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


def clip_plane(text: str) -> tuple[float, float, float, float]:
    """A clipping plane ``NX,NY,NZ,D`` (``--clip-plane``): four finite numbers, the normal not
    zero; voxels with ``nx*x + ny*y + nz*z <= d`` are kept (``--keep below``)."""
    parts = text.split(",")
    if len(parts) != 4:
        raise argparse.ArgumentTypeError(
            f"must be four numbers NX,NY,NZ,D, got {text!r} ({len(parts)} values)")
    nx, ny, nz, d = (_float(v) for v in parts)
    if nx == ny == nz == 0:
        raise argparse.ArgumentTypeError(f"the normal (NX, NY, NZ) must not be zero, got {text!r}")
    return nx, ny, nz, d


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


def jacobi_parameter(name: str) -> Callable[[str], float]:
    """A finite number > -1 (``--alpha``, ``--beta``: the Jacobi weight must be integrable);
    the message names the parameter as the library's does (``alpha must be ...``)."""
    def parse(text: str) -> float:
        try:
            value = _float(text)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{name} {exc}") from None
        if value <= -1:
            raise argparse.ArgumentTypeError(f"{name} must be a number > -1, got {text!r}")
        return value
    return parse


def nonnegative_float(text: str) -> float:
    """A finite number >= 0 (``--noise``)."""
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return value


#: The longest list a range may expand to (a typo like ``1-100000000`` is an error, not a hang).
MAX_LIST = 10_000


def _range(item: str) -> list[int]:
    """``"A-B"`` or ``"A-B:S"`` -> ``[A, A+S, ..., <= B]`` (inclusive, ``S >= 1``)."""
    body, _, step_text = item.partition(":")
    lo_text, _, hi_text = body.partition("-")
    lo, hi = int(lo_text.strip()), int(hi_text.strip())
    step = int(step_text.strip()) if step_text else 1
    if step < 1 or hi < lo:
        raise ValueError
    if (hi - lo) // step + 1 > MAX_LIST:
        raise OverflowError
    return list(range(lo, hi + 1, step))


def _numbers(text: str, kind: type, minimum: float | None, strict: bool) -> list:
    noun = "integers" if kind is int else "numbers"
    values: list = []
    for item in (v.strip() for v in text.split(",")):
        if not item:
            continue
        try:
            if kind is int and "-" in item.lstrip("-+"):
                values += _range(item)
            else:
                values.append(kind(item))
        except OverflowError:
            raise ValueError(f"range {item!r} holds more than {MAX_LIST} values") from None
        except ValueError:
            ranges = " or ranges A-B, A-B:STEP (A <= B)" if kind is int else ""
            raise ValueError(f"must be comma-separated {noun}{ranges}, got {text!r}") from None
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
    >>> parse_numbers("2-12:2,20-22", "orders")
    [2, 4, 6, 8, 10, 12, 20, 21, 22]
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
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N``, with CUDA only where a GPU is visible."""
    from .._array import resolve_device

    if text.strip() == "auto":
        return "auto"
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


def int_list(name: str, minimum: int | None = 0) -> Callable[[str], list]:
    """:func:`number_list` of integers (commas and ranges ``A-B``, ``A-B:STEP``)."""
    return number_list(name, int, minimum)


def add_orders(p: argparse.ArgumentParser, *, default: list | None, help: str,
               minimum: int = 0, spaced: bool = False, alias: str | None = None) -> None:
    """``--orders`` with the common syntax; ``alias`` (e.g. ``"--order"``) is kept as a
    deprecated spelling; ``spaced`` also accepts the deprecated ``--orders 2 4 6`` form (for a
    command without positional arguments only: ``nargs="+"`` would swallow them)."""
    parse = int_list("orders", minimum)
    syntax = "comma-separated, with ranges A-B or A-B:STEP (50,100,200 or 2-12:2)"
    head, sep, tail = help.partition(" (default")
    text = f"{head}, {syntax}{sep}{tail}"
    if spaced:
        p.add_argument("--orders", type=parse, nargs="+", action=SpacedList, default=default,
                       metavar="T[,T...]", help=text)
    else:
        p.add_argument("--orders", type=parse, default=default, metavar="T[,T...]", help=text)
    if alias:
        p.add_argument(alias, dest="orders", type=parse, action=DeprecatedAlias, new="--orders",
                       metavar="T[,T...]", help="deprecated spelling of --orders")


def add_out(p: argparse.ArgumentParser, command: str, what: str = "output folder") -> None:
    """``--out DIR``, default ``fastmoments-<command>`` (in the current directory)."""
    p.add_argument("--out", default=f"fastmoments-{command}", metavar="DIR",
                   help=f"{what}, created if needed; a folder that exists is written into "
                        f"(files of the same names are replaced)")


def add_device(p: argparse.ArgumentParser, what: str = "where the work runs") -> None:
    """``--device``: ``auto`` (CUDA where a GPU is visible, else the CPU), cpu, cuda, cuda:N."""
    p.add_argument("--device", type=device, default="auto",
                   help=f"{what}: auto (CUDA if a GPU is visible, else cpu), cpu, cuda or "
                        f"cuda:N")


def add_progress(p: argparse.ArgumentParser) -> None:
    """``--progress/--no-progress``; default: shown when stderr is a terminal."""
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bars on stderr (default: shown when stderr is a terminal)")


def want_progress(value: bool | None) -> bool:
    """``--progress`` resolved: the flag if given, else whether stderr is a terminal."""
    import sys

    if value is not None:
        return value
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def cuda_available() -> bool:
    """Whether a CUDA GPU is visible (tests patch this to choose the device defaults)."""
    import torch

    return bool(torch.cuda.is_available())


def device_kind(dev: str) -> str:
    """``"cuda"`` for ``cuda``/``cuda:N``, else ``"cpu"``: the key of a per-device table."""
    return "cuda" if dev.startswith("cuda") else "cpu"


def pick_device(text: str | None) -> str:
    """``--device`` resolved: ``auto`` (or ``None``) -> ``"cuda"`` if :func:`cuda_available`,
    else ``"cpu"``; any other value as given."""
    if text in (None, "auto"):
        return "cuda" if cuda_available() else "cpu"
    return text
