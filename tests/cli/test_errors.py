"""The command line on bad input: exit status 2 and one line naming the file or the option,
never a traceback; a traceback (status 1) only for a bug; no output folder left by a failed run.

Every command here fails before any transform is computed, so the file runs in seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fastmoments.cli.main import main

# ----------------------------------------------------------------------------- helpers


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def assert_usage_error(rc: int, err: str, command: str, *names: str) -> str:
    """Status 2, no traceback, and one line ``fastmoments CMD: error: ...`` naming ``names``."""
    assert rc == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"fastmoments {command}: error: "), err
    for name in names:
        assert name in lines[0], (name, err)
    return lines[0]


def assert_option_error(rc: int, err: str, command: str, option: str) -> None:
    """argparse's own report: the usage, then ``fastmoments CMD: error: argument OPTION: ...``."""
    assert rc == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"usage: fastmoments {command}"), err
    assert lines[-1].startswith(f"fastmoments {command}: error: argument {option}: "), err


def _png_bytes(side: int = 16) -> bytes:
    import io

    from PIL import Image

    rng = np.random.default_rng(0)
    buf = io.BytesIO()
    Image.fromarray((rng.random((side, side)) * 255).astype(np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def _wav_bytes() -> bytes:
    import io

    from scipy.io import wavfile

    buf = io.BytesIO()
    wavfile.write(buf, 8000, (np.sin(np.arange(256) / 5.0) * 3000).astype(np.int16))
    return buf.getvalue()


def _nifti_bytes() -> bytes:
    nibabel = pytest.importorskip("nibabel")
    img = nibabel.Nifti1Image(np.arange(216, dtype=np.float32).reshape(6, 6, 6), np.eye(4))
    return img.to_bytes()


def _npy(arr: np.ndarray):
    def make(path: Path) -> None:
        np.save(path, arr)
    return make


def _npz(**arrays: np.ndarray):
    def make(path: Path) -> None:
        np.savez(path, **arrays)
    return make


def _bytes(data):
    def make(path: Path) -> None:
        path.write_bytes(data() if callable(data) else data)
    return make


CUBE = np.arange(216, dtype=np.float64).reshape(6, 6, 6)

# ----------------------------------------------------------------------------- input files

# (command, file name, how to make it, words the one error line must contain)
BAD_FILES = [
    ("reconstruct", "empty.png", _bytes(b""), ["IMAGE", "empty.png", "image"]),
    ("reconstruct", "text.png", _bytes(b"not an image\n"), ["text.png", "image"]),
    ("reconstruct", "truncated.png", _bytes(lambda: _png_bytes()[:-40]),
     ["truncated.png", "truncated"]),
    ("reconstruct", "header.png", _bytes(lambda: _png_bytes()[:40]), ["header.png", "image"]),
    ("reconstruct", "test.wav", _bytes(_wav_bytes), ["test.wav", "image"]),
    ("reconstruct", "tiny.png", _bytes(lambda: _png_bytes(2)), ["tiny.png", "2 x 2"]),
    ("volume", "empty.npy", _bytes(b""), ["VOLUME", "empty.npy", ".npy"]),
    ("volume", "text.npy", _bytes(b"not numpy\n"), ["text.npy", ".npy"]),
    ("volume", "zero.npz", _npz(), ["zero.npz", "no array"]),
    ("volume", "two.npz", _npz(a=CUBE, b=CUBE), ["two.npz", "2 arrays", "'a', 'b'", "--key"]),
    ("volume", "damaged.npz", _bytes(b"PK\x03\x04 not a zip"), ["damaged.npz", ".npz"]),
    ("volume", "complex.npy", _npy(CUBE + 1j), ["complex.npy", "complex"]),
    ("volume", "flat.npy", _npy(CUBE[0]), ["flat.npy", "3-D"]),
    ("volume", "nan.npy", _npy(np.where(CUBE > 100, np.nan, CUBE)), ["nan.npy", "NaN"]),
    ("volume", "words.npy", _npy(np.full((2, 2, 2), "ab")), ["words.npy", "<U2"]),
    ("volume", "empty.nii", _bytes(b""), ["empty.nii", "NIfTI"]),
    ("volume", "header.nii", _bytes(lambda: _nifti_bytes()[:200]), ["header.nii", "NIfTI"]),
    ("volume", "truncated.nii", _bytes(lambda: _nifti_bytes()[:400]),
     ["truncated.nii", "NIfTI"]),
    ("volume", "text.nii.gz", _bytes(b"hello"), ["text.nii.gz", "NIfTI"]),
    ("volume", "image.png", _bytes(_png_bytes), ["image.png", ".npy", ".nii"]),
    ("scalogram", "empty.wav", _bytes(b""), ["SIGNAL", "empty.wav", "WAV"]),
    ("scalogram", "header20.wav", _bytes(lambda: _wav_bytes()[:20]), ["header20.wav", "WAV"]),
    ("scalogram", "header30.wav", _bytes(lambda: _wav_bytes()[:30]), ["header30.wav", "WAV"]),
    ("scalogram", "text.wav", _bytes(b"RIFF, or so it says"), ["text.wav", "WAV"]),
    ("scalogram", "words.csv", _bytes(b"a,b\nc,d\n"), ["words.csv", "numbers"]),
    ("scalogram", "empty.csv", _bytes(b""), ["empty.csv", "numbers"]),
    ("scalogram", "short.csv", _bytes(b"1\n2\n3\n"), ["short.csv", "8 samples"]),
    ("scalogram", "nan.csv", _bytes(b"1\n" * 10 + b"nan\n"), ["nan.csv", "NaN"]),
    ("scalogram", "image.png", _bytes(_png_bytes), ["image.png", ".wav"]),
]


def _argv(command: str, path: Path, tmp_path: Path) -> list:
    out = ["--out", tmp_path / ("fig.png" if command == "scalogram" else "results")]
    small = {"reconstruct": ["--orders", "2", "--k", "1"],
             "volume": ["--orders", "2", "--k", "1", "--no-figures"],
             "scalogram": ["--num-scales", "2"]}[command]
    return [command, path, *small, *out]


@pytest.mark.parametrize(("command", "name", "make", "words"), BAD_FILES,
                         ids=[f"{c}-{n}" for c, n, _, _ in BAD_FILES])
def test_bad_input_file_is_one_line_naming_it(command, name, make, words, tmp_path, capsys):
    path = tmp_path / name
    make(path)
    rc, _, err = run(_argv(command, path, tmp_path), capsys)
    assert_usage_error(rc, err, command, *words)
    assert not (tmp_path / "results").exists() and not (tmp_path / "fig.png").exists()


@pytest.mark.parametrize("command", ["reconstruct", "volume", "scalogram"])
def test_missing_file_and_folder_as_input(command, tmp_path, capsys):
    suffix = {"reconstruct": ".png", "volume": ".npy", "scalogram": ".csv"}[command]
    rc, _, err = run(_argv(command, tmp_path / f"missing{suffix}", tmp_path), capsys)
    assert_usage_error(rc, err, command, f"missing{suffix}", "does not exist")
    folder = tmp_path / f"folder{suffix}"
    folder.mkdir()
    rc, _, err = run(_argv(command, folder, tmp_path), capsys)
    assert_usage_error(rc, err, command, f"folder{suffix}", "is a folder")


def test_npz_key_chooses_the_array(tmp_path, capsys):
    path = tmp_path / "two.npz"
    np.savez(path, a=CUBE, b=CUBE[::-1].copy())
    rc, _, err = run(["volume", path, "--key", "c", "--out", tmp_path / "r"], capsys)
    assert_usage_error(rc, err, "volume", "--key 'c'", "two.npz", "'a', 'b'")
    from fastmoments.cli._inputs import load_volume_file

    # bit-exact on purpose: .npz stores float64 losslessly and the loader must not touch it
    np.testing.assert_array_equal(load_volume_file(path, key="b"), CUBE[::-1])
    np.testing.assert_array_equal(load_volume_file(tmp_path / "two.npz", key="a"), CUBE)


def test_key_frame_size_only_where_they_apply(tmp_path, capsys):
    np.save(tmp_path / "v.npy", CUBE)
    nii = tmp_path / "v.nii"
    nii.write_bytes(_nifti_bytes())
    cases = [(["volume", tmp_path / "v.npy", "--key", "a"], "--key"),
             (["volume", tmp_path / "v.npy", "--frame", "1"], "--frame"),
             (["volume", nii, "--frame", "1"], "--frame"),
             (["volume", tmp_path / "v.npy", "--size", "8"], "--size"),
             (["volume", "phantom", "--key", "a"], "--key")]
    for argv, option in cases:
        rc, _, err = run([*argv, "--out", tmp_path / "r"], capsys)
        assert_usage_error(rc, err, "volume", option)
    assert not (tmp_path / "r").exists()


def test_wav_channel_out_of_range(tmp_path, capsys):
    path = tmp_path / "mono.wav"
    path.write_bytes(_wav_bytes())
    rc, _, err = run(["scalogram", path, "--column", "1", "--out", tmp_path / "f.png"], capsys)
    assert_usage_error(rc, err, "scalogram", "--column 1", "mono.wav", "1 channel")

# ----------------------------------------------------------------------------- option values


OPTION_ERRORS = [
    (["demo", "--size", "0"], "--size"),
    (["demo", "--size", "2"], "--size"),
    (["demo", "--size", "2.5"], "--size"),
    (["demo", "--orders", "4,x"], "--orders"),
    (["demo", "--orders", "-1"], "--orders"),
    (["demo", "--k", "0"], "--k"),
    (["demo", "--device", "tpu"], "--device"),
    (["reconstruct", "IMG", "--size", "0"], "--size"),
    (["reconstruct", "IMG", "--family", "legendre"], "--family"),
    (["reconstruct", "IMG", "--quadrature", "simpson"], "--quadrature"),
    (["reconstruct", "IMG", "--orders", ""], "--orders"),
    (["volume", "phantom", "--size", "0"], "--size"),
    (["volume", "phantom", "--orders", "1.5"], "--orders"),
    (["volume", "phantom", "--k", "0"], "--k"),
    (["volume", "phantom", "--alpha", "-5"], "--alpha"),
    (["volume", "phantom", "--beta", "nan"], "--beta"),
    (["volume", "phantom", "--orders", "9-3"], "--orders"),
    (["volume", "phantom", "--frame", "-1"], "--frame"),
    (["volume", "phantom", "--dtype", "int8"], "--dtype"),
    (["volume", "phantom", "--truncation", "sphere"], "--truncation"),
    (["scalogram", "chirp", "--rate", "0"], "--rate"),
    (["scalogram", "chirp", "--rate", "-8000"], "--rate"),
    (["scalogram", "chirp", "--rate", "nan"], "--rate"),
    (["scalogram", "chirp", "--scales", "0,4"], "--scales"),
    (["scalogram", "chirp", "--scales", "2,inf"], "--scales"),
    (["scalogram", "chirp", "--min-scale", "0"], "--min-scale"),
    (["scalogram", "chirp", "--max-scale", "-1"], "--max-scale"),
    (["scalogram", "chirp", "--num-scales", "0"], "--num-scales"),
    (["scalogram", "chirp", "--xi", "0"], "--xi"),
    (["scalogram", "chirp", "--column", "-1"], "--column"),
    (["scalogram", "chirp", "--method", "fft"], "--method"),
    (["characters", "--limit", "0"], "--limit"),
    (["characters", "--noise", "-0.5"], "--noise"),
    (["characters", "--orders", "0"], "--orders"),
    (["characters", "--seed", "-1"], "--seed"),
]


@pytest.mark.parametrize(("argv", "option"), OPTION_ERRORS,
                         ids=[" ".join(a) for a, _ in OPTION_ERRORS])
def test_bad_option_value_is_an_argparse_error(argv, option, tmp_path, capsys):
    argv = [tmp_path / "img.png" if a == "IMG" else a for a in argv]
    out = tmp_path / ("f.png" if argv[0] == "scalogram" else "out")
    rc, _, err = run([*argv, "--out", out], capsys)
    assert_option_error(rc, err, argv[0], option)
    assert not out.exists()


def test_other_scalogram_values(tmp_path, capsys):
    out = tmp_path / "f.png"
    rc, _, err = run(["scalogram", "chirp", "--min-scale", "8", "--max-scale", "4", "--out",
                      out], capsys)
    assert_usage_error(rc, err, "scalogram", "--max-scale", "--min-scale")
    rc, _, err = run(["scalogram", "chirp", "--column", "1", "--out", out], capsys)
    assert_usage_error(rc, err, "scalogram", "--column", "chirp")
    rc, _, err = run(["scalogram", "chirp", "--out", tmp_path / "f.xyz"], capsys)
    assert_usage_error(rc, err, "scalogram", "--out", "f.xyz", ".png")
    rc, _, err = run(["scalogram", "chirp", "--out", out, "--save", tmp_path / "c.txt"], capsys)
    assert_usage_error(rc, err, "scalogram", "--save", "c.txt", ".npz")
    assert not out.exists()

# ----------------------------------------------------------------------------- output paths


def _output_argv(command: str, out: Path, tmp_path: Path) -> list:
    if command == "scalogram":
        return ["scalogram", "chirp", "--num-scales", "2", "--out", out / "fig.png"
                if out.is_dir() or not out.suffix else out]
    np.save(tmp_path / "v.npy", CUBE)
    return {"demo": ["demo", "--size", "8", "--orders", "1", "--k", "1", "--out", out],
            "volume": ["volume", tmp_path / "v.npy", "--orders", "1", "--k", "1",
                       "--no-figures", "--out", out],
            "characters": ["characters", "--limit", "2", "--no-figures", "--out", out]}[command]


@pytest.mark.parametrize("command", ["demo", "volume", "characters"])
@pytest.mark.parametrize("where", ["existing file", "under a file"])
def test_out_that_cannot_be_a_folder(command, where, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("the user's file\n")
    out = afile if where == "existing file" else afile / "sub"
    rc, _, err = run(_output_argv(command, out, tmp_path), capsys)
    assert_usage_error(rc, err, command, "--out", str(out), "is a file, not a folder")
    assert afile.read_text() == "the user's file\n"


def test_scalogram_out_under_a_file_or_a_folder(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    rc, _, err = run(["scalogram", "chirp", "--out", afile / "fig.png"], capsys)
    assert_usage_error(rc, err, "scalogram", "--out", "is a file, not a folder")
    folder = tmp_path / "fig.png"
    folder.mkdir()
    rc, _, err = run(["scalogram", "chirp", "--out", folder], capsys)
    assert_usage_error(rc, err, "scalogram", "--out", "is a folder")


def _read_only_folder(tmp_path: Path) -> Path:
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    return ro


@pytest.mark.parametrize("command", ["demo", "volume", "characters", "scalogram"])
@pytest.mark.parametrize("inside", [False, True], ids=["the folder", "a folder under it"])
def test_out_not_writable(command, inside, tmp_path, capsys):
    ro = _read_only_folder(tmp_path)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("this user (root?) can write into a read-only folder")
        out = ro / "sub" if inside else ro
        rc, _, err = run(_output_argv(command, out, tmp_path), capsys)
        assert_usage_error(rc, err, command, "--out", "not writable")
    finally:
        ro.chmod(0o755)


@pytest.mark.parametrize("command", ["demo", "volume", "characters", "scalogram"])
def test_out_not_writable_as_reported_by_the_system(command, tmp_path, capsys, monkeypatch):
    """The same check where the user can write anywhere (root): the system's answer for the
    folder is what decides."""
    ro = _read_only_folder(tmp_path)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: (
        False if Path(p) == ro and mode & os.W_OK else real_access(p, mode, **kw)))
    rc, _, err = run(_output_argv(command, ro / "sub", tmp_path), capsys)
    assert_usage_error(rc, err, command, "--out", str(ro), "not writable")
    assert not (ro / "sub").exists()


def test_write_error_inside_the_folder_names_out(tmp_path, capsys, monkeypatch):
    """An OSError on a file under --out (a full disk, a file the user protected) is a usage
    error naming --out, not a traceback."""
    import fastmoments.cli.cmd_volume as cmd_volume

    def fail(vol, source, args):
        raise PermissionError(13, "Permission denied", os.path.join(args.out, "psnr.csv"))

    monkeypatch.setattr(cmd_volume, "_study", fail)
    rc, _, err = run(_output_argv("volume", tmp_path / "r", tmp_path), capsys)
    assert_usage_error(rc, err, "volume", "--out", "psnr.csv", "Permission denied")

# ----------------------------------------------------------------------------- clean-up


def test_characters_without_its_font_leaves_no_folder(tmp_path, capsys):
    out = tmp_path / "new" / "chars"
    rc, _, err = run(["characters", "--limit", "2", "--font", tmp_path / "no-such-font.ttc",
                      "--out", out], capsys)
    assert_usage_error(rc, err, "characters", "--font", "no-such-font.ttc")
    assert not (tmp_path / "new").exists()


def _failing_study(vol, source, args):
    Path(args.out, "psnr.csv").write_text("half written\n")
    raise ValueError("alpha must be a finite number > -1, got -5.0")


def test_failed_run_removes_the_folders_it_made(tmp_path, capsys, monkeypatch):
    import fastmoments.cli.cmd_volume as cmd_volume

    monkeypatch.setattr(cmd_volume, "_study", _failing_study)
    out = tmp_path / "new" / "deeper"
    rc, _, err = run(_output_argv("volume", out, tmp_path), capsys)
    assert_usage_error(rc, err, "volume", "alpha")
    assert not (tmp_path / "new").exists()


def test_failed_run_in_the_users_folder_keeps_it(tmp_path, capsys, monkeypatch):
    import fastmoments.cli.cmd_volume as cmd_volume

    monkeypatch.setattr(cmd_volume, "_study", _failing_study)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    rc, _, _ = run(_output_argv("volume", out, tmp_path), capsys)
    assert rc == 2
    assert (out / "notes.txt").read_text() == "keep me"


def test_library_error_inside_the_run_leaves_no_folder(tmp_path, capsys, monkeypatch):
    """A ValueError of the library after the folder was made (--alpha is now checked by
    argparse too, so the library's refusal is simulated)."""
    import fastmoments.box

    def refuse(*args, **kwargs):
        raise ValueError("alpha must be > -1, got -5")

    monkeypatch.setattr(fastmoments.box, "JacobiTransform", refuse)
    np.save(tmp_path / "v.npy", CUBE)
    out = tmp_path / "r"
    rc, _, err = run(["volume", tmp_path / "v.npy", "--orders", "1", "--k", "1",
                      "--no-figures", "--out", out], capsys)
    assert_usage_error(rc, err, "volume", "alpha")
    assert not out.exists()

# ----------------------------------------------------------------------------- bugs


def test_a_bug_shows_its_traceback_and_asks_for_a_report(tmp_path, capsys, monkeypatch):
    import fastmoments.cli.cmd_volume as cmd_volume

    def bug(vol, source, args):
        raise RuntimeError("an internal inconsistency")

    monkeypatch.setattr(cmd_volume, "_study", bug)
    out = tmp_path / "r"
    rc, _, err = run(_output_argv("volume", out, tmp_path), capsys)
    assert rc == 1
    assert "Traceback" in err and "RuntimeError: an internal inconsistency" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("fastmoments volume: this is a bug in fastmoments; please report")
    assert not out.exists()


def test_interrupt_is_status_130_and_removes_the_new_folder(tmp_path, capsys, monkeypatch):
    import fastmoments.cli.cmd_volume as cmd_volume

    def interrupted(vol, source, args):
        Path(args.out, "psnr.csv").write_text("half written\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(cmd_volume, "_study", interrupted)
    out = tmp_path / "r"
    rc, _, err = run(_output_argv("volume", out, tmp_path), capsys)
    assert rc == 130
    assert err.strip() == "fastmoments volume: interrupted"
    assert not out.exists()


def test_bare_memory_error_says_what_happened(tmp_path, capsys, monkeypatch):
    import fastmoments.cli.cmd_volume as cmd_volume

    def oom(vol, source, args):
        raise MemoryError()

    monkeypatch.setattr(cmd_volume, "_study", oom)
    rc, _, err = run(_output_argv("volume", tmp_path / "r", tmp_path), capsys)
    assert_usage_error(rc, err, "volume", "out of memory")


def test_no_command_and_help(capsys):
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out
    assert main(["--help"]) == 0
    assert main(["volume", "--help"]) == 0
    assert "--key" in capsys.readouterr().out

# ----------------------------------------------------------------------------- entry point


def test_entry_point_in_a_subprocess(tmp_path):
    """``python -m fastmoments``, as a user runs it: one line, status 2, no traceback."""
    import fastmoments

    (tmp_path / "empty.png").write_bytes(b"")
    src = str(Path(fastmoments.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [src, *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-m", "fastmoments", "reconstruct", "empty.png",
                           "--out", "results"], cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("fastmoments reconstruct: error: IMAGE 'empty.png'")
    assert not (tmp_path / "results").exists()
