"""Signal extension at the ends, with the boundary modes of :mod:`scipy.ndimage`.

Every filter in :mod:`fastmoments.signal` reads samples ``x[n - k]`` outside ``[0, N)``; these
are defined by the mode, exactly as :func:`scipy.ndimage.correlate1d` defines them, for any
extension length (also longer than the signal, which happens at large σ on short signals):

========== =========================================
mode       extension of ``a b c d``
========== =========================================
reflect    ``d c b a | a b c d | d c b a`` (half-sample symmetric)
mirror     ``d c b | a b c d | c b a`` (whole-sample symmetric)
nearest    ``a a a a | a b c d | d d d d``
wrap       ``a b c d | a b c d | a b c d``
constant   ``k k k k | a b c d | k k k k`` (``k = cval``)
========== =========================================
"""

from __future__ import annotations

import functools

import numpy as np
import torch

__all__ = ["MODES", "MODE_ALIASES", "extend", "extension_indices"]

MODES = ("reflect", "nearest", "mirror", "wrap", "constant")
#: scipy.ndimage's names of the boundary modes that equal one of ours for a filter
MODE_ALIASES = {"grid-mirror": "reflect", "grid-constant": "constant", "grid-wrap": "wrap"}


@functools.lru_cache(maxsize=64)
def _indices_np(n: int, left: int, right: int, mode: str) -> np.ndarray:
    j = np.arange(-left, n + right, dtype=np.int64)
    if mode == "reflect":
        period = 2 * n
        j = np.mod(j, period)
        j = np.where(j >= n, period - 1 - j, j)
    elif mode == "mirror":
        if n == 1:
            j = np.zeros_like(j)
        else:
            period = 2 * n - 2
            j = np.mod(j, period)
            j = np.where(j >= n, period - j, j)
    elif mode == "nearest":
        j = np.clip(j, 0, n - 1)
    elif mode == "wrap":
        j = np.mod(j, n)
    elif mode == "constant":
        j = np.where((j < 0) | (j >= n), -1, j)
    else:  # pragma: no cover - checked by callers
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    j.setflags(write=False)
    return j


def extension_indices(n: int, left: int, right: int, mode: str) -> np.ndarray:
    """Indices into ``x[0:n]`` of the extended signal ``x[-left : n + right]``.

    ``-1`` marks samples that take ``cval`` (mode ``"constant"``).

    >>> extension_indices(4, 3, 3, "reflect").tolist()
    [2, 1, 0, 0, 1, 2, 3, 3, 2, 1]
    >>> extension_indices(4, 3, 3, "mirror").tolist()
    [3, 2, 1, 0, 1, 2, 3, 2, 1, 0]
    """
    return _indices_np(int(n), int(left), int(right), mode)


def extend(x: torch.Tensor, left: int, right: int, mode: str, cval: float = 0.0) -> torch.Tensor:
    """Extend ``x`` along its last axis by ``left`` and ``right`` samples.

    Parameters
    ----------
    x : torch.Tensor
        Signals ``(..., N)``; never modified.
    left, right : int
        Samples added before and after.
    mode : str
        One of :data:`MODES`.
    cval : float
        Value outside the signal for ``mode="constant"``.

    Returns
    -------
    torch.Tensor
        ``(..., left + N + right)``, differentiable with respect to ``x``.
    """
    if left == right == 0:
        return x
    n = x.shape[-1]
    # the signal itself is one contiguous copy; only the two ends are gathered (an index
    # gather over the whole extended signal was 6x slower on the CPU)
    parts = []
    for count, index in zip((left, right), _device_indices(n, left, right, mode, x.device),
                            strict=True):
        if count == 0:
            parts.append(None)
        elif mode == "constant":
            parts.append(x.new_full((*x.shape[:-1], count), float(cval)))
        else:
            parts.append(x.index_select(-1, index))
    return torch.cat([p for p in (parts[0], x, parts[1]) if p is not None], dim=-1)


@functools.lru_cache(maxsize=64)
def _device_indices(n: int, left: int, right: int, mode: str, device: torch.device):
    """Indices of the ``left`` and the ``right`` extension (two tensors on ``device``)."""
    idx = np.maximum(extension_indices(n, left, right, mode), 0)
    return (torch.from_numpy(idx[:left].copy()).to(device),
            torch.from_numpy(idx[left + n:].copy()).to(device))
