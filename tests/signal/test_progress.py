"""Progress bars of the signal transforms: shown when asked, silent for short calls, complete."""

from typing import ClassVar

import numpy as np
import pytest

import fastmoments as fm
from fastmoments import _progress
from fastmoments.signal import CWT, GaussianFilter, MorletTransform, _apply


class _Recorder:
    """Stands in for tqdm: records every bar made, its total, delay and updates."""

    made: ClassVar[list] = []

    def __init__(self, total=None, desc="", unit="it", leave=True, delay=0.0):
        self.total, self.desc, self.unit, self.delay = total, desc, unit, delay
        self.count = 0
        self.closed = False
        _Recorder.made.append(self)

    def update(self, n=1):
        self.count += n

    def close(self):
        self.closed = True


@pytest.fixture
def recorder(monkeypatch):
    _Recorder.made = []
    monkeypatch.setattr(_progress, "tqdm", _Recorder)
    return _Recorder.made


@pytest.fixture
def signals():
    return np.random.default_rng(3).standard_normal((3, 2000)).astype(np.float32)


SCALES = np.geomspace(2.0, 120.0, 12)  # short windows (Toeplitz) and long ones (SFT)


@pytest.mark.parametrize("kwargs", [{}, {"engine": "prefix"}, {"method": "direct"},
                                    {"memory_budget": 1 << 20}])
def test_cwt_bar_counts_every_signal_and_scale(recorder, signals, kwargs):
    coef, _ = fm.cwt(signals, SCALES, progress=True, **kwargs)
    (bar,) = recorder
    assert bar.total == 3 * len(SCALES) and bar.count == bar.total
    assert bar.closed and bar.delay == 0.0 and bar.desc == "CWT"
    ref, _ = fm.cwt(signals, SCALES, progress=False, **kwargs)
    # the same computation with a bar: equal up to rounding (BLAS paths may differ by buffer)
    np.testing.assert_allclose(coef, ref, rtol=0, atol=1e-13 * np.abs(ref).max())


@pytest.mark.parametrize("axes", [(1,), (0, 1)])
def test_gaussian_bar_per_axis(recorder, signals, axes):
    # the bars are those of the SFT passes (the direct FIR of small σ takes microseconds)
    y = fm.gaussian_filter(signals, 4.0, axes=axes, progress=True, method="sft")
    assert len(recorder) == len(axes)
    assert all(b.closed and b.count == b.total > 0 for b in recorder)
    ref = fm.gaussian_filter(signals, 4.0, axes=axes, method="sft")
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-13 * np.abs(ref).max())


def test_plans_and_morlet_take_progress(recorder, signals):
    GaussianFilter(5.0, method="sft")(signals, progress=True)
    MorletTransform(5.0)(signals, progress=True)
    fm.morlet_transform(signals, 5.0, progress=True)
    CWT(SCALES)(signals, progress=True)
    assert len(recorder) == 4
    assert all(b.closed and b.count == b.total for b in recorder)


def test_short_calls_make_no_bar(recorder, signals):
    fm.cwt(signals, SCALES)
    fm.gaussian_filter(signals, 3.0)
    assert recorder == []


def test_large_jobs_get_a_delayed_bar(recorder, signals, monkeypatch):
    monkeypatch.setattr(_apply, "_LARGE_JOB", {"cpu": 1000})
    fm.cwt(signals, SCALES)
    assert recorder == []  # not on a terminal (pytest captures stderr): no bar by default
    monkeypatch.setattr(_progress, "on_terminal", lambda: True)
    fm.cwt(signals, SCALES)
    (bar,) = recorder
    assert bar.delay > 0 and bar.count == bar.total
    fm.cwt(signals, SCALES, progress=False)
    assert len(recorder) == 1


def test_bar_is_closed_on_error(recorder, signals):
    bad = signals.copy()
    bad[1, 7] = np.nan
    with pytest.raises(ValueError, match="x"):
        fm.cwt(bad, SCALES, progress=True)
    assert all(b.closed for b in recorder)


def test_progress_shows_on_stderr(capsys, signals):
    fm.gaussian_filter(signals, 3.0, progress=True, method="sft")
    assert "GaussianFilter" in capsys.readouterr().err
    fm.gaussian_filter(signals, 3.0, progress=False, method="sft")
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("call", [
    lambda x: fm.gaussian_filter(x, 2.0, progress="yes"),
    lambda x: fm.morlet_transform(x, 2.0, progress=1),
    lambda x: fm.cwt(x, [2.0, 3.0], progress="auto"),
    lambda x: GaussianFilter(2.0)(x, progress=0),
    lambda x: CWT([2.0])(x, progress="no"),
])
def test_bad_progress_names_the_parameter(signals, call):
    with pytest.raises(TypeError, match="progress"):
        call(signals)


def test_building_many_scales_counts_them_on_a_bar(monkeypatch):
    """A CWT plan of many new scales fits one filter per scale: a bar counts them (shown once
    it has run for a second, with tqdm's estimate of the time left)."""
    import sys

    from fastmoments.signal import CWT

    seen = []

    class Bar:
        def __init__(self, total, **kw):
            seen.append((total, kw["large"]))
            self.n = 0

        def update(self, n=1):
            self.n += n

        def close(self):
            seen.append(self.n)

    monkeypatch.setattr(sys.modules[CWT.__module__], "progress_bar", Bar)
    scales = np.geomspace(2.0, 40.0, 80)
    assert len(CWT(scales).plans) == 80
    assert seen == [(80, True), 80]
