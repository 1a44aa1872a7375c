"""Image quality metrics."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._array import as_tensor

__all__ = ["psnr"]


def psnr(reference: Any, estimate: Any, *, mask: Any = None,
         data_range: float | None = None) -> Any:
    r"""Peak signal-to-noise ratio in decibels.

    .. math:: \mathrm{PSNR} = 10 \log_{10} \frac{L^2}{\mathrm{MSE}},
       \qquad \mathrm{MSE} = \frac{1}{|M|} \sum_{(i,j) \in M} (f_{ij} - \hat f_{ij})^2,

    where :math:`L` is the data range and :math:`M` the pixels selected by ``mask``
    (all pixels by default). For moments on the unit disk pass the disk's pixel mask, as the
    Zernike thesis does (Sec. 5.2), so that the discarded corners do not count.

    Parameters
    ----------
    reference, estimate : array_like or torch.Tensor
        Images of the same shape ``(..., H, W)``; batches give one value per image.
    mask : array_like of bool, optional
        Pixels to compare, broadcastable to the image shape.
    data_range : float, optional
        :math:`L`. Default: 255 if ``reference`` has integer dtype, else
        ``max(reference) - min(reference)`` over the masked pixels (per image), at least 1e-12.

    Returns
    -------
    float or array
        ``inf`` where the images are equal.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros((4, 4)); b = a.copy(); b[0, 0] = 1.0
    >>> round(float(psnr(a, b, data_range=1.0)), 3)
    12.041
    """
    integer_ref = (not isinstance(reference, torch.Tensor)
                   and np.asarray(reference).dtype.kind in "biu")
    ref, kind = as_tensor(reference, "reference", min_ndim=2, dtype=torch.float64)
    est, _ = as_tensor(estimate, "estimate", min_ndim=2, dtype=torch.float64, device=ref.device)
    if ref.shape != est.shape:
        raise ValueError(f"estimate must have the shape of reference {tuple(ref.shape)}, "
                         f"got {tuple(est.shape)}")
    if mask is None:
        m = torch.ones(ref.shape[-2:], dtype=torch.bool, device=ref.device)
    else:
        m = torch.as_tensor(np.asarray(mask) if not isinstance(mask, torch.Tensor) else mask,
                            device=ref.device).to(torch.bool)
        try:
            torch.broadcast_shapes(m.shape, ref.shape)
        except RuntimeError as exc:
            raise ValueError(f"mask of shape {tuple(m.shape)} does not broadcast to the image "
                             f"shape {tuple(ref.shape)}") from exc
    m = m.expand(ref.shape)
    count = m.sum(dim=(-2, -1)).to(torch.float64)
    if bool((count == 0).any()):
        raise ValueError("mask selects no pixel")
    err = torch.where(m, (ref - est) ** 2, torch.zeros((), dtype=ref.dtype, device=ref.device))
    mse = err.sum(dim=(-2, -1)) / count
    if data_range is None:
        if integer_ref:
            rng = torch.full_like(mse, 255.0)
        else:
            big = torch.finfo(torch.float64).max
            hi = torch.where(m, ref, torch.full_like(ref, -big)).amax(dim=(-2, -1))
            lo = torch.where(m, ref, torch.full_like(ref, big)).amin(dim=(-2, -1))
            rng = (hi - lo).clamp_min(1e-12)
    else:
        rng = torch.full_like(mse, float(data_range))
    with np.errstate(divide="ignore"):
        out = 10.0 * torch.log10(rng**2 / mse)
    if out.ndim == 0:
        return float(out)
    return out.cpu().numpy() if kind.numpy else out
