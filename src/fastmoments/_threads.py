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
  a parallel region's start (:func:`threads_for`, :data:`GRAIN`);
* sets the count for the call alone (:func:`cpu_threads`, :func:`cpu_call`) and gives the
  previous one back.

Inside a call whose torch ops run on one thread, a compiled (numba) kernel with work enough
for several still gets them: :func:`thread_limit` reads the caller's ceiling, not the count
the call lowered.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import PurePosixPath
from typing import Any, TypeVar

import torch

__all__ = ["GRAIN", "cgroup_cpu_quota", "cpu_call", "cpu_threads", "host_values",
           "per_value", "thread_limit",
           "threads_for", "usable_cpus"]

#: The least work, in multiply-adds (or samples times filter terms), worth one more thread:
#: about 5-10 ms of one core, longer than a scheduler's time slice, so that a thread that
#: waits for a busy CPU at the region's barrier costs a fraction of the region and not a
#: multiple of it. Measured with ``benchmarks/threads_busy.py`` on 2 CPUs of a 16-core host
#: (``benchmarks/results/threads_busy_2cpu.md``): with torch's own count (2 threads) and
#: one CPU busy, calls of 1-50 ms took 8-69x their one-thread time; with this grain (and
#: the families' work counts) the ratio is 0.8-1.3, except a 32-scale CWT of 10^5 samples
#: (1.6: its compiled kernel splits 30 ms over 2 threads). Idle, a call that used 2 threads
#: for small work (Zernike 512², order 20) now takes its one-thread time.
GRAIN = float(1 << 24)

#: The caller's thread ceiling while a call runs with fewer torch threads (:func:`cpu_threads`).
_CEILING: ContextVar[int | None] = ContextVar("fastmoments_thread_ceiling", default=None)

F = TypeVar("F", bound=Callable[..., Any])


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
    """The most threads a call may use: :func:`usable_cpus`, and torch's own setting (the
    caller's, where a fastmoments call lowered it for its own torch ops)."""
    ceiling = _CEILING.get()
    return max(1, min(usable_cpus(), torch.get_num_threads() if ceiling is None else ceiling))


def threads_for(work: float, grain: float = GRAIN) -> int:
    """Threads for a call of ``work`` units, each thread getting at least ``grain`` of them.

    Parameters
    ----------
    work : float
        The call's work in the family's unit (multiply-adds, samples, pixels ...).
    grain : float, optional
        The least work worth one more thread in that unit (:data:`GRAIN` by default).

    Returns
    -------
    int
        ``clip(floor(work / grain), 1, thread_limit())``.

    Examples
    --------
    >>> threads_for(10, grain=100)
    1
    >>> threads_for(1e12) == thread_limit()
    True
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
    token = _CEILING.set(thread_limit())
    torch.set_num_threads(count)
    try:
        yield count
    finally:
        torch.set_num_threads(before)
        _CEILING.reset(token)


def cpu_call(work: Callable[..., float | None]) -> Callable[[F], F]:
    """Decorate a public call so that its torch ops run on :func:`threads_for` its work.

    Parameters
    ----------
    work : callable
        Called with the decorated function's arguments; returns the call's work (the unit of
        :data:`GRAIN`), or ``None`` where the call does not compute on the CPU (its tensors
        are on a GPU), which leaves the threads as they are. Arguments it cannot read leave
        them as they are too: the call then raises its own error, naming the parameter.

    Examples
    --------
    >>> @cpu_call(lambda n: n)
    ... def threads(n):
    ...     return torch.get_num_threads()
    >>> threads(10)
    1
    """

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                amount = work(*args, **kwargs)
            except (TypeError, ValueError, AttributeError, IndexError, OverflowError):
                amount = None  # bad arguments: the call itself says what is wrong
            if amount is None:
                return fn(*args, **kwargs)
            with cpu_threads(threads_for(amount)):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def per_value(cost: float | Callable[..., float], *, arg: int = 0) -> Callable[..., float | None]:
    """A work function for :func:`cpu_call`: the values of argument ``arg`` times ``cost``.

    ``cost`` is a number, or a function of the same arguments (for a plan's method, of
    ``self`` and the input: its order, its number of scales ...). ``None`` (no change of
    threads) where that argument lives on a GPU.
    """

    def work(*args: Any, **kwargs: Any) -> float | None:
        n = host_values(args[arg]) if len(args) > arg else None
        if n is None:
            return None
        return n * (cost(*args, **kwargs) if callable(cost) else cost)

    return work


def host_values(x: Any) -> int | None:
    """Values of an array the CPU computes on: ``x.size`` of NumPy input (or anything else
    array-like), ``x.numel()`` of a CPU tensor, ``None`` for a tensor on another device.
    A moments object counts by its ``data`` tensor (never converted: on a GPU that would copy
    the moments to the host)."""
    if type(x) is torch.Tensor:  # (the usual input, without the checks below)
        return None if x.device.type != "cpu" else x.numel()
    data = getattr(x, "data", None)
    if isinstance(data, torch.Tensor) and not isinstance(x, torch.Tensor):
        x = data
    if isinstance(x, torch.Tensor):
        return None if x.device.type != "cpu" else x.numel()
    size = getattr(x, "size", None)
    if isinstance(size, int):
        return size
    try:
        import numpy as np

        return int(np.asarray(x).size)
    except (TypeError, ValueError):
        return None
