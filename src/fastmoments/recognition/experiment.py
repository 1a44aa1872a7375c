r"""The GB2312 character experiment of the :ref:`Zernike thesis <bib-zernike-thesis>`, chapter 6,
and a rotated/noisy recognition test.

:func:`run_characters` (command ``fastmoments characters --out DIR``) renders the GB2312 hanzi
(:mod:`.glyphs`), computes their pseudo-Zernike and Zernike moments of order :math:`n \le 5`,
and reproduces the chapter:

1. the variance tables of the moments taken as complex numbers, real parts and magnitudes
   (Tables 6.1-6.3) and the four moments of largest variance of each (Eq. 6.1-6.3), with the
   Zernike complex vector for comparison;
2. the histogram of the distances between all pairs of characters (Table 6.4, Eq. 6.4-6.5)
   and the average distance;
3. the ten closest pairs of each vector, drawn (Tables 6.5-6.7);
4. the distances of similar-looking pairs (Table 6.8);
5. the rotation check: characters turned by 90, 180 and 270 degrees have the same magnitude
   features, hence the same distances;

and goes one step further: 6. each character is recognized by its nearest neighbour among the
clean characters from a copy rotated by a random angle (bilinear interpolation) with Gaussian
noise, reporting top-1 accuracy against the moment order and the feature kind, and the pairs
that get confused.

Image convention
----------------
The thesis stores the character as 0 and the background as 1 (Sec. 6.1); we follow it by
default (``ink=0``) so that our magnitude features are comparable with Table 6.3. The choice
changes only the magnitude features: with :math:`g = 1 - f`, :math:`A_{nm}[g] = A_{nm}[1] -
A_{nm}[f]`, and :math:`A_{nm}[1]` is the same for every character (and zero unless
:math:`m = 0`), so complex and real-part variances and distances are identical in both
conventions, while :math:`|A_{n0}|` changes.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .._array import resolve_device
from .._collection_outputs import library_identity
from .._validate import check_int
from ..moments import KINDS
from . import thesis
from .distance import nearest_neighbours, pair_statistics
from .extract import features, moment_pairs
from .featureset import FeatureSet
from .glyphs import find_font, gb2312_characters, render_glyphs
from .variance import moment_variances, top_by_variance, variance_table

__all__ = ["glyph_images", "rotate_images", "run_characters"]

#: Vector names in the order of Table 6.4.
VECTOR_NAMES = ("V_complex", "V_real", "V_magnitude", "V_complex (Zernike)")


def glyph_images(masks: np.ndarray, *, ink: int = 0) -> np.ndarray:
    """Binary glyph masks (``True`` = ink) as float64 images with ink ``ink`` and background
    ``1 - ink``.

    >>> glyph_images(np.array([[True, False]])).tolist()
    [[0.0, 1.0]]
    """
    if ink not in (0, 1):
        raise ValueError(f"ink must be 0 or 1, got {ink!r}")
    m = np.asarray(masks, dtype=bool)
    return np.where(m, float(ink), 1.0 - ink)


def rotate_images(images: torch.Tensor, angles_deg: torch.Tensor, *,
                  fill: float) -> torch.Tensor:
    r"""Rotate ``(B, N, N)`` images about their centre by ``angles_deg`` (counter-clockwise as
    displayed, row 0 at the top) with bilinear interpolation; points from outside the image
    take the value ``fill``.

    The centre is the middle of the pixel grid, which is also the centre of the unit disk of
    the moment transforms, so the disk maps onto itself.
    """
    a = angles_deg.to(images.dtype) * (math.pi / 180)
    c, s = torch.cos(a), torch.sin(a)
    zero = torch.zeros_like(a)
    # output (x, y) -> input: rotate back by -angle; y points down in grid coordinates
    theta = torch.stack([torch.stack([c, -s, zero], -1), torch.stack([s, c, zero], -1)], -2)
    grid = torch.nn.functional.affine_grid(theta, [images.shape[0], 1, *images.shape[-2:]],
                                           align_corners=False)
    shifted = (images - fill).unsqueeze(1)
    out = torch.nn.functional.grid_sample(shifted, grid, mode="bilinear", padding_mode="zeros",
                                          align_corners=False)
    return out[:, 0] + fill


def _vectors(pz: FeatureSet, zn: FeatureSet) -> dict[str, Any]:
    """Selections by variance (ours) and the Zernike thesis's, for each vector."""
    out: dict[str, Any] = {}
    for kind, name in zip(KINDS, VECTOR_NAMES[:3], strict=True):
        var = moment_variances(pz, kind=kind)
        out[name] = {"family": "pseudo-zernike", "kind": kind,
                     "pairs": top_by_variance(pz.pairs, var, 4),
                     "thesis_pairs": thesis.VECTORS[kind]}
    var = moment_variances(zn, kind="complex")
    out[VECTOR_NAMES[3]] = {"family": "zernike", "kind": "complex",
                            "pairs": top_by_variance(zn.pairs, var, 4), "thesis_pairs": None}
    return out


