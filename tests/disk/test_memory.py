"""Huge disk requests fail at once with the memory they need, never in the middle of building
an index or a table, or in torch's allocator. Nothing here allocates more than a few MiB."""

from __future__ import annotations

import typing

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.disk import PolarHarmonicTransform, ZernikeTransform, get_family
from fastmoments.disk.checks import INDEX_BYTES_PER_MOMENT, estimate_disk_memory


def test_counts_from_closed_forms_match_the_index():
    for name in ("zernike", "pseudo-zernike"):
        fam = get_family(name)
        for T in (0, 1, 2, 7, 30):
            for reps in (None, [0], [T, -1] if T else [0]):
                idx = fam.full(T, reps)
                est = estimate_disk_memory(fam, 16, T, repetitions=reps)
                assert est["moments"] == idx.size
                assert est["slots"] == idx.n_cols * idx.n_rows


def _nothing_built(monkeypatch) -> None:
    """Make every builder of an index, a table or the work itself fail the test if called."""
    from fastmoments.disk import engine, indexing

    def built(*args, **kwargs):
        raise AssertionError("built before the memory check")

    monkeypatch.setattr(indexing.IndexSet, "__post_init__", built)
    for name in ("_build_table", "_make_exp", "_layout", "_angular", "forward"):
        monkeypatch.setattr(engine.DiskEngine, name, built)
    monkeypatch.setattr(engine.RadialCompression, "__init__", built)


def test_huge_order_on_a_small_image_fails_at_once(monkeypatch):
    img = np.zeros((40, 40))
    _nothing_built(monkeypatch)
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


def test_compressed_stage_is_checked_before_any_table_or_work(monkeypatch):
    """Pseudo-Zernike order 2000 on 1024 x 1024: the radial table at the Chebyshev nodes
    alone is over 30 GiB. The plan says so before building any table or doing any work."""
    from fastmoments.disk import engine

    def built(*args, **kwargs):
        raise AssertionError("built before the memory check")

    for name in ("_build_table", "_make_exp", "_angular", "forward"):
        monkeypatch.setattr(engine.DiskEngine, name, built)
    monkeypatch.setattr(engine.RadialCompression, "__init__", built)
    with pytest.raises(MemoryError, match=r"pseudo-zernike moments of order=2000 \(2003001 "
                                          r"moments\) need at least [0-9.]+ GiB .* budget is "
                                          r"7.45 GiB: lower order, or raise memory_budget"):
        fm.pseudo_zernike_moments(np.zeros((1024, 1024)), 2000, memory_budget=8e9)


def test_compressed_stage_counts_its_tables_in_the_chunks():
    plan = fm.PseudoZernikeTransform(128, 40, dtype="float64")
    eng = plan.engine
    assert eng.compression is not None
    tables = eng.compression_bytes(40, 3)
    assert tables >= eng.index.size * 41 * 8  # the node table, float64
    assert eng._fixed_bytes(3) >= tables
    A = plan.forward(np.random.default_rng(0).random((128, 128)))
    assert np.isfinite(A.values()).all()


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
    with pytest.raises(MemoryError, match=r"the selection up to order 6 \(2 moments\)"):
        estimate_disk_memory(get_family("zernike"), 32, None, pairs=[(4, 2), (6, 0)],
                             memory_budget=100)


class _Recorder:
    """Stands in for a tqdm bar and records what the engine reports."""

    made: typing.ClassVar[list] = []

    def __init__(self, total, *, desc="", show=None, large=True, unit="it", delay=1.0):
        self.total, self.desc, self.show, self.large = total, desc, show, large
        self.done, self.closed = 0, False
        _Recorder.made.append(self)

    def update(self, n=1):
        self.done += n

    def close(self):
        self.closed = True


def test_progress_over_radius_groups_and_passes(monkeypatch):
    from fastmoments.disk import engine as engine_mod

    monkeypatch.setattr(engine_mod, "progress_bar", _Recorder)
    _Recorder.made = []
    img = np.random.default_rng(1).random((6, 24, 24))
    plan = ZernikeTransform(24, 12, dtype=torch.float64, memory_budget=60_000)
    passes = -(-6 // plan.engine.batch_size(6))
    assert passes > 1  # the batch is split: the bar covers every pass
    A = plan.forward(img, progress=True)
    bar = _Recorder.made[-1]
    G = plan.sampling.n_groups
    assert (bar.total, bar.done, bar.closed, bar.show) == (G * passes, G * passes, True, True)
    A.reconstruct()
    assert _Recorder.made[-1].desc == "zernike synthesis" and _Recorder.made[-1].closed
    # small jobs are not "large": their bar would never show
    fm.zernike_moments(img[0], 6)
    assert _Recorder.made[-1].large is False and _Recorder.made[-1].show is None
    monkeypatch.setattr(engine_mod, "PROGRESS_FROM", 0)
    fm.zernike_moments(img[0], 6, progress=None)
    assert _Recorder.made[-1].large is True
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        fm.zernike_moments(img[0], 6, progress=1)
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        plan.forward(img, progress="yes")


def test_op_count_grows_with_the_work():
    small = ZernikeTransform(16, 4).engine
    big = ZernikeTransform(32, 12).engine
    assert 0 < small.op_count(1) < big.op_count(1) < big.op_count(4)


def test_one_moment_of_a_huge_order_says_what_it_needs():
    """The radial recurrences index their lookup tables by [n, m]: one moment of order 10**9
    needs 16 (T + 1)^2 bytes of them (it died in NumPy with 'Unable to allocate 6.94 EiB')."""
    with pytest.raises(MemoryError, match=r"the selection up to order 1000000000 \(1 moments\) "
                                          r"need at least .* budget"):
        fm.zernike_moments(np.ones((8, 8)), pairs=[(10**9, 0)])
