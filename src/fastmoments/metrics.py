"""Image quality metrics."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._array import as_tensor
from ._validate import check_real

__all__ = ["psnr"]

# data ranges inferred from an integer reference's dtype (the same for NumPy and torch)
_RANGE_OF = {"bool": 1.0, "uint8": 255.0, "int8": 255.0}


def _source_dtype(x: Any) -> str:
    """The name of the dtype of the user's data, the same for NumPy and torch (``'uint8'``)."""
    if isinstance(x, torch.Tensor):
        return str(x.dtype).removeprefix("torch.")
    dt = getattr(x, "dtype", None)
    if not isinstance(dt, np.dtype):
        try:
            dt = np.asarray(x).dtype
        except Exception:  # as_tensor says what is wrong with it
            return "object"
    return dt.name


def psnr(reference: Any, estimate: Any, *, mask: Any = None,
         data_range: float | None = None) -> Any:
    r"""Peak signal-to-noise ratio in decibels.

    .. math:: \mathrm{PSNR} = 10 \log_{10} \frac{L^2}{\mathrm{MSE}},
       \qquad \mathrm{MSE} = \frac{1}{|M|} \sum_{(i,j) \in M} (f_{ij} - \hat f_{ij})^2,

    where :math:`L` is the data range and :math:`M` the pixels selected by ``mask``
    (all pixels by default). For moments on the unit disk pass the disk's pixel mask, as the
    Zernike thesis does (Sec. 5.2), so that the discarded corners do not count. The sums are
    taken in float64 whatever the input dtype.

    Parameters
    ----------
    reference, estimate : array_like or torch.Tensor
        Real images of the same shape ``(..., H, W)``, ``H, W >= 1``; batches give one value
        per image. NaN and infinity are refused.
    mask : array_like or torch.Tensor of bool, optional
        Pixels to compare, of the image shape ``(H, W)`` or broadcastable to the full shape
        ``(..., H, W)``. It must select at least one pixel of every image.
    data_range : float, optional
        :math:`L > 0`. Default, from the reference's dtype (the same rule for NumPy and torch):
        255 for 8-bit integers (``uint8``, ``int8``), 1 for booleans; for floating-point
        references ``max(reference) - min(reference)`` over the masked pixels, per image.
        Wider integer dtypes have no conventional range: give ``data_range``.

    Returns
    -------
    float or array
        A float for one image, else an array (NumPy, or a float64 tensor on the reference's
        device). ``inf`` where the estimate equals the reference on the mask (MSE = 0).

    Raises
    ------
    ValueError
        For shapes that differ, a mask that does not broadcast to the images or selects no
        pixel, a ``data_range`` that is not > 0 and finite, an inferred range of 0 (a constant
        reference) where the images differ, a wide integer reference without ``data_range``.
    TypeError
        For a ``data_range`` that is not a real number (bools and strings included), a mask
        that is not boolean, images that are not arrays of numbers.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros((4, 4)); b = a.copy(); b[0, 0] = 1.0
    >>> round(float(psnr(a, b, data_range=1.0)), 3)
    12.041
    >>> psnr(a, a, data_range=1.0)
    inf
    """
    if data_range is not None:
        data_range = check_real("data_range", data_range, minimum=0.0, strict_minimum=True)
    ref_dtype = _source_dtype(reference)
    ref, kind = as_tensor(reference, "reference", min_ndim=2, dtype=torch.float64)
    est, _ = as_tensor(estimate, "estimate", min_ndim=2, dtype=torch.float64, device=ref.device)
    if ref.shape != est.shape:
        raise ValueError(f"estimate must have the shape of reference {tuple(ref.shape)}, "
                         f"got {tuple(est.shape)}")
    if ref.shape[-1] == 0 or ref.shape[-2] == 0:
        raise ValueError(f"reference must have images of at least 1 x 1 pixels, got shape "
                         f"{tuple(ref.shape)}")
    if mask is None:
        m = torch.ones(ref.shape[-2:], dtype=torch.bool, device=ref.device)
    else:
        if isinstance(mask, torch.Tensor):
            m = mask.detach()
        else:
            try:
                m = torch.from_numpy(np.array(mask, copy=True))
            except (TypeError, ValueError) as exc:
                raise TypeError(f"mask must be a boolean array, got {type(mask).__name__}") \
                    from exc
        if m.dtype != torch.bool:
            raise TypeError(f"mask must be a boolean array, got dtype "
                            f"{str(m.dtype).removeprefix('torch.')} (use e.g. mask > 0)")
        m = m.to(ref.device)
        try:
            full = torch.broadcast_shapes(m.shape, ref.shape)
        except RuntimeError:
            full = None
        if full != ref.shape:
            raise ValueError(f"mask of shape {tuple(m.shape)} does not broadcast to the image "
                             f"shape {tuple(ref.shape)}")
    m = m.expand(ref.shape)
    count = m.sum(dim=(-2, -1)).to(torch.float64)
    if bool((count == 0).any()):
        raise ValueError("mask selects no pixel" + (
            "" if count.ndim == 0 else
            f" of image {tuple(int(i) for i in torch.nonzero(count == 0)[0])}"))
    zero = torch.zeros((), dtype=ref.dtype, device=ref.device)
    # the squared error is summed relative to the largest difference, so that errors near the
    # float64 limit (1e300) neither overflow to inf nor (1e-170) underflow to 0
    diff = torch.where(m, (ref - est).abs(), zero)
    scale = diff.amax(dim=(-2, -1))
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    rel = ((diff / safe[..., None, None]) ** 2).sum(dim=(-2, -1)) / count
    mse = torch.where(scale > 0, rel, torch.zeros_like(rel))  # 0 where equal; > 0 elsewhere
    log_mse = 20.0 * torch.log10(safe) + 10.0 * torch.log10(torch.where(scale > 0, rel,
                                                                        torch.ones_like(rel)))
    if data_range is not None:
        rng = torch.full_like(mse, data_range)
    elif ref_dtype in _RANGE_OF:
        rng = torch.full_like(mse, _RANGE_OF[ref_dtype])
    elif ref_dtype.startswith(("int", "uint")):
        raise ValueError(f"data_range is needed for a reference of dtype {ref_dtype} (it is "
                         f"inferred only for 8-bit integers, booleans and floats)")
    else:
        hi = torch.where(m, ref, torch.full_like(ref, -np.inf)).amax(dim=(-2, -1))
        lo = torch.where(m, ref, torch.full_like(ref, np.inf)).amin(dim=(-2, -1))
        rng = hi - lo
        if bool(((rng == 0) & (mse > 0)).any()):
            raise ValueError("data_range cannot be inferred: the reference is constant over "
                             "the mask (range 0); give data_range")
    out = torch.where(mse == 0, torch.full_like(mse, np.inf),
                      20.0 * torch.log10(torch.where(rng > 0, rng, torch.ones_like(rng)))
                      - log_mse)
    if out.ndim == 0:
        return float(out)
    return out.detach().cpu().numpy() if kind.numpy else out
