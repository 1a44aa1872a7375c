r"""The route table of the 3-D Zernike transforms: decided once, when a plan is built.

One method, ``"shells"`` (the points grouped by exact radius and by ring, :mod:`.engine`), in
plain torch on the CPU or CUDA. What is decided is, first, whether the Legendre and radial
stages run as one matrix product per ``(parity, m)`` over kept tables of rings times moments
(``"ring-gemm"``, when those fit :data:`GEMM_CACHE`: small problems), and otherwise whether
the plan keeps its Legendre table (the factors :math:`\bar P_l^m` of every ring:
``"cached-tables"``, computed once in float64 and cast once to the working dtype) or
recomputes it chunk by chunk on every call (``"recomputed-tables"``), from its size (with the
phase table of the in-plane positions, which is always kept) against :data:`TABLES_CACHE`.
Second, how the azimuthal stage runs: over the slab-and-circle cells of one in-plane phase
table (the default, and the CPU's), or, where a table of every point's phases fits
:data:`RING_PHASES_CACHE` (on CUDA), as one batched product per ring size with that table
(``"ring-phases+"`` before the kernel's name), which writes each ring's sums once instead of
adding cells up; a plan on such a route replays its small calls as CUDA graphs.
On the CPU the Legendre stage of a call with at least :data:`NUMBA_SHELL_WORK` products runs a
compiled loop (:mod:`fastmoments.ball._numba_shells`) when the table is kept and no gradient is
recorded. Nothing here depends on timing.
"""

from __future__ import annotations

import torch

from .._memory import format_bytes
from .._route import Route

__all__ = ["GEMM_CACHE", "NUMBA_SHELL_WORK", "RING_PHASES_CACHE", "TABLES_CACHE",
           "choose_route"]

#: Largest angular tables (bytes, working dtype) a plan keeps, per device type. Above it the
#: tables are recomputed (in float64) for each chunk on each call.
TABLES_CACHE = {"cpu": 512 * 2**20, "cuda": 4 * 2**30}

#: Largest product tables :math:`R_{nl}(r_{g(q)}) \bar P_l^m(q)` (rings times moments, bytes,
#: working dtype) a plan keeps for the ``ring-gemm`` route, which replaces the Legendre and
#: radial stages by one matrix product per ``(parity, m)``: more multiplications than the
#: two stages (rings x moments instead of rings x harmonics + radii x moments), all in
#: matrix products. Each call streams the whole table, so on the CPU, where the two stages
#: run at memory speed on tables several times smaller, it pays only for small tables
#: (at 100^3 the two routes take about the same time at order 10, and the two stages 2 to 3
#: times less at order 20, one thread).
GEMM_CACHE = {"cpu": 32 * 2**20, "cuda": 2 * 2**30}


#: Products (rings x harmonics x batch x 2) of a CPU call's Legendre stage from which it runs
#: the compiled loop (:mod:`._numba_shells`) instead of torch's gather, product and indexed
#: add, when the plan keeps the Legendre table and no gradient is recorded; smaller calls keep
#: the torch path, so that they do not pay numba's import (0.3-0.6 s). At 100^3, order 20,
#: one volume is 1.1e7 products.
NUMBA_SHELL_WORK = 10_000_000

#: Largest table of every point's weighted phases :math:`w_p e^{-im\varphi_p}` and
#: :math:`w_p \operatorname{sign}(z_p) e^{-im\varphi_p}` (points x 4 (order + 1), bytes,
#: working dtype) a plan keeps for the ``ring-phases`` azimuthal stage, per device type. The
#: slab-and-circle stage streams a table some 70 times smaller, which is why the CPU keeps it
#: (the per-point table, 176 MB at 100^3 order 20 float32, was read from memory on every
#: call); but it writes the sums of every (slab, circle) out, permutes them and adds them into
#: rings with two atomic ``index_add`` (on an H200 those two took 1.7 of the 6.0 ms of a batch
#: of 64 at 100^3 order 20; the whole stage 4.8 ms against 0.6 ms by rings). Measured by
#: ``benchmarks/ball_moments.py`` (rows *not chosen* in
#: ``benchmarks/results/ball_moments_h200.md``): 100^3 float32 on the H200, the circle stage
#: against the ring stage: order 20, batch 256, 11,772 against 54,417 volumes/s, one volume
#: 1.78 against 0.78 ms; order 40, batch 64, 5,683 against 18,920 volumes/s.
RING_PHASES_CACHE = {"cpu": 0, "cuda": 2**30}


def choose_route(n_plane: int, n_rings: int, n_harmonics: int, order: int,
                 dtype: torch.dtype, device: torch.device, n_moments: int = 0,
                 n_points: int = 0) -> Route:
    """The route of a plan whose ``n_points`` points lie on ``n_plane`` in-plane positions
    :math:`(x, y)` and in ``n_rings`` rings, with ``n_harmonics`` columns ``(l, m >= 0)``.

    >>> str(choose_route(1000, 100, 66, 10, torch.float32, torch.device("cpu"), 286, 5000))
    'shells/torch:ring-gemm'
    >>> str(choose_route(1000, 100, 66, 10, torch.float32, torch.device("cuda"), 286, 5000))
    'shells/torch:ring-phases+ring-gemm'
    """
    route = _stages_route(n_plane, n_rings, n_harmonics, order, dtype, device, n_moments)
    item = torch.finfo(dtype).bits // 8
    phases = n_points * 4 * (order + 1) * item
    limit = RING_PHASES_CACHE.get(device.type, RING_PHASES_CACHE["cpu"])
    if 0 < phases <= limit:
        return Route(route.method, route.backend, "ring-phases+" + route.kernel,
                     f"{route.reason}; point phases {format_bytes(phases)} <= "
                     f"RING_PHASES_CACHE {format_bytes(limit)}")
    return route


def _stages_route(n_plane: int, n_rings: int, n_harmonics: int, order: int,
                  dtype: torch.dtype, device: torch.device, n_moments: int) -> Route:
    """The Legendre and radial stages' part of :func:`choose_route`."""
    item = torch.finfo(dtype).bits // 8
    size = (n_rings * n_harmonics + n_plane * (order + 1) * 2) * item
    limit = TABLES_CACHE.get(device.type, TABLES_CACHE["cpu"])
    gemm = n_rings * n_moments * item
    gemm_limit = GEMM_CACHE.get(device.type, GEMM_CACHE["cpu"])
    if size <= limit and gemm <= gemm_limit:
        return Route("shells", "torch", "ring-gemm",
                     f"angular tables {format_bytes(size)} <= TABLES_CACHE, ring-moment tables "
                     f"{format_bytes(gemm)} <= GEMM_CACHE {format_bytes(gemm_limit)}")
    if size <= limit:
        return Route("shells", "torch", "cached-tables",
                     f"angular tables {format_bytes(size)} <= TABLES_CACHE {format_bytes(limit)}")
    return Route("shells", "torch", "recomputed-tables",
                 f"angular tables {format_bytes(size)} > TABLES_CACHE {format_bytes(limit)}")
