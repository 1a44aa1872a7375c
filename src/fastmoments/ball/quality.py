r"""Reconstruction quality of volumes: normalised mean squared error and PSNR."""

from __future__ import annotations

from typing import Any

import torch

from .._array import as_tensor
from .._validate import check_real

__all__ = ["nmse", "psnr"]


def _pair(reference: Any, estimate: Any, mask: Any):
    ref, kind = as_tensor(reference, "reference", min_ndim=3, dtype=torch.float64)
    est, _ = as_tensor(estimate, "estimate", min_ndim=3, dtype=torch.float64,
                       device=ref.device)
    if ref.shape != est.shape:
        raise ValueError(f"estimate must have the shape of reference {tuple(ref.shape)}, got "
                         f"{tuple(est.shape)}")
    if mask is None:
        m = torch.ones(ref.shape[-3:], dtype=torch.bool, device=ref.device)
    else:
        m = torch.as_tensor(mask, device=ref.device)
        if m.dtype != torch.bool:
            raise TypeError(f"mask must be a boolean array, got dtype {m.dtype}")
        if tuple(m.shape) != tuple(ref.shape[-3:]):
            raise ValueError(f"mask must have the volume shape {tuple(ref.shape[-3:])}, got "
                             f"{tuple(m.shape)}")
    if not bool(m.any()):
        raise ValueError("mask selects no voxel")
    return ref, est, m.to(ref.dtype), kind


def _result(t: torch.Tensor, kind: Any) -> Any:
    if t.ndim == 0:
        return float(t)
    return t.detach().cpu().numpy() if kind.numpy else t


def nmse(reference: Any, estimate: Any, *, mask: Any = None) -> Any:
    r"""Normalised mean squared error of volumes ``(..., D, H, W)``:

    .. math:: \mathrm{NMSE} = \frac{\sum_{v \in M} (f_v - \hat f_v)^2}{\sum_{v \in M} f_v^2}

    over the voxels of ``mask``, in float64.

    Parameters
    ----------
    reference, estimate : array_like or torch.Tensor
        Real volumes of one shape ``(..., D, H, W)``.
    mask : array_like of bool, optional
        ``(D, H, W)`` voxels to compare (default all; ``plan.reconstruction_mask`` for the
        voxels a 3-D Zernike reconstruction fills).

    Returns
    -------
    float or array
        A float for one volume, else one value per volume (NumPy, or a tensor for tensors).

    Raises
    ------
    ValueError
        Shapes that differ, a mask of another shape or selecting nothing, NaN or infinity.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.ones((2, 2, 2)); b = a.copy(); b[0, 0, 0] = 0.0
    >>> nmse(a, b)
    0.125
    """
    ref, est, m, kind = _pair(reference, estimate, mask)
    err = ((ref - est) ** 2 * m).sum(dim=(-3, -2, -1))
    den = (ref**2 * m).sum(dim=(-3, -2, -1))
    return _result(err / den, kind)


def psnr(reference: Any, estimate: Any, *, mask: Any = None,
         data_range: float | None = None) -> Any:
    r"""Peak signal-to-noise ratio of volumes ``(..., D, H, W)`` in decibels,
    :math:`10 \log_{10}(L^2 / \mathrm{MSE})` over the voxels of ``mask``.

    Parameters
    ----------
    reference, estimate : array_like or torch.Tensor
        Real volumes of one shape ``(..., D, H, W)``.
    mask : array_like of bool, optional
        ``(D, H, W)`` voxels to compare (default all).
    data_range : float, optional
        :math:`L > 0`; default ``max - min`` of the reference over the mask, per volume.

    Returns
    -------
    float or array
        Decibels, one per volume; ``inf`` where the volumes agree.

    Raises
    ------
    ValueError
        As for :func:`nmse`, and a ``data_range`` that is not > 0.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros((2, 2, 2)); b = a.copy(); b[0, 0, 0] = 1.0
    >>> round(psnr(a, b, data_range=1.0), 3)
    9.031
    """
    if data_range is not None:
        data_range = check_real("data_range", data_range, minimum=0.0, strict_minimum=True)
    ref, est, m, kind = _pair(reference, estimate, mask)
    mse = ((ref - est) ** 2 * m).sum(dim=(-3, -2, -1)) / m.sum()
    if data_range is None:
        inside = m.bool().expand(ref.shape)
        hi = torch.where(inside, ref, -torch.inf).amax(dim=(-3, -2, -1))
        lo = torch.where(inside, ref, torch.inf).amin(dim=(-3, -2, -1))
        rng = hi - lo
    else:
        rng = torch.full_like(mse, data_range)
    out = torch.where(mse == 0, torch.inf, 10.0 * torch.log10(rng**2 / mse))
    return _result(out, kind)
