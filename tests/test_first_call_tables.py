"""First calls: the chunked engine's tables of a CWT are computed from the ``C``
distinct lags of each row group (signal/chunked.py ``group_tables``), not from the whole
``C x C`` grid of lags; they must be bit for bit what the whole-grid formula gives. They are
cheap enough to compute on every first call, so nothing but the fits goes to the disk cache."""

from __future__ import annotations

import numpy as np
import pytest

from fastmoments.signal import fit_cache
from fastmoments.signal.chunked import _powers, group_tables
from fastmoments.signal.morlet import morlet_bank


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTMOMENTS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / f"fits-v{fit_cache.FORMAT_VERSION}"


def _whole_grid(bank, group, chunk):
    """``ha``, ``hb`` of one row group from the powers of every ``(s, i)`` of the grid (the
    formula the engine used before it combined the distinct lags only)."""
    r0, r1, _ch, half, _shift = group
    alpha, omega = bank.alpha[r0:r1], bank.omega[r0:r1]
    wk = np.exp(half * (alpha - 1j * omega))
    a = bank.mu[r0:r1] * wk.real + bank.nu[r0:r1] * wk.imag
    b = bank.nu[r0:r1] * wk.real - bank.mu[r0:r1] * wk.imag
    if not bank.complex_output:
        a, b = a.real, b.real
    s = np.arange(chunk)
    lag = s[:, None] - s[None, :]
    upper = lag >= 0

    def comb(z):
        return (a[:, None, None] * z.real + b[:, None, None] * z.imag).sum(0)

    near = _powers(alpha, omega, np.maximum(lag, 0))
    far = _powers(alpha, omega, 2 * half + 1 + np.maximum(lag, 0))
    return np.where(upper, comb(near), 0), np.where(upper, -comb(far), 0)


def _banks(kind, method):
    """Morlet banks (complex output) or Gaussian banks of orders 0-2 (real output)."""
    from fastmoments.signal.gaussian import _gaussian_bank

    for sigma in (1.5, 3.0, 7.5, 40.0, 300.0):
        shift = max(1, round(sigma / 16)) if method == "asft" else 0
        if kind == "morlet":
            yield sigma, morlet_bank(sigma, 6.0, method, "direct", 11, shift, 4.0)
        else:
            for order in (0, 1, 2):
                yield sigma, _gaussian_bank(sigma, order, method, 6, shift, 4.0)


@pytest.mark.parametrize("kind", ["morlet", "gaussian"])
@pytest.mark.parametrize("method", ["sft", "asft"])
@pytest.mark.parametrize("chunk", [16, 32, 64])
def test_near_field_tables_are_the_whole_grid_ones_bit_for_bit(kind, method, chunk):
    for sigma, bank in _banks(kind, method):
        bank._tables.pop(("chunked", chunk), None)
        tables = group_tables(bank, chunk)
        for g, group in zip(tables, bank.groups, strict=True):
            ha, hb = _whole_grid(bank, group, chunk)
            assert g.ha.dtype == ha.dtype and g.hb.dtype == hb.dtype
            assert g.ha.tobytes() == ha.tobytes(), (sigma, method, chunk)
            assert g.hb.tobytes() == hb.tobytes(), (sigma, method, chunk)


def _forget_in_memory():
    """Clear every in-memory cache between a CWT and its fits (plans, banks, fits)."""
    import sys

    from fastmoments.signal import coefficients, morlet

    cwt_module = sys.modules["fastmoments.signal.cwt"]
    for f in (cwt_module._plan, cwt_module._cwt_plan, cwt_module._group_bank,
              morlet.morlet_bank, coefficients.fit_morlet):
        f.cache_clear()


@pytest.mark.parametrize("method", ["sft", "asft"])
def test_cwt_writes_only_small_fits_and_equals_the_uncached_one(folder, monkeypatch, method):
    from fastmoments.signal import cwt

    x = np.random.default_rng(1).standard_normal(1500)
    scales = [2.5, 9.0, 31.0]
    _forget_in_memory()
    first, _ = cwt(x, scales, method=method)  # computes the fits and stores them
    files = list(folder.glob("*.fit"))
    assert files and all(f.stat().st_size < 8192 for f in files)  # fits, no tables
    _forget_in_memory()
    again, _ = cwt(x, scales, method=method)  # reads them back
    assert sorted(folder.glob("*.fit")) == sorted(files)
    monkeypatch.setenv("FASTMOMENTS_CACHE_DIR", "off")
    _forget_in_memory()
    off, _ = cwt(x, scales, method=method)
    assert again.tobytes() == first.tobytes()
    assert off.tobytes() == first.tobytes()