def _stats_dict(st: Any, chars: list[str]) -> dict[str, Any]:
    return {"labels": st.labels(), "counts": st.counts.tolist(), "mean": st.mean,
            "n_pairs": st.n_pairs,
            "closest": [{"pair": chars[i] + chars[j], "i": i, "j": j, "d": d}
                        for i, j, d in st.closest]}


def run_characters(out: str | Path, *, limit: int | None = None, device: Any = None,
                   ink: int = 0, recognition: bool = True,
                   recognition_orders: tuple[int, ...] = (2, 4, 6, 8, 10, 12),
                   noise: tuple[float, ...] = (0.0, 0.3), seed: int = 0,
                   figures: bool = True, progress: bool | None = False,
                   glyphs: tuple[list[str], np.ndarray] | None = None,
                   font: str | os.PathLike | None = None) -> dict[str, Any]:
    """Run the Chapter 6 experiment and write its results to ``out``.

    Parameters
    ----------
    out : path-like
        Output folder (created): ``results.json``, ``report.md`` and PNG figures.
    limit : int, optional
        Use only the first ``limit`` characters (quick runs and tests).
    device : str or torch.device, optional
        Where moments, distances and searches run (default CPU).
    ink : {0, 1}
        Pixel value of the character strokes (the thesis's is 0; module notes).
    recognition : bool
        Run the rotated/noisy nearest-neighbour test.
    recognition_orders : tuple of int
        Highest moment orders tried in the recognition test.
    noise : tuple of float
        Standard deviations of the Gaussian noise added to the rotated copies (the image
        contrast is 1); the confusion list is taken at the largest.
    seed : int
        Seed of the random angles and noise.
    figures : bool
        Draw the PNG figures (needs matplotlib).
    progress : bool, optional
        Progress bars.
    glyphs : (list of str, ndarray), optional
        Characters and their ``(n, 24, 24)`` bool masks rendered beforehand (for machines
        without the font); default: render them here.
    font : path-like, optional
        The font file to render with (default: :func:`~.glyphs.find_font`); unused when
        ``glyphs`` is given.

    Returns
    -------
    dict
        Everything written to ``results.json``.

    Raises
    ------
    FileNotFoundError
        If ``font`` is not a file, or none is given and the CJK font is not installed (the
        message says how to install it).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    dev = resolve_device(device)
    seed, orders, noise = _check_options(ink, seed, recognition_orders, noise)
    timings: dict[str, float] = {}
    cpu_times: dict[str, float] = {}
    cpu_last = [time.process_time()]

    def tick(name: str, t0: float) -> float:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        t1 = time.perf_counter()
        timings[name] = t1 - t0
        c = time.process_time()
        cpu_times[name] = c - cpu_last[0]
        cpu_last[0] = c
        return t1

    t_start = t0 = time.perf_counter()
    font, chars, masks = _glyphs(glyphs, limit, font)
    images = glyph_images(masks, ink=ink)
    x = torch.as_tensor(images, device=dev)
    t0 = tick("render", t0)

    kw = dict(dtype="float64", progress=progress)
    pz = features(x, family="pseudo-zernike", orders=5, kind="complex", **kw)
    zn = features(x, family="zernike", orders=5, kind="complex", **kw)
    t0 = tick("moments", t0)

    tables = {kind: variance_table(pz, kind=kind).tolist() for kind in KINDS}
    tables["complex (Zernike)"] = variance_table(zn, kind="complex").tolist()
    vecs = _vectors(pz, zn)
    fsets = {name: (pz if v["family"] == "pseudo-zernike" else zn).with_kind(v["kind"])
             .select(v["pairs"]) for name, v in vecs.items()}
    for name, v in vecs.items():   # the thesis's moments where ours differ
        if v["thesis_pairs"] is not None and sorted(v["thesis_pairs"]) != sorted(v["pairs"]):
            fsets[name + " [thesis moments]"] = pz.with_kind(v["kind"]).select(
                v["thesis_pairs"])
    t0 = tick("selection", t0)

    stats = {name: pair_statistics(fs, closest=10, progress=progress)
             for name, fs in fsets.items()}
    t0 = tick("pair_statistics", t0)

    similar = _similar_pairs(chars, fsets)
    t0 = tick("similar_pairs", t0)

    rotation = _rotation_check(x, vecs, fsets, stats["V_magnitude"], kw, progress)
    t0 = tick("rotation_check", t0)

    recog = None
    if recognition:
        recog = _recognition(x, chars, orders, noise, seed, ink, dev, progress)
        t0 = tick("recognition", t0)
    timings["total"] = time.perf_counter() - t_start
    cpu_times["total"] = sum(cpu_times.values())

    result = {
        "meta": {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                 "fastmoments": library_identity(),
                 "device": _device_name(dev), "torch": torch.__version__,
                 "numpy": np.__version__, "python": platform.python_version(),
                 "load_average": _loadavg(), "font": str(font),
                 "n_characters": len(chars), "ink": ink,
                 "rendering": "24x24, 4x supersampled em box, baseline 7/8 em, threshold 0.5",
                 "sampling": "pixels inside the unit disk (inscribed), 1 point per pixel"},
        "timings_s": timings,
        "cpu_times_s": cpu_times,
        "variance_tables": tables,
        "vectors": {k: {kk: vv for kk, vv in v.items()} for k, v in vecs.items()},
        "pair_statistics": {name: _stats_dict(st, chars) for name, st in stats.items()},
        "similar_pairs": similar,
        "similar_pairs_not_reproduced": thesis.SIMILAR_UNREADABLE,
        "rotation": rotation,
        "recognition": recog,
    }
    (out / "results.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
    (out / "report.md").write_text(_report(result), encoding="utf-8")
    if figures:
        from .figures import draw_all

        draw_all(out, result, masks, chars, font)
    return result


def _check_options(ink: Any, seed: Any, recognition_orders: Any, noise: Any
                   ) -> tuple[int, tuple[int, ...], tuple[float, ...]]:
    """The checked options of :func:`run_characters`: seed, orders and noise levels."""
    if ink not in (0, 1):
        raise ValueError(f"ink must be 0 or 1, got {ink!r}")
    seed = check_int("seed", seed, minimum=0)
    orders = tuple(sorted({check_int("recognition_orders", t, minimum=1)
                           for t in recognition_orders}))
    if not orders:
        raise ValueError("recognition_orders must name at least one order")
    noise = tuple(sorted(float(s) for s in noise))
    if not noise or noise[0] < 0 or not all(math.isfinite(s) for s in noise):
        raise ValueError(f"noise must be finite standard deviations >= 0, got {noise!r}")
    return seed, orders, noise


def _glyphs(glyphs: Any, limit: int | None, font: Any
            ) -> tuple[Path, list[str], np.ndarray]:
    """The font, characters and ``(n, 24, 24)`` masks: rendered, or as given."""
    if glyphs is None:
        chars = gb2312_characters(limit)
        path = find_font(font)
        return path, chars, render_glyphs(chars, font=path)
    chars, masks = list(glyphs[0]), np.asarray(glyphs[1], dtype=bool)
    if masks.shape != (len(chars), 24, 24):
        raise ValueError(f"glyphs must be (characters, (n, 24, 24) masks), got "
                         f"{len(chars)} characters and shape {masks.shape}")
    if limit is not None:
        chars, masks = chars[:limit], masks[:limit]
    return Path("(glyphs given)"), chars, masks


def _similar_pairs(chars: list[str], fsets: dict[str, FeatureSet]) -> list[dict[str, Any]]:
    """Table 6.8: the distances of the similar-looking pairs, ours beside the thesis's."""
    where = {c: i for i, c in enumerate(chars)}
    similar = []
    for ours, text, dc, dr, dm, reading in thesis.SIMILAR_PAIRS:
        a, b = ours
        if a not in where or b not in where:
            continue
        row = {"pair": ours, "thesis_text": text, "our_reading": reading,
               "thesis": {"V_complex": dc, "V_real": dr, "V_magnitude": dm}, "ours": {}}
        for name in VECTOR_NAMES:
            fs = fsets[name]
            va, vb = fs.tensor[where[a]], fs.tensor[where[b]]
            row["ours"][name] = float(torch.linalg.vector_norm(va - vb))
        similar.append(row)
    return similar


