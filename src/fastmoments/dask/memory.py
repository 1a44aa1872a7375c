"""A Dask worker preload that lets worker processes reuse their freed buffers.

Dask's nanny starts every worker process with ``MALLOC_TRIM_THRESHOLD_=65536``. With glibc,
setting any allocator threshold switches off the allocator's own adaptation, so every buffer
above 128 KiB is then mapped from the operating system afresh and page-faulted again at each
task. :func:`dask_setup` sets glibc's thresholds inside the worker (``mallopt``) to the steady
state glibc reaches by itself after a few large frees: buffers below 32 MiB come from the heap
and up to 64 MiB of freed heap stays in the process for the next task.

:func:`fastmoments.dask.local_cluster` adds this module to its workers' preloads. On a real
cluster, start the workers with it::

    dask worker tcp://scheduler:8786 --preload fastmoments.dask.memory

or list it under ``distributed.worker.preload`` in the Dask configuration.
"""

from __future__ import annotations

import ctypes
import platform
from typing import Any

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "applied", "dask_setup", "reuse_freed_memory"]

#: Buffers below this many bytes come from the heap (glibc's largest automatic value).
MMAP_THRESHOLD = 32 << 20
#: Up to this many bytes of freed heap stay in the process.
TRIM_THRESHOLD = 64 << 20

# mallopt's parameter numbers (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

#: Whether :func:`reuse_freed_memory` has set the thresholds in this process.
_APPLIED = {"done": False}


def reuse_freed_memory() -> bool:
    """Set glibc's allocator thresholds of this process to :data:`MMAP_THRESHOLD` and
    :data:`TRIM_THRESHOLD`.

    Returns
    -------
    bool
        ``True`` when both were set; ``False`` on systems without glibc, where nothing is
        changed.
    """
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(None)
    done = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    _APPLIED["done"] = _APPLIED["done"] or done
    return done


def applied() -> bool:
    """Whether this process has run :func:`reuse_freed_memory` successfully.

    Returns
    -------
    bool
        Check the workers of a cluster with
        ``client.run(fastmoments.dask.memory.applied)``.
    """
    return _APPLIED["done"]


def dask_setup(worker: Any) -> None:
    """Dask's preload hook: :func:`reuse_freed_memory` in each worker process when the worker
    starts (also a restarted one, and one added by ``cluster.scale``).

    Parameters
    ----------
    worker : distributed.Worker
        The starting worker (unused: the settings belong to its process).
    """
    reuse_freed_memory()
