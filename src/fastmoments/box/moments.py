"""The :class:`BoxMoments` coefficient object: ``J[p, q]`` or ``J[p, q, r]`` with reconstruction."""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any

import torch

from .._array import ChannelMove, restore_channels
from .._validate import check_choice, check_int
from ..moments import Moments

if TYPE_CHECKING:  # pragma: no cover
    from .plan import JacobiTransform

__all__ = ["PLANES", "BoxMoments"]

#: Planes of a ``(D, H, W)`` volume, with z along D, y along H and x along W, and the axis
#: held fixed for each.
PLANES = {"xy": 0, "xz": 1, "yz": 2}


class BoxMoments(Moments):
    """Jacobi (Legendre, Gegenbauer) moments of a batch of images or volumes.

    **Indexing.** ``J[p, q]`` (2-D, ``p`` along H and ``q`` along W) or ``J[p, q, r]`` (3-D,
    along D, H, W) indexes the coefficient axes only, and always exactly ``ndim`` of them: on
    a batch of shape ``B`` it returns an array of shape ``B`` (one coefficient per batch
    element), and ``J[0, 1, 2]`` on 2-D moments is an :class:`IndexError`, never an index into
    the batch (use ``J.numpy()[b]`` or ``J.data[b]`` for that). Each index is a degree
    ``0 <= p <= order`` (negative indices do not count from the end: they are an
    :class:`IndexError`) or a slice with non-negative bounds and a positive step. With
    ``truncation='total'`` an all-integer index whose sum exceeds the order was not computed
    and is an :class:`IndexError`; slices return such entries as zeros.
    The same rule holds for the disk moments' ``A[n, m]``.

    Use :meth:`reconstruct` for the whole image/volume, part of it (``region``) or a lower
    order, and :meth:`slice` for one plane of a volume, all computed straight from the moments.

    **As an array.** ``np.asarray(J)`` is the coefficient array :meth:`numpy`,
    ``batch_shape + (order + 1,) * ndim`` (entries outside a ``truncation='total'`` set are
    zeros), and :attr:`shape` is its shape.

    Examples
    --------
    >>> import numpy as np
    >>> from fastmoments import legendre_moments
    >>> J = legendre_moments(np.ones((2, 8, 8)), 3, ndim=2)
    >>> J.shape, np.asarray(J).shape
    ((2, 4, 4), (2, 4, 4))
    >>> J  # doctest: +ELLIPSIS
    <BoxMoments legendre order=3 truncation=... batch_shape=(2,) shape=(2, 4, 4) dtype=...>
    """

    def _orders_text(self) -> str:
        return f"order={self.order} truncation={self.truncation!r}"

    family = "jacobi"

    def __init__(self, data: torch.Tensor, plan: JacobiTransform, kind: Any) -> None:
        super().__init__(data, plan, kind, ncoef_dims=plan.ndim)
        self.family = plan.family
        #: Where the colour channels were in the input (``channel_axis``), or None.
        self.channels: ChannelMove | None = None

    def _restore(self, out: Any, region: Any) -> Any:
        """A reconstruction with the colour channels put back where they were in the input
        (integer entries of ``region`` drop their axes)."""
        if self.channels is None:
            return out
        spatial = list(region) if isinstance(region, tuple) else [slice(None)] * self.ndim
        dropped = [isinstance(r, numbers.Integral) and not isinstance(r, bool)
                   for r in spatial]
        kept_before = sum(not d for d in dropped[: self.channels.core_before])
        return restore_channels(out, self.channels, self.ndim - sum(dropped), kept_before)

    @property
    def order(self) -> int:
        """The maximum order the moments were computed to."""
        return self.plan.order

    @property
    def ndim(self) -> int:
        """2 for images, 3 for volumes."""
        return self.plan.ndim

    @property
    def truncation(self) -> str:
        return self.plan.truncation

    def _index(self, key: Any) -> tuple[Any, ...]:
        """Check ``key`` against the indexing rule of the class docstring."""
        names = "(p, q)" if self.ndim == 2 else "(p, q, r)"
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) != self.ndim:
            raise IndexError(f"{self.ndim}-D moments take {self.ndim} indices {names}, one per "
                             f"coefficient axis (the batch axes are kept), got {len(key)}: "
                             f"{key!r}")
        top = self.order
        out = []
        for ax, k in enumerate(key):
            if isinstance(k, slice):
                for part in (k.start, k.stop, k.step):
                    if part is not None and (isinstance(part, bool)
                                             or not isinstance(part, numbers.Integral)):
                        raise TypeError(f"index {ax} must be an integer or a slice of integers, "
                                        f"got {k!r}")
                if any(part is not None and part < 0 for part in (k.start, k.stop)):
                    raise IndexError(f"index {ax}: negative slice bounds do not count from the "
                                     f"end for moments (degrees are 0..{top}), got {k!r}")
                if k.step is not None and k.step <= 0:
                    raise IndexError(f"index {ax}: slice step must be > 0, got {k!r}")
                out.append(k)
            elif isinstance(k, bool) or not isinstance(k, numbers.Integral):
                raise TypeError(f"index {ax} must be an integer or a slice, got "
                                f"{type(k).__name__} {k!r}")
            else:
                k = int(k)
                if not 0 <= k <= top:
                    raise IndexError(f"index {ax} must be a degree in 0..{top} (the order the "
                                     f"moments were computed to), got {k}")
                out.append(k)
        if self.truncation == "total" and all(isinstance(k, int) for k in out) \
                and sum(out) > top:
            raise IndexError(f"J{list(out)} is outside the total-degree set (sum of the "
                             f"indices <= {top}): it was not computed")
        return tuple(out)

    def __getitem__(self, key: Any) -> Any:
        """``J[p, q]`` / ``J[p, q, r]``: one coefficient (or slices) for every batch element.

        Raises
        ------
        IndexError
            For a wrong number of indices, a negative or too large degree, or (with
            ``truncation='total'``) an index outside the computed set.
        TypeError
            For an index that is neither an integer nor a slice of integers.
        """
        out = self._data[(Ellipsis, *self._index(key))]
        res = self._out(out)
        if self.kind.numpy and res.ndim == 0:
            return res[()]
        return res

    def reconstruct(self, *, order: int | None = None, region: Any = None, clip: Any = None,
                    fill: float = math.nan) -> Any:
        """Reconstruct the image or volume (Eq. 23/26), fully or in part, optionally clipped.

        Parameters
        ----------
        order : int, optional
            Use only the moments up to this order (``<=`` the computed order); same
            truncation rule (total degree or box). Default: all.
        region : tuple of slices, optional
            One ``slice`` (or ``(start, stop)`` pair, or integer index) per spatial axis: only
            those pixels are computed, directly from the moments, without building the rest.
        clip : Plane, 4 numbers ``(nx, ny, nz, d)`` or a sequence of them, optional
            Volumes only: keep the voxels with ``n.x <= d`` for every plane (or ``>= d`` for a
            ``Plane(..., keep='above')``), in the normalised coordinates ``[-1, 1]`` with
            ``x`` along W, ``y`` along H and ``z`` along D. Only the bounding boxes of the
            kept voxels are reconstructed; see :mod:`fastmoments.box.clip`.
        fill : float
            Value of the clipped voxels: NaN by default (no value; drawn as empty), 0 for
            arithmetic.

        Returns
        -------
        array or tensor
            Shape ``batch_shape + spatial`` (the region's shape when given; an integer index
            drops that axis); clipping keeps the shape. For the moments of a colour image
            (``channel_axis``), the channel axis is back where it was in the input.

        Raises
        ------
        ValueError, TypeError, MemoryError
            As :meth:`JacobiTransform.inverse <fastmoments.box.plan.JacobiTransform.inverse>`.

        Examples
        --------
        >>> import numpy as np
        >>> from fastmoments.box import Plane, legendre_moments
        >>> J = legendre_moments(np.ones((8, 8, 8)), 2, ndim=3)
        >>> v = J.reconstruct(clip=Plane((1, 0, 0), -0.5))       # keep x <= -0.5
        >>> np.isnan(v).sum(axis=(0, 1))                        # the last 6 of 8 along W cut
        array([ 0,  0, 64, 64, 64, 64, 64, 64])
        >>> w = J.reconstruct(clip=[(1, 0, 0, 0.0), (0, 0, 1, 0.0)], fill=0.0)  # x, z <= 0
        >>> int((w != 0).sum()), w.shape                      # a quarter of the 512 voxels
        (128, (8, 8, 8))
        """
        out = self.plan.inverse(self, order=order, region=region, clip=clip, fill=fill)
        return self._restore(out, region)

    def slice(self, plane: str, index: int, *, order: int | None = None, clip: Any = None,
              fill: float = math.nan) -> Any:
        """One plane of a reconstructed volume, computed directly from the moments.

        Parameters
        ----------
        plane : {'xy', 'xz', 'yz'}
            With z along D, y along H, x along W: ``'xy'`` fixes D, ``'xz'`` fixes H and
            ``'yz'`` fixes W.
        index : int
            The pixel index along the fixed axis (negative counts from the end).
        order : int, optional
            Reconstruction order (default: all moments).
        clip, fill : optional
            Clipping planes and the value of clipped pixels, as in :meth:`reconstruct`.

        Returns
        -------
        array or tensor
            ``batch_shape + (H, W)``, ``(D, W)`` or ``(D, H)``.
        """
        if self.ndim != 3:
            raise ValueError("plane slices need 3-D moments (a volume); use reconstruct(region=...)"
                             " for part of an image")
        axis = PLANES[check_choice("plane", plane, tuple(PLANES))]
        n = self.plan.shape[axis]
        index = check_int("index", index, minimum=-n, maximum=n - 1)
        region: list[Any] = [slice(None)] * 3
        region[axis] = index
        out = self.plan.inverse(self, order=order, region=tuple(region), clip=clip, fill=fill)
        return self._restore(out, tuple(region))
