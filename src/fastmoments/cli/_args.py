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
- **Output**: :func:`add_out` gives ``--out DIR``, default ``fastmoments-<command>`` in the
  current directory; the command prints the folder at the end
  (:func:`fastmoments.cli._outputs.done`). Check it with
  :class:`fastmoments.cli._outputs.OutputFolder` before the work.
- **Device**: :func:`add_device` gives ``--device``, default ``auto`` (CUDA where a GPU is
  visible, else the CPU; :data:`fastmoments._defaults.CLI_DEVICE`); argparse checks only its
  spelling, so that parsing imports no torch; :func:`pick_device` resolves it (and says when
  CUDA is asked for but not visible) once the paths are checked; defaults that must suit the
  device (orders, k, sizes) are chosen after it from a per-device table (``DEFAULTS`` in the
  command).
- **Progress**: ``--progress/--no-progress`` (:func:`add_progress`), default: shown when
  stderr is a terminal (:func:`want_progress`); the bars are :mod:`fastmoments._progress`'s.
- **Check first**: a command checks its paths (inputs exist and are readable, the output
  folder can be written), its options and the optional packages its output needs
  (:func:`fastmoments.cli._errors.require`) before it imports torch or reads anything
  large, so that a mistake is reported in a fraction of a second.
- **Misspellings**: :class:`ArgumentParser` answers an unknown command, option or choice
  with the command's usage and ``did you mean ...?``.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .._defaults import CLI_DEVICE, DISK_FAMILIES
from ._errors import UsageError

__all__ = [
    "MIN_IMAGE_SIDE",
    "ArgumentParser",
    "HelpFormatter",
    "add_device",
    "add_orders",
    "add_out",
    "add_progress",
    "cuda_available",
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
    "suggest",
    "want_progress",
]


