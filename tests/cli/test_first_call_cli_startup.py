"""First calls of the command line: the program pauses the garbage collector while
it imports and freezes what the imports made (a caller's ``main(argv)`` keeps its collector);
a small scalogram runs on one CPU thread and gives the same coefficients bit for bit."""

from __future__ import annotations

import gc
import subprocess
import sys

import numpy as np
import pytest

from fastmoments.cli import cmd_scalogram
from fastmoments.cli.main import main


def test_main_with_argv_leaves_the_collector_alone(tmp_path, capsys):
    frozen = gc.get_freeze_count()
    assert gc.isenabled()
    assert main(["scalogram", "chirp", "--num-scales", "3", "--out", str(tmp_path / "o")]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    capsys.readouterr()


def _program(argv, prelude="", postlude=""):
    """Run ``main()`` as the program (``sys.argv``) in a fresh process; an :mod:`atexit`
    handler prints the collector's state (``main()`` does not return there)."""
    code = ("import atexit, gc, sys\n" + prelude +
            "def report():\n"
            "    print('atexit', gc.isenabled(), gc.get_freeze_count() > 10000, "
            "'torch' in sys.modules)\n"
            "atexit.register(report)\n"
            "from fastmoments.cli.main import main\n"
            f"sys.argv = ['fastmoments', *{argv!r}]\n"
            "rc = main()\n"
            "print('returned', rc)\n" + postlude)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


@pytest.mark.parametrize(("argv", "status"), [
    (["scalogram", "chirp", "--num-scales", "3", "--out", "OUT"], 0),
    (["--version"], 0),
    (["scalogram", "chirp", "--rate", "-1", "--out", "OUT"], 2)])
def test_the_program_freezes_its_imports_and_ends_itself(tmp_path, argv, status):
    argv = [str(tmp_path / "o") if a == "OUT" else a for a in argv]
    out = _program(argv)
    assert out.returncode == status, out.stderr
    lines = out.stdout.strip().splitlines()
    assert "returned" not in out.stdout  # ended by main, after the atexit handlers
    _, enabled, frozen, torch = lines[-1].split()
    assert enabled == "True"  # collecting again, whatever the command did
    if status == 0 and argv[0] == "scalogram":
        assert frozen == "True" and torch == "True"  # torch's objects are frozen
        assert lines[0].startswith("scalogram of 4096 samples")  # flushed before the end
        assert (tmp_path / "o" / "scalogram.png").stat().st_size > 0


def test_the_program_exits_as_usual_while_another_thread_runs(tmp_path):
    # the other thread runs until main() has returned, however slow the machine
    prelude = ("import threading\n"
               "release = threading.Event()\n"
               "threading.Thread(target=release.wait).start()\n")
    out = _program(["--version"], prelude, postlude="release.set()\n")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[-2] == "returned 0" and lines[-1].startswith("atexit True")


def test_small_scalogram_runs_on_one_thread_with_the_same_coefficients(tmp_path, monkeypatch,
                                                                      capsys):
    import torch

    threads = torch.get_num_threads()
    seen = []
    import fastmoments.signal as signal  # _transform imports cwt from here when it runs

    real = signal.cwt

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(signal, "cwt", spy)
    torch.set_num_threads(2)
    try:
        one = tmp_path / "one.npz"
        assert main(["scalogram", "chirp", "--num-scales", "8", "--out", str(tmp_path / "a"),
                     "--save", str(one)]) == 0
        assert seen == [1] and torch.get_num_threads() == 2  # restored
        monkeypatch.setattr(cmd_scalogram, "ONE_THREAD_BELOW", 0)
        two = tmp_path / "two.npz"
        assert main(["scalogram", "chirp", "--num-scales", "8", "--out", str(tmp_path / "b"),
                     "--save", str(two)]) == 0
        assert seen == [1, 2] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
    a, b = np.load(one), np.load(two)
    assert a["coefficients"].tobytes() == b["coefficients"].tobytes()
    capsys.readouterr()
