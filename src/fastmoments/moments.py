"""The :class:`Moments` base class: coefficients, the plan that made them, and the input kind.

Each geometry subclasses it: :class:`fastmoments.disk.DiskMoments` (Zernike, pseudo-Zernike,
polar harmonic transforms) indexes ``A[n, m]``; the box moments index ``J[p, q]`` or
``J[p, q, r]``. The base class holds what they share: the coefficient tensor with its batch
dimensions in front, conversion to NumPy or torch, and the plan used for reconstruction.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ._array import ArrayKind, to_output
from ._defaults import KINDS

__all__ = ["KINDS", "MomentIndexError", "Moments", "column_labels", "column_names", "index_key",
           "label"]



class MomentIndexError(IndexError, KeyError):
    """An index of a moment that does not exist or was not computed.

    An :class:`IndexError`; also a :class:`KeyError`, which the disk moments raised for
    moments that were not computed before the indexing rule was written down.
    """

    __str__ = BaseException.__str__  # a plain message (KeyError would quote it)


def index_key(key: Any, names: tuple[str, ...], what: str = "moments") -> tuple[int, ...]:
    """Check the key of ``moments[i, j, ...]``: exactly one integer per name.

    The indexing rule shared by every moments object: ``A[n, m]`` (or ``J[p, q]``,
    ``J[p, q, r]``) names one moment and returns it for the whole batch (a scalar for one
    image, an array shaped like the batch otherwise; index that result to pick images).
    Anything else is a :class:`TypeError`: a different number of indices (so that an extra
    index can never be taken for the batch), slices, bools, floats, strings. Negative
    integers are passed through unchanged (they never wrap around): whether they exist is
    the family's business.

    >>> index_key((3, -1), ("n", "m"))
    (3, -1)
    """
    form = f"[{', '.join(names)}]"
    if not isinstance(key, tuple):
        key = (key,)
    if len(key) != len(names):
        raise TypeError(f"index {what} as {form} with exactly {len(names)} integers (one "
                        f"moment, for the whole batch; index the result to pick images), got "
                        f"{len(key)} indices: {key!r}")
    out = []
    for name, v in zip(names, key, strict=True):
        if isinstance(v, torch.Tensor) and v.ndim == 0 and not v.is_floating_point() \
                and not v.is_complex() and v.dtype != torch.bool:
            v = int(v)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            raise TypeError(f"index {name} of {what}{form} must be an integer, got {v!r}")
        out.append(int(v))
    return tuple(out)


def column_names(pairs: Sequence[tuple[int, int]], kind: str) -> list[tuple[int, int, str]]:
    """What each column of a feature matrix of ``kind`` over ``pairs`` holds: ``(n, m, part)``
    with ``part`` one of ``"re"``, ``"im"``, ``"abs"``.

    >>> column_names([(2, 0)], "complex")
    [(2, 0, 're'), (2, 0, 'im')]
    """
    parts = {"complex": ("re", "im"), "real": ("re",), "magnitude": ("abs",)}[kind]
    return [(n, m, p) for n, m in pairs for p in parts]


def label(n: int, m: int, part: str) -> str:
    """The label of one column: ``"Re A[n,m]"``, ``"Im A[n,m]"`` or ``"|A[n,m]|"``."""
    return {"re": f"Re A[{n},{m}]", "im": f"Im A[{n},{m}]", "abs": f"|A[{n},{m}]|"}[part]


def column_labels(pairs: Sequence[tuple[int, int]], kind: str) -> list[str]:
    """The column labels of a feature matrix of ``kind`` over ``pairs``.

    One naming rule for :attr:`fastmoments.recognition.FeatureSet.names`,
    :meth:`fastmoments.disk.DiskMoments.names` and the scikit-learn transformers.

    >>> column_labels([(0, 0), (2, 2)], "magnitude")
    ['|A[0,0]|', '|A[2,2]|']
    """
    return [label(*c) for c in column_names(pairs, kind)]


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

    # ------------------------------------------------------------------ array protocol
    def _array_tensor(self) -> torch.Tensor:
        """The tensor ``np.asarray(moments)`` returns (subclasses choose the layout)."""
        return self._data

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of ``np.asarray(moments)``: the batch shape, then the coefficient axes."""
        return tuple(self._array_tensor().shape)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(moments)``: the coefficients as NumPy (copied to the host; see the
        subclass for the layout)."""
        t = self._array_tensor().detach().resolve_conj()
        host = t.device.type == "cpu"
        arr = t.cpu().numpy()
        if copy is False and (not host or (dtype is not None and np.dtype(dtype) != arr.dtype)):
            raise ValueError(f"np.asarray({type(self).__name__}, copy=False): the coefficients "
                             f"must be copied (they are on {t.device} or of another dtype)")
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def _orders_text(self) -> str:
        """The order(s) for :meth:`__repr__`."""
        return f"order={getattr(self, 'order', '?')}"

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.family} {self._orders_text()} "
                f"batch_shape={self.batch_shape} shape={self.shape} dtype={self.dtype} "
                f"device={self.device}>")
