"""Helpers of the polar harmonic transform benchmarks: environment, timers, real patches."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from disk_common import environment as _environment
from disk_common import sync, timeit  # noqa: F401  (shared timers, re-exported to the pht scripts)

RESULTS = Path(__file__).resolve().parent / "results"
FIGURES = Path(__file__).resolve().parent.parent / "docs" / "figures"

#: the paper's GTX 1060 times (Yang et al. 2020, Tables 5 and 6), seconds
PAPER = {
    "patches_512": {"pct": 1.6742, "pst": 1.6691, "pcet": 1.7136},
    "synthetic_2048": {"pct": 5.726, "pst": 5.674, "pcet": 5.745},
}


def environment(device: torch.device) -> dict[str, Any]:
    """Device, versions (finufft's too) and date, recorded with every result file."""
    return _environment(device, ("finufft",))


def wall(fn: Callable[[], Any], device: torch.device) -> tuple[Any, float]:
    """Run once and return (result, seconds), synchronized."""
    sync(device)
    t0 = time.perf_counter()
    out = fn()
    sync(device)
    return out, time.perf_counter() - t0


def real_patches(count: int = 128, size: int = 512, seed: int = 0) -> np.ndarray:
    """``count`` grey ``size x size`` patches (float32, 0..255) cut at random places from the
    scikit-image photographs (resized to twice the patch size), randomly rotated by multiples
    of 90 degrees and mirrored: a stand-in for the paper's 128 traffic-scene patches."""
    from fastmoments.data import sample_image

    names = ("camera", "astronaut", "coffee", "moon", "brick", "coins")
    big = [sample_image(n, 2 * size).astype(np.float32) for n in names]
    rng = np.random.default_rng(seed)
    out = np.empty((count, size, size), dtype=np.float32)
    for i in range(count):
        img = big[i % len(big)]
        r0, c0 = rng.integers(0, size + 1, size=2)
        p = img[r0:r0 + size, c0:c0 + size]
        p = np.rot90(p, int(rng.integers(4)))
        if rng.integers(2):
            p = p[:, ::-1]
        out[i] = p
    return out


def rel_err(got: Any, ref: Any) -> float:
    got = torch.as_tensor(got).detach().cpu().to(torch.complex128)
    ref = torch.as_tensor(ref).detach().cpu().to(torch.complex128)
    return float(torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref))


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1, default=str) + "\n")
