"""The :class:`Moments` base class: coefficients, the plan that made them, and the input kind.

Each geometry subclasses it: :class:`fastmoments.disk.DiskMoments` (Zernike, pseudo-Zernike,
polar harmonic transforms) indexes ``A[n, m]``; the box moments index ``J[p, q]`` or
``J[p, q, r]``. The base class holds what they share: the coefficient tensor with its batch
dimensions in front, conversion to NumPy or torch, and the plan used for reconstruction.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._array import ArrayKind, to_output

__all__ = ["Moments"]


class Moments:
    """Coefficients of a transform of a batch, with the plan that computed them.

    Parameters
    ----------
    data : torch.Tensor
        Coefficients, shaped ``batch_shape + coefficient_shape``.
    plan : object
        The transform plan that produced ``data`` (used by ``reconstruct``).
    kind : ArrayKind
        Whether the input was NumPy (results are returned as NumPy) and its device.
    ncoef_dims : int
        How many trailing dimensions of ``data`` index coefficients.
    """

    family: str = "moments"

    def __init__(self, data: torch.Tensor, plan: Any, kind: ArrayKind, ncoef_dims: int) -> None:
        self._data = data
        self.plan = plan
        self.kind = kind
        self._ncoef = ncoef_dims

    # ------------------------------------------------------------------ shape and storage
    @property
    def data(self) -> torch.Tensor:
        """The raw coefficient tensor (always a tensor, on the compute device)."""
        return self._data

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Batch dimensions of the input (``()`` for a single image)."""
        return tuple(self._data.shape[: self._data.ndim - self._ncoef])

    @property
    def dtype(self) -> torch.dtype:
        return self._data.dtype

    @property
    def device(self) -> torch.device:
        return self._data.device

    def _out(self, t: torch.Tensor) -> Any:
        """Return ``t`` in the caller's kind (NumPy or torch)."""
        return to_output(t, self.kind)

    def numpy(self) -> np.ndarray:
        """The coefficient array as NumPy (copied to the host)."""
        return self._data.detach().cpu().numpy()

    def torch(self) -> torch.Tensor:
        """The coefficient tensor (on the compute device)."""
        return self._data

    def __len__(self) -> int:
        return int(self._data.shape[0]) if self.batch_shape else 1

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.family} batch_shape={self.batch_shape} "
                f"dtype={self.dtype} device={self.device}>")
