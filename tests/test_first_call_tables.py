"""First calls (issue 15): the chunked engine's per-scale tables of a CWT are kept on disk
beside the fits (signal/cwt.py ``_scale_tables``); what is read back must be bit for bit what
the engine computes, and a damaged or foreign file must never be used."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest

from fastmoments.signal import CWT, fit_cache
from fastmoments.signal.chunked import group_tables
from fastmoments.signal.sliding import SFTBank

cwt_module = sys.modules["fastmoments.signal.cwt"]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTMOMENTS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / f"fits-v{fit_cache.FORMAT_VERSION}"


def _fresh_bank(plans):
    """A stacked bank of its own (not the lru-cached one), so nothing is shared."""
    return cwt_module._stack_banks([p.bank for p in plans])


def _assert_same_tables(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        for field in dataclasses.fields(a):
            u, v = getattr(a, field.name), getattr(b, field.name)
            if isinstance(u, np.ndarray):
                assert u.dtype == v.dtype and u.shape == v.shape, field.name
                np.testing.assert_array_equal(u, v, err_msg=field.name)
            else:
                assert u == v, field.name


@pytest.mark.parametrize("method", ["sft", "asft"])
def test_prefilled_tables_are_the_engines_own(folder, method):
    import torch

    plans = tuple(CWT([3.0, 7.5, 40.0], method=method).plans)
    assert all(isinstance(p.bank, SFTBank) for p in plans)
    chunk = 64
    want = group_tables(_fresh_bank(plans), chunk)
    for _ in range(2):  # computed and stored, then read back from the files
        bank = _fresh_bank(plans)
        cwt_module._prefill_chunked(bank, plans, torch.device("cpu"))
        _assert_same_tables(bank._tables[("chunked", chunk)], want)
    assert len(list(folder.glob("*.fit"))) >= 3


def test_cwt_with_cached_tables_equals_the_computed_one(folder, monkeypatch):
    x = np.random.default_rng(1).standard_normal(1500)
    scales = [2.5, 9.0, 31.0]
    plan = CWT(scales)
    first = plan(x)  # fills the cache
    again = CWT(scales)(x)  # a new plan: its stacked bank is filled from the files
    monkeypatch.setenv("FASTMOMENTS_CACHE_DIR", "off")
    cwt_module._group_bank.cache_clear()
    off = CWT(scales)(x)
    np.testing.assert_array_equal(again, first)
    np.testing.assert_array_equal(off, first)


def test_damaged_or_foreign_tables_are_not_used(folder):
    import torch

    plans = tuple(CWT([5.0, 12.0]).plans)
    want = group_tables(_fresh_bank(plans), 64)
    cwt_module._prefill_chunked(_fresh_bank(plans), plans, torch.device("cpu"))
    files = sorted(folder.glob("*.fit"))
    assert files
    for f in files:  # truncate every file: each is recomputed, never half-read
        raw = f.read_bytes()
        f.write_bytes(raw[: len(raw) // 2])
    bank = _fresh_bank(plans)
    cwt_module._prefill_chunked(bank, plans, torch.device("cpu"))
    _assert_same_tables(bank._tables[("chunked", 64)], want)


def test_rows_that_differ_from_the_stored_ones_fill_nothing(folder, monkeypatch):
    import torch

    plans = tuple(CWT([5.0, 12.0]).plans)
    real = cwt_module._scale_tables

    def other_rows(*args):
        vals = list(real(*args))
        vals[-6] = vals[-6] + 1e-12  # the stored omega of another bank
        return tuple(vals)

    monkeypatch.setattr(cwt_module, "_scale_tables", other_rows)
    bank = _fresh_bank(plans)
    cwt_module._prefill_chunked(bank, plans, torch.device("cpu"))
    assert ("chunked", 64) not in bank._tables  # the engine computes its own


def test_depends_changes_the_key(folder, monkeypatch):
    calls = []

    @fit_cache.persistent(depends=("fastmoments.signal.chunked",))
    def f(a: float) -> float:
        calls.append(a)
        return 2 * a

    assert f(1.5) == 3.0 and f(1.5) == 3.0
    assert calls == [1.5]
    monkeypatch.setattr(fit_cache, "_module_hash", lambda name: "edited")

    @fit_cache.persistent(depends=("fastmoments.signal.chunked",))
    def f(a: float) -> float:  # the same function after its dependency changed
        calls.append(a)
        return 2 * a

    assert f(1.5) == 3.0
    assert calls == [1.5, 1.5]
