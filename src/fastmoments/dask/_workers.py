"""What the tasks of :mod:`fastmoments.dask` share: thread sizing inside a worker, the count of
plans built in this process, and :func:`local_cluster`.

The module is named ``fastmoments.dask``; ``import dask`` inside it still means the top-level
Dask package (absolute imports, Python 3), never this module.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch

from .._validate import check_int
from .memory import MMAP_THRESHOLD, TRIM_THRESHOLD

__all__ = ["MEMORY_PRELOAD", "REUSE_MEMORY_ENV", "THREADS_ENV", "available_cores",
           "configure_threads", "local_cluster", "plan_builds"]

#: Environment variable that fixes torch's threads in every task (set by :func:`local_cluster`
#: in the workers it starts; set it yourself on the workers of a real cluster).
THREADS_ENV = "FASTMOMENTS_TORCH_THREADS"

#: Dask's setting for the worker profiler, as an environment variable of the worker processes.
PROFILE_ENV = "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"

#: The allocator settings of :mod:`fastmoments.dask.memory` as glibc's environment variables,
#: for ``distributed.nanny.pre-spawn-environ`` in the Dask configuration of a real cluster (the
#: allocator reads them when a process starts; see the Dask guide, *Memory*).
#: :func:`local_cluster` sets the same values inside its workers with the preload
#: :data:`MEMORY_PRELOAD` instead.
REUSE_MEMORY_ENV = {"MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD),
                    "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD)}

#: The worker preload that sets them (``dask worker --preload fastmoments.dask.memory``).
MEMORY_PRELOAD = "fastmoments.dask.memory"

#: Plans built by the cached factories of this process, by factory name.
_BUILDS: Counter[str] = Counter()


def plan_builds() -> dict[str, int]:
    """How many plans the cached factories of :mod:`fastmoments.dask` built in this process.

    Returns
    -------
    dict
        ``{factory name: count}``; a factory builds a plan the first time a worker process sees
        its plain parameters, so after a many-chunk job each count is 1 per worker process.

    Examples
    --------
    >>> isinstance(plan_builds(), dict)
    True
    """
    return dict(_BUILDS)


def _count(name: str) -> None:
    _BUILDS[name] += 1


def cached_factory(name: str, maxsize: int = 32) -> Callable[[Callable[..., Any]], Any]:
    """An ``lru_cache`` keyed on plain values that builds each plan once per process, also
    when a worker's threads ask for it at the same moment (a bare ``lru_cache`` lets every
    thread that misses build its own copy). Each build is counted in :func:`plan_builds`."""

    def deco(fn: Callable[..., Any]) -> Any:
        def build(*args: Any) -> Any:
            _count(name)
            return fn(*args)

        cached = functools.lru_cache(maxsize=maxsize)(build)
        lock = threading.Lock()

        @functools.wraps(fn)
        def factory(*args: Any) -> Any:
            with lock:  # builds are rare; a hit costs one uncontended lock
                return cached(*args)

        factory.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        factory.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return factory

    return deco


def available_cores() -> int:
    """CPU cores this process may keep busy: its affinity mask, capped by its cgroup's CPU
    quota (:func:`fastmoments._threads.usable_cpus`)."""
    from .._threads import usable_cpus

    return usable_cpus()


def _threads_in_process() -> int | None:
    """Task threads of the Dask workers of this process (``None`` outside a worker)."""
    try:
        from distributed import get_worker
        from distributed.worker import Worker
    except ImportError:  # pragma: no cover - distributed is part of the extra
        return None
    try:
        me = get_worker()
    except ValueError:
        return None
    total = 0
    for w in list(getattr(Worker, "_instances", ())):
        if getattr(w, "status", None) is not None and str(w.status).endswith("closed"):
            continue
        total += int(getattr(getattr(w, "state", w), "nthreads", 0) or 0)
    return max(total, int(me.state.nthreads), 1)


def configure_threads() -> int:
    """Size torch's intra-op threads for a task running in this process; return the count.

    The rule: ``FASTMOMENTS_TORCH_THREADS`` when set; else, inside a Dask worker,
    ``cores // task threads of the workers of this process``, never more than torch has now
    (Dask's nanny starts worker processes with ``OMP_NUM_THREADS=1``, so several worker
    processes on one host stay at one torch thread each); outside a worker nothing changes.
    """
    env = os.environ.get(THREADS_ENV)
    current = torch.get_num_threads()
    if env:
        try:
            want = max(1, int(env))
        except ValueError as exc:
            raise ValueError(f"{THREADS_ENV} must be a positive integer, got {env!r}") from exc
    else:
        threads = _threads_in_process()
        if threads is None:
            return current
        want = min(current, max(1, available_cores() // threads))
    if want != current:
        torch.set_num_threads(want)
    return want


def local_cluster(n_workers: int | None = None, threads_per_worker: int = 1, *,
                  torch_threads: int | None = None, processes: bool = True,
                  profile: bool = False, reuse_memory: bool = True, **kwargs: Any) -> Any:
    """A :class:`distributed.LocalCluster` sized so that workers x threads x torch threads
    stays within the cores.

    Parameters
    ----------
    n_workers : int, optional
        Worker processes (default: ``cores // threads_per_worker``).
    threads_per_worker : int
        Tasks each worker runs at once (default 1: torch threads do the parallel work).
    torch_threads : int, optional
        torch intra-op threads per task (default ``cores // (n_workers * threads_per_worker)``,
        at least 1).
    processes : bool
        Worker processes (default) or threads of this process (then torch's thread count of
        this process is set, since all workers share it).
    profile : bool
        Keep Dask's statistical profiler in the worker processes (default ``False``: it
        samples every task thread every 10 ms, which on a 2-core machine cost ~13% of the
        per-task overhead; the dashboard's profile page then stays empty).
    reuse_memory : bool
        Add the preload :mod:`fastmoments.dask.memory` to the workers (default ``True``): it
        sets glibc's allocator thresholds inside each worker process, also a restarted one,
        so that freed large buffers stay in the worker for its next task. ``False`` keeps
        Dask's setting, which returns memory to the OS at once. On a 2-core AMD EPYC a
        5000-image feature task took 9300 page faults and 20-30% more CPU time with Dask's
        setting. Ignored with ``processes=False`` and on systems without glibc.
    **kwargs
        Passed to :class:`distributed.LocalCluster` (``memory_limit``, ``dashboard_address``,
        ...).

    Returns
    -------
    distributed.LocalCluster
        Connect with ``distributed.Client(cluster)``; close both when done.

    Raises
    ------
    ValueError
        When ``n_workers * threads_per_worker * torch_threads`` exceeds the cores (more task
        threads than cores are accepted with ``torch_threads=1``, e.g. for tasks that wait on
        storage).
    TypeError
        Non-integer counts.

    Notes
    -----
    An oversubscribed 2-core machine ran up to 18 times slower with torch's default thread
    count in every worker: each task then spreads over all cores while the other tasks do the
    same. The workers get ``FASTMOMENTS_TORCH_THREADS`` and ``OMP_NUM_THREADS`` in their
    environment; every task of :mod:`fastmoments.dask` applies it (:func:`configure_threads`).
    """
    from distributed import LocalCluster

    cores = available_cores()
    threads_per_worker = check_int("threads_per_worker", threads_per_worker, minimum=1)
    if n_workers is None:
        n_workers = max(1, cores // threads_per_worker)
    n_workers = check_int("n_workers", n_workers, minimum=1)
    if torch_threads is None:
        torch_threads = max(1, cores // (n_workers * threads_per_worker))
    torch_threads = check_int("torch_threads", torch_threads, minimum=1)
    total = n_workers * threads_per_worker * torch_threads
    if total > cores and not (n_workers * threads_per_worker > cores and torch_threads == 1):
        raise ValueError(f"torch_threads={torch_threads} with n_workers={n_workers} x "
                         f"threads_per_worker={threads_per_worker} asks for {total} threads on "
                         f"{cores} cores; expected at most {cores}")
    if not isinstance(processes, bool):
        raise TypeError(f"processes must be True or False, got {processes!r}")
    if not isinstance(profile, bool):
        raise TypeError(f"profile must be True or False, got {profile!r}")
    if not isinstance(reuse_memory, bool):
        raise TypeError(f"reuse_memory must be True or False, got {reuse_memory!r}")
    if processes and reuse_memory:
        import dask

        preload = kwargs.get("preload")
        if preload is None:  # the nanny's default, which an explicit list would replace
            preload = dask.config.get("distributed.worker.preload", None) or []
        preload = [preload] if isinstance(preload, str) else list(preload)
        if MEMORY_PRELOAD not in preload:
            preload.append(MEMORY_PRELOAD)
        kwargs["preload"] = preload
    if processes:
        env = dict(kwargs.pop("env", None) or {})
        env.setdefault(THREADS_ENV, str(torch_threads))
        env.setdefault("OMP_NUM_THREADS", str(torch_threads))
        if not profile:
            env.setdefault(PROFILE_ENV, "False")
        kwargs["env"] = env
    else:
        torch.set_num_threads(torch_threads)
    return LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker,
                        processes=processes, **kwargs)
