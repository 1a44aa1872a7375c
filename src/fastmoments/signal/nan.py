"""The NaN policies of the Gaussians, ``nan_policy="propagate" | "omit" | "raise"``: the
mechanism behind :func:`~fastmoments.signal.gaussian_filter1d` and
:func:`~fastmoments.signal.gaussian_filter` ``(..., nan_policy=...)``.

:func:`smooth_nan` takes the filter as a callable (one or two of its passes make each policy),
so this module imports no Gaussian and the public functions dispatch to it.

* ``"raise"``: NaN or infinity is a :class:`ValueError` (the Gaussians' own check).
* ``"propagate"``: every output within ``W = ceil(truncate σ)`` samples of a non-finite sample
  (NaN or ±inf, in the signal extended by ``mode``) is NaN, as a direct convolution with the
  kernel truncated at ``W`` (scipy.ndimage's) gives; the other outputs are the filter of the
  signal whose non-finite samples are set to zero (at a distance beyond ``W`` a sample weighs
  less than the kernel's truncated tail).
* ``"omit"``: normalised convolution (Knutsson & Westin, "Normalized and differential
  convolution", CVPR 1993): with ``m`` the mask of the finite samples,

  .. math:: y = \\frac{G * (x\\,m)}{G * m},

  two passes of the same Gaussian. ``G * m`` is the fraction of the kernel's weight that falls
  on finite samples; where it is at most ``min_weight`` the output is NaN (the data say nothing
  there). This is astropy's ``convolve(..., nan_treatment="interpolate")`` for a Gaussian kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .._validate import check_choice, check_real
from .folded import truncation_radius

__all__ = ["MIN_WEIGHT", "NAN_POLICIES", "check_nan_options", "mode_index", "smooth_nan"]

#: The values of ``nan_policy``.
NAN_POLICIES = ("propagate", "omit", "raise")

#: Default ``min_weight`` of ``"omit"``: outputs where less than 1 % of the kernel's weight falls
#: on finite samples are NaN. The error of ``y`` is about the kernel's absolute error
#: (~1.5e-4 for the SFT fits of relative RMSE 1e-4) times ``max |x| / (G * m)``, so at most a
#: few percent at this threshold and the kernel's error where ``G * m`` is near one.
MIN_WEIGHT = 1e-2

_MODES = ("reflect", "nearest", "mirror", "wrap", "constant")


def mode_index(n: int, radius: int, mode: str) -> np.ndarray:
    """Source index of each sample of a length-``n`` signal extended by ``radius`` samples on
    each side, for the scipy.ndimage boundary ``mode``.

    Position ``p`` of the extended signal (``p = -radius .. n - 1 + radius``) takes the sample
    ``index[p + radius]``; for ``"constant"`` the positions outside hold ``n`` (the caller's
    ``cval`` slot). ``"reflect"`` is ``d c b a | a b c d | d c b a`` (period ``2n``),
    ``"mirror"`` is ``d c b | a b c d | c b a`` (period ``2n - 2``), ``"nearest"`` repeats the
    end samples, ``"wrap"`` is periodic; each holds for any ``radius``, also longer than ``n``.

    >>> mode_index(3, 4, "reflect").tolist()
    [2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0]
    >>> mode_index(3, 2, "mirror").tolist(), mode_index(3, 1, "constant").tolist()
    ([2, 1, 0, 1, 2, 1, 0], [3, 0, 1, 2, 3])
    """
    p = np.arange(-radius, n + radius, dtype=np.int64)
    if mode == "reflect":
        q = p % (2 * n)
        return np.where(q < n, q, 2 * n - 1 - q)
    if mode == "mirror":
        if n == 1:
            return np.zeros_like(p)
        q = p % (2 * n - 2)
        return np.where(q < n, q, 2 * n - 2 - q)
    if mode == "nearest":
        return np.clip(p, 0, n - 1)
    if mode == "wrap":
        return p % n
    if mode == "constant":
        return np.where((p >= 0) & (p < n), p, n)
    raise ValueError(f"mode must be one of {', '.join(map(repr, _MODES))}; got {mode!r}")


def _near(bad: torch.Tensor, axis: int, radius: int, mode: str) -> torch.Tensor:
    """Whether a ``True`` of ``bad`` lies within ``radius`` samples along ``axis`` (extended by
    ``mode``; outside a ``"constant"`` signal nothing is bad): a box count by cumulative sums."""
    b = bad.movedim(axis, -1)
    n = b.shape[-1]
    idx = torch.from_numpy(mode_index(n, radius, mode)).to(b.device)
    padded = torch.cat((b, torch.zeros((*b.shape[:-1], 1), dtype=b.dtype, device=b.device)), -1)
    ext = padded[..., idx].to(torch.int32)
    cs = torch.nn.functional.pad(torch.cumsum(ext, -1), (1, 0))
    count = cs[..., 2 * radius + 1:] - cs[..., :n]
    return (count > 0).movedim(-1, axis)


def check_nan_options(nan_policy: Any, min_weight: Any, out: Any) -> tuple[str, float]:
    """``nan_policy`` and ``min_weight`` checked; ``out=`` refused unless the policy is
    ``"raise"`` (the other policies combine passes)."""
    policy = check_choice("nan_policy", nan_policy, NAN_POLICIES)
    w = check_real("min_weight", min_weight, minimum=0.0, maximum=1.0)
    if w >= 1.0:
        raise ValueError(f"min_weight must be < 1 (a fraction of the kernel's weight), got {w}")
    if out is not None and policy != "raise":
        raise TypeError(f"out= is taken with nan_policy='raise' only (nan_policy={policy!r} "
                        f"combines two passes), got out and nan_policy={policy!r}")
    return policy, w


def smooth_nan(t: torch.Tensor, filt: Callable[[torch.Tensor, float | None], torch.Tensor],
               axes: list[int], sigmas: list[float], orders: list[int], modes: list[str],
               truncate: float, policy: str, min_weight: float) -> torch.Tensor:
    """The policies ``"propagate"`` and ``"omit"`` on the tensor ``t``.

    Parameters
    ----------
    t : torch.Tensor
        Real input, NaN marking a missing sample (not checked for finiteness).
    filt : callable
        ``filt(data, cval)``: the Gaussian with every other option fixed, on a tensor of
        ``t``'s shape (``cval=None``: the caller's ``cval``), returning a tensor.
    axes, sigmas, orders, modes : list
        The filtered axes (non-negative) and each one's σ, order and boundary mode.
    truncate : float
        ``W = ceil(truncate σ)``: the reach of a non-finite sample with ``"propagate"``.
    policy : {"propagate", "omit"}
        The policy.
    min_weight : float
        ``"omit"``: outputs where ``G*m`` is at most this are NaN.

    Returns
    -------
    torch.Tensor
        The filtered tensor.

    Raises
    ------
    ValueError
        For ``"omit"`` with a derivative (``order != 0``) or infinity in ``t``.
    """
    if policy == "omit" and any(o != 0 for o in orders):
        raise ValueError(f"nan_policy='omit' smooths (order=0) only; normalised convolution "
                         f"of a derivative is not the derivative of the smoothed data. Got "
                         f"order={orders if len(orders) > 1 else orders[0]}")
    finite = torch.isfinite(t)
    if bool(finite.all()):
        return filt(t, None)
    zero = torch.zeros((), dtype=t.dtype, device=t.device)
    if policy == "propagate":
        y = filt(torch.where(finite, t, zero), None)
        bad = ~finite
        for ax, s, mode in zip(axes, sigmas, modes, strict=True):
            bad = _near(bad, ax, truncation_radius(s, truncate), mode)
        return torch.where(bad, torch.full((), math.nan, dtype=y.dtype, device=y.device), y)
    if bool(torch.isinf(t).any()):
        raise ValueError("x contains infinity; nan_policy='omit' omits NaN samples only")
    num = filt(torch.where(finite, t, zero), None)
    den = filt(finite.to(t.dtype), 1.0)  # outside a "constant" signal every sample is cval
    keep = den > min_weight
    nan = torch.full((), math.nan, dtype=num.dtype, device=num.device)
    return torch.where(keep, num / torch.where(keep, den, torch.ones_like(den)), nan)