def _rotation_check(x: torch.Tensor, vecs: dict[str, Any], fsets: dict[str, FeatureSet],
                    base: Any, kw: dict[str, Any], progress: Any) -> list[dict[str, Any]]:
    """Features of the glyphs turned by 90, 180 and 270 degrees against the upright ones."""
    rotation = []
    for k in (1, 2, 3):
        xr = torch.rot90(x, k, dims=(-2, -1))
        mag = features(xr, family="pseudo-zernike", select=vecs["V_magnitude"]["pairs"],
                       kind="magnitude", **kw)
        ref = fsets["V_magnitude"]
        cplx_ref = fsets["V_complex"]
        cplx = features(xr, family="pseudo-zernike", select=vecs["V_complex"]["pairs"],
                        kind="complex", **kw)
        diff = float((mag.tensor - ref.tensor).abs().max())
        entry = {"degrees": 90 * k, "magnitude_max_abs_diff": diff,
                 "magnitude_bitwise_equal": bool(torch.equal(mag.tensor, ref.tensor)),
                 "complex_max_abs_diff": float((cplx.tensor - cplx_ref.tensor).abs().max())}
        if entry["magnitude_bitwise_equal"]:
            # equal feature vectors give equal distances: nothing left to compute
            entry.update(magnitude_histogram_identical=True, magnitude_closest_identical=True,
                         magnitude_mean_diff=0.0)
        else:
            st = pair_statistics(mag, closest=10, progress=progress)
            entry.update(
                magnitude_histogram_identical=bool(np.array_equal(st.counts, base.counts)),
                magnitude_closest_identical=[p[:2] for p in st.closest]
                == [p[:2] for p in base.closest],
                magnitude_mean_diff=abs(st.mean - base.mean))
        rotation.append(entry)
    return rotation


