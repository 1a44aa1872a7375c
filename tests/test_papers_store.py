"""The cell store of ``benchmarks/papers.py``: measured cells are kept per paper in
``<out>/<paper>_cells.json``, reused by later runs of the same device type and timed again with
``--fresh``. CPU only, fast: the cells are tiny stand-in jobs."""

from __future__ import annotations

import json
import time

import pytest

from .scripts import load_benchmark

papers = load_benchmark("papers")

KEY = ("box", (256, 256, 256), 100, 1, 0.3, 0.7, None)


def test_store_round_trip(tmp_path):
    path = tmp_path / "x_cells.json"
    st = papers.CellStore(path)
    st.put("cpu", KEY, {"s": 0.5, "acc": None, "method": "deng", "device": "dropped"}, "CPU X")
    st.put("cuda", ("Z", 64, 0, 0), {"s": 1e-4, "acc": 3e-8}, "GPU Y")
    assert st.save() is None  # put() already wrote the file; nothing left to write
    back = papers.CellStore(path)
    e = back.get("cpu", KEY)
    assert e["result"] == {"s": 0.5, "acc": None, "method": "deng"}
    assert e["device"] == "CPU X" and e["device_type"] == "cpu" and e["date"].endswith("Z")
    assert back.get("cuda", KEY) is None  # a CPU cell is never taken for a GPU one
    assert back.get("cuda", ("Z", 64, 0, 0))["result"]["acc"] == 3e-8
    assert papers.CellStore(path, fresh=True).get("cpu", KEY) is None
    # --fresh KINDS: only the cells whose key starts with one of them
    only = papers.CellStore(path, fresh={"box"})
    assert only.get("cpu", KEY) is None and only.get("cuda", ("Z", 64, 0, 0)) is not None


def test_runner_reuses_a_stored_cell_and_fresh_times_it_again(tmp_path):
    path = tmp_path / "x_cells.json"
    calls = []

    def job():
        calls.append(1)
        return {"s": 0.125 * len(calls), "acc": 1e-7}

    r = papers.Runner("cpu", 10.0, store=papers.CellStore(path))
    m = r.cell(KEY, 0.01, job)
    assert calls == [1] and m["s"] == 0.125 and m["stored"] is False
    assert "load1" in m  # a CPU cell records the load of the (maybe shared) machine
    assert "cores available" in m["device"] and "torch thread" in m["device"]
    assert r.measured == [KEY]
    r2 = papers.Runner("cpu", 10.0, store=papers.CellStore(path))
    m2 = r2.cell(KEY, 0.01, job)
    assert calls == [1] and m2["s"] == 0.125 and m2["stored"] is True
    assert r2.reused == [KEY] and r2.measured == []
    assert papers.source(m2, "x") == f"x_cells.json ({m2['date'][:10]})"
    # a runner that does not measure (no --run) still shows the stored cell
    r3 = papers.Runner("cpu", 0.0, measure=False, store=papers.CellStore(path))
    assert r3.cell(KEY, 0.01, job)["s"] == 0.125 and calls == [1]
    # --fresh: timed again, and the new result replaces the stored one
    st = papers.CellStore(path, fresh=True)
    st.put("cpu", ("other",), {"s": 2.0}, "CPU X")
    m4 = papers.Runner("cpu", 10.0, store=st).cell(KEY, 0.01, job)
    assert calls == [1, 1] and m4["s"] == 0.25
    back = papers.CellStore(path)
    assert back.get("cpu", KEY)["result"]["s"] == 0.25
    assert back.get("cpu", ("other",))["result"]["s"] == 2.0


def test_budget_counts_the_time_inside_cells_only():
    # the CPU runner of a GPU run lives while the GPU cells run: that time is not its own
    r = papers.Runner("cpu", 0.2)
    time.sleep(0.3)
    assert r.cell(("a",), 0.1, lambda: {"s": 0.0}) is not None
    assert r.spent < 0.2
    assert r.cell(("b",), 5.0, lambda: {"s": 0.0}) is None
    assert r.reason(("b",)) == "not measured (budget spent)"


@pytest.fixture
def tiny_paper(monkeypatch):
    """A one-cell paper on the CPU column (as Tables 5.2/5.8 are)."""
    calls = []

    def job():
        calls.append(1)
        return {"s": 0.25, "acc": None}

    def build(runner):
        g = papers.Page("tiny", "tiny")
        cr = papers._cpu_runner(runner)
        m = cr.cell(("tiny-cpu", 1), 0.01, job)
        g.table("t", ["ours s", "device"],
                [[papers.fmt(m["s"]) if m else cr.reason(("tiny-cpu", 1)),
                  m["device"] if m else ""]])
        return g

    monkeypatch.setitem(papers.BUILDERS, "tiny", build)
    monkeypatch.setitem(papers.PAPER_DATA, "tiny", {"file": "none.txt"})
    monkeypatch.setitem(papers.WEIGHTS, "tiny", 1.0)
    return calls


def test_main_stores_reuses_and_fresh(tmp_path, tiny_paper, capsys):
    out = str(tmp_path)
    args = ["tiny", "--run", "--device", "cpu", "--budget-s", "5", "--out", out]
    assert papers.main(args) == 0
    assert tiny_paper == [1]
    store = json.loads((tmp_path / "tiny_cells.json").read_text())
    (cell,) = store["cells"]
    assert cell["key"] == ["tiny-cpu", 1] and cell["result"]["s"] == 0.25
    assert "cores available" in cell["device"]
    page = (tmp_path / "tiny.md").read_text()
    assert "| 0.25 |" in page and "| this run |" in page
    # again: the stored cell is reused, and the page says where it comes from
    assert papers.main(args) == 0
    assert tiny_paper == [1]
    page = (tmp_path / "tiny.md").read_text()
    assert "| 0.25 |" in page and "| tiny_cells.json |" in page
    meta = json.loads((tmp_path / "tiny.json").read_text())["meta"]
    assert meta["reused_from_store"] == [str(("tiny-cpu", 1))] and meta["measured_here"] == []
    # a GPU run (here: no GPU, and no --cpu-budget-s) shows the CPU cell from the store
    assert papers.main(["tiny", "--run", "--device", "cuda:0", "--out", out]) == 0
    assert tiny_paper == [1]
    assert "| 0.25 |" in (tmp_path / "tiny.md").read_text()
    # --fresh of another kind keeps it; --fresh times it again
    assert papers.main([*args, "--fresh", "disk-cpu"]) == 0
    assert tiny_paper == [1]
    assert papers.main([*args, "--fresh"]) == 0
    assert tiny_paper == [1, 1]
    assert "| this run |" in (tmp_path / "tiny.md").read_text()
    capsys.readouterr()


def test_cpu_estimates_follow_the_machine():
    # a cell far cheaper than its estimate scales the next estimates of its kind down
    r = papers.Runner("cpu", 100.0)
    assert r.scale("disk-cpu") == 1.0
    assert r.cell(("disk-cpu", 1), 5.0, lambda: {"s": 0.0}) is not None
    assert r.scale("disk-cpu") == 0.1 and r.scale("pht-cpu") == 1.0
    gpu = papers.Runner("cuda", 10.0, measure=False)
    gpu._ratios["disk"] = [5.0]
    assert gpu.scale("disk") == 1.0
