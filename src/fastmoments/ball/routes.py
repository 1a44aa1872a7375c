"""The route table of the 3-D Zernike transforms: decided once, when a plan is built.

One method, ``"shells"`` (the points grouped by exact radius, :mod:`.engine`), in plain torch
on the CPU or CUDA. What is decided is whether the table of spherical harmonics at every
sample point is kept by the plan (``"cached-harmonics"``: computed once, in float64, and
cast once to the working dtype) or recomputed chunk by chunk on every call
(``"recomputed-harmonics"``), from the size of that table against :data:`HARMONICS_CACHE`.
Nothing here depends on timing.
"""

from __future__ import annotations

import torch

from .._memory import format_bytes
from .._route import Route

__all__ = ["HARMONICS_CACHE", "choose_route"]

#: Largest table of spherical harmonics (bytes, working dtype) a plan keeps, per device type.
#: Above it the harmonics are recomputed (in float64) for each chunk of points on each call.
HARMONICS_CACHE = {"cpu": 256 * 2**20, "cuda": 2 * 2**30}


def choose_route(n_points: int, n_harmonics: int, dtype: torch.dtype,
                 device: torch.device) -> Route:
    """The route of a plan with ``n_points`` sample points and ``n_harmonics`` columns
    ``(l, m >= 0)`` of spherical harmonics.

    >>> str(choose_route(1000, 66, torch.float32, torch.device("cpu")))
    'shells/torch:cached-harmonics'
    """
    size = n_points * n_harmonics * 2 * (torch.finfo(dtype).bits // 8)
    limit = HARMONICS_CACHE.get(device.type, HARMONICS_CACHE["cpu"])
    if size <= limit:
        return Route("shells", "torch", "cached-harmonics",
                     f"harmonics table {format_bytes(size)} <= HARMONICS_CACHE "
                     f"{format_bytes(limit)}")
    return Route("shells", "torch", "recomputed-harmonics",
                 f"harmonics table {format_bytes(size)} > HARMONICS_CACHE {format_bytes(limit)}")
