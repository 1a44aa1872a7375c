"""First calls of the command line: ``fastmoments scalogram`` draws its figure
without pyplot and without mathtext (whose parser alone cost a first call ~0.1 s), and labels
its logarithmic frequency axis with plain numbers."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from fastmoments.cli import cmd_scalogram
from fastmoments.cli.main import main


def _figure(freqs):
    class Args:
        colour = "amplitude"
        xi = 6.0
        method = "sft"

    coef = np.ones((len(freqs), 50), complex)
    return cmd_scalogram._figure(coef, np.asarray(freqs, float), np.arange(1.0, len(freqs) + 1),
                                 50, 1000.0, Args())


def test_log_frequency_axis_has_plain_labels():
    fig = _figure([3.7, 12.0, 40.0, 477.0])
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    lo, hi = ax.get_ylim()  # the rows' edges: 6.3 .. 696 here
    want = [f"{v:g}" for v in (10, 20, 50, 100, 200, 500, 1000) if lo <= v <= hi]
    assert labels == want and len(want) >= 5


def test_many_decades_get_one_label_per_decade():
    fig = _figure(np.geomspace(1e-3, 1e3, 8))
    fig.canvas.draw()
    lo, hi = fig.axes[0].get_ylim()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels() if t.get_text()]
    assert labels == [f"{10.0**d:g}" for d in range(-3, 4) if lo <= 10.0**d <= hi]
    assert len(labels) >= 5


def test_scalogram_draws_without_mathtext(tmp_path, monkeypatch, capsys):
    import matplotlib.mathtext

    def refuse(*args, **kwargs):
        raise AssertionError("mathtext was used")

    monkeypatch.setattr(matplotlib.mathtext.MathTextParser, "parse", refuse)
    out = tmp_path / "s"
    assert main(["scalogram", "chirp", "--num-scales", "6", "--out", str(out)]) == 0
    assert (out / "scalogram.png").stat().st_size > 0
    capsys.readouterr()


@pytest.mark.parametrize("args", [["scalogram", "chirp", "--num-scales", "4"]])
def test_scalogram_in_a_fresh_process_imports_no_pyplot(tmp_path, args):
    code = ("import sys; from fastmoments.cli.main import main; "
            f"rc = main({[*args, '--out', str(tmp_path / 'o')]!r}); "
            "print(rc, 'matplotlib.pyplot' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 False"
