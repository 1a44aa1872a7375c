"""Moment features for recognition (chapter 6 of the :ref:`Zernike thesis <bib-zernike-thesis>`):
feature vectors of image sets, moment selection by variance, distances (equations 6.4-6.5),
all-pairs statistics, and the GB2312 character
experiment (:mod:`.experiment`, command ``fastmoments characters``).

Names are imported on first use (PEP 562), as in :mod:`fastmoments`: importing
``fastmoments.recognition.glyphs`` (the font lookup of the ``characters`` command) imports no
torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY: dict[str, tuple[str, ...]] = {
    ".._defaults": ("KINDS",),
    ".distance": ("THESIS_EDGES", "PairStatistics", "feature_distances", "nearest_neighbours",
                  "pair_statistics"),
    ".extract": ("features", "moment_pairs"),
    ".featureset": ("FeatureSet",),
    ".glyphs": ("find_font", "gb2312_characters", "render_glyphs"),
    ".objects": ("ObjectMoments", "object_features", "regionprops_property"),
    ".selection": ("select_by_variance",),
    ".variance": ("moment_variances", "top_by_variance", "variance_table"),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    """Import a public name on first access and keep it (PEP 562)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # the eager imports, for type checkers and IDEs only
    from .._defaults import KINDS
    from .distance import (
        THESIS_EDGES,
        PairStatistics,
        feature_distances,
        nearest_neighbours,
        pair_statistics,
    )
    from .extract import features, moment_pairs
    from .featureset import FeatureSet
    from .glyphs import find_font, gb2312_characters, render_glyphs
    from .objects import ObjectMoments, object_features, regionprops_property
    from .selection import select_by_variance
    from .variance import moment_variances, top_by_variance, variance_table

__all__ = [
    "KINDS",
    "THESIS_EDGES",
    "FeatureSet",
    "ObjectMoments",
    "PairStatistics",
    "feature_distances",
    "features",
    "find_font",
    "gb2312_characters",
    "moment_pairs",
    "moment_variances",
    "nearest_neighbours",
    "object_features",
    "pair_statistics",
    "regionprops_property",
    "render_glyphs",
    "select_by_variance",
    "top_by_variance",
    "variance_table",
]
