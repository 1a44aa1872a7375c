"""Progress bars (tqdm) for long jobs, silent for short ones."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

__all__ = ["check_progress", "progress", "progress_bar"]


def progress(it: Iterable[T], *, total: int | None = None, desc: str = "",
             show: bool | None = None, **kwargs: Any) -> Iterator[T]:
    """Wrap ``it`` in a tqdm bar.

    ``show=None`` shows the bar only for jobs of more than 8 steps; ``False`` never shows it.
    Anything else (``1``, ``"yes"``) is a :class:`TypeError` naming ``progress``, raised at the
    call, before any work.

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
    if show is None:
        show = total is None or total > 8
    if not show:
        return iter(it)
    return iter(tqdm(it, total=total, desc=desc, leave=False, **kwargs))


class _Silent:
    """Stands in for a bar that is not shown: ``update`` and ``close`` do nothing."""

    def update(self, n: int = 1) -> None:
        """Nothing to show."""

    def close(self) -> None:
        """Nothing to close."""


def check_progress(value: Any, name: str = "progress") -> bool | None:
    """``value`` as a progress option: ``True``, ``False`` or ``None``, else a ``TypeError``
    that names the parameter."""
    if value is None or isinstance(value, bool):
        return value
    raise TypeError(f"{name} must be True, False or None, got {value!r}")


def progress_bar(total: int, *, desc: str = "", show: bool | None = None, large: bool = True,
                 unit: str = "it", delay: float = 1.0) -> Any:
    """A tqdm bar of ``total`` steps that the caller advances with ``update(n)``.

    ``show=True`` shows it at once; ``show=False`` never (a silent stand-in with the same
    methods); ``show=None`` (automatic) only for a ``large`` job, and only once it has run for
    ``delay`` seconds, so that short calls, in a loop say, print nothing and pay nothing.
    """
    show = check_progress(show)
    if show is False or (show is None and not large):
        return _Silent()
    return tqdm(total=total, desc=desc, unit=unit, leave=False,
                delay=0.0 if show else delay)
