"""Write the documentation's benchmark page from the committed results.

Reads ``benchmarks/results/*.json`` (the files the benchmark scripts write; their schemas
differ, so this script only assumes a JSON object holding an environment block and lists of
row objects), keeps the latest run of each benchmark (``name.json`` wins over ``name_runN.json``,
else the highest N), and writes ``docs/benchmarks.md`` with, per benchmark: date, device,
versions, a table of the rows (nested timings flattened, ratios to the paper or peer where a
row carries both times) and a link to the raw file; plus ``docs/_generated/ratios.png`` (ratios
to the papers' published times). Every number on the page comes from those files. The Sphinx
build runs this script (``docs/conf.py``); run it by hand to refresh the committed page::

    python3 benchmarks/report_docs.py
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "benchmarks.md"
FIGURES = ROOT / "docs" / "_generated"
COMMITTED_FIGURES = ROOT / "docs" / "figures"  # drawn by the benchmark scripts

MAX_ROWS = 24
MAX_COLUMNS = 12
ENV_KEYS = ("environment", "env", "meta")
DEVICE_KEYS = ("gpu", "device", "machine", "cpu")
VERSION_KEYS = ("torch", "cuda", "triton", "numpy", "scipy", "python", "fastmoments",
                "finufft", "mahotas", "fCWT", "PyWavelets")
# where a row has one of these (paper's or peer's time, in seconds or milliseconds) and a
# measured time of the same unit, the page adds the ratio
REFERENCE_TIMES = {"paper_s": "s", "thesis_s": "s", "mahotas_s": "s", "scipy_ms": "ms"}
MEASURED_TIMES = {"s": ("median_s", "forward.median_s", "fastmoments_warm_s"),
                  "ms": ("ours_ms", "ms")}
TITLES = {
    "disk": "Zernike and pseudo-Zernike moments", "pht": "Polar harmonic transforms",
    "box": "Legendre, Gegenbauer and Jacobi moments", "signal": "Gaussian smoothing and Morlet "
    "wavelets", "features": "Moment features", "radial": "Radial polynomial methods",
}


def latest_files(folder: Path) -> list[Path]:
    """The latest result file of each benchmark, sorted by name."""
    groups: dict[str, list[tuple[int, Path]]] = {}
    for path in sorted(folder.glob("*.json")):
        m = re.fullmatch(r"(.+?)_run(\d+)", path.stem)
        stem, rank = (m.group(1), int(m.group(2))) if m else (path.stem, 10**9)
        groups.setdefault(stem, []).append((rank, path))
    return [max(v)[1] for _, v in sorted(groups.items())]


def environment(data: dict) -> dict:
    for key in ENV_KEYS:
        if isinstance(data.get(key), dict):
            return data[key]
    return {k: v for k, v in data.items() if not isinstance(v, (dict, list))}


def row_lists(data: dict) -> list[tuple[str, list[dict]]]:
    """Every top-level list of row objects (e.g. ``rows``, ``timings``, ``speed``)."""
    return [(k, v) for k, v in data.items()
            if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]


def flatten(row: dict, prefix: str = "") -> dict:
    out: dict = {}
    for k, v in row.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        if v == 0:
            return "0"
        a = abs(v)
        return f"{v:.3g}" if 1e-3 <= a < 1e5 else f"{v:.2e}"
    if isinstance(v, list):
        return "×".join(fmt(x) for x in v) if all(isinstance(x, (int, float)) for x in v) \
            else ", ".join(fmt(x) for x in v)
    return str(v).replace("|", "\\|").replace("\n", " ")


def add_ratio(row: dict) -> dict:
    for ref, unit in REFERENCE_TIMES.items():
        r = row.get(ref)
        if not isinstance(r, (int, float)) or isinstance(r, bool):
            continue
        for m in MEASURED_TIMES[unit]:
            t = row.get(m)
            if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0:
                row[f"ratio {ref.rsplit('_', 1)[0]}/ours"] = r / t
                break
    return row


def table(rows: list[dict]) -> tuple[list[str], int]:
    flat = [add_ratio(flatten(r)) for r in rows]
    cols: list[str] = []
    for r in flat:
        for k in r:
            if k not in cols:
                cols.append(k)
    # prefer the ratio columns and drop repetition counts and spreads when there are too many
    if len(cols) > MAX_COLUMNS:
        drop = [c for c in cols if re.search(r"(repeat|reps|min|max)", c)]
        cols = [c for c in cols if c not in drop] or cols
    if len(cols) > MAX_COLUMNS:
        ratios = [c for c in cols if c.startswith("ratio")]
        cols = [c for c in cols if not c.startswith("ratio")][: MAX_COLUMNS - len(ratios)] + ratios
    shown = flat[:MAX_ROWS]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r.get(c)) for c in cols) + " |" for r in shown]
    return lines, len(flat) - len(shown)


def describe_env(env: dict) -> list[str]:
    device = next((str(env[k]) for k in DEVICE_KEYS if env.get(k)), "not recorded")
    threads = env.get("cpu_threads", env.get("threads", env.get("torch_threads",
                                                              env.get("cpu_count"))))
    if threads and "H100" not in device and "H200" not in device:
        device += f", {threads} CPU threads"
    versions = ", ".join(f"{k} {env[k]}" for k in VERSION_KEYS if env.get(k))
    out = [f"- date: {env.get('date', 'not recorded')}", f"- device: {device}"]
    if versions:
        out.append(f"- versions: {versions}")
    if "tf32" in env:
        out.append(f"- TF32: {'on' if env['tf32'] else 'off'}")
    if env.get("note"):
        out.append(f"- note: {fmt(env['note'])}")
    return out


def ratio_rows(files: list[Path]) -> list[tuple[str, float, float, float, str]]:
    """(label, published s, ours s, ratio, device) for every row carrying a paper's time."""
    out = []
    for path in files:
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            continue
        env = environment(data)
        device = next((str(env[k]) for k in DEVICE_KEYS if env.get(k)), "")
        for _, rows in row_lists(data):
            for row in rows:
                r = add_ratio(flatten(row))
                for ref in ("paper", "thesis"):
                    key = f"ratio {ref}/ours"
                    if key in r:
                        parts = [str(r[c]) for c in ("family", "job", "kind", "T", "k", "dtype",
                                                     "method") if c in r]
                        label = f"{path.stem}: " + " ".join(parts)
                        ours = float(r[f"{ref}_s"]) / float(r[key])
                        out.append((label, float(r[f"{ref}_s"]), ours, float(r[key]), device))
    return out


