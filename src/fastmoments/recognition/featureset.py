"""The :class:`FeatureSet`: feature vectors of a set of images, with the moment behind every
column (what :func:`fastmoments.features` returns)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._array import ArrayKind, to_output
from .._validate import check_choice
from ..moments import KINDS, column_names, label

__all__ = ["FeatureSet", "as_kind"]


def as_kind(moments: torch.Tensor, kind: str) -> torch.Tensor:
    """The real feature columns of complex ``moments`` taken the ``kind`` way."""
    if kind == "complex":
        return torch.view_as_real(moments.resolve_conj()).reshape(*moments.shape[:-1], -1)
    if kind == "real":
        return moments.real.contiguous()
    return moments.abs()


@dataclass(frozen=True, eq=False)
class FeatureSet:
    r"""Feature vectors of a set of images, with the moment behind every column.

    Attributes
    ----------
    family : str
        The disk family of the moments.
    kind : {"complex", "real", "magnitude"}
        How moments became columns (module notes).
    pairs : list of (n, m)
        The moments used, in column order (``m`` may be negative: :math:`A_{n,-m}` of a real
        image is the family's partner of a stored moment, e.g. :math:`\overline{A_{nm}}`).
    columns : list of (n, m, part)
        What each column holds: ``part`` is ``"re"``, ``"im"`` or ``"abs"``.
    moments : torch.Tensor
        ``(n_images, len(pairs))`` complex moments (on the compute device).
    kind_in : ArrayKind
        Whether the images were NumPy (``matrix`` is then NumPy) and their device.
    normalize : {None, "pixels", "z00"}
        The normalization of the moments (see :func:`fastmoments.features`).
    """

    family: str
    kind: str
    pairs: list[tuple[int, int]]
    columns: list[tuple[int, int, str]]
    moments: torch.Tensor
    kind_in: ArrayKind
    normalize: str | None = None

    @property
    def names(self) -> list[str]:
        """Column labels such as ``"Re A[4,0]"``, ``"Im A[4,0]"``, ``"|A[0,0]|"`` (the labels
        of :meth:`fastmoments.disk.DiskMoments.names` and of ``get_feature_names_out`` in
        :mod:`fastmoments.sklearn`)."""
        return [label(*c) for c in self.columns]

    #: The same labels under scikit-learn's word.
    feature_names = names

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(feature_set)``: the feature matrix :attr:`matrix` as NumPy
        ``(n_images, n_features)`` (copied to the host when it lives on a GPU)."""
        t = self.tensor.detach()
        if copy is False and t.device.type != "cpu":
            raise ValueError(f"np.asarray(FeatureSet, copy=False): the features are on "
                             f"{t.device} and must be copied to the host")
        arr = t.cpu().numpy()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    @property
    def tensor(self) -> torch.Tensor:
        """The real feature matrix ``(n_images, n_features)`` as a tensor on the compute
        device."""
        return as_kind(self.moments, self.kind)

    @property
    def matrix(self) -> Any:
        """The real feature matrix ``(n_images, n_features)``, NumPy if the images were NumPy,
        else a tensor on the compute device."""
        return to_output(self.tensor, self.kind_in)

    def complex_values(self) -> Any:
        """The complex moments ``(n_images, len(pairs))`` in the caller's kind."""
        return to_output(self.moments, self.kind_in)

    def __len__(self) -> int:
        return int(self.moments.shape[0])

    @property
    def n_features(self) -> int:
        return len(self.columns)

    def with_kind(self, kind: str) -> FeatureSet:
        """The same moments taken another way (no recomputation)."""
        kind = check_choice("kind", kind, KINDS)
        return FeatureSet(self.family, kind, list(self.pairs), column_names(self.pairs, kind),
                          self.moments, self.kind_in, self.normalize)

    def select(self, pairs: Sequence[tuple[int, int]]) -> FeatureSet:
        """The feature set restricted to some of its moments (in the order given).

        Raises
        ------
        KeyError
            If a moment is not in this set.
        """
        where = {p: i for i, p in enumerate(self.pairs)}
        idx = []
        for p in pairs:
            key = (int(p[0]), int(p[1]))
            if key not in where:
                raise KeyError(f"moment {key} is not in this feature set (it has "
                               f"{len(self.pairs)} moments: {self.pairs[:6]}...)")
            idx.append(where[key])
        keep = [self.pairs[i] for i in idx]
        sel = torch.as_tensor(idx, dtype=torch.long, device=self.moments.device)
        return FeatureSet(self.family, self.kind, keep, column_names(keep, self.kind),
                          self.moments.index_select(-1, sel), self.kind_in, self.normalize)

    def subset(self, rows: Any) -> FeatureSet:
        """The feature vectors of some images (an index array, slice or boolean mask)."""
        if isinstance(rows, slice):
            mom = self.moments[rows]
        else:
            r = torch.as_tensor(np.asarray(rows), device=self.moments.device)
            mom = self.moments[r]
        return FeatureSet(self.family, self.kind, list(self.pairs), list(self.columns), mom,
                          self.kind_in, self.normalize)

    def __repr__(self) -> str:
        norm = f" normalize={self.normalize!r}" if self.normalize else ""
        return (f"<FeatureSet {self.family} kind={self.kind}{norm} images={len(self)} "
                f"features={self.n_features} moments={self.pairs[:4]}"
                f"{'...' if len(self.pairs) > 4 else ''}>")
