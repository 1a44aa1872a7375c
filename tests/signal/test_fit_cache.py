"""The persistent cache of fits (signal/fit_cache.py): round trips, damaged files, concurrent
writers, a cache that cannot be written, and the switch that turns it off."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from fastmoments.signal import coefficients, fit_cache


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTMOMENTS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / f"fits-v{fit_cache.FORMAT_VERSION}"


def _counted():
    calls = []

    @fit_cache.persistent()
    def f(a: float, b: int) -> tuple[float, int]:
        calls.append((a, b))
        return a * 2.5, b + 1

    return f, calls


def test_second_call_reads_the_file(folder):
    f, calls = _counted()
    assert f(1.5, 3) == (3.75, 4)
    assert f(1.5, 3) == (3.75, 4)
    assert calls == [(1.5, 3)]
    assert len(list(folder.glob("*.fit"))) == 1
    assert f(1.5, 4) == (3.75, 5)  # another key, another file
    assert len(list(folder.glob("*.fit"))) == 2


def test_morlet_fit_round_trip_is_bit_exact(folder):
    args = (37.5, 6.0, 11, 2, None, None)
    fresh = coefficients._fit_morlet.uncached(*args)
    coefficients._fit_morlet(*args)  # computes and stores
    stored = coefficients._fit_morlet(*args)  # read back
    assert type(stored) is coefficients.MorletFit
    for name in ("sigma", "xi", "K", "first", "terms", "rmse"):
        assert getattr(stored, name) == getattr(fresh, name)
        assert type(getattr(stored, name)) is type(getattr(fresh, name))
    np.testing.assert_array_equal(stored.m, fresh.m)
    np.testing.assert_array_equal(stored.l, fresh.l)
    assert stored.m.dtype == np.complex128 and not stored.m.flags.writeable


def test_gaussian_fit_and_designs_round_trip(folder):
    fresh = coefficients._fit_gaussian.uncached(12.5, 5, None, True)
    coefficients._fit_gaussian(12.5, 5, None, True)
    stored = coefficients._fit_gaussian(12.5, 5, None, True)
    assert stored.rmse == fresh.rmse and isinstance(stored.rmse, tuple)
    for name in ("a", "b", "d"):
        np.testing.assert_array_equal(getattr(stored, name), getattr(fresh, name))
    assert (stored.sigma, stored.terms, stored.K) == (fresh.sigma, fresh.terms, fresh.K)
    design = coefficients._morlet_design.uncached(6.0, 9)
    coefficients._morlet_design(6.0, 9)
    assert coefficients._morlet_design(6.0, 9) == design
    assert isinstance(coefficients._morlet_design(6.0, 9)[1], int)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "empty"])
def test_a_damaged_file_is_recomputed_and_rewritten(folder, damage):
    f, calls = _counted()
    f(2.0, 1)
    (path,) = folder.glob("*.fit")
    raw = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"\x00\xff not a fit")
    elif damage == "truncated":
        path.write_bytes(raw[:len(raw) // 2])
    elif damage == "flipped":  # one byte of the JSON header changed: a number
        path.write_bytes(raw.replace(b'"t1": 2', b'"t1": 7'))
    else:
        path.write_bytes(b"")
    assert f(2.0, 1) == (5.0, 2)
    assert len(calls) == 2
    assert path.read_bytes() == raw  # rewritten whole
    assert f(2.0, 1) == (5.0, 2) and len(calls) == 2


def test_a_payload_change_is_detected(folder):
    args = (20.0, 6.0, 9, 0, None, None)
    coefficients._fit_morlet(*args)
    (path,) = [p for p in folder.glob("*.fit") if b"_fit_morlet'" in p.read_bytes()]
    raw = bytearray(path.read_bytes())
    raw[-3] ^= 0x40  # inside the coefficients' bytes
    path.write_bytes(bytes(raw))
    fit = coefficients._fit_morlet(*args)
    np.testing.assert_array_equal(fit.l, coefficients._fit_morlet.uncached(*args).l)


def test_a_file_holding_another_key_is_not_used(folder):
    f, calls = _counted()
    f(1.0, 1)
    f(3.0, 3)
    a, b = sorted(folder.glob("*.fit"))
    a.write_bytes(b.read_bytes())  # the file of one key under the other's name
    assert f(1.0, 1) == (2.5, 2) and f(3.0, 3) == (7.5, 4)
    assert len(calls) == 3


def test_concurrent_writers_leave_one_complete_file(folder):
    f, calls = _counted()
    results = []
    threads = [threading.Thread(target=lambda: results.append(f(4.0, 2))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [(10.0, 3)] * 8
    assert [p.suffix for p in folder.iterdir()] == [".fit"]  # no temporary left behind
    n = len(calls)
    assert f(4.0, 2) == (10.0, 3) and len(calls) == n


def test_unwritable_cache_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FASTMOMENTS_CACHE_DIR", str(blocker / "cache"))
    f, calls = _counted()
    assert f(1.0, 2) == (2.5, 3) and f(1.0, 2) == (2.5, 3)
    assert len(calls) == 2


@pytest.mark.parametrize("value", ["off", "0", "", "OFF"])
def test_cache_can_be_turned_off(tmp_path, monkeypatch, value):
    monkeypatch.setenv("FASTMOMENTS_CACHE_DIR", value)
    assert fit_cache.cache_dir() is None
    f, calls = _counted()
    f(1.0, 2)
    f(1.0, 2)
    assert len(calls) == 2


def test_default_folder_is_the_user_cache(monkeypatch):
    platformdirs = pytest.importorskip("platformdirs")
    monkeypatch.delenv("FASTMOMENTS_CACHE_DIR", raising=False)
    want = platformdirs.user_cache_dir("fastmoments", appauthor=False)
    assert str(fit_cache.cache_dir()).startswith(want)


def test_clear_removes_the_files(folder):
    f, _ = _counted()
    f(1.0, 1)
    f(2.0, 1)
    assert fit_cache.clear() == 2
    assert list(folder.glob("*.fit")) == []


def test_public_fits_use_one_key_for_int_and_float_arguments(folder):
    coefficients.fit_morlet(45, 6, 11)
    coefficients.fit_morlet.cache_clear()
    coefficients.fit_morlet(45.0, 6.0, 11)
    assert len(list(folder.glob("*.fit"))) == len(set(folder.glob("*.fit")))
    keys = [p.read_bytes().split(b"\n")[1] for p in folder.glob("*.fit")]
    assert sum(b"_fit_morlet'" in k for k in keys) == 1


def test_shipped_designs_are_what_the_searches_compute():
    # the tables in coefficients.py must follow any change of the fits
    for xi, table in coefficients._SHIPPED_MORLET_DESIGN.items():
        for terms, (ratio, first) in table.items():
            got = coefficients._morlet_design.uncached(xi, terms)
            # K/σ is quantised to 1/32 (K = round(r σ) at σ = 32); P_S is an integer
            assert got == (ratio, first), (xi, terms, got)
    for (xi, target), terms in coefficients._SHIPPED_MORLET_TERMS.items():
        assert coefficients._default_morlet_terms.uncached(xi, target) == terms
    for terms, ratio in coefficients._SHIPPED_GAUSSIAN_RATIO.items():
        # a bounded scalar minimisation with xatol 1e-6 (in σ at K = 256)
        got = coefficients._gaussian_ratio.uncached(terms)
        assert abs(got / ratio - 1) < 1e-6, (terms, got, ratio)
