"""Several devices in one process: device lists, replicas, streams, splitting and gathering.

This package is the one home of the multi-device logic. Plans and one-call functions take
``device=`` as one device (today's path, untouched), a sequence of devices
(``["cuda:0", "cuda:1"]``) or ``"cuda:all"``; with several devices

* a batch is spread over the devices (one plan replica and one CUDA stream each, host copies
  through pinned memory overlapping the compute), results gathered in input order on the
  first device (NumPy for NumPy input);
* one large job (fewer items than devices) is partitioned by the family's work split
  (:class:`WorkSplit`, given to :func:`multi_device`): the moment set of a disk transform by
  columns of repetitions balanced by cost, a box transform by blocks of degrees;
  reconstructions are the sum of the partial ones.

This package imports no family: plans tell it how to split their work.

See ``docs/multigpu.md``.

Examples
--------
>>> import numpy as np
>>> from fastmoments.disk import ZernikeTransform
>>> img = np.random.default_rng(0).random((3, 32, 32))
>>> plan = ZernikeTransform(32, 8, dtype="float64", device=["cpu", "cpu"])
>>> one = ZernikeTransform(32, 8, dtype="float64")
>>> bool(np.allclose(plan.forward(img).values(), one.forward(img).values(), rtol=1e-12))
True
"""

from .devices import ALL_GPUS, device_key, device_list, first_device, is_multi, resolve_devices
from .partition import balance, box_degree_costs, contiguous_blocks, disk_column_costs
from .plans import ParallelPlan, batched, multi_device
from .protocol import Replicas, WorkSplit
from .runner import run_parts

__all__ = [
    "ALL_GPUS",
    "ParallelPlan",
    "Replicas",
    "WorkSplit",
    "balance",
    "batched",
    "box_degree_costs",
    "contiguous_blocks",
    "device_key",
    "device_list",
    "disk_column_costs",
    "first_device",
    "is_multi",
    "multi_device",
    "resolve_devices",
    "run_parts",
]
