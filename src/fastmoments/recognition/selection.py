"""Choosing the moments of a data set that vary most (thesis Sec. 6.2): features, then their
variances (:mod:`fastmoments.recognition.variance`), then the largest."""

from __future__ import annotations

from typing import Any

from .._defaults import FAMILY, KIND, ORDERS
from .._validate import check_choice
from ..moments import KINDS
from .extract import features
from .featureset import FeatureSet
from .variance import moment_variances, top_by_variance

__all__ = ["select_by_variance"]


def select_by_variance(images: Any, count: int = 4, *, family: str = FAMILY,
                       orders: Any = ORDERS, kind: str = KIND, **kwargs: Any
                       ) -> list[tuple[int, int]]:
    """The ``count`` moments of order in ``orders`` that vary most over ``images``.

    Parameters
    ----------
    images : array_like, torch.Tensor or FeatureSet
        The data set ``(..., N, N)``, or a feature set already computed (then ``family`` and
        ``orders`` are ignored and its moments are the candidates).
    count : int
        How many moments to keep (4 in the thesis).
    family, orders, kind
        As in :func:`fastmoments.features` (and its defaults; the thesis took
        ``family="pseudo-zernike", orders=5, kind="complex"``).
    **kwargs
        Passed to :func:`fastmoments.features` (device, dtype, batch_size, ...).

    Returns
    -------
    list of (n, m)
        Sorted by ``(n, m)``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> imgs = (rng.random((50, 24, 24)) > 0.5).astype(np.float64)
    >>> len(select_by_variance(imgs, 4, kind="magnitude"))
    4
    """
    kind = check_choice("kind", kind, KINDS)
    fs = images if isinstance(images, FeatureSet) else features(
        images, family=family, orders=orders, kind=kind, **kwargs)
    return top_by_variance(fs.pairs, moment_variances(fs, kind=kind), count)