def suggest(word: str, choices: Sequence[str]) -> str:
    """`` (did you mean X?)``-style text for the choice closest to ``word``, or ``""``.

    >>> suggest("--ordres", ["--orders", "--out"])
    'did you mean --orders?'
    >>> suggest("xyz", ["demo", "features"])
    ''
    """
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close:
        return ""
    return f"did you mean {close[0]}?"


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser that adds ``did you mean ...?`` to an unknown command, option or
    choice, and reports an unknown option of a command with that command's usage (argparse
    itself reports it from the top-level parser, with the top-level usage)."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and getattr(self, "_commands", None):
            command = self._commands.get(getattr(parsed, "command", None) or "")
            if command is not None:
                command.unknown(extras)
        return parsed, extras

    def unknown(self, extras: Sequence[str]) -> NoReturn:
        """Report arguments this parser does not know, with a suggestion for each option."""
        options = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
        hints = []
        for word in extras:
            if word.startswith("-"):
                hint = suggest(word.split("=", 1)[0], options)
                if hint:
                    hints.append(f"{word}: {hint}")
        text = f"unrecognized arguments: {' '.join(extras)}"
        self.error(text + (f" ({'; '.join(hints)})" if hints else ""))

    def error(self, message: str) -> NoReturn:
        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            # the choices are quoted ('a', 'b') up to Python 3.12.7, bare (a, b) later
            choices = [c.strip().strip("'") for c in m.group(2).split(",")]
            hint = suggest(m.group(1), choices)
            if hint:
                message = f"{message}; {hint}"
        super().error(message)

    def add_command_parsers(self, **kwargs: Any) -> Any:
        """``add_subparsers`` whose parsers are this class, remembered by name so that an
        unknown option of a command is reported by that command's parser."""
        self._commands: dict[str, ArgumentParser] = {}
        sub = self.add_subparsers(parser_class=ArgumentParser, **kwargs)
        add_parser = sub.add_parser

        def add(name: str, **kw: Any) -> ArgumentParser:
            parser = add_parser(name, **kw)
            self._commands[name] = parser
            return parser

        sub.add_parser = add  # type: ignore[method-assign]
        return sub


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
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N``: the spelling only (no torch is imported to
    parse it); whether CUDA is visible is for :func:`pick_device`."""
    value = text.strip()
    if not DEVICE_SYNTAX.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"must be auto, cpu, cuda or cuda:N, got {text!r}")
    return value


#: The spellings of one device on the command line.
DEVICE_SYNTAX = re.compile(r"auto|cpu|cuda(:\d+)?")


def disk_family(text: str) -> str:
    """The name of a disk family (:data:`fastmoments._defaults.DISK_FAMILIES`), checked
    without importing torch."""
    if text not in DISK_FAMILIES:
        hint = suggest(text, DISK_FAMILIES)
        raise argparse.ArgumentTypeError(
            f"must be one of {', '.join(DISK_FAMILIES)}, got {text!r}"
            + (f"; {hint}" if hint else ""))
    return text


def int_list(name: str, minimum: int | None = 0) -> Callable[[str], list]:
    """:func:`number_list` of integers (commas and ranges ``A-B``, ``A-B:STEP``)."""
    return number_list(name, int, minimum)


def add_orders(p: argparse.ArgumentParser, *, default: list | None, help: str,
               minimum: int = 0) -> None:
    """``--orders`` with the common syntax (one comma-separated token, with ranges)."""
    parse = int_list("orders", minimum)
    syntax = "comma-separated, with ranges A-B or A-B:STEP (50,100,200 or 2-12:2)"
    head, sep, tail = help.partition(" (default")
    text = f"{head}, {syntax}{sep}{tail}"
    p.add_argument("--orders", type=parse, default=default, metavar="T[,T...]", help=text)


def add_out(p: argparse.ArgumentParser, command: str, what: str = "output folder") -> None:
    """``--out DIR``, default ``fastmoments-<command>`` (in the current directory)."""
    p.add_argument("--out", default=f"fastmoments-{command}", metavar="DIR",
                   help=f"{what}, created if needed; a folder that exists is written into "
                        f"(files of the same names are replaced)")


def add_device(p: argparse.ArgumentParser, what: str = "where the work runs", *,
               type: Callable[[str], Any] | None = None, choices: str = "cpu, cuda or cuda:N"
               ) -> None:
    """``--device``, default :data:`~fastmoments._defaults.CLI_DEVICE` (``auto``: CUDA where
    a GPU is visible, else the CPU); ``type`` and ``choices`` for a command that also takes
    lists of devices."""
    p.add_argument("--device", type=type or device, default=CLI_DEVICE,
                   help=f"{what}: auto (CUDA if a GPU is visible, else cpu), {choices}")


def add_progress(p: argparse.ArgumentParser) -> None:
    """``--progress/--no-progress``; default: shown when stderr is a terminal."""
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bars on stderr (default: shown when stderr is a terminal)")


def want_progress(value: bool | None) -> bool:
    """``--progress`` resolved: the flag if given, else whether stderr is a terminal
    (:func:`fastmoments._progress.resolve_progress`, the library's own rule)."""
    from .._progress import resolve_progress

    return resolve_progress(value)


def cuda_available() -> bool:
    """Whether a CUDA GPU is visible (tests patch this to choose the device defaults)."""
    import torch

    return bool(torch.cuda.is_available())


def device_kind(dev: str) -> str:
    """``"cuda"`` for ``cuda``/``cuda:N``, else ``"cpu"``: the key of a per-device table."""
    return "cuda" if dev.startswith("cuda") else "cpu"


def pick_device(text: str | None) -> str:
    """``--device`` resolved: ``auto`` (or ``None``) -> ``"cuda"`` if :func:`cuda_available`,
    else ``"cpu"``; ``cuda`` or ``cuda:N`` only where a GPU is visible (else a
    :class:`UsageError` naming ``--device``); ``cpu`` as given. Imports torch (for CUDA), so
    a command calls it once its paths and options are checked."""
    if text in (None, "auto"):
        return "cuda" if cuda_available() else "cpu"
    if text.startswith("cuda") and not cuda_available():
        raise UsageError(f"--device {text}: no CUDA GPU is visible; use --device cpu (or auto)")
    return text
