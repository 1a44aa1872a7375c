"""Moment features for recognition (chapter 6 of the :ref:`Zernike thesis <bib-zernike-thesis>`):
feature vectors of image sets, moment selection by variance, distances (equations 6.4-6.5),
all-pairs statistics, and the GB2312 character
experiment (:mod:`.experiment`, command ``fastmoments characters``).
"""

from ..moments import KINDS
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