def _loadavg() -> list[float] | None:
    try:
        import os

        return [round(v, 2) for v in os.getloadavg()]
    except (OSError, AttributeError):  # pragma: no cover - not on Linux
        return None


def _device_name(dev: torch.device) -> str:
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def _recognition(x: torch.Tensor, chars: list[str], orders: tuple[int, ...],
                 noise: tuple[float, ...], seed: int, ink: int, dev: torch.device,
                 progress: bool | None) -> dict[str, Any]:
    """Nearest-neighbour recognition of rotated, noisy copies against the clean set."""
    top = max(*orders, 5)          # order 5 for the thesis's V_magnitude
    kw = dict(dtype="float64", progress=progress)
    gal = {fam: features(x, family=fam, orders=top, kind="complex", **kw)
           for fam in ("pseudo-zernike", "zernike")}
    gen = torch.Generator(device="cpu").manual_seed(seed)
    n = x.shape[0]
    angles = torch.rand(n, generator=gen, dtype=torch.float64) * 360.0
    bg = 1.0 - ink
    rotated = rotate_images(x, angles.to(x.device), fill=bg)
    configs = [("pseudo-zernike", kind) for kind in KINDS] + [("zernike", "magnitude")]
    rows = []
    confusions: dict[tuple[int, int], int] = {}
    errors_best: list[dict[str, Any]] = []
    for sigma in noise:
        eps = torch.randn(rotated.shape, generator=gen, dtype=torch.float64).to(x.device)
        q = rotated + float(sigma) * eps
        qf = {fam: features(q, family=fam, orders=top, kind="complex", **kw)
              for fam in gal}
        queries = qf
        for fam, kind in configs:
            # complex and real parts are not rotation invariant: a few orders show it
            for t in (orders if kind == "magnitude" else orders[:3]):
                pairs = moment_pairs(fam, t)
                g = gal[fam].with_kind(kind).select(pairs)
                h = qf[fam].with_kind(kind).select(pairs)
                idx, _ = nearest_neighbours(h.tensor, g.tensor)
                pred = idx[:, 0].cpu().numpy()
                ok = pred == np.arange(n)
                rows.append({"noise": sigma, "family": fam, "kind": kind, "order": t,
                             "n_features": g.n_features, "top1": float(ok.mean())})
                if kind == "magnitude":
                    for i in np.nonzero(~ok)[0]:
                        key = (int(min(i, pred[i])), int(max(i, pred[i])))
                        confusions[key] = confusions.get(key, 0) + 1
        # the thesis's 4-moment magnitude vector
        g = gal["pseudo-zernike"].with_kind("magnitude").select(thesis.VECTORS["magnitude"])
        h = qf["pseudo-zernike"].with_kind("magnitude").select(thesis.VECTORS["magnitude"])
        idx, _ = nearest_neighbours(h.tensor, g.tensor)
        pred = idx[:, 0].cpu().numpy()
        rows.append({"noise": sigma, "family": "pseudo-zernike", "kind": "V_magnitude",
                     "order": 5, "n_features": 4,
                     "top1": float((pred == np.arange(n)).mean())})
    # errors of the best magnitude configuration at the highest noise
    best = max((r for r in rows if r["kind"] == "magnitude" and r["noise"] == noise[-1]),
               key=lambda r: (r["top1"], -r["order"]))
    pairs = moment_pairs(best["family"], best["order"])
    h = queries[best["family"]].with_kind("magnitude").select(pairs)
    g = gal[best["family"]].with_kind("magnitude").select(pairs)
    idx, _ = nearest_neighbours(h.tensor, g.tensor)
    pred = idx[:, 0].cpu().numpy()
    for i in np.nonzero(pred != np.arange(n))[0][:40]:
        errors_best.append({"true": chars[i], "predicted": chars[pred[i]],
                            "angle": float(angles[i])})
    ranked = sorted(confusions.items(), key=lambda kv: (-kv[1], kv[0]))[:30]
    return {"angles": "uniform in [0, 360) degrees, bilinear, background fill",
            "noise_sigma": list(noise), "seed": seed, "rows": rows,
            "best_magnitude": best, "errors_of_best": errors_best,
            "most_confused_pairs": [{"pair": chars[i] + chars[j], "times": c}
                                    for (i, j), c in ranked]}


