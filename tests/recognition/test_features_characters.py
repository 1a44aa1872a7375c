"""GB2312 glyphs and the Chapter 6 experiment on a subset of the characters (needs the
WenQuanYi Micro Hei font, Debian package fonts-wqy-microhei; skipped without it)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.recognition import find_font, gb2312_characters, pair_statistics, render_glyphs
from fastmoments.recognition.experiment import glyph_images, rotate_images

from ..reference_disk import sum_bound

try:
    find_font()
    HAVE_FONT = True
except FileNotFoundError:
    HAVE_FONT = False
needs_font = pytest.mark.skipif(
    not HAVE_FONT, reason="font WenQuanYi Micro Hei missing: apt-get install fonts-wqy-microhei")

SUBSET = 300


def test_gb2312_characters():
    chars = gb2312_characters()
    assert len(chars) == 6763 == len(set(chars))
    assert all(0x4E00 <= ord(c) <= 0x9FFF for c in chars)
    assert chars[:3] == ["啊", "阿", "埃"]
    assert gb2312_characters(5) == chars[:5]
    with pytest.raises(ValueError, match="limit must be >= 1"):
        gb2312_characters(0)


def test_missing_font_message(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        find_font(tmp_path / "nope.ttc")
    from fastmoments.recognition import glyphs as g

    monkeypatch.setattr(g, "_FONT_CANDIDATES", (str(tmp_path / "absent.ttc"),))
    with pytest.raises(FileNotFoundError, match="apt-get install -y fonts-wqy-microhei") as e:
        find_font()
    assert "font=" in str(e.value) and "--font" in str(e.value)


@needs_font
def test_rendering_is_deterministic_and_binary():
    chars = gb2312_characters(SUBSET)
    a = render_glyphs(chars)
    assert a.shape == (SUBSET, 24, 24) and a.dtype == bool
    from fastmoments.recognition import glyphs

    glyphs._render_cached.cache_clear()
    b = render_glyphs(chars)
    np.testing.assert_array_equal(a, b)
    ink = a.mean(axis=(1, 2))
    assert (ink > 0.05).all() and (ink < 0.8).all()
    a[0, 0, 0] = not a[0, 0, 0]            # the returned array is a copy, not the cache
    np.testing.assert_array_equal(render_glyphs(chars)[0], b[0])
    # 日 and 曰 differ in shape and position inside the em box
    ri, yue = render_glyphs("日曰")
    assert (ri != yue).sum() > 20
    with pytest.raises(ValueError, match="threshold must be in"):
        render_glyphs("日", threshold=1.5)
    with pytest.raises(ValueError, match="chars must be single characters"):
        render_glyphs(["日曰"])


def test_glyph_images_convention():
    m = np.array([[True, False]])
    np.testing.assert_array_equal(glyph_images(m, ink=0), [[0.0, 1.0]])
    np.testing.assert_array_equal(glyph_images(m, ink=1), [[1.0, 0.0]])
    with pytest.raises(ValueError, match="ink must be 0 or 1"):
        glyph_images(m, ink=2)


def test_rotate_images_quarter_turn_and_fill():
    x = torch.zeros(1, 6, 6, dtype=torch.float64)
    x[0, 1, 2] = 1.0
    r = rotate_images(x, torch.tensor([90.0]), fill=0.0)
    np.testing.assert_allclose(r[0].numpy(), np.rot90(x[0].numpy(), 1), atol=1e-12)
    full = rotate_images(torch.ones(1, 6, 6, dtype=torch.float64), torch.tensor([45.0]),
                         fill=1.0)
    np.testing.assert_allclose(full.numpy(), 1.0, atol=1e-12)


@needs_font
def test_magnitude_features_of_characters_invariant_under_quarter_turns():
    x = glyph_images(render_glyphs(gb2312_characters(SUBSET)))
    sel = [(0, 0), (4, 0), (5, 0), (5, 2)]
    base = fm.features(x, family="pseudo-zernike", select=sel, kind="magnitude",
                       dtype="float64")
    st = pair_statistics(base)
    for k in (1, 2, 3):
        rot = fm.features(np.rot90(x, k, axes=(-2, -1)), family="pseudo-zernike", select=sel,
                          kind="magnitude", dtype="float64")
        # the same products summed in another order (tests/reference_disk.sum_bound)
        tol = sum_bound(x, 6 / np.pi)[:, None]
        assert (np.abs(rot.matrix - base.matrix) <= tol).all()
        sr = pair_statistics(rot)
        np.testing.assert_array_equal(sr.counts, st.counts)
        assert [c[:2] for c in sr.closest] == [c[:2] for c in st.closest]


@needs_font
def test_ink_convention_changes_only_magnitudes():
    """A(1 - f) = A(1) - A(f): complex and real distances do not depend on the convention."""
    m = render_glyphs(gb2312_characters(60))
    opts = dict(family="pseudo-zernike", orders=5, kind="complex", dtype="float64")
    a = fm.features(glyph_images(m, ink=0), **opts)
    b = fm.features(glyph_images(m, ink=1), **opts)
    np.testing.assert_allclose(fm.feature_distances(a), fm.feature_distances(b), atol=1e-14)
    da = fm.feature_distances(a.with_kind("magnitude"))
    db = fm.feature_distances(b.with_kind("magnitude"))
    assert np.abs(da - db).max() > 1e-3


@needs_font
def test_experiment_on_a_subset(tmp_path):
    out = tmp_path / "chars"
    code = fm_cli(["characters", "--out", str(out), "--limit", "150", "--orders", "2,4",
                   "--noise", "0,0.5"])
    assert code == 0
    r = json.loads((out / "results.json").read_text())
    assert r["meta"]["n_characters"] == 150
    assert r["meta"]["fastmoments"]["version"] == fm.__version__  # which code computed it
    for name in ("V_complex", "V_real", "V_magnitude", "V_complex (Zernike)"):
        st = r["pair_statistics"][name]
        assert sum(st["counts"]) == st["n_pairs"] == 150 * 149 // 2
        assert len(st["closest"]) == 10
        assert len(r["vectors"][name]["pairs"]) == 4
    for rot in r["rotation"]:
        assert rot["magnitude_histogram_identical"] and rot["magnitude_closest_identical"]
        assert rot["magnitude_max_abs_diff"] <= 1e-15 < rot["complex_max_abs_diff"]
    rows = r["recognition"]["rows"]
    clean = [x["top1"] for x in rows if x["kind"] == "magnitude" and x["noise"] == 0.0
             and x["family"] == "pseudo-zernike" and x["order"] == 4]
    assert clean[0] > 0.9        # rotation-invariant features recognize clean rotated copies
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Table 6.4" in report and "| 0.00-0.01 |" in report
    for png in ("features_closest_pairs.png", "features_histogram.png",
                "features_recognition.png"):
        assert (out / png).stat().st_size > 10_000


@needs_font
def test_the_font_option_picks_the_font(tmp_path):
    font = tmp_path / "fonts" / "copy.ttc"
    font.parent.mkdir()
    font.write_bytes(find_font().read_bytes())
    out = tmp_path / "chars"
    assert fm_cli(["characters", "--font", str(font), "--limit", "2", "--no-recognition",
                   "--no-figures", "--out", str(out)]) == 0
    assert json.loads((out / "results.json").read_text())["meta"]["font"] == str(font)
    np.testing.assert_array_equal(render_glyphs("日曰", font=font), render_glyphs("日曰"))


def fm_cli(argv: list[str]) -> int:
    from fastmoments.cli.main import main

    return main(argv)


def test_cli_bad_limit(tmp_path, capsys):
    assert fm_cli(["characters", "--out", str(tmp_path), "--limit", "1"]) == 2
    assert "--limit must be at least 2" in capsys.readouterr().err
