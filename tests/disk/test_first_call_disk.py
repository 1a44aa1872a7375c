"""First calls of the disk transforms: the radial table is stored in blocks of
columns of about the same length (disk/engine.py ``DiskEngine._layout``), not padded to the
longest column, so a first call fills about half the pages; the values must be those of the
dense table, and the transforms those of the streamed recurrence."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments.disk import DiskTransform, routes
from fastmoments.disk.engine import BLOCK_PADDING
from fastmoments.disk.pht import PolarHarmonicTransform


def _dense(engine) -> torch.Tensor:
    """The radial table in the dense ``(cols, rows, groups)`` layout, from the steps."""
    G = engine.sampling.n_groups
    dt = engine.cdtype if engine.radial_is_complex else engine.dtype
    t = torch.zeros(engine.n_cols, engine.n_rows, G, dtype=dt)
    for cols, rows, vals in engine._steps(0, G):
        t[engine._tensor_index(cols), rows] = vals.to(dt)
    return t


def _plans():
    # the stored table is the direct radial stage's (the compressed stage has none)
    compress = routes.compress
    routes.compress = lambda *args: False
    try:
        yield from _made_plans()
    finally:
        routes.compress = compress


def _made_plans():
    yield DiskTransform("zernike", 40, 40, k=2, dtype=torch.float64)
    yield DiskTransform("pseudo-zernike", 24, 15, dtype=torch.float32)
    # a selection whose columns are not in length order: blocks with gathered columns
    yield DiskTransform("zernike", 32, pairs=[(3, 1), (30, 0), (12, 12), (25, 3), (13, 1),
                                              (20, 2)], dtype=torch.float64)
    yield PolarHarmonicTransform("pcet", 24, nmax=6, lmax=6, dtype=torch.float64)


@pytest.mark.parametrize("plan", list(_plans()), ids=lambda p: p.family.name)
def test_blocks_hold_the_dense_table(plan):
    eng = plan.engine
    blocks = eng.table()
    assert blocks is not None
    dense = _dense(eng)
    seen = np.zeros(eng.n_cols, dtype=int)
    lens = [len(c) for c in plan.index.ns]
    for cols, rows, values in blocks:
        idx = np.arange(eng.n_cols)[cols] if isinstance(cols, slice) else cols.numpy()
        seen[idx] += 1
        assert values.shape == (len(idx), rows, eng.sampling.n_groups)
        assert sum(lens[c] for c in idx) >= (1 - BLOCK_PADDING) * rows * len(idx)
        for p, c in enumerate(idx):
            torch.testing.assert_close(values[p, :lens[c]], dense[c, :lens[c]], rtol=0,
                                       atol=0)
            assert not values[p, lens[c]:].any()  # padding is zero
    assert (seen == 1).all()  # every column in exactly one block


def test_full_zernike_table_is_about_half_the_dense_one(monkeypatch):
    monkeypatch.setattr(routes, "compress", lambda *args: False)
    plan = DiskTransform("zernike", 64, 60, dtype=torch.float64)
    eng = plan.engine
    dense = eng.n_cols * eng.n_rows * eng.sampling.n_groups * 8
    assert eng.table_bytes() <= 0.6 * dense
    assert sum(t.numel() * t.element_size() for _c, _r, t in eng.table()) == eng.table_bytes()


@pytest.mark.parametrize("plan", list(_plans()), ids=lambda p: p.family.name)
def test_blocked_table_equals_streamed_recurrence(plan, rng):
    img = rng.random((2, plan.size, plan.size))
    kw = dict(dtype=plan.dtype)
    if isinstance(plan, PolarHarmonicTransform):
        small = PolarHarmonicTransform("pcet", plan.size, nmax=6, lmax=6, **kw)
    elif plan.index.n_cols == plan.order + 1:
        small = DiskTransform(plan.family.name, plan.size, plan.order, k=plan.k, **kw)
    else:
        small = DiskTransform(plan.family.name, plan.size, pairs=plan.index.pairs(), **kw)
    small.engine._table_checked = True  # as when the table is over its budget: streamed
    assert small.engine.table() is None
    tol = 1e-12 if plan.dtype == torch.float64 else 2e-5
    a, b = plan.forward(img), small.forward(img)
    scale = np.abs(a.data.numpy()).max()
    np.testing.assert_allclose(b.data.numpy(), a.data.numpy(), atol=tol * scale)
    rec_a, rec_b = plan.adjoint(a.data.numpy()), small.adjoint(a.data.numpy())
    np.testing.assert_allclose(rec_b, rec_a, atol=tol * np.abs(rec_a).max())
