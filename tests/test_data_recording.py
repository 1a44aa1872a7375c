"""fastmoments.data.ppg_recording: the real PPG recording shipped by heartpy, tiled."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from fastmoments import data

needs_heartpy = pytest.mark.skipif(importlib.util.find_spec("heartpy") is None,
                                   reason="heartpy (the recording's package) not installed")


@needs_heartpy
def test_recording_is_the_shipped_file():
    x = data.ppg_recording()
    assert x.shape == (68476,) and x.dtype == np.float64 and x.flags.writeable
    # the file's first readings and its range, read independently of the loader
    with open(data._ppg_path(), encoding="ascii") as f:
        header = f.readline().strip()
        first = [int(f.readline().rsplit(",", 1)[1]) for _ in range(5)]
    assert header == "datetime,hr"
    np.testing.assert_array_equal(x[:5], first)
    assert x.min() >= 0 and x.max() <= 1023 and np.all(x == np.round(x))
    assert 400 < x.mean() < 600  # a PPG around mid-scale, not zeros or a parse of the stamps


@needs_heartpy
def test_tiles_repeat_and_copies_are_independent():
    one = data.ppg_recording()
    three = data.ppg_recording(tiles=3)
    assert three.shape == (3 * 68476,)
    for k in range(3):
        np.testing.assert_array_equal(three[k * 68476:(k + 1) * 68476], one)
    one[:] = -1.0  # the caller's copy: the next call is unaffected
    assert data.ppg_recording()[0] == three[0] != -1.0


@pytest.mark.parametrize(("tiles", "exc"), [(0, ValueError), (-2, ValueError),
                                            (True, TypeError), (2.0, TypeError),
                                            ("2", TypeError)])
def test_bad_tiles(tiles, exc):
    with pytest.raises(exc, match="tiles"):
        data.ppg_recording(tiles)


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    monkeypatch.setattr(data, "_PPG_CACHE", [])
    with pytest.raises(ModuleNotFoundError, match="pip install heartpy"):
        data.ppg_recording()
