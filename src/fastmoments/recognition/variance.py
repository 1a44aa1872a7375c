r"""Choosing moments by their variance over a data set (section 6.2 and tables 6.1-6.3 of the
:ref:`Zernike thesis <bib-zernike-thesis>`).

Moments whose values spread most over a set of objects separate those objects best, so the
thesis keeps the four moments of order :math:`n \le 5` with the largest variance, computed
three ways:

* complex: :math:`\sigma^2 = \frac{1}{N}\sum_i |A_i - \bar A|^2
  = \mathrm{var}(\mathrm{Re} A) + \mathrm{var}(\mathrm{Im} A)` (Table 6.1; its m = 0 row equals
  that of Table 6.2 because :math:`A_{n0}` is real for a real image),
* real part: :math:`\mathrm{var}(\mathrm{Re} A)` (Table 6.2),
* magnitude: :math:`\mathrm{var}(|A|)` (Table 6.3).

Variances are population variances (divided by :math:`N`), accumulated in float64;
:func:`fastmoments.recognition.select_by_variance` computes the features and picks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._validate import check_choice, check_int
from ..moments import KINDS
from .featureset import FeatureSet

__all__ = ["moment_variances", "top_by_variance", "variance_table"]


def moment_variances(moments: FeatureSet | Any, *, kind: str = "complex") -> np.ndarray:
    """Variance of each moment over the rows (images), taken the ``kind`` way.

    Parameters
    ----------
    moments : FeatureSet or array_like
        A feature set (its complex moments are used, whatever its kind) or an
        ``(n_images, K)`` complex array.
    kind : {"complex", "real", "magnitude"}
        How the variance is taken (module notes).

    Returns
    -------
    numpy.ndarray
        ``(K,)`` float64.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[1 + 1j], [3 - 1j]])
    >>> moment_variances(a).round(12).tolist(), moment_variances(a, kind="real").tolist()
    ([2.0], [1.0])
    """
    kind = check_choice("kind", kind, KINDS)
    if isinstance(moments, FeatureSet):
        t = moments.moments
    else:
        t = torch.as_tensor(np.asarray(moments)) if not isinstance(moments, torch.Tensor) \
            else moments
        if t.ndim != 2:
            raise ValueError(f"moments must be (n_images, K), got shape {tuple(t.shape)}")
    t = t.to(torch.complex128)
    if kind == "complex":
        v = (t - t.mean(dim=0)).abs().square().mean(dim=0)
    elif kind == "real":
        v = t.real.var(dim=0, correction=0)
    else:
        v = t.abs().var(dim=0, correction=0)
    return v.detach().cpu().numpy()


def top_by_variance(pairs: Sequence[tuple[int, int]], variances: Any,
                    count: int) -> list[tuple[int, int]]:
    """The ``count`` moments of largest variance, listed by ``(n, m)`` (ties go to the lower
    ``(n, m)``).

    >>> top_by_variance([(0, 0), (1, 1), (2, 0)], [0.3, 0.1, 0.2], 2)
    [(0, 0), (2, 0)]
    """
    var = np.asarray(variances, dtype=np.float64)
    if var.shape != (len(pairs),):
        raise ValueError(f"variances must have one value per pair ({len(pairs)}), got shape "
                         f"{var.shape}")
    count = check_int("count", count, minimum=1, maximum=len(pairs))
    order = sorted(range(len(pairs)), key=lambda i: (-var[i], tuple(pairs[i])))
    return sorted(tuple(pairs[i]) for i in order[:count])  # type: ignore[misc]


def variance_table(moments: FeatureSet, *, kind: str = "complex") -> np.ndarray:
    """The variances laid out like Tables 6.1-6.3: ``table[m, n]`` (NaN where no moment).

    Only moments with ``n >= 0`` and ``m >= 0`` are placed.
    """
    var = moment_variances(moments, kind=kind)
    pairs = [p for p in moments.pairs if p[0] >= 0 and p[1] >= 0]
    nmax = max(n for n, _ in pairs)
    mmax = max(m for _, m in pairs)
    table = np.full((mmax + 1, nmax + 1), np.nan)
    for (n, m), v in zip(moments.pairs, var, strict=True):
        if n >= 0 and m >= 0:
            table[m, n] = v
    return table
