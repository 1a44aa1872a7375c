"""Shared helpers of the benchmarks (disk, PHT, features, box, signal): environment record, the
timer, result files."""

from __future__ import annotations

import datetime as _dt
import importlib
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

RESULTS = Path(__file__).resolve().parent / "results"


def environment(device: torch.device, extra_packages: tuple[str, ...] = ()) -> dict[str, Any]:
    """Device, versions and date, recorded with every result file (plus the versions of
    ``extra_packages``, ``None`` where not installed)."""
    info: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "cpu": platform.processor() or platform.machine(),
        "cpu_threads": torch.get_num_threads(),
        "device": str(device),
    }
    for name in extra_packages:
        try:
            info[name] = importlib.import_module(name).__version__
        except ImportError:
            info[name] = None
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        info["cuda"] = torch.version.cuda
        info["tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
        try:
            import triton

            info["triton"] = triton.__version__
        except ImportError:
            info["triton"] = None
    return info


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_samples(fn: Callable[[], Any], device: torch.device, *, warmup: int = 2,
                 repeat: int = 5, device_only: bool = False) -> list[float]:
    """Seconds of ``repeat`` calls after ``warmup`` calls (CUDA events on a GPU, the wall
    clock on a CPU): the one timer of the benchmarks.

    On a GPU the start event is recorded when the GPU is idle, so the time includes the host
    work before the first launch (what a caller waits for). ``device_only`` measures the
    device's time alone: a sleep kernel (:data:`SLEEP_CYCLES`) is queued before the start
    event, long enough for ``fn`` to queue its launches behind it."""
    for _ in range(warmup):
        fn()
    sync(device)
    times = []
    for _ in range(repeat):
        if device.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            if device_only:
                torch.cuda._sleep(SLEEP_CYCLES)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize(device)
            times.append(start.elapsed_time(end) / 1e3)
        else:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return times


#: Clock cycles of the sleep kernel of ``time_samples(device_only=True)`` (about 0.5 ms on an
#: H100, several times the host work of one call).
SLEEP_CYCLES = 1_000_000


def timeit(fn: Callable[[], Any], device: torch.device, *, warmup: int = 2, repeat: int = 5,
           ) -> dict[str, float]:
    """Median and spread of :func:`time_samples`."""
    times = time_samples(fn, device, warmup=warmup, repeat=repeat)
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "repeat": repeat}


def write_results(name: str, payload: dict[str, Any], out_dir: str | None = None) -> Path:
    """Write ``payload`` as JSON to ``benchmarks/results`` (or ``$OUT`` when given)."""
    folder = Path(out_dir) if out_dir else RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, default=float))
    return path


def out_dir() -> str | None:
    """``$OUT`` when it is set (a folder to collect the results in), else None (write into
    benchmarks/results)."""
    return os.environ.get("OUT") or None
