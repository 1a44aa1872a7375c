"""Benchmark of the moment-feature pipeline on the 6,763 GB2312 characters (thesis Chapter 6).

Measures, on one device (``--device cpu`` or ``cuda``), after a warm-up, the median and spread
of repeated runs of

* feature extraction (pseudo-Zernike, order 5, all 21 moments) of the 6,763 24x24 glyphs with
  :func:`fastmoments.features`, float32 and float64, against a dense float64 reference
  (the basis matrix of the definition, Eq. 2.16, times the images: also timed, as the peer);
* the all-pairs distance histogram, mean and 10 closest pairs (22.9 million pairs) with
  :func:`fastmoments.pair_statistics`, against SciPy ``pdist`` + NumPy ``histogram``
  (float64, CPU) measured in the same run (accuracy: pairs binned differently from SciPy);
* the whole experiment (``fastmoments characters``) once, stage by stage.

Writes ``features_<device>.json`` and ``.md`` to ``--out`` (default ``benchmarks/results``),
the whole experiment's results and report inside them.
Glyphs are rendered here, or read with ``--glyphs FILE.npz`` (saved by ``--save-glyphs``) on
machines without the CJK font.

Run: ``python benchmarks/features_characters.py --device cpu``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fastmoments as fm
from disk_common import timeit  # shared timers (CUDA events / wall clock)
from fastmoments.recognition import THESIS_EDGES, pair_statistics
from fastmoments.recognition.experiment import glyph_images, run_characters

#: The thesis's features (Chapter 6): pseudo-Zernike moments of orders 0..5, complex.
PZM5 = dict(family="pseudo-zernike", orders=5, kind="complex")


def timed(fn, device: torch.device, repeat: int, warmup: int = 2) -> dict:
    return timeit(fn, device, warmup=warmup, repeat=repeat)


def cpu_timed(fn, repeat: int, warmup: int = 1) -> dict:
    return timeit(fn, torch.device("cpu"), warmup=warmup, repeat=repeat)


def dense_basis(N: int, pairs) -> np.ndarray:
    """(K, N*N) complex conj(V_nm) * (n+1)/pi * dx dy on the pixels inside the disk (float64,
    from the factorial sum of thesis Eq. 2.14)."""
    c = -1 + (2 * np.arange(N) + 1) / N
    x, y = np.meshgrid(c, -c)
    inside = ((np.abs(x) + 1 / N) ** 2 + (np.abs(y) + 1 / N) ** 2 <= 1 + 1e-12).ravel()
    r, th = np.hypot(x, y).ravel(), np.arctan2(y, x).ravel()
    out = np.zeros((len(pairs), N * N), complex)
    for k, (n, m) in enumerate(pairs):
        R = np.zeros_like(r)
        for s in range(n - m + 1):
            R += ((-1) ** s * math.factorial(2 * n + 1 - s) / (
                math.factorial(s) * math.factorial(n + m + 1 - s)
                * math.factorial(n - m - s))) * r ** (n - s)
        out[k] = np.where(inside, (n + 1) / np.pi * R * np.exp(-1j * m * th) * (2 / N) ** 2, 0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    ap.add_argument("--glyphs", default=None, help="npz with 'chars' and 'packed' masks")
    ap.add_argument("--save-glyphs", default=None, help="write the rendered glyphs here")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-experiment", action="store_true")
    args = ap.parse_args()
    dev = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False

    if args.glyphs:
        z = np.load(args.glyphs)
        chars = [str(c) for c in z["chars"]]
        masks = np.unpackbits(z["packed"], axis=-1)[..., :24].astype(bool).reshape(-1, 24, 24)
    else:
        from fastmoments.recognition import gb2312_characters, render_glyphs

        chars = gb2312_characters()
        masks = render_glyphs(chars)
    if args.save_glyphs:
        np.savez_compressed(args.save_glyphs, chars=np.array(chars),
                            packed=np.packbits(masks, axis=-1))
        print("saved", args.save_glyphs)
    imgs = glyph_images(masks)                      # thesis convention: ink 0, background 1
    n = len(chars)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "device": torch.cuda.get_device_name(dev) if dev.type == "cuda"
            else f"cpu ({os.cpu_count()} cores, {torch.get_num_threads()} torch threads)",
            "torch": torch.__version__, "numpy": np.__version__,
            "python": platform.python_version(), "n_characters": n,
            "load_average_start": [round(v, 2) for v in os.getloadavg()]}
    try:
        import scipy

        meta["scipy"] = scipy.__version__
    except ImportError:  # pragma: no cover
        pass
    rows = []

    # ---------------------------------------------------------------- feature extraction
    pairs = fm.features(imgs[:2], **PZM5).pairs
    V = dense_basis(24, pairs)
    ref = imgs.reshape(n, -1) @ V.T                  # float64 reference moments (n, 21)
    scale = np.abs(ref).max()
    for dtype in ("float32", "float64"):
        x = torch.as_tensor(imgs, dtype=getattr(torch, dtype), device=dev)
        for alg in ("dense", "engine"):
            fm.features(x, **PZM5, algorithm=alg)     # builds and caches the plan
            t = timed(lambda x=x, alg=alg: fm.features(x, **PZM5, algorithm=alg), dev,
                      args.repeat)
            got = fm.features(x, **PZM5, algorithm=alg).complex_values().cpu().numpy()
            err = float(np.abs(got - ref).max() / scale)
            rows.append({"task": "features PZM order 5 (21 moments)",
                         "impl": f"fastmoments algorithm={alg}", "dtype": dtype, **t,
                         "max_err_rel_to_max": err})
        # peer: the dense basis as one matrix product on the same device
        Vt = torch.as_tensor(V.T, dtype=torch.complex64 if dtype == "float32"
                             else torch.complex128, device=dev)
        xf = x.reshape(n, -1).to(Vt.dtype)
        t = timed(lambda xf=xf, Vt=Vt: xf @ Vt, dev, args.repeat)
        got = (xf @ Vt).cpu().numpy()
        rows.append({"task": "features PZM order 5 (21 moments)",
                     "impl": "dense basis matmul (peer)", "dtype": dtype, **t,
                     "max_err_rel_to_max": float(np.abs(got - ref).max() / scale)})

    # ---------------------------------------------------------------- all-pairs histogram
    fs64 = fm.features(torch.as_tensor(imgs, device=dev), **PZM5, dtype="float64",
                       select=[(4, 0), (5, 0), (5, 1), (5, 2)])
    vc = fs64.tensor                                 # V_complex, 8 real columns
    xr = vc.cpu().numpy()
    from scipy.spatial.distance import pdist

    def scipy_hist():
        d = pdist(xr)
        return np.histogram(d, bins=np.r_[THESIS_EDGES, np.inf])[0], d.mean()

    t_peer = cpu_timed(scipy_hist, max(2, args.repeat // 2))
    ref_counts, ref_mean = scipy_hist()
    d_all = pdist(xr)
    ref_closest = np.sort(d_all)[:10]
    rows.append({"task": "all-pairs histogram V_complex (22.9M pairs)",
                 "impl": "scipy pdist + np.histogram (peer, CPU)", "dtype": "float64",
                 **t_peer, "bins_differing": 0, "mean_rel_err": 0.0})
    for dtype in ("float64", "float32"):
        v = vc.to(getattr(torch, dtype))
        t = timed(lambda v=v: pair_statistics(v, closest=10, progress=False), dev, args.repeat)
        st = pair_statistics(v, closest=10, progress=False)
        rows.append({"task": "all-pairs histogram V_complex (22.9M pairs)",
                     "impl": f"fastmoments pair_statistics ({dev.type})", "dtype": dtype,
                     **t, "bins_differing": int(np.abs(st.counts - ref_counts).sum() // 2),
                     "mean_rel_err": abs(st.mean - ref_mean) / ref_mean,
                     "closest_max_abs_err": float(np.abs(
                         np.array([c[2] for c in st.closest]) - ref_closest).max()),
                     "speedup_vs_peer": t_peer["median_s"] / t["median_s"]})
    del d_all

    # ---------------------------------------------------------------- whole experiment
    experiment = None
    if not args.skip_experiment:
        out_dir = Path(args.out) / f"features_run_{dev.type}"
        t0 = time.perf_counter()
        r = run_characters(out_dir, device=dev, figures=False, glyphs=(chars, masks),
                           noise=(0.0, 0.3, 0.6))
        experiment = {"wall_s": time.perf_counter() - t0, "stages_s": r["timings_s"],
                      "cpu_stages_s": r["cpu_times_s"]}
        # that run's results and report go into this benchmark's own result files
        experiment["results"] = json.loads((out_dir / "results.json").read_text())
        experiment["report_md"] = (out_dir / "report.md").read_text()
        shutil.rmtree(out_dir)
    meta["load_average_end"] = [round(v, 2) for v in os.getloadavg()]

    result = {"meta": meta, "rows": rows, "experiment": experiment}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"features_{dev.type}.json").write_text(json.dumps(result, indent=1))
    md = [f"# Moment features benchmark ({meta['device']})", "",
          f"{meta['date']}; torch {meta['torch']}, numpy {meta['numpy']}, scipy "
          f"{meta.get('scipy')}; {n} characters; load average {meta['load_average_start']} -> "
          f"{meta['load_average_end']}.", "",
          "| task | implementation | dtype | median (s) | min-max (s) | accuracy | ratio |",
          "|---|---|---|---|---|---|---|"]
    for row in rows:
        if "max_err_rel_to_max" in row:
            acc = f"max err {row['max_err_rel_to_max']:.1e} (rel. to max)"
        else:
            acc = (f"{row['bins_differing']} pairs binned differently, mean rel err "
                   f"{row['mean_rel_err']:.1e}")
        ratio = f"{row['speedup_vs_peer']:.2f}x vs scipy" if "speedup_vs_peer" in row else ""
        md.append(f"| {row['task']} | {row['impl']} | {row['dtype']} | {row['median_s']:.4f} | "
                  f"{row['min_s']:.4f}-{row['max_s']:.4f} | {acc} | {ratio} |")
    if experiment:
        md += ["", f"Whole experiment (`fastmoments characters`, no figures) on {dev.type}: "
               f"{experiment['wall_s']:.1f} s wall; stages (s): " + ", ".join(
                   f"{k} {v:.2f}" for k, v in experiment["stages_s"].items()),
               "", "Process CPU time per stage (s): " + ", ".join(
                   f"{k} {v:.2f}" for k, v in experiment["cpu_stages_s"].items()),
               "", "## The experiment's report", "",
               experiment["report_md"].replace("\n# ", "\n### ").lstrip("# ")]
    (out / f"features_{dev.type}.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
