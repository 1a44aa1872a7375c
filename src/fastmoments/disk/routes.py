"""The route table of the disk transforms: what runs, decided when a plan is built.

Every choice a disk plan makes between equivalent computations is made here, from plain
values (family, orders, sampling size, device, memory budget, batch size), never from timing
or from what an earlier call happened to build. The plan keeps the result and shows it as
``plan.route`` (a :class:`~fastmoments._route.Route`) and in ``repr(plan)``; the one-call
functions build (or reuse) the same plans, so they take the same routes.

Radial stage of the engine (:class:`~fastmoments.disk.engine.DiskEngine`)
    ``"compressed"``: the Chebyshev-node compression (:mod:`.compression`) for the
    polynomial families at high order with many more radii than nodes;
    ``"fused"``: the Triton kernels run the Jacobi recurrence in registers (CUDA);
    ``"table"``: a radial table cached on the plan when it fits :data:`TABLE_SHARE` of the
    budget; ``"streamed"``: the recurrence streamed through chunks of radii.
Angular stage
    ``"triton"`` on a CUDA device with Triton; ``"numba"`` (compiled CPU loops) for chunks of
    at least :data:`NUMBA_ANGULAR_WORK` terms on the CPU; ``"torch"`` otherwise (and
    whenever gradients are needed).
Polar harmonic transforms (:class:`~fastmoments.disk.pht.PolarHarmonicTransform`)
    ``method="auto"`` picks ``"gemm"``, ``"nufft"`` or ``"engine"`` by :func:`pht_method`.

Each crossover below names the benchmark script that measured it.
"""

from __future__ import annotations

from typing import Any

import torch

from .._route import Route
from .compression import node_count
from .indexing import IndexSet

__all__ = ["COMPRESSION_MIN_ORDER", "COMPRESSION_RADII_PER_NODE", "NUMBA_ANGULAR_WORK",
           "PHT_FOLD_FROM", "TABLE_SHARE", "compress", "engine_route", "fuse_radial",
           "numba_angular", "pht_method", "pht_route", "use_table"]

#: Lowest maximum order compressed: below it the direct recurrence is a few steps per
#: radius, and the compressed stage's extra launches cost more than they save
#: (``benchmarks/disk_compression.py``, ``benchmarks/results/disk_compression.md``).
COMPRESSION_MIN_ORDER = 24

#: Radii (inside the disk) per node from which the compression pays (same benchmark).
COMPRESSION_RADII_PER_NODE = 4

#: Orbit-repetition-image terms of an angular chunk from which the CPU runs the compiled
#: kernel (:mod:`._numba_angular`, about 4x faster warm); smaller jobs keep the torch path,
#: so that a first call of that size does not pay numba's import (0.3-0.6 s, with scipy's),
#: more than the torch path takes (a 256² image at T = 100, k = 3 is 5.9e6 terms, 0.25 s;
#: measured by ``first_call_disk.py``, in git at a8e7402: ``git show
#: a8e7402:benchmarks/results/first_call_disk.md``; ``benchmarks/first_calls.py`` times the
#: same case now).
NUMBA_ANGULAR_WORK = 10_000_000

#: The radial table is cached when it takes at most ``1 / TABLE_SHARE`` of the memory budget
#: (building it needs the float64 copy as well as the cast one); larger ones are streamed.
TABLE_SHARE = 4

#: Moments from which the dense ("gemm") polar harmonic kernel folds the image by its
#: 180-degree symmetry: the fold halves the flops but adds a pass over the batch, so it pays
#: for many moments only (H100: 1.44 ms against 2.01 ms at 625 moments, 40 ms against 18 ms
#: at 30 moments on 1000 images of 2048 x 2048; ``benchmarks/pht_gpu.py``).
PHT_FOLD_FROM = 128

#: Largest dense polar harmonic kernel, and the least batch for it on the CPU
#: (``benchmarks/pht_cpu.py`` and ``benchmarks/pht_gpu.py``, ``docs/pht.md``): on a GPU the
#: GEMM whenever its kernel fits, 2.2 ms against 6.8 ms for the engine on 128 patches of
#: 512 x 512 with 625 moments (H100); on the CPU for batches of at least 32 images.
PHT_GEMM_KERNEL_BYTES = {"cuda": 4 * 2**30, "cpu": 2 * 2**30}
PHT_GEMM_MIN_BATCH_CPU = 32

#: Least moments for the NUFFT on the CPU (at nmax = lmax = 100 on 512 x 512 it takes 0.2 s
#: against 28 s for the engine; ``benchmarks/pht_cpu.py``).
PHT_NUFFT_MIN_MOMENTS = 64


def compress(family: str, radial_is_complex: bool, n_inside: int, max_order: int) -> bool:
    """Whether the engine compresses its radial stage to Chebyshev nodes: a polynomial
    family of order at least :data:`COMPRESSION_MIN_ORDER` with at least
    :data:`COMPRESSION_RADII_PER_NODE` radii inside the disk per node."""
    if radial_is_complex or family not in ("zernike", "pseudo-zernike"):
        return False
    if max_order < COMPRESSION_MIN_ORDER:
        return False
    return n_inside >= COMPRESSION_RADII_PER_NODE * node_count(family, max_order)


