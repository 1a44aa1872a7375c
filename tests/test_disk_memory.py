"""Huge disk requests fail at once with the memory they need (issue 13), never in the middle
of building an index or in torch's allocator. Nothing here allocates more than a few MiB."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.disk import PolarHarmonicTransform, ZernikeTransform, get_family
from fastmoments.disk.transform import INDEX_BYTES_PER_MOMENT, estimate_disk_memory


def test_counts_from_closed_forms_match_the_index():
    for name in ("zernike", "pseudo-zernike"):
        fam = get_family(name)
        for T in (0, 1, 2, 7, 30):
            for reps in (None, [0], [T, -1] if T else [0]):
                idx = fam.full(T, reps)
                est = estimate_disk_memory(fam, 16, T, repetitions=reps)
                assert est["moments"] == idx.size
                assert est["slots"] == idx.n_cols * idx.n_rows


def test_huge_order_on_a_small_image_fails_at_once():
    img = np.zeros((40, 40))
    t0 = time.perf_counter()
    with pytest.raises(MemoryError, match=r"order 100000 \(2500100001 moments\) need at least "
                                          r".*GiB .*but the memory budget is"):
        fm.zernike_moments(img, 100000)
    with pytest.raises(MemoryError, match=r"order 100000 .* need at least"):
        fm.pseudo_zernike_moments(img, 100000)
    with pytest.raises(MemoryError, match=r"order 100000 .* need at least"):
        ZernikeTransform(40, 100000)
    with pytest.raises(MemoryError, match=r"order 100000 .* need at least"):
        fm.pcet(img, 100000, 100000)
    with pytest.raises(MemoryError, match=r"order 100000 .* need at least"):
        PolarHarmonicTransform("pst", 40, 100000, 100000)
    assert time.perf_counter() - t0 < 60  # nothing was built (a generous bound, not a timing)


def test_budget_names_order_need_and_budget():
    """Zernike order 5000 on 4096 x 4096 with a 2 GB budget: the index alone is over it."""
    est_need = 6255001 * INDEX_BYTES_PER_MOMENT
    assert est_need > 2e9 * 0.75  # the case of the issue is over budget on the index alone
    with pytest.raises(MemoryError, match=r"order 5000 \(6255001 moments\) need at least "
                                          r"[0-9.]+ GiB .*4096x4096 image.* budget is 1.86 GiB"):
        estimate_disk_memory(get_family("zernike"), 4096, 5000, memory_budget=2e9)


def test_selection_counts_pairs():
    est = estimate_disk_memory(get_family("zernike"), 32, None, pairs=[(4, 2), (6, 0)],
                               dtype=torch.float64)
    assert est["moments"] == 2
    with pytest.raises(MemoryError, match="the 2 selected moments"):
        estimate_disk_memory(get_family("zernike"), 32, None, pairs=[(4, 2), (6, 0)],
                             memory_budget=100)
