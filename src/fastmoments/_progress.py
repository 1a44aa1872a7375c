"""Progress bars (tqdm) for long jobs, silent for short ones."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

__all__ = ["progress"]


def progress(it: Iterable[T], *, total: int | None = None, desc: str = "",
             show: bool | None = None, **kwargs: Any) -> Iterator[T]:
    """Wrap ``it`` in a tqdm bar.

    ``show=None`` shows the bar only for jobs of more than 8 steps; ``False`` never shows it.
    """
    if total is None:
        try:
            total = len(it)  # type: ignore[arg-type]
        except TypeError:
            total = None
    if show is None:
        show = total is None or total > 8
    if not show:
        yield from it
        return
    yield from tqdm(it, total=total, desc=desc, leave=False, **kwargs)
