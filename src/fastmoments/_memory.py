"""Memory budgets and chunk sizes, so that any job runs within a bounded footprint.

Transforms split their work into chunks sized from a budget in bytes. By default the budget
is a safe fraction of the memory that is free on the device doing the work (like the dynamic
partition of the Zernike thesis, Sec. 4.3): on a GPU the free device memory reported by the
driver, on the CPU the kernel's ``MemAvailable``.
"""

from __future__ import annotations

import os

import torch

__all__ = ["DEFAULT_FRACTION", "format_bytes", "free_memory", "memory_budget", "rows_per_chunk"]

DEFAULT_FRACTION = 0.4
_CPU_CAP = 8 * 2**30  # never plan for more than 8 GiB of scratch on a CPU by default


def format_bytes(n: float) -> str:
    """Human-readable size.

    >>> format_bytes(3 * 2**30)
    '3.00 GiB'
    """
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def free_memory(device: torch.device) -> int:
    """Free bytes on ``device`` (CUDA: driver's free memory; CPU: ``MemAvailable``)."""
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        if free < total // 4:
            # memory cached by torch's allocator is reusable by us (read only when memory is
            # tight: torch.cuda.memory_stats costs ~0.3 ms of Python per call)
            free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return int(free)
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - non-Linux
        pass
    return 4 * 2**30  # pragma: no cover


def memory_budget(device: torch.device, budget: int | float | None = None) -> int:
    """Bytes a transform may use for scratch on ``device``.

    Parameters
    ----------
    device : torch.device
        Where the work runs.
    budget : int or float, optional
        An explicit budget in bytes (values <= 1 are read as a fraction of the free memory).
        ``None`` uses ``FASTMOMENTS_MEMORY_BUDGET`` from the environment if set, else
        :data:`DEFAULT_FRACTION` of the free memory (capped at 8 GiB on the CPU).
    """
    if budget is None:
        env = os.environ.get("FASTMOMENTS_MEMORY_BUDGET")
        if env:
            budget = float(env)
    if budget is not None:
        budget = float(budget)
        if budget <= 0:
            raise ValueError(f"memory_budget must be > 0, got {budget}")
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
    return (budget is None and not os.environ.get("FASTMOMENTS_MEMORY_BUDGET")
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
