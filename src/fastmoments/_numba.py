"""What the numba kernel modules share (imported by them only: ``import fastmoments`` does
not import numba)."""

from __future__ import annotations

import numba

__all__ = ["set_threads"]


def set_threads(count: int) -> None:
    """Use at most ``count`` of numba's threads (never more than it started with)."""
    numba.set_num_threads(max(1, min(int(count), numba.config.NUMBA_NUM_THREADS)))
