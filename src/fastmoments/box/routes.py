"""The box family's route table: which products, folds and kernels a box job takes, and why.

Every decision about how a :class:`~fastmoments.box.JacobiTransform` runs is made here, from
the plan's options and the job's plain key (direction, elements of one chunk, dtype, device,
whether autograd records): the plan's defaults (:func:`default_precision`,
:func:`default_parity`, :func:`default_block`), taken when it is built, and the route of
each key (:func:`route`), taken on the key's first call and cached by the plan
(``plan.route``, ``plan.routes``, ``repr(plan)``). Nothing here depends on timing or on the
data, so the first call of a process takes the route of its last. The one data-dependent
guard is an accuracy guard inside the halves kernels: data whose largest magnitude is below
2^-46 or above 2^75 cannot be scaled into float16's range, and those products take the
kernel that splits its tiles itself (``"fp16x3-split"``) instead.

The constants cite the benchmark that measured them; rerun it to change one.

The kernels a route names:

``"matmul"``
    ``torch.matmul`` (BLAS on the CPU, cuBLAS on CUDA): the reference, float64, autograd,
    and ``precision="float32"``.
``"fp16x3-split"``
    :func:`~fastmoments.box.triton_gemm.bmm_fp16x3`: float16 tensor-core products that
    split each float32 data tile inside the kernel (jobs below :data:`HALVES_MIN`).
``"fp16x3-halves"``
    :func:`~fastmoments.box.triton_gemm.halves_product`: the stages hand each other their
    results as float16 halves (jobs of :data:`HALVES_MIN` elements or more).
``"fp16x3-halves-classes"``
    The same, with the parity classes as one batch (:mod:`fastmoments.box.parity_batch`).

With parity the route's kernel ends in ``+fold`` (the one-pass Triton fold,
:mod:`fastmoments.box.fold_kernels`) or ``+torch-fold`` (one torch fold per axis: the CPU,
and while autograd records); both give the same bits.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .._route import Route
from . import fold_kernels, triton_gemm

__all__ = ["BLOCK_PARITY_OR_HALVES", "BLOCK_VOLUMES", "HALVES_MIN", "default_block",
           "default_parity", "default_precision", "halves_job", "route"]

#: Smallest job (elements of the input, or of the coefficients for a reconstruction) whose
#: ``"fp16x3"`` products run on halves. Each such job splits its input once (a reduction
#: whose result the host reads, and a pass) and sets each product's scales (two small
#: kernels): on an H100 that made one 512^3 volume 1.4x faster but a batch of 64 volumes of
#: 64^3 (2^24 samples) about 1.7x slower than the kernel that splits its data tiles itself
#: (``benchmarks/box_tensor_cores.py``, and ``box_batches_gpu.py``, whose script and results
#: are in git at a8e7402).
HALVES_MIN = 1 << 26

#: Degrees per block of the total-degree saving for volumes with parity or ``"fp16x3"``
#: products: 256 (the fastest setting of the 512^3, order-500 job on an H100 and an H200,
#: ``benchmarks/box_tensor_cores.py``: 4.4-4.9 ms against 5.4-5.8 without blocks of 256).
BLOCK_PARITY_OR_HALVES = 256

#: Degrees per block for other volumes (float32 products without parity, the CPU): 128
#: (cuBLAS products of the 512^3, order-500 job without parity on an H200: 13.6 ms with
#: blocks of 128 against 15.3 with 256 and 18.8 without, ``benchmarks/box_tensor_cores.py``;
#: with parity on an H100 128 was the best block below 256, ``benchmarks/box_gpu.py``).
#: Images take no blocks: the saving touches only their cheaper second product and
#: measured slower on an H100.
BLOCK_VOLUMES = 128


def halves_job(elements: int) -> bool:
    """Whether a job of ``elements`` (one chunk) runs its ``"fp16x3"`` products on halves."""
    return elements >= HALVES_MIN


def default_precision(ndim: int, dtype: torch.dtype, device: torch.device) -> str:
    """``"fp16x3"`` for float32 volumes where the Triton kernels run (CUDA), else
    ``"float32"``: images' small products measured faster with cuBLAS
    (``box_batches_gpu.py``, in git at a8e7402), and volumes 2.3x faster on the tensor cores
    (``benchmarks/box_tensor_cores.py``: 4.4-4.9 against 10.6-11.6 ms on an H100 and an
    H200)."""
    if (ndim == 3 and device.type == "cuda" and dtype == torch.float32
            and triton_gemm.available(device)):
        return "fp16x3"
    return "float32"


def default_parity(shape: tuple[int, ...], alpha: float, beta: float, precision: str,
                   device: torch.device) -> bool:
    """Parity on for volumes with ``alpha == beta`` where the Triton folds run (CUDA), with
    ``precision="float32"``, or with ``"fp16x3"`` when the volume has :data:`HALVES_MIN`
    samples or more (its classes then run as one batch: the fastest setting of the 512^3
    job, ``benchmarks/box_tensor_cores.py``). Off for smaller ``"fp16x3"`` volumes (their
    classes would run one by one, slower), on the CPU (faster only for large volumes at
    high orders, ``benchmarks/box_cpu.py``) and for images (bound by launch costs)."""
    return (alpha == beta and len(shape) == 3 and fold_kernels.triton_on(device)
            and (precision == "float32"
                 or (precision == "fp16x3" and halves_job(math.prod(shape)))))


def default_block(ndim: int, order: int, truncation: str, parity: bool, precision: str) -> int:
    """Degrees per block of the total-degree saving (see :data:`BLOCK_PARITY_OR_HALVES` and
    :data:`BLOCK_VOLUMES`); ``order + 2`` (no blocks) for images and the box set."""
    if ndim == 3 and truncation == "total":
        return BLOCK_PARITY_OR_HALVES if parity or precision == "fp16x3" else BLOCK_VOLUMES
    return order + 2


def route(plan: Any, direction: str, elements: int, dtype: torch.dtype, device: torch.device,
          *, grad: bool = False) -> Route:
    """The route of one chunk of a job of ``plan``.

    Parameters
    ----------
    plan : JacobiTransform
        The plan (its ``precision``, ``symmetric`` and ``ndim`` are read).
    direction : {"forward", "inverse"}
        Analysis (``forward``) or synthesis (``inverse``, ``adjoint``, regions).
    elements : int
        Elements of the chunk the engine receives: input samples forward, coefficients
        back.
    dtype, device
        The working dtype and device.
    grad : bool
        Whether autograd records the call (the torch products and folds are used then).

    Returns
    -------
    Route
        ``method="separable"``, the backend (``"torch"`` or ``"triton"``), the kernel named
        as in the module notes, and the reason.
    """
    if direction not in ("forward", "inverse"):
        raise ValueError(f"direction must be 'forward' or 'inverse', got {direction!r}")
    tensor_cores = (plan.precision == "fp16x3" and dtype == torch.float32 and not grad
                    and triton_gemm.available(device))
    if not tensor_cores:
        kernel, backend = "matmul", "torch"
        if plan.precision == "fp16x3":
            why = ("autograd records: torch products" if grad else
                   f"precision='fp16x3' needs float32 on a Triton device, got {dtype} on "
                   f"{device.type}: torch products")
        else:
            why = f"precision={plan.precision!r}"
    elif not halves_job(elements):
        kernel, backend = "fp16x3-split", "triton"
        why = f"precision='fp16x3', {elements} elements < HALVES_MIN"
    else:
        classes = plan.symmetric and plan.ndim in (2, 3)
        kernel = "fp16x3-halves-classes" if classes else "fp16x3-halves"
        backend = "triton"
        why = f"precision='fp16x3', {elements} elements >= HALVES_MIN"
    if plan.symmetric:
        folds = fold_kernels.triton_on(device) and not grad
        kernel += "+fold" if folds else "+torch-fold"
        why += "; parity" + ("" if folds else " with torch folds")
    return Route("separable", backend, kernel, why)
