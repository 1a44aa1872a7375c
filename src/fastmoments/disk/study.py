"""Reconstruction studies: moments at several orders and k, PSNR and timings (chapter 5 of the
:ref:`Zernike thesis <bib-zernike-thesis>`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .._array import resolve_device
from .._progress import progress
from .._validate import check_choice, check_int
from ..metrics import psnr
from .transform import DiskTransform

__all__ = ["ReconstructionStudy", "reconstruction_study"]


@dataclass
class ReconstructionStudy:
    """Results of :func:`reconstruction_study`.

    ``psnr[i, j]`` and ``images[i][j]`` belong to ``ks[i]`` and ``orders[j]``;
    ``forward_seconds[i]`` is the time of the moments at the highest order for ``ks[i]``;
    ``reconstruct_seconds[i, j]`` the time of each reconstruction.
    """

    family: str
    image: np.ndarray
    mask: np.ndarray
    orders: list[int]
    ks: list[int]
    quadrature: str
    device: str
    dtype: str
    psnr: np.ndarray
    images: list[list[np.ndarray]]
    forward_seconds: np.ndarray
    reconstruct_seconds: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)

    def table(self) -> str:
        """The PSNR table as Markdown (rows k, columns order), like table 5.4 of the
        :ref:`Zernike thesis <bib-zernike-thesis>`."""
        head = "| k \\ T | " + " | ".join(str(t) for t in self.orders) + " |"
        sep = "|---" * (len(self.orders) + 1) + "|"
        rows = [f"| {k} | " + " | ".join(f"{v:.2f}" for v in self.psnr[i]) + " |"
                for i, k in enumerate(self.ks)]
        return "\n".join([head, sep, *rows])


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def reconstruction_study(image: Any, *, family: str = "zernike", orders: Sequence[int],
                         ks: Sequence[int] = (1,), quadrature: str = "midpoint",
                         device: Any = None, dtype: Any = "float32",
                         show_progress: bool | None = None) -> ReconstructionStudy:
    """Compute moments up to ``max(orders)`` for each ``k`` and reconstruct at every order.

    The moments of order ``n`` do not depend on the highest order asked for, so one forward
    transform per ``k`` serves all orders; each reconstruction uses the moments with
    ``n <= T`` (thesis Eq. 2.12).

    Parameters
    ----------
    image : array_like
        One square grey-level image.
    family : {"zernike", "pseudo-zernike"} or another registered disk family
    orders : sequence of int
        Highest orders ``T`` to reconstruct with.
    ks : sequence of int
        Sub-pixel sample counts per axis.
    quadrature : {"midpoint", "gauss"}
    device, dtype :
        Where and in which precision to compute.
    show_progress : bool, optional
        Progress bar over the (k, T) pairs (default: shown for more than 8 steps).
    """
    img = np.asarray(image, dtype=np.float64)
    if img.ndim != 2:
        raise ValueError(f"image must be one 2-D image, got shape {img.shape}")
    orders = sorted({check_int("orders", t, minimum=0) for t in orders})
    ks = sorted({check_int("k", k, minimum=1) for k in ks})
    check_choice("quadrature", quadrature, ("midpoint", "gauss"))
    dev = resolve_device(device)
    tmax = max(orders)
    n = img.shape[-1]
    ps = np.zeros((len(ks), len(orders)))
    fsec = np.zeros(len(ks))
    rsec = np.zeros((len(ks), len(orders)))
    images: list[list[np.ndarray]] = []
    steps = [(i, j) for i in range(len(ks)) for j in range(len(orders))]
    bar = progress(steps, desc=f"{family} reconstructions", show=show_progress)
    x = torch.as_tensor(img, device=dev)
    plans: dict[int, tuple[DiskTransform, Any]] = {}
    mask = None
    for i, j in bar:
        k = ks[i]
        if k not in plans:
            plan = DiskTransform(family, n, tmax, k=k, quadrature=quadrature, dtype=dtype,
                                 device=dev)
            _sync(dev)
            t0 = time.perf_counter()
            A = plan.forward(x)
            _sync(dev)
            fsec[i] = time.perf_counter() - t0
            plans = {k: (plan, A)}  # keep one k alive at a time (memory)
            images.append([])
            mask = plan.mask
        plan, A = plans[k]
        _sync(dev)
        t0 = time.perf_counter()
        rec = A.reconstruct(orders=orders[j])
        _sync(dev)
        rsec[i, j] = time.perf_counter() - t0
        rec = rec.detach().cpu().numpy().astype(np.float64)
        images[i].append(rec)
        ps[i, j] = psnr(img, rec, mask=mask, data_range=255.0)
    return ReconstructionStudy(
        family=family, image=img, mask=np.asarray(mask), orders=orders, ks=ks,
        quadrature=quadrature, device=str(dev), dtype=str(dtype), psnr=ps, images=images,
        forward_seconds=fsec, reconstruct_seconds=rsec)
