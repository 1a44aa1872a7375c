"""A drawing process: matplotlib imported on a second core while the command computes.

A first ``fastmoments scalogram`` spends most of its time importing libraries: torch (about
1.7-2.0 s on a 2-core machine) for the transform, then matplotlib (about 0.7 s) for the figure.
The two do not depend on each other, but one Python process imports them one after the other
(threads do not help: an import holds the interpreter lock). So the program's own process
(:func:`fastmoments.cli.main.main` run as the program) starts, for the commands in
:data:`DRAWING_COMMANDS`, a helper Python process *before* it imports torch. The helper imports
matplotlib and the figure module while the command imports torch and computes, then waits for
one job: a module-level function of fastmoments, its arguments (small NumPy arrays and
strings, pickled through a pipe) and the file to write. The command waits for the answer.

Nothing changes in what is drawn: the helper calls the same function the command would call.
Where the helper is not wanted or not possible, the command draws in its own process: a
caller of ``main(argv)`` (tests, scripts), a machine with one core, a helper that failed to
start, died, or reported any error (the command then draws itself, so that the error it
reports is the one an in-process drawing raises, with its usual message).
"""

from __future__ import annotations

import pickle
import struct
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

__all__ = ["DRAWING_COMMANDS", "Drawer", "draw", "serve", "start_for"]

#: Commands whose figure is drawn by the helper process when the program runs them.
DRAWING_COMMANDS = frozenset({"scalogram"})

# what the helper imports before it reads its job (the figure modules, not torch)
_PRELOAD = ("numpy", "matplotlib.figure", "matplotlib.backends.backend_agg",
            "fastmoments.viz.figures")

_current: Drawer | None = None


def _cores() -> int:
    from .._threads import usable_cpus

    return usable_cpus()


def _send(stream: BinaryIO, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)))
    stream.write(data)
    stream.flush()


def _receive(stream: BinaryIO) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the other process closed the pipe")
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other process closed the pipe")
    return pickle.loads(data)  # our own process is on the other end of the pipe


class Drawer:
    """A helper Python process that has imported matplotlib and draws one job on request.

    Parameters
    ----------
    executable : str, optional
        The Python interpreter (default: this one, ``sys.executable``).

    Examples
    --------
    >>> d = Drawer()                      # doctest: +SKIP
    >>> d.run(some_module_function, args)  # doctest: +SKIP
    >>> d.close()                         # doctest: +SKIP
    """

    def __init__(self, executable: str | None = None) -> None:
        self.proc: subprocess.Popen | None = subprocess.Popen(
            [executable or sys.executable, "-c",
             "from fastmoments.cli._drawing import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            close_fds=True)

    def run(self, fn: Callable[..., Any], args: Sequence[Any]) -> bool:
        """Run ``fn(*args)`` in the helper; ``True`` when it finished there without error.

        ``fn`` must be a module-level function (sent by module and name). ``False`` (the
        caller then runs ``fn`` itself) when the helper is gone, its pipe broke, or ``fn``
        raised there. The helper serves one job; it is closed afterwards.
        """
        proc = self.proc
        if proc is None or proc.poll() is not None:
            self.close()
            return False
        try:
            _send(proc.stdin, (fn.__module__, fn.__qualname__, tuple(args)))
            ok = _receive(proc.stdout) == "ok"
        except (OSError, EOFError, pickle.PickleError, AttributeError, TypeError):
            ok = False
        self.close()
        return ok

    def close(self) -> None:
        """End the helper (it exits by itself when its pipe closes)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a stuck helper
            proc.kill()


def _wanted(argv: Sequence[str]) -> bool:
    """Whether the program's command line ``argv`` (without the program name) asks for a
    command of :data:`DRAWING_COMMANDS` that will draw (no ``-h``/``--help``/``--version``)."""
    if not argv or argv[0] not in DRAWING_COMMANDS:
        return False
    if any(a in ("-h", "--help", "--version") for a in argv):
        return False
    return _cores() >= 2


def start_for(argv: Sequence[str]) -> Drawer | None:
    """Start the helper for the program's command line ``argv`` when :func:`_wanted`; it
    becomes the one :func:`draw` uses. Never raises: without a helper the command draws
    itself."""
    global _current
    if not _wanted(argv):
        return None
    try:
        _current = Drawer()
    except OSError:  # pragma: no cover - no process could be started
        _current = None
    return _current


def draw(fn: Callable[..., Any], *args: Any) -> None:
    """``fn(*args)``: in the helper process when the program started one, else here."""
    global _current
    drawer, _current = _current, None
    if drawer is not None and drawer.run(fn, args):
        return
    fn(*args)


def serve(stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """The helper's body: import the figure modules, then run one job from ``stdin`` and
    answer ``"ok"`` or ``"error"`` on ``stdout``."""
    import importlib

    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    sys.stdout = sys.stderr  # anything the job prints stays out of the answer's pipe
    try:
        for name in _PRELOAD:
            importlib.import_module(name)
    except Exception:  # the job then fails too, and the command draws itself
        pass
    try:
        module, name, args = _receive(stdin)
    except (EOFError, OSError):  # the command ended without drawing
        return
    try:
        fn: Any = importlib.import_module(module)
        for part in name.split("."):
            fn = getattr(fn, part)
        fn(*args)
        answer = "ok"
    except Exception:
        answer = "error"
    try:
        _send(stdout, answer)
    except OSError:  # pragma: no cover - the command is gone
        pass
