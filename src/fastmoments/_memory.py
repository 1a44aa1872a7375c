"""Memory budgets and chunk sizes, so that any job runs within a bounded footprint.

Transforms split their work into chunks sized from a budget in bytes. By default the budget
is a safe fraction of the memory that is free on the device doing the work (like the dynamic
partition of the Zernike thesis, Sec. 4.3): on a GPU the free device memory reported by the
driver; on the CPU the least of

* the kernel's ``MemAvailable`` (``/proc/meminfo``);
* what the process's limits leave: ``RLIMIT_AS`` (``ulimit -v``) minus the current virtual
  size (``VmSize``), ``RLIMIT_DATA`` (``ulimit -d``) minus ``VmData``;
* what the memory cgroup of the process leaves (containers, batch schedulers): for cgroup v2
  ``memory.max`` (and ``memory.high``) minus ``memory.current``, for cgroup v1
  ``memory.limit_in_bytes`` minus ``memory.usage_in_bytes``, in the process's own cgroup
  (``/proc/self/cgroup``) and every ancestor; page cache that the kernel can drop
  (``inactive_file`` of ``memory.stat``) counts as free.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

import torch

from ._validate import check_real

__all__ = [
    "DEFAULT_FRACTION",
    "cgroup_headroom",
    "check_memory_budget",
    "cpu_memory_limits",
    "format_bytes",
    "free_memory",
    "memory_budget",
    "rlimit_headroom",
    "rows_per_chunk",
]

DEFAULT_FRACTION = 0.4
_CPU_CAP = 8 * 2**30  # never plan for more than 8 GiB of scratch on a CPU by default
_UNLIMITED = 2**60  # cgroup v1 writes "no limit" as a huge number (PAGE_COUNTER_MAX pages)
_ENV = "FASTMOMENTS_MEMORY_BUDGET"


def format_bytes(n: float) -> str:
    """Human-readable size.

    >>> format_bytes(3 * 2**30)
    '3.00 GiB'
    """
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def _read_text(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def _int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    if not text or text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return None if value >= _UNLIMITED else value


def _stat_field(text: str | None, *keys: str) -> int:
    """The first of ``keys`` found in a ``memory.stat`` text (bytes), else 0."""
    if not text:
        return 0
    fields = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            fields[parts[0]] = int(parts[1])
    for k in keys:
        if k in fields:
            return fields[k]
    return 0


def _status_kib(text: str | None, key: str) -> int | None:
    if not text:
        return None
    for line in text.splitlines():
        if line.startswith(key + ":"):
            try:
                return int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def cgroup_headroom(proc_cgroup: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup",
                    read: Callable[[str], str | None] = _read_text) -> int | None:
    """Bytes the process's memory cgroups still allow, or ``None`` if none sets a limit.

    Parameters
    ----------
    proc_cgroup : str
        The file listing the process's cgroups (``hierarchy:controllers:path`` lines).
    root : str
        Where the cgroup file systems are mounted: v2 at ``root`` (or ``root/unified``), v1's
        memory controller at ``root/memory``.
    read : callable
        ``read(path)`` returns a file's text or ``None`` if it cannot be read (tests inject
        their own).

    Notes
    -----
    The process's cgroup and each of its ancestors may carry a limit; the least headroom
    wins. Headroom is the limit minus the usage, where page cache on the inactive list
    (``inactive_file``, reclaimable without swapping) is not counted as used. Inside a
    container the cgroup path from ``/proc/self/cgroup`` may not exist under the mount (the
    container sees its own cgroup at the root); walking up to the root covers that case.

    Examples
    --------
    >>> files = {"/c": "0::/job\\n", "/fs/job/memory.max": "1073741824\\n",
    ...          "/fs/job/memory.current": "268435456\\n"}
    >>> cgroup_headroom("/c", "/fs", files.get)
    805306368
    """
    text = read(proc_cgroup)
    if not text:
        return None
    best: int | None = None
    for line in text.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        hid, controllers, path = parts
        if hid == "0" and controllers == "":
            bases = [root, root + "/unified"]
            files = (("memory.max", "memory.high"), "memory.current", ("inactive_file",))
        elif "memory" in controllers.split(","):
            bases = [root + "/memory"]
            files = (("memory.limit_in_bytes",), "memory.usage_in_bytes",
                     ("total_inactive_file", "inactive_file"))
        else:
            continue
        limits, usage_file, cache_keys = files
        p = PurePosixPath("/") / path.lstrip("/")
        chain = [p, *p.parents]
        for base in bases:
            for d in chain:
                here = base.rstrip("/") + ("" if str(d) == "/" else str(d))
                caps = [_int_or_none(read(f"{here}/{name}")) for name in limits]
                caps = [c for c in caps if c is not None]
                if not caps:
                    continue
                used = _int_or_none(read(f"{here}/{usage_file}")) or 0
                used -= min(used, _stat_field(read(f"{here}/memory.stat"), *cache_keys))
                room = max(0, min(caps) - used)
                best = room if best is None else min(best, room)
    return best


def rlimit_headroom(limit: int | None, used: int | None) -> int | None:
    """Bytes left under a resource limit (``None``: no limit, or the usage is unknown).

    >>> rlimit_headroom(4 * 2**30, 3 * 2**30) == 2**30
    True
    >>> rlimit_headroom(None, 2**30) is None
    True
    """
    if limit is None or used is None or limit < 0 or limit >= _UNLIMITED:
        return None
    return max(0, int(limit) - int(used))


def _getrlimit(which: str) -> int | None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    soft = resource.getrlimit(getattr(resource, which))[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)


def cpu_memory_limits(*, meminfo: str = "/proc/meminfo", status: str = "/proc/self/status",
                      proc_cgroup: str = "/proc/self/cgroup", cgroup_root: str = "/sys/fs/cgroup",
                      rlimits: dict[str, int | None] | None = None,
                      read: Callable[[str], str | None] = _read_text) -> dict[str, int]:
    """Bytes the CPU side may still allocate, by source (only the sources that apply).

    Keys: ``"MemAvailable"`` (the kernel's estimate), ``"RLIMIT_AS"`` (limit minus
    ``VmSize``), ``"RLIMIT_DATA"`` (limit minus ``VmData``), ``"cgroup"`` (see
    :func:`cgroup_headroom`). ``rlimits`` replaces :func:`resource.getrlimit` (soft limits by
    name, ``None`` for unlimited), and ``read`` the file reader, for tests.

    >>> lim = cpu_memory_limits(rlimits={"RLIMIT_AS": None, "RLIMIT_DATA": None})
    >>> "RLIMIT_AS" in lim
    False
    """
    out: dict[str, int] = {}
    avail = _status_kib(read(meminfo), "MemAvailable")
    if avail is not None:
        out["MemAvailable"] = avail
    if rlimits is None:
        rlimits = {k: _getrlimit(k) for k in ("RLIMIT_AS", "RLIMIT_DATA")}
    proc = None
    for key, field in (("RLIMIT_AS", "VmSize"), ("RLIMIT_DATA", "VmData")):
        if rlimits.get(key) is None:
            continue
        proc = proc if proc is not None else read(status)
        room = rlimit_headroom(rlimits[key], _status_kib(proc, field))
        if room is not None:
            out[key] = room
    cg = cgroup_headroom(proc_cgroup, cgroup_root, read)
    if cg is not None:
        out["cgroup"] = cg
    return out


# reading /proc and the cgroup files costs ~0.2 ms per file on some kernels (sandboxes): the
# CPU value is reused for a short while, so that loops of small calls do not pay it each time
_CPU_FREE_TTL = 0.5
_CPU_FREE_CACHE: dict[str, tuple[float, int]] = {}


def free_memory(device: torch.device) -> int:
    """Free bytes on ``device`` (CUDA: driver's free memory; CPU: the least of
    :func:`cpu_memory_limits`, re-read at most every half second)."""
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        if free < total // 4:
            # memory cached by torch's allocator is reusable by us (read only when memory is
            # tight: torch.cuda.memory_stats costs ~0.3 ms of Python per call)
            free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return int(free)
    now = time.monotonic()
    cached = _CPU_FREE_CACHE.get("value")
    if cached is not None and now - cached[0] < _CPU_FREE_TTL:
        return cached[1]
    limits = cpu_memory_limits()
    if not limits:  # pragma: no cover - non-Linux
        return 4 * 2**30
    free = int(min(limits.values()))
    _CPU_FREE_CACHE["value"] = (now, free)
    return free


def check_memory_budget(value: Any, name: str = "memory_budget") -> float | None:
    """``None`` or a budget: bytes (> 1) or a fraction of the free memory (0 < value <= 1).

    Bools, strings and other non-numbers are a ``TypeError``; NaN, infinity, zero and
    negative values a ``ValueError``; both name ``name``. Check it before any cache lookup.

    >>> check_memory_budget(2**30)
    1073741824.0
    >>> check_memory_budget(True)
    Traceback (most recent call last):
    ...
    TypeError: memory_budget must be a real number (bytes, or a fraction <= 1) or None, got True
    >>> check_memory_budget(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: memory_budget must be a finite number > 0, got nan
    """
    if value is None:
        return None
    try:
        value = check_real(name, value, allow_inf=True)
    except TypeError:
        raise TypeError(f"{name} must be a real number (bytes, or a fraction <= 1) or "
                        f"None, got {value!r}") from None
    except ValueError:  # NaN
        raise ValueError(f"{name} must be a finite number > 0, got {value}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def _env_budget() -> float | None:
    env = os.environ.get(_ENV)
    if env is None or not env.strip():
        return None
    try:
        value = float(env)
    except ValueError:
        raise ValueError(f"{_ENV} must be a number of bytes or a fraction in (0, 1], got "
                         f"{env!r}") from None
    return check_memory_budget(value, _ENV)


def memory_budget(device: torch.device, budget: int | float | None = None) -> int:
    """Bytes a transform may use for scratch on ``device``.

    Parameters
    ----------
    device : torch.device
        Where the work runs.
    budget : int or float, optional
        An explicit budget in bytes (values <= 1 are read as a fraction of the free memory,
        :func:`free_memory`, which on the CPU respects the process's limits). ``None`` uses
        ``FASTMOMENTS_MEMORY_BUDGET`` from the environment if set, else
        :data:`DEFAULT_FRACTION` of the free memory (capped at 8 GiB on the CPU, at least
        64 MiB).

    Raises
    ------
    TypeError
        For a budget that is not a real number (bools and strings included).
    ValueError
        For a budget that is NaN, infinite, zero or negative (also in the environment).

    Examples
    --------
    >>> memory_budget(torch.device("cpu"), 2**30)
    1073741824
    """
    budget = check_memory_budget(budget)
    if budget is None:
        budget = _env_budget()
    if budget is not None:
        if budget <= 1:
            return int(budget * free_memory(device))
        return int(budget)
    free = free_memory(device)
    out = int(DEFAULT_FRACTION * free)
    if device.type == "cpu":
        out = min(out, _CPU_CAP)
    return max(out, 64 * 2**20)


def below_minimum(total_bytes: int, budget: int | float | None) -> bool:
    """Whether ``total_bytes`` fits any default budget (:func:`memory_budget` never returns less
    than 64 MiB without an explicit budget), so that small jobs skip the memory query (a
    driver call on CUDA)."""
    return (budget is None and not os.environ.get(_ENV)
            and total_bytes <= 64 * 2**20)


def rows_per_chunk(bytes_per_row: int, budget: int, total_rows: int, *, what: str,
                   fixed_bytes: int = 0) -> int:
    """How many rows of ``bytes_per_row`` fit in ``budget`` (at least one).

    Raises
    ------
    MemoryError
        If not even one row fits; the message says how much memory the job needs.
    """
    room = budget - fixed_bytes
    if room < bytes_per_row:
        need = fixed_bytes + bytes_per_row
        raise MemoryError(
            f"{what} needs at least {format_bytes(need)} of scratch memory but the budget is "
            f"{format_bytes(budget)}; free memory on the device or raise memory_budget"
        )
    return int(max(1, min(total_rows, room // max(bytes_per_row, 1))))
