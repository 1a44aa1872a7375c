"""The drawing process of the command line (fastmoments.cli._drawing): a helper Python process
that imports matplotlib while the command computes, draws the same figure as the command would,
and gives way to drawing in the command's own process whenever it cannot."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.image import imread

from fastmoments.cli import _drawing, cmd_scalogram


def _drawn(n=300, scales=6):
    t = np.arange(n) / 100.0
    freqs = np.geomspace(2.0, 40.0, scales)
    values = np.abs(np.sin(np.outer(freqs, t)))
    return dict(t=t, freqs=freqs, values=values, title="a test scalogram",
                colour_label="|W|", time_label="time (s)", freq_label="frequency (Hz)")


def _fails(path, drawn):  # a module-level function the helper can look up, that raises
    raise RuntimeError("drawing failed")


def test_helper_draws_the_same_pixels_as_the_command(tmp_path):
    drawer = _drawing.Drawer()
    assert drawer.run(cmd_scalogram._draw, (str(tmp_path / "helper.png"), _drawn())) is True
    assert drawer.proc is None  # one job, then closed
    cmd_scalogram._draw(str(tmp_path / "here.png"), _drawn())
    np.testing.assert_array_equal(imread(tmp_path / "helper.png"), imread(tmp_path / "here.png"))


def test_an_error_in_the_helper_gives_way_to_the_command(tmp_path):
    drawer = _drawing.Drawer()
    assert drawer.run(_fails, (str(tmp_path / "x.png"), _drawn())) is False
    # draw(): the command then runs the function itself, and its error is the usual one
    _drawing._current = _drawing.Drawer()
    with pytest.raises(RuntimeError, match="drawing failed"):
        _drawing.draw(_fails, str(tmp_path / "x.png"), _drawn())
    assert _drawing._current is None


def test_a_dead_helper_gives_way_to_the_command(tmp_path):
    drawer = _drawing.Drawer()
    drawer.proc.kill()
    drawer.proc.wait()
    _drawing._current = drawer
    _drawing.draw(cmd_scalogram._draw, str(tmp_path / "s.png"), _drawn())
    assert imread(tmp_path / "s.png").shape[2] in (3, 4)
    assert _drawing._current is None


def test_without_a_helper_draw_runs_here(tmp_path):
    _drawing._current = None
    _drawing.draw(cmd_scalogram._draw, str(tmp_path / "s.png"), _drawn())
    assert (tmp_path / "s.png").stat().st_size > 0


@pytest.mark.parametrize(("argv", "cores", "wanted"), [
    (["scalogram", "chirp"], 2, True),
    (["scalogram", "chirp"], 1, False),
    (["scalogram", "--help"], 2, False),
    (["features", "imgs"], 2, False),
    ([], 2, False)])
def test_when_the_program_starts_a_helper(monkeypatch, argv, cores, wanted):
    monkeypatch.setattr(_drawing, "_cores", lambda: cores)
    assert _drawing._wanted(argv) is wanted


def test_the_helper_ends_when_the_command_ends_without_drawing():
    drawer = _drawing.Drawer()
    proc = drawer.proc
    drawer.close()
    assert proc.returncode == 0