def figure(ratios: list[tuple[str, float]], target: Path) -> bool:
    if not ratios:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [r[0] for r in ratios]
    values = [r[3] for r in ratios]
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(values) + 1.2))
    ax.barh(range(len(values)), values, color="C0")
    ax.set_yticks(range(len(values)), labels, fontsize=7)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel("published time / our time (their GPU vs ours; > 1: faster)")
    ax.axvline(1.0, color="k", lw=0.8)
    fig.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return True


def main() -> int:
    files = latest_files(RESULTS)
    lines = [
        "# Benchmarks",
        "",
        "<!-- generated by benchmarks/report_docs.py from benchmarks/results/*.json: "
        "do not edit -->",
        "",
        "Every number below is read from a result file committed in `benchmarks/results/` "
        "by the script that measured it (`benchmarks/*.py`); for each benchmark only the "
        "latest run is shown. Times are medians over repeated calls after a warm-up (GPU: "
        "CUDA events, data resident on the device) unless a column says otherwise. Where a "
        "row carries the time published in a paper (`paper_s`, `thesis_s`) or a peer "
        "library's time, a `ratio .../ours` column gives that time divided by ours: the "
        "papers ran on their own GPUs (TITAN V, GTX 1060, V100, K80, RTX 3090), so a ratio "
        "compares our implementation on our device with theirs on theirs. CPU runs on the "
        "shared 2-core development machine are upper bounds (other jobs ran at the same "
        "time; the load average is recorded in the raw files).",
        "",
        "The run histories (how each number was reached, what was tried and dropped) are "
        "kept beside the raw results, in `benchmarks/results/history/`.",
        "",
    ]
    ratios = ratio_rows(files)
    if figure(ratios, FIGURES / "ratios.png"):
        lines += ["## Against the papers", "",
                  "![published time divided by ours](_generated/ratios.png)", "",
                  "| job | published (s) | ours (s) | ratio | our device |",
                  "|---|---|---|---|---|"]
        lines += [f"| {fmt(a)} | {fmt(b)} | {fmt(c)} | {d:.0f}× | {fmt(e)} |"
                  for a, b, c, d, e in ratios] + [""]
    pages = sorted((RESULTS / "papers").glob("*.md"))
    if pages:
        lines += ["## Every table of the papers, side by side", "",
                  "`python benchmarks/papers.py all --run --device cuda` writes one page per "
                  "paper: each of its tables and figures with the paper's number (on its "
                  "hardware), ours, the ratio and the accuracy, and `not measured` where we "
                  "have no number yet:", ""]
        for page in pages:
            title = page.read_text().splitlines()[0].lstrip("# ").strip()
            lines.append(f"- {title}: `benchmarks/results/papers/{page.name}`")
        lines.append("")
    topic = None
    skipped = []
    for path in files:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            skipped.append(f"`{path.name}` ({exc.__class__.__name__})")
            continue
        if not isinstance(data, dict) or not row_lists(data):
            skipped.append(f"`{path.name}` (no rows)")
            continue
        head = path.stem.split("_")[0]
        if head != topic:
            topic = head
            lines += [f"## {TITLES.get(head, head.capitalize())}", ""]
            figs = sorted(COMMITTED_FIGURES.glob(f"{head}_*.png"))
            if figs:
                lines += ["Figures drawn from these results by the benchmark scripts:", ""]
                lines += [f"![{f.stem}](figures/{f.name})" for f in figs] + [""]
        lines += [f"### `{path.stem}`", ""]
        lines += describe_env(environment(data))
        md = path.with_suffix(".md")
        raw = f"`benchmarks/results/{path.name}`"
        if md.exists():
            raw += f" (and its summary `benchmarks/results/{md.name}`)"
        lines += [f"- raw results: {raw}", ""]
        for key, rows in row_lists(data):
            body, more = table(rows)
            lines += [f"**{key}** ({len(rows)} rows)", "", *body, ""]
            if more:
                lines += [f"{more} more rows in the raw file.", ""]
    if skipped:
        lines += ["## Files not shown", "", ", ".join(skipped) + ".", ""]
    text = "\n".join(lines).rstrip() + "\n"
    if not PAGE.exists() or PAGE.read_text() != text:
        PAGE.write_text(text)
    print(f"report_docs: {len(files)} result files -> {PAGE.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
