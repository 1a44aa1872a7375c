"""Benchmark of the signal transforms on a GPU and on 2 CPU threads, in one run.

Times Gaussian smoothing (orders 0-2), the Morlet transform and a 64-scale CWT for every
engine ("prefix", "recursive", "sliding") and method ("sft", "asft", "direct"), against σ and
N, eagerly (the public call, input checks included) and as a captured CUDA graph of the filter
core (extension + bank); checks each result against a float64 reference (the exact kernel
truncated at 10σ, convolved by FFT in float64); measures the float32 drift on 10^7 samples;
measures the card's copy bandwidth; compares with scipy.ndimage on 2 CPU threads.

Usage (from the repository root): ``PYTHONPATH=src python benchmarks/signal_gpu.py --out DIR``
(``--quick`` for a small smoke run; ``--sections 0,1,2`` to run only those sections and keep
the other sections' rows of the existing ``DIR/signal_gpu.json``). Writes ``signal_gpu.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time

import numpy as np
import torch

import fastmoments
from fastmoments.signal import CWT, GaussianFilter, MorletTransform
from fastmoments.signal._apply import DEFAULT_ENGINE
from fastmoments.signal.boundary import extend
from fastmoments.signal.coefficients import gaussian_kernel, morlet_kernel
from signal_common import capture_graph, fft_reference, rel, timer


def core_bank(plan, method: str):
    """The bank a call of ``plan`` applies on a GPU: the SFT bank, or for ``method="direct"``
    the truncated kernel (:class:`~fastmoments.signal.direct.DirectBank`, one ``conv1d``):
    ``plan.direct_bank`` for a Gaussian (what ``_run_direct`` applies), ``plan.bank`` for a
    Morlet transform (its bank is the direct kernel)."""
    if method == "direct":
        bank = getattr(plan, "direct_bank", None)
        return bank if bank is not None else plan.bank
    return plan.bank


def graph_core(plan, x: torch.Tensor, engine: str, method: str = "sft"):
    """CUDA graph of the filter core on a static input: the reflect extension and the bank
    (SFT engines: ``engine``; ``method="direct"``: the ``conv1d`` of the truncated kernel).
    Only on a CUDA device: the callers skip it on the CPU."""
    if x.device.type != "cuda":
        raise ValueError(f"graph_core needs a CUDA tensor, got one on {x.device}")
    bank, n = core_bank(plan, method), x.shape[-1]
    eng = "direct" if method == "direct" else engine
    static = x.reshape(-1, n).clone()

    def core():
        return bank.apply(extend(static, bank.pad, bank.pad, "reflect"), n, eng)

    return capture_graph(core)


def graph_times(plan, x: torch.Tensor, engine: str, method: str, cuda: bool):
    """(median, min, max) ms of the replayed core graph, or Nones on the CPU; a capture
    that fails is reported in the row (``graph_error``), not raised."""
    if not cuda:
        return (None,) * 3, None
    try:
        g, _ = graph_core(plan, x, engine, method)
        return timer(g.replay), None
    except Exception as exc:  # e.g. a kernel that cannot be captured
        try:
            torch.cuda.synchronize()
        except RuntimeError:  # pragma: no cover - the capture's error is the one reported
            pass
        return (None,) * 3, f"{type(exc).__name__}: {str(exc)[:120]}"


#: the sections of the run and the row kinds each one writes
SECTION_KINDS = {
    0: ("gaussian",), 1: ("morlet",), 2: ("gaussian_vs_n", "morlet_vs_n"),
    3: ("gaussian_batch",), 4: ("cwt64",), 5: ("float32_drift",), 6: ("cpu_gaussian",),
}


def section_of(row: dict) -> int | None:
    """The section that wrote ``row`` (its ``section`` field, else read from its kind)."""
    if "section" in row:
        return row["section"]
    for k, kinds in SECTION_KINDS.items():
        if row.get("kind") in kinds:
            return k
    return None


def parse_sections(text: str) -> set[int]:
    """``"0,1,2"`` -> {0, 1, 2}; ``"all"`` -> every section."""
    if text == "all":
        return set(SECTION_KINDS)
    try:
        got = {int(v) for v in text.split(",") if v.strip()}
    except ValueError:
        got = set()
    if not got or not got <= set(SECTION_KINDS):
        raise argparse.ArgumentTypeError(
            f"--sections must be 'all' or a comma list of {sorted(SECTION_KINDS)}, got {text!r}")
    return got


# ----------------------------------------------------------- the report (tables, figure)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def report() -> int:
    """``results/signal_gpu.md`` and the two figures of docs/figures from the JSON."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from signal_common import PAPER_MORLET_MS

    with open(os.path.join(HERE, "results", "signal_gpu.json")) as fh:
        data = json.load(fh)
    env, rows = data["env"], data["rows"]
    out = [f"# Signal transforms on {env['device']} ({env['date']})", "",
           f"torch {env['torch']} (CUDA {env['cuda']}), numpy {env['numpy']}, scipy "
           f"{env.get('scipy')}; measured copy bandwidth {env.get('copy_bandwidth_GBps', 0):.0f}"
           " GB/s. `eager ms`: the public call (input checks, extension, bank), median of 20 "
           "after warm-up, CUDA events. `graph ms`: the filter core (extension + SFT bank) "
           "captured in a CUDA graph and replayed. `rel err`: against the exact float64 "
           "convolution with the kernel truncated at 10σ.", ""]

    def table(kind, keys, title, filt=lambda r: True):
        sel = [r for r in rows if r["kind"] == kind and filt(r)]
        if not sel:
            return
        out.extend([f"## {title}", "", "| " + " | ".join(keys) + " |",
                    "|" + "---|" * len(keys)])
        for r in sel:
            vals = []
            for k in keys:
                v = r.get(k)
                if isinstance(v, float):
                    v = f"{v:.3g}" if k not in ("ms", "graph_ms") else f"{v:.3f}"
                vals.append("" if v is None else str(v))
            out.append("| " + " | ".join(vals) + " |")
        out.append("")

    table("gaussian", ["sigma", "order", "method", "engine", "dtype", "terms", "K", "ms",
                       "graph_ms", "rel_err", "kernel_rmse"],
          "Gaussian smoothing, N = 102400", lambda r: r["dtype"] == "float32" or
          r["method"] == "direct")
    table("morlet", ["sigma", "method", "approximation", "engine", "dtype", "terms", "ms",
                     "graph_ms", "rel_err", "kernel_rmse"], "Morlet transform (ξ = 6), N = 102400",
          lambda r: r["dtype"] == "float32")
    table("gaussian_vs_n", ["n", "engine", "ms", "graph_ms"], "Gaussian σ = 16 against N")
    table("morlet_vs_n", ["n", "engine", "ms", "graph_ms"], "Morlet σ = 16 against N")
    table("gaussian_batch", ["batch", "n", "sigma", "engine", "ms", "GBps",
                             "bandwidth_fraction", "rel_err"], "Batch of signals (float32)")
    table("cwt64", ["n", "scales", "method", "engine", "ms", "rel_err", "kernel_rmse"],
          "64-scale CWT (float32)")
    table("float32_drift", ["n", "sigma", "method", "engine", "err64", "err32", "err32_vs_64"],
          "float32 on 10^7 samples (error of the first 100000 outputs)")
    table("cpu_gaussian", ["sigma", "impl", "dtype", "ms", "rel_err", "speedup_vs_scipy"],
          "CPU, 2 threads of the same machine: Gaussian vs scipy.ndimage")
    m = [r for r in rows if r["kind"] == "morlet" and r["sigma"] == 8192.0 and
         r["dtype"] == "float32" and r["method"] == "sft" and r["engine"] == "prefix" and
         r["approximation"] == "direct"]
    if m:
        r = m[0]
        out.append(f"Paper's Morlet, N = 102400, σ = 8192 on an RTX 3090: {PAPER_MORLET_MS} ms. "
                   f"Here: {r['ms']:.3f} ms eager (ratio {PAPER_MORLET_MS / r['ms']:.2f}x), "
                   f"{r['graph_ms']:.3f} ms as a CUDA graph "
                   f"(ratio {PAPER_MORLET_MS / r['graph_ms']:.2f}x).")
    with open(os.path.join(HERE, "results", "signal_gpu.md"), "w") as fh:
        fh.write("\n".join(out) + "\n")

    figdir = os.path.join(ROOT, "docs", "figures")
    os.makedirs(figdir, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, kind in zip(axes, ("gaussian", "morlet"), strict=True):
        for method, engine, style in (("sft", "prefix", "o-"), ("sft", "sliding", "s-"),
                                      ("asft", "recursive", "^-"), ("direct", "direct", "k--")):
            sel = [r for r in rows if r["kind"] == kind and r["method"] == method and
                   r["engine"] == engine and r["dtype"] == "float32" and
                   r.get("order", 0) == 0 and r.get("approximation", "direct") == "direct"]
            if not sel:
                continue
            s = [r["sigma"] for r in sel]
            ax.plot(s, [r["ms"] for r in sel], style, label=f"{method}/{engine} eager")
            if method != "direct":
                ax.plot(s, [r["graph_ms"] for r in sel], style.replace("-", ":"), alpha=0.7,
                        label=f"{method}/{engine} CUDA graph")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("σ (samples)")
        ax.set_ylabel("ms")
        ax.set_title(f"{kind}, N = 102400, float32, {env['device']}")
        ax.grid(True, which="both", alpha=0.3)
    axes[1].axhline(PAPER_MORLET_MS, color="r", lw=0.8, label="paper, RTX 3090, σ = 8192")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(figdir, "signal_time_vs_sigma.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    for kind in ("gaussian_vs_n", "morlet_vs_n"):
        for engine, style in (("prefix", "o-"), ("sliding", "s-"), ("direct", "k--")):
            sel = [r for r in rows if r["kind"] == kind and r["engine"] == engine]
            ax.plot([r["n"] for r in sel], [r["ms"] for r in sel], style,
                    label=f"{kind[:-5]} {engine} eager", alpha=0.8 if "g" in kind[:1] else 0.5)
            if engine != "direct":
                ax.plot([r["n"] for r in sel], [r["graph_ms"] for r in sel],
                        style.replace("-", ":"), label=f"{kind[:-5]} {engine} graph")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("N (samples), σ = 16")
    ax.set_ylabel("ms")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(f"time against N, float32, {env['device']}")
    fig.tight_layout()
    fig.savefig(os.path.join(figdir, "signal_time_vs_n.png"), dpi=110)
    plt.close(fig)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budget-s", type=float, default=240.0,
                    help="skip the sections that would start after this many seconds")
    ap.add_argument("--sections", type=parse_sections, default=set(SECTION_KINDS),
                    help="comma list of the sections to run (default all); the rows of the "
                    "others are kept from the existing signal_gpu.json in --out")
    ap.add_argument("--report", action="store_true",
                    help="only write the tables and figures from the committed JSON")
    args = ap.parse_args()
    if args.report:
        return report()
    os.makedirs(args.out, exist_ok=True)
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = False
    quick = args.quick
    rng = np.random.default_rng(0)
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": torch.cuda.get_device_name() if cuda else platform.processor(),
        "torch": torch.__version__, "cuda": torch.version.cuda, "numpy": np.__version__,
        "python": sys.version.split()[0], "fastmoments": fastmoments.__version__,
        "cpu_count": os.cpu_count(),
        "default_engine": {f"{k[0]}/{k[1]}": v for k, v in DEFAULT_ENGINE.items()},
    }
    try:
        import scipy
        env["scipy"] = scipy.__version__
    except ImportError:  # pragma: no cover
        pass
    rows = []
    kept = []  # rows of the sections not run, from the existing file
    path = os.path.join(args.out, "signal_gpu.json")
    if args.sections != set(SECTION_KINDS):
        try:
            with open(path) as fh:
                old = json.load(fh)
        except (OSError, ValueError):
            old = {}
        kept = [r for r in old.get("rows", []) if section_of(r) not in args.sections]
        old_env = old.get("env", {})
        env["sections_run"] = sorted(args.sections)
        env["kept_rows"] = {"count": len(kept), "date": old_env.get("date"),
                            "device": old_env.get("device"),
                            "sections": sorted({section_of(r) for r in kept} - {None})}
        for key in ("copy_bandwidth_GBps",):  # section 3's fraction uses it
            if key in old_env:
                env["kept_rows"][key] = old_env[key]
    current = [None]

    def record(**kw):
        kw = {"section": current[0], **kw}
        rows.append(kw)
        print(json.dumps(kw), flush=True)

    t_start = time.perf_counter()

    def dump():
        with open(path, "w") as fh:
            json.dump({"env": env, "rows": kept + rows}, fh, indent=1)

    def run_section(fn, k):
        if k not in args.sections:
            return
        current[0] = k
        if time.perf_counter() - t_start > args.budget_s:
            print(f"SKIP section {k}: time budget spent", flush=True)
            env.setdefault("skipped_sections", []).append(k)
            return
        t0 = time.perf_counter()
        try:
            fn()
        except Exception as exc:  # keep what the other sections measured
            print(f"FAILED section {k}: {exc!r}", flush=True)
            env.setdefault("failed_sections", []).append(f"{k}: {exc!r}")
        print(f"section {k} took {time.perf_counter() - t0:.1f} s", flush=True)
        dump()
    report()

    # ---------------------------------------------------------------- bandwidth ceiling
    if cuda:
        big = torch.empty(2**28, dtype=torch.float32, device=dev)  # 1 GiB
        big.uniform_()
        dst = torch.empty_like(big)
        ms = timer(lambda: dst.copy_(big), repeat=10)[0]
        env["copy_bandwidth_GBps"] = 2 * big.numel() * 4 / ms / 1e6
        del big, dst
        print("copy bandwidth GB/s", env["copy_bandwidth_GBps"], flush=True)

    n = 4096 if quick else 102400
    sigmas = [16.0, 256.0] if quick else [16.0, 64.0, 256.0, 1024.0, 8192.0]
    x64 = torch.as_tensor(rng.standard_normal(n), device=dev)
    x32 = x64.float()

    # ---------------------------------------------------------------- Gaussian vs sigma
    combos = [("sft", "prefix"), ("sft", "sliding"), ("sft", "recursive"),
              ("asft", "sliding"), ("asft", "recursive"), ("direct", "direct")]

    def measure(plan, method, engine, ref, **fields):
        """Eager and CUDA-graph times and the error of ``plan`` in float32 and float64."""
        eng = "auto" if method == "direct" else engine
        for dtype, x in (("float32", x32), ("float64", x64)):
            y = plan(x, engine=eng)
            t_eager = timer(lambda plan=plan, x=x, eng=eng: plan(x, engine=eng),
                            cuda=cuda, repeat=5 if method == "direct" else 20)
            t_graph, gerr = graph_times(plan, x, engine, method, cuda)
            record(**fields, n=n, method=method, engine=engine, dtype=dtype, terms=plan.terms,
                   K=plan.K, kernel_rmse=plan.rmse, rel_err=rel(y, ref),
                   ms=t_eager[0], ms_min=t_eager[1], ms_max=t_eager[2],
                   graph_ms=t_graph[0], graph_ms_min=t_graph[1], graph_ms_max=t_graph[2],
                   **({"graph_error": gerr} if gerr else {}))

    def section_0():
        for sigma in sigmas:
            for order in (0, 1, 2):
                w = math.ceil(10 * sigma)
                ref = fft_reference(x64, gaussian_kernel(np.arange(-w, w + 1), sigma, order))
                for method, engine in combos:
                    if method == "direct" and (order != 0 or (quick and sigma > 16)):
                        continue
                    plan = GaussianFilter(sigma, order=order, method=method)
                    measure(plan, method, engine, ref, kind="gaussian", sigma=sigma,
                            order=order)

    run_section(section_0, 0)

    # ---------------------------------------------------------------- Morlet vs sigma
    def section_1():
        for sigma in sigmas:
            w = math.ceil(10 * sigma)
            ref = fft_reference(x64, morlet_kernel(np.arange(-w, w + 1), sigma, 6.0))
            for method, engine in combos:
                for approx in ("direct", "multiplication"):
                    if method == "direct" and (approx != "direct" or (quick and sigma > 16)):
                        continue
                    plan = MorletTransform(sigma, 6.0, method=method, approximation=approx)
                    measure(plan, method, engine, ref, kind="morlet", sigma=sigma,
                            approximation=approx)

    run_section(section_1, 1)

    # ---------------------------------------------------------------- time vs N (σ = 16)
    def section_2():
        for nn in ([100, 1000, 4096] if quick else [100, 1000, 10000, 102400, 1000000]):
            xs = torch.as_tensor(rng.standard_normal(nn), device=dev, dtype=torch.float32)
            for kind, plan in (("gaussian", GaussianFilter(16.0)),
                               ("morlet", MorletTransform(16.0))):
                for engine in ("prefix", "sliding", "direct"):
                    p = plan if engine != "direct" else (
                        GaussianFilter(16.0, method="direct") if kind == "gaussian"
                        else MorletTransform(16.0, method="direct"))
                    eng = "auto" if engine == "direct" else engine
                    t = timer(lambda p=p, xs=xs, eng=eng: p(xs, engine=eng), cuda=cuda)
                    tg, gerr = graph_times(p, xs, engine,
                                           "direct" if engine == "direct" else "sft", cuda)
                    record(kind=f"{kind}_vs_n", sigma=16.0, n=nn, engine=engine, dtype="float32",
                           ms=t[0], ms_min=t[1], ms_max=t[2], graph_ms=tg[0],
                           **({"graph_error": gerr} if gerr else {}))

    run_section(section_2, 2)

    # ---------------------------------------------------------------- batch of 1000 signals
    def section_3():
        nb = 8 if quick else 1000
        xb = torch.as_tensor(rng.standard_normal((nb, n)), device=dev, dtype=torch.float32)
        for engine in ("prefix", "sliding"):
            plan = GaussianFilter(256.0)
            y = plan(xb, engine=engine)
            t = timer(lambda plan=plan, engine=engine: plan(xb, engine=engine), cuda=cuda,
                      warmup=1, repeat=5)
            w = math.ceil(10 * 256.0)
            ref = fft_reference(xb[:4].double(), gaussian_kernel(np.arange(-w, w + 1), 256.0, 0))
            gbps = 2 * xb.numel() * 4 / t[0] / 1e6
            record(kind="gaussian_batch", sigma=256.0, n=n, batch=nb, engine=engine,
                   dtype="float32", ms=t[0], ms_min=t[1], ms_max=t[2], GBps=gbps,
                   bandwidth_fraction=gbps / env.get("copy_bandwidth_GBps", float("nan")),
                   rel_err=rel(y[:4], ref))
            del y

    run_section(section_3, 3)

    # ---------------------------------------------------------------- 64-scale CWT
    def section_4():
        scales = np.geomspace(2.0, 1024.0, 64)
        refs = None
        for method, engine in (("sft", "prefix"), ("sft", "sliding"), ("asft", "recursive"),
                               ("asft", "sliding"), ("direct", "direct")):
            if quick and method == "direct":
                continue
            plan = CWT(scales, method=method)
            eng = "auto" if method == "direct" else engine
            y = plan(x32, engine=eng)
            if refs is None:
                refs = []
                for s in scales:
                    w = math.ceil(10 * s)
                    refs.append(fft_reference(x64, morlet_kernel(np.arange(-w, w + 1), s, 6.0)))
                refs = torch.stack(refs)
            t = timer(lambda plan=plan, eng=eng: plan(x32, engine=eng), cuda=cuda,
                      warmup=1, repeat=3 if method == "direct" else 10)
            record(kind="cwt64", n=n, scales="geomspace(2,1024,64)", method=method, engine=engine,
                   dtype="float32", ms=t[0], ms_min=t[1], ms_max=t[2], rel_err=rel(y, refs),
                   kernel_rmse=plan.rmse)
            del y

    run_section(section_4, 4)

    # ---------------------------------------------------------------- float32 drift on 1e7
    def section_5():
        nl = 200000 if quick else 10_000_000
        xl64 = torch.as_tensor(rng.random(nl), device=dev)  # positive mean: the hard case
        xl32 = xl64.float()
        for sigma in (64.0, 1024.0):
            for method, engine in (("sft", "recursive"), ("sft", "prefix"), ("sft", "sliding"),
                                   ("asft", "recursive"), ("asft", "sliding")):
                plan = GaussianFilter(sigma, method=method)
                y64 = plan(xl64, engine=engine)
                y32 = plan(xl32, engine=engine)
                w = math.ceil(10 * sigma)
                head = 100000
                # the recursion runs backwards: its state (and drift) is largest at the start
                ref = fft_reference(xl64[: head + 2 * w],
                                    gaussian_kernel(np.arange(-w, w + 1), sigma, 0))[:head]
                record(kind="float32_drift", n=nl, sigma=sigma, method=method, engine=engine,
                       err64=rel(y64[:head], ref), err32=rel(y32[:head], ref),
                       err32_vs_64=rel(y32, y64))

    run_section(section_5, 5)

    # ---------------------------------------------------------------- CPU, 2 threads
    def section_6():
        torch.set_num_threads(2)
        try:
            os.sched_setaffinity(0, {0, 1})
        except (AttributeError, OSError):  # pragma: no cover
            pass
        from scipy.ndimage import gaussian_filter1d
        xc = rng.standard_normal(n)
        for sigma in ([16.0, 256.0] if quick else [16.0, 256.0, 8192.0]):
            rep = 3 if sigma > 1000 else 7
            ts = timer(lambda sigma=sigma: gaussian_filter1d(xc, sigma), cuda=False, repeat=rep,
                       warmup=1)
            w = math.ceil(10 * sigma)
            ref = fft_reference(torch.as_tensor(xc),
                                gaussian_kernel(np.arange(-w, w + 1), sigma, 0))
            ys = torch.as_tensor(gaussian_filter1d(xc, sigma))
            record(kind="cpu_gaussian", sigma=sigma, n=n, impl="scipy.ndimage.gaussian_filter1d",
                   dtype="float64", ms=ts[0], ms_min=ts[1], ms_max=ts[2], rel_err=rel(ys, ref))
            for engine in ("prefix", "recursive", "sliding"):
                for dtype in ("float64", "float32"):
                    plan = GaussianFilter(sigma)
                    xx = xc.astype(dtype)
                    t = timer(lambda plan=plan, xx=xx, engine=engine: plan(xx, engine=engine),
                              cuda=False, repeat=rep, warmup=1)
                    y = torch.as_tensor(plan(xx, engine=engine))
                    record(kind="cpu_gaussian", sigma=sigma, n=n, impl=f"fastmoments sft/{engine}",
                           dtype=dtype, ms=t[0], ms_min=t[1], ms_max=t[2], rel_err=rel(y, ref),
                           speedup_vs_scipy=ts[0] / t[0])

    run_section(section_6, 6)

    dump()
    print("ENV", json.dumps(env))
    return 0


if __name__ == "__main__":
    sys.exit(main())
