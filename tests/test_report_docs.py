"""The benchmark page's writer, ``benchmarks/report_docs.py``: rows that repeat one job are
gathered into one row without losing a value, the multi-GPU table is built from whatever rows
its result file holds, and the page from the committed results stays within its length."""

from __future__ import annotations

from .scripts import load_benchmark

report = load_benchmark("report_docs")


def test_merge_label_keyed_and_free():
    assert report.merge_label(["ZM, k=1, float32", "ZM, k=11, float32"]) == "ZM, k=1 / 11, float32"
    assert report.merge_label(["a, σ = 4", "a, σ = 32", "a, σ = 256"]) == "a, σ = 4 / 32 / 256"
    # keyed: only name=number parts may differ
    assert report.merge_label(["CWT, gaus1", "CWT, mexh"]) is None
    assert report.merge_label(["CWT, gaus1", "CWT, mexh"], keyed=False) == "CWT, gaus1 / mexh"
    # more than one part differs, or a different number of parts: not one job
    assert report.merge_label(["a, k=1, x", "a, k=2, y"]) is None
    assert report.merge_label(["a, k=1", "a, k=1, x"]) is None


def test_merged_keeps_every_value():
    assert report.merged([["a", "1", "x"], ["a", "2", "x"]]) == ["a", "1 / 2", "x"]
    rows = [["J, k=1", "1", "e"], ["J, k=11", "2", "e"], ["K, k=1", "3", "f"],
            ["L, f64 / f32", "4 / 5", "g"], ["L, k=2", "6", "g"]]
    assert report.merge_runs(rows) == [["J, k=1 / 11", "1 / 2", "e"], ["K, k=1", "3", "f"],
                                       ["L, f64 / f32", "4 / 5", "g"], ["L, k=2", "6", "g"]]
    # columns that must agree keep rows apart
    assert len(report.merge_runs([["J, k=1", "p"], ["J, k=2", "q"]], same=(1,))) == 2


def _mg(job, what, one, two, target=None, diff=0.0):
    return {"job": job, "what": what, "ms_1gpu": one, "ms_2gpu": two, "speedup": one / two,
            "target": target, "rel_err_2_vs_1": diff, "note": ""}


def test_multigpu_rows_any_jobs():
    rows = [
        _mg("a", "features 10 x 8^2, T=4 (host NumPy in)", 9.0, 5.0, 1.8),
        _mg("a", "features 10 x 8^2, T=4 (tensor on GPU 0)", 8.0, 4.0, 1.8),
        _mg("b", "moments of one 64^2 image, order 20 (441 moments)", 3.0, 2.0, 1.7, 1e-7),
        _mg("b'", "Z4,* (3 repetitions), 64^2", 1.0, 2.0),
        _mg("c", "gaussian_filter1d 1000 x 10000000, sigma=50.0 (NumPy in and out)", 900.0,
            500.0),
        _mg("c", "gaussian_filter1d 1000 x 10000000, sigma=50.0 (tensor on GPU 0)", 40.0, 25.0,
            None, 2e-7),
        _mg("e", "3-D Zernike moments of 8 volumes 32^3, order 10 (tensor on GPU 0)", 6.0, 3.0),
        _mg("e", "3-D Zernike moments of 8 volumes 32^3, order 10 (host NumPy in)", 12.0, 7.0),
    ]
    out = report._multigpu_rows(rows)
    assert out == [
        ["features 10 x 8^2, T=4", "9 → 5", "1.80×", "8 → 4", "2.00×", "≥ 1.8×", "0"],
        ["moments of one 64^2 image, order 20 (441 moments)", "–", "–", "3 → 2", "1.50×",
         "≥ 1.7×", "1.0e-07"],
        ["gaussian_filter1d 1000 x 10000000, sigma=50.0 (host: NumPy in and out)",
         "900 → 500", "1.80×", "40 → 25", "1.60×", "–", "0 / 2.0e-07"],
        ["3-D Zernike moments of 8 volumes 32^3, order 10", "12 → 7", "1.71×", "6 → 3",
         "2.00×", "–", "0"],
    ]


def test_page_from_committed_results_is_short(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "PAGE", tmp_path / "benchmarks.md")
    monkeypatch.setattr(report, "FIGURES", tmp_path / "_generated")
    assert report.main() == 0
    text = (tmp_path / "benchmarks.md").read_text()
    assert len(text.splitlines()) <= 300
    assert "benchmarks/results/multigpu.json" in text
