"""Entry point of the ``fastmoments`` command: discovers the ``cmd_*`` modules beside it.

Exit status: 0 on success; 2 for every user error (argparse's own for option values, and
``fastmoments CMD: error: MESSAGE`` on one line for a file that cannot be read, an output that
cannot be written, or a value the library refuses); 1 for a bug in fastmoments, shown with its
traceback and a line asking to report it; 130 when interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import traceback
from collections.abc import Sequence

import fastmoments.cli as _cli

from ._args import ArgumentParser
from ._errors import UsageError

#: The exceptions that mean the user asked for something that cannot be done: the CLI's own
#: :class:`UsageError`, and the library's documented errors for bad values and types (their
#: messages name the parameter), a missing file, and a request larger than memory.
USER_ERRORS = (UsageError, ValueError, TypeError, FileNotFoundError, MemoryError)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command registered (an unknown command, option or
    choice is answered with the command's usage and ``did you mean ...?``:
    :class:`~fastmoments.cli._args.ArgumentParser`)."""
    from fastmoments import __version__

    parser = ArgumentParser(
        prog="fastmoments",
        description="Orthogonal moments and fast transforms of images, volumes and signals.",
    )
    parser.add_argument("--version", action="version", version=f"fastmoments {__version__}")
    sub = parser.add_command_parsers(dest="command", metavar="COMMAND")
    names = sorted(m.name for m in pkgutil.iter_modules(_cli.__path__) if m.name.startswith("cmd_"))
    for name in names:
        module = importlib.import_module(f"fastmoments.cli.{name}")
        module.register(sub)
    return parser


def _issue_tracker() -> str:
    """Where to report a bug: the package's ``Issues`` project URL when it has one."""
    try:
        from importlib.metadata import metadata

        for entry in metadata("fastmoments").get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            if label.strip().lower() in ("issues", "bug tracker", "tracker", "bugs"):
                return url.strip()
    except Exception:  # no metadata (not installed): the sentence below still says what to do
        pass
    return "the fastmoments issue tracker"


def _message(exc: BaseException) -> str:
    """One line: the exception's message (its type where it has none, as a bare MemoryError)."""
    text = " ".join(str(exc).split())
    if isinstance(exc, MemoryError):
        return "out of memory" + (f": {text}" if text else
                                  " (try smaller orders, sizes or batches, or another device)")
    if isinstance(exc, FileNotFoundError) and exc.filename and exc.strerror is not None:
        return f"{exc.strerror}: {exc.filename}"
    return text or type(exc).__name__


class _StartupCollector:
    """The cyclic garbage collector paused while the program imports its libraries.

    Importing torch (and then matplotlib) creates a few million objects, and the collector
    scans all of them again and again as they pile up: about 0.25 s of a 2-core machine's
    first call, a tenth of ``fastmoments scalogram chirp``. The program's own process (run
    as ``fastmoments`` or ``python -m fastmoments``, ``argv`` read from ``sys.argv``) pauses
    the collector while it parses the command line (the ``--device`` check imports torch),
    then moves every object alive to the permanent generation (:func:`gc.freeze`: modules,
    classes and functions that live as long as the process) and resumes it, so that later
    collections scan only what the command itself makes. A caller of :func:`main` with an
    explicit ``argv`` (a test, a script) keeps its collector as it is.
    """

    def __init__(self, program: bool) -> None:
        import gc

        self.paused = program and gc.isenabled()
        if self.paused:
            gc.disable()

    def resume(self) -> None:
        import gc

        if self.paused:
            self.paused = False
            gc.freeze()
            gc.enable()


def _exit_now(status: int) -> None:
    """End the program's process at once with ``status``, once its work is done.

    A normal interpreter exit tears down every module and object that torch and matplotlib
    made (a few million): 0.7-0.8 s of a 2-core machine after ``fastmoments scalogram``,
    longer than drawing the figure. The command has closed its files by then, so this runs
    what an exit must run, the :mod:`atexit` handlers (logging, temporary folders, child
    processes, torch's own), flushes stdout and stderr (a failed flush gives status 120, as
    Python's own exit does), and ends the process with :func:`os._exit`: 0.03-0.05 s in all.
    Returns without exiting (the interpreter then exits as usual) while any thread other than
    the main one still runs and is not a daemon, since a normal exit would wait for it.
    """
    import atexit
    import os
    import threading

    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive()
           for t in threading.enumerate()):
        return
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):  # a closed or broken pipe, a full disk
                status = status or 120
        os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module notes).

    Run as the program (``argv`` read from ``sys.argv``: the ``fastmoments`` command,
    ``python -m fastmoments``), it ends the process itself once the command is done, without
    returning (see :func:`_exit_now`); with an explicit ``argv`` it returns the status.
    """
    status = _main(argv)
    if argv is None:
        _exit_now(status)
    return status


def _main(argv: Sequence[str] | None) -> int:
    """The body of :func:`main`: parse, run the command, map errors to exit statuses."""
    if argv is None:  # the program: its figure may be drawn by a helper (see _drawing)
        from ._drawing import start_for

        start_for(sys.argv[1:])
    collector = _StartupCollector(program=argv is None)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed the usage and the error, or --help/--version
        return exc.code if isinstance(exc.code, int) else 2
    finally:
        collector.resume()
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except USER_ERRORS as exc:
        print(f"fastmoments {args.command}: error: {_message(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"fastmoments {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception:
        traceback.print_exc()
        print(f"fastmoments {args.command}: this is a bug in fastmoments; please report it at "
              f"{_issue_tracker()} with the command line and the traceback above",
              file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
