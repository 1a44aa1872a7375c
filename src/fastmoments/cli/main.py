"""Entry point of the ``fastmoments`` command: discovers the ``cmd_*`` modules beside it."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

import fastmoments.cli as _cli


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command registered."""
    from fastmoments import __version__

    parser = argparse.ArgumentParser(
        prog="fastmoments",
        description="Orthogonal moments and fast transforms of images, volumes and signals.",
    )
    parser.add_argument("--version", action="version", version=f"fastmoments {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = sorted(m.name for m in pkgutil.iter_modules(_cli.__path__) if m.name.startswith("cmd_"))
    for name in names:
        module = importlib.import_module(f"fastmoments.cli.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError, FileNotFoundError, MemoryError) as exc:
        print(f"fastmoments {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
