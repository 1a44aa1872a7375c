"""The progress bar of fastmoments: one tqdm bar, for the library's long jobs and every command.

One convention:

- ``progress=True`` shows the bar, ``False`` never does, ``None`` (the default) shows it only
  on a terminal (stderr is a TTY, or a Jupyter kernel runs the code) and only for a long job
  (more than 8 steps, or a job its caller calls large, once it has run for a second); the
  commands' ``--progress/--no-progress`` are ``True``/``False``, and their default is ``None``.
- The bar has a total, so it shows the steps done, the elapsed time and the time left (ETA).
- It writes to stderr and ends its line when the job is done (the last state stays on
  screen, followed by a newline), so that what the program prints next starts on a line of
  its own.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

__all__ = ["check_progress", "on_terminal", "progress", "progress_bar", "resolve_progress"]

#: Seconds a bar shown automatically waits before it appears (short calls print nothing).
DELAY_S = 1.0


def on_terminal() -> bool:
    """Whether a bar shown by default would be seen: stderr is a terminal, or the code runs
    in a Jupyter kernel (where tqdm draws a widget)."""
    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):  # a closed or replaced stream
        pass
    return "ipykernel" in sys.modules


def check_progress(value: Any, name: str = "progress") -> bool | None:
    """``value`` as a progress option: ``True``, ``False`` or ``None``, else a ``TypeError``
    that names the parameter.

    >>> check_progress(None) is None
    True
    """
    if value is None or isinstance(value, bool):
        return value
    raise TypeError(f"{name} must be True, False or None, got {value!r}")


def resolve_progress(value: Any, *, large: bool = True, name: str = "progress") -> bool:
    """Whether to show a bar: ``value`` if it is ``True`` or ``False``; for ``None``, a
    ``large`` job :func:`on_terminal`.

    >>> resolve_progress(False), resolve_progress(True, large=False)
    (False, True)
    """
    value = check_progress(value, name)
    if value is not None:
        return value
    return large and on_terminal()


def progress(it: Iterable[T], *, total: int | None = None, desc: str = "",
             show: bool | None = None, **kwargs: Any) -> Iterator[T]:
    """Wrap ``it`` in the bar.

    ``show=None`` shows the bar only on a terminal and for jobs of more than 8 steps (after
    :data:`DELAY_S`); ``True`` always, at once; ``False`` never. Anything else (``1``,
    ``"yes"``) is a :class:`TypeError` naming ``progress``, raised at the call, before any
    work.

    >>> list(progress(range(3), show=False))
    [0, 1, 2]
    >>> progress(range(3), show="yes")
    Traceback (most recent call last):
    ...
    TypeError: progress must be True, False or None, got 'yes'
    """
    show = check_progress(show)
    if total is None:
        try:
            total = len(it)  # type: ignore[arg-type]
        except TypeError:
            total = None
    if not resolve_progress(show, large=total is None or total > 8):
        return iter(it)
    kwargs.setdefault("delay", 0.0 if show else DELAY_S)
    return iter(tqdm(it, total=total, desc=desc, leave=True, **kwargs))


class _Silent:
    """Stands in for a bar that is not shown: its methods do nothing."""

    n = 0

    def update(self, n: int = 1) -> None:
        """Nothing to show."""

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Nothing to show."""

    def set_description_str(self, desc: str = "", refresh: bool = True) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing to close."""

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def progress_bar(total: int, *, desc: str = "", show: bool | None = None, large: bool = True,
                 unit: str = "it", delay: float = DELAY_S) -> Any:
    """The bar of ``total`` steps that the caller advances with ``update(n)``.

    ``show=True`` shows it at once; ``show=False`` never (a silent stand-in with the same
    methods: ``update``, ``set_postfix_str``, ``set_description_str``, ``close``);
    ``show=None`` (automatic) only for a ``large`` job on a terminal, and only once it has
    run for ``delay`` seconds, so that short calls, in a loop say, print nothing and pay
    nothing.

    >>> bar = progress_bar(10, show=False)
    >>> bar.update(3); bar.close()
    """
    show = check_progress(show)
    if not resolve_progress(show, large=large):
        return _Silent()
    # tqdm writes to sys.stderr, as it is at the call; leave=True ends the bar's line
    return tqdm(total=total, desc=desc, unit=unit, leave=True, delay=0.0 if show else delay)
