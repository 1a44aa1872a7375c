"""The CPU threads a call may use: the CPUs the process may run on, and the work it has.

A machine is rarely idle: a laptop runs a browser, a cluster node runs other jobs under a
cgroup quota, a Dask worker shares its host with others. A parallel region whose threads
outnumber the CPUs free to run them waits at every barrier for a thread that is not
running; many small regions per call then cost several times the single-threaded time.
So every CPU call here

* never uses more threads than the process may run on: its affinity mask and its cgroup's
  CPU quota (``cpu.max`` in cgroup v2, ``cpu.cfs_quota_us / cpu.cfs_period_us`` in v1), nor
  more than torch's own setting (``OMP_NUM_THREADS`` or ``torch.set_num_threads``), which
  is the user's ceiling;
* uses one thread unless its work is large enough that each extra thread gets a share worth
  a parallel region's start (:func:`threads_for`);
* sets the count for the call alone (:func:`cpu_threads`) and gives the previous one back.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath

import torch

__all__ = ["cgroup_cpu_quota", "cpu_threads", "thread_limit", "threads_for", "usable_cpus"]


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def cgroup_cpu_quota(proc_cgroup: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup",
                     read: Callable[[str], str | None] = _read) -> float | None:
    """CPUs' worth of time the process's cgroups allow per period, or ``None`` if unlimited.

    Parameters
    ----------
    proc_cgroup : str
        The file listing the process's cgroups (``hierarchy:controllers:path`` lines).
    root : str
        Where the cgroup file systems are mounted (v2 at ``root``, v1's ``cpu`` controller at
        ``root/cpu``).
    read : callable
        ``read(path)`` returns a file's text or ``None`` (tests inject their own).

    Notes
    -----
    The cgroup and each of its ancestors may set a quota; the smallest wins. Inside a
    container the path may not exist under the mount, so the walk goes up to the root.

    Examples
    --------
    >>> files = {"/c": "0::/job\\n", "/fs/job/cpu.max": "150000 100000\\n"}
    >>> cgroup_cpu_quota("/c", "/fs", files.get)
    1.5
    """
    text = read(proc_cgroup)
    if not text:
        return None
    best: float | None = None
    for line in text.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        hid, controllers, path = parts
        v2 = hid == "0" and controllers == ""
        if not v2 and "cpu" not in controllers.split(","):
            continue
        base = root if v2 else root + "/cpu"
        p = PurePosixPath("/") / path.lstrip("/")
        for d in (p, *p.parents):
            here = base.rstrip("/") + ("" if str(d) == "/" else str(d))
            quota = _quota_v2(read(f"{here}/cpu.max")) if v2 else _quota_v1(
                read(f"{here}/cpu.cfs_quota_us"), read(f"{here}/cpu.cfs_period_us"))
            if quota is not None:
                best = quota if best is None else min(best, quota)
    return best


def _quota_v2(text: str | None) -> float | None:
    fields = (text or "").split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        quota, period = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def _quota_v1(quota_text: str | None, period_text: str | None) -> float | None:
    try:
        quota, period = int((quota_text or "").strip()), int((period_text or "").strip())
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


@functools.lru_cache(maxsize=1)
def usable_cpus() -> int:
    """CPUs this process may keep busy: its affinity mask, capped by its cgroup's quota.

    Read once per process (the files cost tens of microseconds, and neither changes under a
    running job in practice).
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    if quota is not None:
        cpus = min(cpus, max(1, math.floor(quota)))
    return max(1, cpus)


def thread_limit() -> int:
    """The most threads a call may use: :func:`usable_cpus`, and torch's own setting."""
    return max(1, min(usable_cpus(), torch.get_num_threads()))


def threads_for(work: float, grain: float) -> int:
    """Threads for a call of ``work`` units, each thread getting at least ``grain`` of them.

    Parameters
    ----------
    work : float
        The call's work in the family's unit (multiply-adds, samples, pixels ...).
    grain : float
        The least work worth one more thread in that unit, measured per family (the constant
        cites the benchmark that measured it).

    Returns
    -------
    int
        ``clip(floor(work / grain), 1, thread_limit())``.

    Examples
    --------
    >>> threads_for(10, grain=100)
    1
    """
    if not work > 0 or not grain > 0:
        return 1
    return max(1, min(thread_limit(), int(work // grain)))


@contextmanager
def cpu_threads(count: int) -> Iterator[int]:
    """Run a block with ``count`` torch intra-op threads, then restore the count before it.

    Torch's OpenMP backend keeps the count per calling thread, so a call in one Python
    thread does not change another's. Nothing is set when the count is already ``count``.

    Examples
    --------
    >>> with cpu_threads(1) as n:
    ...     n
    1
    """
    count = max(1, int(count))
    before = torch.get_num_threads()
    if before == count:
        yield count
        return
    torch.set_num_threads(count)
    try:
        yield count
    finally:
        torch.set_num_threads(before)