def fuse_radial(method: str, family: str, index: IndexSet, triton_ready: bool) -> bool:
    """Whether the fused Triton radial kernels apply: the Jacobi method of the Zernike and
    pseudo-Zernike families with full columns (orders m, m + step, ... without gaps), on a
    device where Triton runs."""
    if not triton_ready or method != "jacobi" or family not in ("zernike", "pseudo-zernike"):
        return False
    step = 2 if family == "zernike" else 1
    return all(list(col) == list(range(m, m + step * len(col), step))
               for m, col in zip(index.ms, index.ns, strict=True))


def use_table(table_bytes: int, budget: int) -> bool:
    """Whether the (uncompressed, unfused) radial table is cached on the plan."""
    return table_bytes <= budget // TABLE_SHARE


def numba_angular(engine: Any, batch: int) -> bool:
    """Whether a call of ``batch`` images runs the compiled CPU angular stage: on the CPU,
    for at least :data:`NUMBA_ANGULAR_WORK` orbit-repetition-image terms."""
    work = engine.sampling.n_orbits * engine.n_cols * batch
    return bool(engine.numba_angular) and work >= NUMBA_ANGULAR_WORK


def engine_route(engine: Any, batch: int = 1) -> Route:
    """The route of a disk engine for a call of ``batch`` images (the flags it set when
    built, and :func:`numba_angular`)."""
    if engine.compression is not None:
        radial = "compressed"
        reason = (f"order {engine.index.max_order} >= {COMPRESSION_MIN_ORDER} with "
                  f">= {COMPRESSION_RADII_PER_NODE} radii per node")
    elif engine.fused:
        radial, reason = "fused", "Jacobi recurrence of full columns on a Triton device"
    elif engine.radial_table_cached:
        radial, reason = "table", f"radial table within 1/{TABLE_SHARE} of the budget"
    else:
        radial, reason = "streamed", f"radial table over 1/{TABLE_SHARE} of the budget"
    if engine.fused_angular:
        backend = "triton"
    elif numba_angular(engine, batch):
        backend = "numba"
        reason += f"; angular stage of >= {NUMBA_ANGULAR_WORK:.0e} terms"
    else:
        backend = "torch"
    return Route(engine.method, backend, radial, reason)


def pht_method(device: torch.device, n_moments: int, batch: int, kernel_bytes: int,
               budget: int, have_nufft: bool) -> tuple[str, str]:
    """The method of ``method="auto"`` for the polar harmonic transforms, with its reason.

    * GPU: the dense GEMM whenever its kernel fits (a quarter of the budget, at most
      :data:`PHT_GEMM_KERNEL_BYTES`), otherwise the two-stage engine.
    * CPU: the dense GEMM for batches of at least :data:`PHT_GEMM_MIN_BATCH_CPU` images when
      the kernel fits; otherwise the NUFFT when ``finufft`` is installed and there are at
      least :data:`PHT_NUFFT_MIN_MOMENTS` moments; otherwise the engine.

    >>> pht_method(torch.device("cpu"), 10, 1, 2**20, 2**33, have_nufft=False)
    ('engine', 'cpu: batch 1 < 32 for the gemm; 10 moments < 64 or no finufft')
    """
    kind = "cuda" if device.type == "cuda" else "cpu"
    fits = kernel_bytes <= min(budget // 4, PHT_GEMM_KERNEL_BYTES[kind])
    if kind == "cuda":
        if fits:
            return "gemm", "cuda: the dense kernel fits"
        return "engine", "cuda: the dense kernel does not fit"
    if fits and batch >= PHT_GEMM_MIN_BATCH_CPU:
        return "gemm", f"cpu: batch {batch} >= {PHT_GEMM_MIN_BATCH_CPU}, the kernel fits"
    why = (f"batch {batch} < {PHT_GEMM_MIN_BATCH_CPU}" if fits
           else "the dense kernel does not fit") + " for the gemm"
    if n_moments >= PHT_NUFFT_MIN_MOMENTS and have_nufft:
        return "nufft", f"cpu: {why}; {n_moments} moments and finufft"
    return "engine", f"cpu: {why}; {n_moments} moments < {PHT_NUFFT_MIN_MOMENTS} or no finufft"


def pht_route(method: str, reason: str, engine: Any, batch: int, fold: bool) -> Route:
    """The route of a polar harmonic plan running ``method`` on ``batch`` images."""
    if method == "engine":
        r = engine_route(engine, batch)
        return Route("engine", r.backend, r.kernel, f"{reason}; {r.reason}")
    if method == "gemm":
        kernel = "folded" if fold else "dense"
        return Route("gemm", "torch", kernel,
                     f"{reason}; {'' if fold else 'no '}fold ({PHT_FOLD_FROM} moments)")
    return Route("nufft", "finufft", "type-1", reason)
