"""One option convention for every command: --orders syntax, --out default, help with defaults,
per-device defaults, the estimate line, no deprecated spellings, figure words, characters
progress."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from fastmoments.cli import _args
from fastmoments.cli.main import build_parser, main

ORDERS_COMMANDS = {"demo": [], "reconstruct": ["IMG"], "volume": ["phantom"], "characters": []}
COMMANDS = ["demo", "reconstruct", "volume", "scalogram", "characters"]
POSITIONAL = {"reconstruct": ["IMG"], "volume": ["phantom"], "scalogram": ["chirp"]}


def _subparser(command: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def parse(command: str, *options: str) -> argparse.Namespace:
    return build_parser().parse_args([command, *POSITIONAL.get(command, []), *options])


@pytest.mark.parametrize("command", sorted(ORDERS_COMMANDS))
@pytest.mark.parametrize(("text", "expected"), [
    ("7", [7]), ("50,100,200", [50, 100, 200]), (" 3 , 9", [3, 9]), ("2-6", [2, 3, 4, 5, 6]),
    ("2-12:4,20", [2, 6, 10, 20]), ("1,4-5", [1, 4, 5])])
def test_orders_parse_the_same_in_every_command(command, text, expected, capsys):
    assert parse(command, "--orders", text).orders == expected
    assert capsys.readouterr().err == ""  # the current spelling prints no note


@pytest.mark.parametrize("command", sorted(ORDERS_COMMANDS))
@pytest.mark.parametrize("text", ["5-2", "1-2:0", "a-b", "2-", "1-100000000", "3.5", ""])
def test_bad_orders_are_refused_the_same_in_every_command(command, text, capsys):
    with pytest.raises(SystemExit) as exc:
        parse(command, "--orders", text)
    assert exc.value.code == 2
    assert "argument --orders:" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["demo", "reconstruct", "volume"])
def test_k_takes_the_orders_syntax(command):
    assert parse(command, "--k", "1-3,7").k == [1, 2, 3, 7]


@pytest.mark.parametrize("command", COMMANDS)
def test_out_default_is_the_same_rule_everywhere(command):
    assert parse(command).out == f"fastmoments-{command}"
    assert parse(command).device == "auto"


@pytest.mark.parametrize("command", [*COMMANDS, "features"])
def test_every_option_has_help_and_shows_its_default(command):
    p = _subparser(command)
    text = " ".join(p.format_help().split())
    for action in p._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{command} {action.option_strings or action.dest} has no help"
        shown = not any(action.default is v for v in (None, False, True, argparse.SUPPRESS))
        if action.option_strings and shown and action.nargs != 0:
            default = action.default
            if isinstance(default, list):
                default = ",".join(f"{v:g}" if isinstance(v, float) else str(v)
                                   for v in default)
            assert f"(default: {default})" in text, (command, action.option_strings)
    if command == "volume":
        assert "Jacobi parameter alpha" in text and "Jacobi parameter beta" in text


def test_alpha_beta_must_be_above_minus_one(capsys):
    for value in ("-1", "nan", "x"):
        with pytest.raises(SystemExit):
            parse("volume", "--alpha", value)
        assert "argument --alpha:" in capsys.readouterr().err


def test_characters_lists_are_one_comma_separated_token(capsys):
    """No deprecated spellings in 0.1: the space-separated form is an unknown argument."""
    ns = parse("characters", "--orders", "2,4,6-8:2", "--noise", "0,0.3")
    assert ns.orders == [2, 4, 6, 8] and ns.noise == [0.0, 0.3]
    assert capsys.readouterr().err == ""
    with pytest.raises(SystemExit) as exc:
        parse("characters", "--orders", "2", "4")
    assert exc.value.code == 2
    assert "unrecognized arguments: 4" in capsys.readouterr().err


# ----------------------------------------------------------------------------- device defaults

def _image(tmp_path, side=16):
    from PIL import Image

    path = tmp_path / "img.png"
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (side, side), dtype=np.uint8)).save(path)
    return path


@pytest.mark.parametrize("gpu", [False, True])
def test_auto_device_follows_the_gpu_check(monkeypatch, gpu):
    monkeypatch.setattr(_args, "cuda_available", lambda: gpu)
    assert _args.pick_device("auto") == ("cuda" if gpu else "cpu")
    assert _args.pick_device("cpu") == "cpu"


@pytest.mark.parametrize("gpu", [False, True])
def test_defaults_per_device(monkeypatch, tmp_path, capsys, gpu):
    from fastmoments.cli import _disk_run, cmd_demo, cmd_reconstruct

    monkeypatch.setattr(_args, "cuda_available", lambda: gpu)
    seen = {}

    def fake_run(image, *, orders, ks, device, out, **kw):  # no GPU here: record the request
        seen.update(orders=orders, ks=ks, device=device, n=image.shape[0])
        report = out / "README.md"
        report.write_text("")
        return report

    monkeypatch.setattr(_disk_run, "run_studies", fake_run)
    big = _image(tmp_path, 600)
    assert main(["reconstruct", str(big), "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    want = cmd_reconstruct.DEFAULTS["cuda" if gpu else "cpu"]
    assert seen["orders"] == want[0] and seen["ks"] == want[1]
    assert seen["device"] == ("cuda" if gpu else "cpu")
    assert seen["n"] == (600 if gpu else 256)  # a CPU caps the default size
    assert f"highest order {max(want[0])}" in out
    assert main(["demo", "--out", str(tmp_path / "d")]) == 0
    want = cmd_demo.DEFAULTS["cuda" if gpu else "cpu"]
    assert seen["orders"] == want[0] and seen["ks"] == want[1] and seen["n"] == want[2]
    # an explicit request wins on either device
    assert main(["reconstruct", str(big), "--orders", "3", "--k", "2", "--size", "20",
                 "--out", str(tmp_path / "e")]) == 0
    assert seen["orders"] == [3] and seen["ks"] == [2] and seen["n"] == 20


def test_cpu_defaults_are_small():
    from fastmoments.cli import _estimate, cmd_reconstruct

    orders, ks, _ = cmd_reconstruct.DEFAULTS["cpu"]
    # the old defaults: minutes of modelled CPU time at 256 x 256; the new ones seconds
    assert _estimate.study_seconds(256, orders, ks) < 30
    assert _estimate.study_seconds(256, [100, 300, 700], [1, 5, 11]) > 100


def test_estimate_line_printed_before_the_work(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(_args, "cuda_available", lambda: False)
    path = _image(tmp_path, 16)
    rc = main(["reconstruct", str(path), "--orders", "4,8", "--k", "1,2",
               "--out", str(tmp_path / "r")])
    assert rc == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("fastmoments reconstruct: estimate: 1 family x 2 k x 2 orders "
                               "on 16x16 (highest order 8")
    assert "of moments and reconstructions" in lines[0] and "for 1 figure" in lines[0]
    assert str(tmp_path / "r") in lines[-1]


def test_progress_steps_are_short():
    from fastmoments.cli import _disk_run, _estimate

    # the default CPU run and a big explicit one: every step is modelled at <= 1.5 s
    for n, orders, ks in [(256, [50, 100, 200], [1, 3]), (512, [100, 300, 700], [1, 5])]:
        top = max(orders)
        for k in ks:
            groups = _disk_run.repetition_groups(n, k, top, "cpu")
            assert sorted(m for g in groups for m in g) == list(range(top + 1))
            assert max(_estimate.forward_seconds(n, k, top, len(g)) for g in groups) < 1.5
    assert len(_disk_run.repetition_groups(512, 11, 700, "cuda")) == 1


def test_chunked_study_matches_the_library_study():
    from fastmoments.cli import _disk_run
    from fastmoments.disk.study import reconstruction_study

    class Bar:
        n = 0

        def update(self, k=1):
            self.n += k

        def set_postfix_str(self, *a, **kw):
            pass

    img = np.random.default_rng(1).random((24, 24)) * 255
    bar = Bar()
    old = _disk_run.STEP_SECONDS
    try:
        _disk_run.STEP_SECONDS = 1e-5  # many groups
        st = _disk_run.chunked_study(img, family="zernike", orders=[3, 9], ks=[1, 2],
                                     quadrature="midpoint", device="cpu", bar=bar)
        steps = _disk_run.study_steps(24, [3, 9], [1, 2], "cpu")
    finally:
        _disk_run.STEP_SECONDS = old
    ref = reconstruction_study(img, family="zernike", orders=[3, 9], ks=[1, 2],
                               show_progress=False)
    assert bar.n == steps > 4
    # float32 sums in another order: a few float32 ulps of 255
    for mine, theirs in zip(st.images, ref.images, strict=True):
        for a, b in zip(mine, theirs, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-3)


# ----------------------------------------------------------------------------- figures

def _png_text(path):
    from PIL import Image

    with Image.open(path) as im:
        return dict(im.text)


def test_volume_figures_have_psnr_and_colorbars(tmp_path, capsys):
    out = tmp_path / "v"
    assert main(["volume", "phantom", "--size", "12", "--orders", "2,4", "--k", "1,2",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    rows = (out / "psnr.csv").read_text().splitlines()[1:]
    psnr = {(int(r.split(",")[0]), int(r.split(",")[1])): float(r.split(",")[2]) for r in rows}
    xy = _png_text(out / "slices_xy.png")
    titles = xy["fastmoments:axes"].splitlines()
    for (o, k), value in psnr.items():
        assert f"order {o}, k = {k}" in titles
        assert f"PSNR {value:.2f} dB" in xy["fastmoments:axes"]
    assert xy["fastmoments:colorbars"] == "intensity"
    assert "PSNR" in xy["Title"] and "alpha=0" in xy["Title"]
    planes = _png_text(out / "slices_planes.png")
    assert planes["fastmoments:axes"].count(f"PSNR {psnr[(4, 2)]:.2f} dB") == 3
    assert planes["fastmoments:colorbars"] == "intensity"


def test_scalogram_figure_colorbar_log_axis_and_no_timing(tmp_path, capsys):
    from fastmoments.cli import cmd_scalogram

    out = tmp_path / "s"
    assert main(["scalogram", "chirp", "--num-scales", "6", "--out", str(out), "--save"]) == 0
    assert str(out / "scalogram.png") in capsys.readouterr().out
    with np.load(out / "scalogram.npz") as saved:
        assert saved["coefficients"].shape == (6, 4096)
    words = _png_text(out / "scalogram.png")
    assert "amplitude" in words["fastmoments:colorbars"]
    assert " ms" not in words["Title"] and not any(c.isdigit() for c in
                                                     words["Title"].split("SFT")[-1])
    args = parse("scalogram", "--colour", "magnitude")
    coef = np.ones((3, 10), complex)
    fig = cmd_scalogram._figure(coef, np.array([1.0, 10.0, 100.0]), np.array([1.0, 2, 4]),
                                10, 1000.0, args)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert ax.get_ylim()[1] >= 100  # the highest frequency row is drawn
    assert fig.axes[1].get_ylabel().startswith("|W|")
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_demo_figure_and_readme_say_why_k1_degrades(tmp_path, capsys, monkeypatch):
    from fastmoments.cli._disk_run import K1_NOTE

    monkeypatch.setattr(_args, "cuda_available", lambda: False)
    out = tmp_path / "d"
    assert main(["demo", "--size", "24", "--orders", "4,12", "--k", "1,2", "--out",
                 str(out)]) == 0
    capsys.readouterr()
    for fam in ("zernike", "pseudo-zernike"):
        words = _png_text(out / f"{fam}_grid.png")
        assert " ".join(words["Description"].split()) == K1_NOTE
        assert "rows k" in words["Title"]
    readme = (out / "README.md").read_text()
    assert readme.count(K1_NOTE) == 2
    assert json.loads((out / "summary.json").read_text())["k1_note"] == K1_NOTE


# ----------------------------------------------------------------------------- characters

def test_characters_progress_covers_every_phase(tmp_path, capsys):
    from fastmoments.recognition.glyphs import find_font

    try:
        find_font()
    except FileNotFoundError:
        pytest.skip("the CJK font is not installed")
    rc = main(["characters", "--limit", "12", "--no-figures", "--orders", "2,4", "--noise",
               "0", "--progress", "--out", str(tmp_path / "c")])
    assert rc == 0
    err = capsys.readouterr().err
    for phase in ("rendering", "moments", "pair statistics", "rotation check", "recognition"):
        assert f"characters: {phase}" in err, phase
    assert err.index("characters: rendering") < err.index("characters: recognition")


def test_characters_progress_off_when_not_a_terminal(tmp_path, capsys):
    from fastmoments.recognition.glyphs import find_font

    try:
        find_font()
    except FileNotFoundError:
        pytest.skip("the CJK font is not installed")
    import sys

    import fastmoments.recognition.experiment  # noqa: F401  (the module the bar wraps)

    before = sys.modules["fastmoments.recognition.experiment"].features
    assert main(["characters", "--limit", "4", "--no-figures", "--no-recognition",
                 "--out", str(tmp_path / "c")]) == 0
    assert "characters:" not in capsys.readouterr().err  # capsys is not a terminal
    assert sys.modules["fastmoments.recognition.experiment"].features is before  # restored