# ---------------------------------------------------------------------------- report
def _fmt_table(table: list[list[float]], theirs: list[list[float | None]] | None) -> str:
    nmax = len(table[0]) - 1
    head = "| |" + "".join(f" n={n} |" for n in range(nmax + 1))
    lines = [head, "|---" * (nmax + 2) + "|"]
    for m, row in enumerate(table):
        cells = []
        for n, v in enumerate(row):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                cells.append("")
                continue
            t = None if theirs is None or m >= len(theirs) else theirs[m][n]
            cells.append(f"{v:.4f}" + (f" ({t:.4f})" if t is not None else ""))
        lines.append(f"| m={m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _report(r: dict[str, Any]) -> str:
    """The Markdown report of :func:`run_characters`."""
    meta = r["meta"]
    L = [f"# GB2312 characters with moment features ({meta['n_characters']} characters)", "",
         f"Run {meta['date']} on {meta['device']}, torch {meta['torch']}; font "
         f"`{meta['font']}`; {meta['rendering']}; ink = {meta['ink']} (background "
         f"{1 - meta['ink']}); {meta['sampling']}.", "",
         "Wall-clock times (s): " + ", ".join(f"{k} {v:.2f}" for k, v in r["timings_s"].items()),
         "", "Process CPU times (s, all threads): " + ", ".join(
             f"{k} {v:.2f}" for k, v in r["cpu_times_s"].items()),
         "", f"Load average at the end: {meta.get('load_average')}.", ""]
    L += _report_variances(r)
    L += _report_distances(r)
    L += _report_similar_and_rotated(r)
    if r.get("recognition"):
        L += _report_recognition(r["recognition"])
    return "\n".join(L) + "\n"


def _report_variances(r: dict[str, Any]) -> list[str]:
    """The report's variance tables and feature vectors."""
    L: list[str] = []
    L.append("## Variance tables (ours, thesis in parentheses; Tables 6.1-6.3)")
    for kind in KINDS:
        L += ["", f"### {kind}", "", _fmt_table(r["variance_tables"][kind],
                                                 thesis.VARIANCES[kind])]
    L += ["", "### complex, Zernike (no thesis table)", "",
          _fmt_table(r["variance_tables"]["complex (Zernike)"], None), ""]
    L += ["## Feature vectors (four moments of largest variance)", "",
          "| vector | ours | thesis |", "|---|---|---|"]
    for name, v in r["vectors"].items():
        L.append(f"| {name} | {v['pairs']} | {v['thesis_pairs'] or 'not given'} |")
    return L


def _report_distances(r: dict[str, Any]) -> list[str]:
    """The report's distance histogram and closest pairs."""
    L: list[str] = []
    L += ["", "## Distance histogram (Table 6.4; thesis in parentheses)", ""]
    names = list(r["pair_statistics"])
    L.append("| d | " + " | ".join(names) + " |")
    L.append("|---" * (len(names) + 1) + "|")
    labels = r["pair_statistics"][names[0]]["labels"]
    for b, lab in enumerate(labels):
        cells = []
        for nm in names:
            c = r["pair_statistics"][nm]["counts"][b]
            t = thesis.HISTOGRAM.get(nm)
            cells.append(f"{c:,}" + (f" ({t[b]:,})" if t else ""))
        L.append(f"| {lab} | " + " | ".join(cells) + " |")
    cells = []
    for nm in names:
        m = r["pair_statistics"][nm]["mean"]
        t = thesis.MEAN_DISTANCE.get(nm)
        cells.append(f"{m:.4f}" + (f" ({t:.4f})" if t else ""))
    L.append("| average | " + " | ".join(cells) + " |")
    L += ["", "## Ten closest pairs (Tables 6.5-6.7)", ""]
    for nm in names:
        ours = ", ".join(f"{c['pair']} {c['d']:.4f}" for c in r["pair_statistics"][nm]["closest"])
        L.append(f"- **{nm}**: {ours}")
        if nm in thesis.CLOSEST:
            L.append("  - thesis: " + ", ".join(f"{p} {d:.4f}" for p, d in thesis.CLOSEST[nm]))
    return L


def _report_similar_and_rotated(r: dict[str, Any]) -> list[str]:
    """The report's similar-looking pairs and rotations."""
    L: list[str] = []
    L += ["", "## Similar-looking pairs (Table 6.8; thesis in parentheses)", "",
          "| pair | V_complex | V_real | V_magnitude | V_complex (Zernike) |",
          "|---|---|---|---|---|"]
    for row in r["similar_pairs"]:
        o, t = row["ours"], row["thesis"]
        mark = f" (our reading of '{row['thesis_text']}')" if row["our_reading"] else ""
        L.append(f"| {row['pair']}{mark} | {o['V_complex']:.4f} ({t['V_complex']:.4f}) | "
                 f"{o['V_real']:.4f} ({t['V_real']:.4f}) | {o['V_magnitude']:.4f} "
                 f"({t['V_magnitude']:.4f}) | {o['V_complex (Zernike)']:.4f} |")
    for p, why in r["similar_pairs_not_reproduced"].items():
        L.append(f"- not reproduced: {p}: {why}")
    L += ["", "## Rotation by multiples of 90 degrees", "",
          "| turn | max abs diff of V_magnitude | bitwise equal | histogram identical | "
          "closest pairs identical | max abs diff of V_complex |", "|---|---|---|---|---|---|"]
    for rot in r["rotation"]:
        L.append(f"| {rot['degrees']} | {rot['magnitude_max_abs_diff']:.2e} | "
                 f"{rot['magnitude_bitwise_equal']} | "
                 f"{rot['magnitude_histogram_identical']} | "
                 f"{rot['magnitude_closest_identical']} | {rot['complex_max_abs_diff']:.3f} |")
    return L


def _report_recognition(rec: dict[str, Any]) -> list[str]:
    """The report's section on the recognition of rotated, noisy copies."""
    L = ["", "## Recognition of rotated, noisy copies (nearest neighbour, top-1)", "",
         f"Angles {rec['angles']}; Gaussian noise sigma {rec['noise_sigma']}; "
         f"seed {rec['seed']}.", ""]
    keys = sorted({(x["family"], x["kind"]) for x in rec["rows"]},
                  key=lambda k: (k[0] != "pseudo-zernike", k[1]))
    for sigma in rec["noise_sigma"]:
        L += [f"### noise sigma = {sigma}", "",
              "| family | kind | " + " | ".join(
                  f"T={t}" for t in sorted({x['order'] for x in rec['rows']
                                            if x['kind'] != 'V_magnitude'})) + " |"]
        ords = sorted({x["order"] for x in rec["rows"] if x["kind"] != "V_magnitude"})
        L.append("|---" * (len(ords) + 2) + "|")
        for fam, kind in keys:
            if kind == "V_magnitude":
                continue
            cells = []
            for t in ords:
                v = [x["top1"] for x in rec["rows"] if x["family"] == fam and
                     x["kind"] == kind and x["order"] == t and x["noise"] == sigma]
                cells.append(f"{100 * v[0]:.1f}%" if v else "")
            L.append(f"| {fam} | {kind} | " + " | ".join(cells) + " |")
        v4 = [x["top1"] for x in rec["rows"] if x["kind"] == "V_magnitude"
              and x["noise"] == sigma]
        L += ["", f"The thesis's 4-moment V_magnitude: {100 * v4[0]:.1f}%.", ""]
    b = rec["best_magnitude"]
    L += [f"Best magnitude features at the highest noise: {b['family']} up to order "
          f"{b['order']} ({b['n_features']} features), {100 * b['top1']:.1f}%.", "",
          "Errors of that configuration (true -> predicted): " + ", ".join(
              f"{e['true']}->{e['predicted']}" for e in rec["errors_of_best"][:30]), "",
          "Most often confused pairs over all magnitude configurations: " + ", ".join(
              f"{c['pair']} ({c['times']})" for c in rec["most_confused_pairs"][:20])]
    return L
