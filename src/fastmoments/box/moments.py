"""The :class:`BoxMoments` coefficient object: ``J[p, q]`` or ``J[p, q, r]`` with reconstruction."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from .._validate import check_choice, check_int
from ..moments import Moments

if TYPE_CHECKING:  # pragma: no cover
    from .api import JacobiTransform

__all__ = ["PLANES", "BoxMoments"]

#: Planes of a ``(D, H, W)`` volume, with z along D, y along H and x along W, and the axis
#: held fixed for each.
PLANES = {"xy": 0, "xz": 1, "yz": 2}


class BoxMoments(Moments):
    """Jacobi (Legendre, Gegenbauer) moments of a batch of images or volumes.

    Index ``J[p, q]`` (2-D, ``p`` along H and ``q`` along W) or ``J[p, q, r]`` (3-D, along
    D, H, W). Indexing applies to the trailing coefficient axes, so on a batch ``J[2, 3]`` has
    the batch shape. Entries outside the truncation set are zero.

    Use :meth:`reconstruct` for the whole image/volume, part of it (``region``) or a lower
    order, and :meth:`slice` for one plane of a volume, all computed straight from the moments.
    """

    family = "jacobi"

    def __init__(self, data: torch.Tensor, plan: JacobiTransform, kind: Any) -> None:
        super().__init__(data, plan, kind, ncoef_dims=plan.ndim)
        self.family = plan.family

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

    def __getitem__(self, key: Any) -> Any:
        if not isinstance(key, tuple):
            key = (key,)
        out = self._data[(Ellipsis, *key)]
        res = self._out(out)
        if self.kind.numpy and res.ndim == 0:
            return res[()]
        return res

    def reconstruct(self, *, order: int | None = None, region: Any = None) -> Any:
        """Reconstruct the image or volume (Eq. 23/26), fully or in part.

        Parameters
        ----------
        order : int, optional
            Use only the moments up to this order (``<=`` the computed order); same
            truncation rule (total degree or box). Default: all.
        region : tuple of slices, optional
            One ``slice`` (or ``(start, stop)`` pair, or integer index) per spatial axis: only
            those pixels are computed, directly from the moments, without building the rest.

        Returns
        -------
        array or tensor
            Shape ``batch_shape + spatial`` (the region's shape when given; an integer index
            drops that axis).
        """
        return self.plan.inverse(self, order=order, region=region)

    def slice(self, plane: str, index: int, *, order: int | None = None) -> Any:
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
        return self.plan.inverse(self, order=order, region=tuple(region))
