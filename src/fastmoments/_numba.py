"""What the numba kernel modules share (imported by them only: ``import fastmoments`` does
not import numba)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numba

__all__ = ["CHUNKS", "set_threads", "threads"]

#: Parallel loops over objects cut them into this many runs of consecutive objects a thread
#: (:func:`threads` hands the runs out one at a time): several, so that a thread whose CPU
#: is busy takes fewer of them.
CHUNKS = 4


def set_threads(count: int) -> None:
    """Use at most ``count`` of numba's threads (never more than it started with)."""
    numba.set_num_threads(max(1, min(int(count), numba.config.NUMBA_NUM_THREADS)))


@contextmanager
def threads(count: int) -> Iterator[None]:
    """Run a block on ``count`` of numba's threads (:func:`set_threads`), handing their
    parallel loops out one iteration at a time (``numba.parallel_chunksize(1)``: a thread
    whose CPU is busy takes fewer iterations instead of holding the others at the end), then
    restore the count before."""
    before = numba.get_num_threads()
    set_threads(count)
    try:
        with numba.parallel_chunksize(1):
            yield
    finally:
        numba.set_num_threads(before)
