"""The GPU headline figures of every family, through the public API only, in one run.

What a user calling fastmoments on one GPU sees, each figure beside its target and an
accuracy column against float64:

* disk: Zernike moments of order T = 700 of a 512² image (scikit-image's camera), k = 1 and
  k = 11 (target <= 1.5 ms and <= 25 ms; the thesis's TITAN V took 1.72 s and 181 s);
* box: 3-D Jacobi moments (alpha = beta = 0.3) of a 512³ volume to total degree 500 with
  k = 23 sub-samples, forward plus reconstruction (target <= 5.5 ms);
* signal: one 102400-sample signal through ``gaussian_filter1d`` (median of single calls,
  each synchronised, target <= 90 µs) against ``cupyx.scipy.ndimage.gaussian_filter1d`` at
  the same σ in the same run (every σ's kernels of both compiled first, then half a second
  of GPU work, so that the first rows do not run at an idle GPU's clocks; the SM clock after
  each of our rows is kept in the JSON); a 64-scale ``cwt`` of it (target <= 0.35 ms); a
  1000 × 102400 batch through ``gaussian_filter1d`` as a fraction of the card's copy
  bandwidth (target >= 25 %), the copy bandwidth measured in the same run by ``torch.clone``.

Run on a CUDA machine from the repository root (about 3 minutes on an H200)::

    PYTHONPATH=src python benchmarks/gpu_targets.py [--out STEM] [--baseline OLD.json]

Writes ``benchmarks/results/gpu_targets_<device>.json`` and ``.md``. ``--baseline`` keeps an
earlier result file of the same script (another version of the code on the same GPU kind)
inside the new one, as its ``before`` run, and puts its times beside the new ones.
``--skip disk box`` measures the signal rows only and keeps the skipped families' rows of the
existing result file, each marked with the date and commit of the run that measured it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np
import torch

import fastmoments as fm

RESULTS = Path(__file__).resolve().parent / "results"
SIGMAS = [1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 8192.0]
N_SIGNAL = 102_400


def _sync() -> None:
    torch.cuda.synchronize()


def event_ms(fn, warmup: int = 3, repeat: int = 10) -> dict:
    """Median, min and max of ``fn()`` in ms by CUDA events, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    _sync()
    out = []
    for _ in range(repeat):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b))
    return {"median_ms": statistics.median(out), "min_ms": min(out), "max_ms": max(out)}


def call_us(fn, calls: int = 200, warmup: int = 10) -> dict:
    """Median wall time in µs of ``fn(); synchronize()``: one call as a user sees it."""
    for _ in range(warmup):
        fn()
    _sync()
    out = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        _sync()
        out.append(1e6 * (time.perf_counter() - t0))
    return {"median_us": statistics.median(out), "p10_us": float(np.percentile(out, 10)),
            "p90_us": float(np.percentile(out, 90))}


def rel(a, b) -> float:
    """‖a − b‖ / ‖b‖ in double (complex) precision."""
    a, b = (torch.as_tensor(v if torch.is_tensor(v) else np.asarray(v)).cpu() for v in (a, b))
    wide = torch.complex128 if (a.is_complex() or b.is_complex()) else torch.float64
    a, b = a.to(wide), b.to(wide)
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


def gauss_ref(x64: torch.Tensor, sigma: float) -> torch.Tensor:
    """The exact (untruncated) Gaussian convolution with reflect edges, float64, by FFT."""
    n = x64.shape[-1]
    w = min(int(np.ceil(12 * sigma)), 50 * n)
    xp = x64
    while xp.shape[-1] < n + 2 * w:  # reflect (scipy's 'reflect': edge sample repeated)
        xp = torch.cat([xp.flip(-1), xp, xp.flip(-1)], dim=-1)
        w_have = (xp.shape[-1] - n) // 2
        if w_have >= w:
            break
    w_have = (xp.shape[-1] - n) // 2
    xp = xp[..., w_have - w: w_have + n + w]
    t = torch.arange(-w, w + 1, dtype=torch.float64, device=x64.device)
    h = torch.exp(-0.5 * (t / sigma) ** 2)
    h /= h.sum()
    size = xp.shape[-1] + h.shape[-1] - 1
    y = torch.fft.irfft(torch.fft.rfft(xp, size) * torch.fft.rfft(h, size), size)
    return y[..., 2 * w: 2 * w + n]


def disk_rows(dev) -> list[dict]:
    img = fm.data.sample_image("camera", 512)
    x = torch.tensor(img, dtype=torch.float32, device=dev)
    rows = []
    ref = fm.ZernikeTransform(512, 700, k=1, dtype=torch.float64, device=dev).forward(x.double())
    for k, repeat in ((1, 20), (11, 5)):
        plan = fm.ZernikeTransform(512, 700, k=k, dtype=torch.float32, device=dev)
        moments = plan.forward(x)
        err = rel(moments.data, ref.data) if k == 1 else None
        t = event_ms(lambda plan=plan: plan.forward(x), repeat=repeat)
        rows.append({"job": f"Zernike T=700, 512², k={k}, float32", **t,
                     "target_ms": 1.5 if k == 1 else 25.0,
                     "rel_err_vs_float64": err, "route": str(getattr(plan, "route", ""))})
        print(rows[-1], flush=True)
        del plan, moments
        torch.cuda.empty_cache()
    return rows


def box_rows(dev) -> list[dict]:
    side, order, k = 512, 500, 23
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.rand((side,) * 3, generator=g).to(dev)
    plan = fm.JacobiTransform((side,) * 3, order, alpha=0.3, beta=0.3, k=k, device=dev)
    ref = fm.JacobiTransform((side,) * 3, order, alpha=0.3, beta=0.3, k=k, device=dev,
                             dtype=torch.float64)
    j64 = ref.forward(x.double())
    r64 = ref.inverse(j64)
    j = plan.forward(x)
    r = plan.inverse(j)
    errs = (rel(torch.as_tensor(getattr(j, "data", j)).cpu(), torch.as_tensor(
        getattr(j64, "data", j64)).cpu()), rel(torch.as_tensor(getattr(r, "data", r)).cpu(),
                                                torch.as_tensor(getattr(r64, "data", r64)).cpu()))
    del ref, j64, r64
    torch.cuda.empty_cache()

    def both():
        plan.inverse(plan.forward(x))

    t = event_ms(both, repeat=10)
    row = {"job": "Jacobi 512³, degree 500, k=23, float32, forward + reconstruction", **t,
           "target_ms": 5.5, "rel_err_forward": errs[0], "rel_err_reconstruction": errs[1],
           "route": str(getattr(plan, "route", ""))}
    print(row, flush=True)
    return [row]


def sm_clock(dev) -> float | None:
    """The GPU's SM clock in MHz now (NVML through torch; ``None`` where it cannot be read)."""
    try:
        return float(torch.cuda.clock_rate(dev))
    except Exception:  # no NVML
        return None


def warm_gpu(dev, seconds: float = 0.5) -> None:
    """Keep the GPU busy for about ``seconds`` (float32 products), so that the first timed
    calls do not run at an idle GPU's clocks."""
    a = torch.randn(4096, 4096, device=dev)
    b = torch.empty_like(a)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            torch.mm(a, a, out=b)
        _sync()


def signal_rows(dev) -> tuple[list[dict], dict]:
    import cupy as cp
    from cupyx.scipy import ndimage as cndi

    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randn(N_SIGNAL, generator=g).to(dev)
    xc = cp.asarray(x)
    rows = []
    for sigma in SIGMAS:  # each pair warms its own kernels first (call_us's warm-up calls)
        fm.gaussian_filter1d(x, sigma)
        cndi.gaussian_filter1d(xc, sigma)
    warm_gpu(dev)
    for sigma in SIGMAS:
        ours = call_us(lambda s=sigma: fm.gaussian_filter1d(x, s))
        clock = sm_clock(dev)
        peer = call_us(lambda s=sigma: cndi.gaussian_filter1d(xc, s))
        y = fm.gaussian_filter1d(x, sigma)
        err = rel(y, gauss_ref(x.double(), sigma))
        yc = torch.as_tensor(cndi.gaussian_filter1d(xc, sigma), device=dev)
        rows.append({"job": f"gaussian_filter1d, one signal of {N_SIGNAL}, σ={sigma:g}",
                     "median_us": ours["median_us"], "p90_us": ours["p90_us"],
                     "cupyx_median_us": peer["median_us"],
                     "speedup_vs_cupyx": peer["median_us"] / ours["median_us"],
                     "target_us": 90.0, "rel_err_vs_exact": err, "sm_clock_MHz": clock,
                     "cupyx_rel_err_vs_exact": rel(yc, gauss_ref(x.double(), sigma))})
        print(rows[-1], flush=True)
    scales = np.geomspace(4, 4096, 64)
    t = call_us(lambda: fm.cwt(x, scales), calls=50)
    rows.append({"job": f"cwt, 64 scales, one signal of {N_SIGNAL}", **t, "target_us": 350.0})
    print(rows[-1], flush=True)
    # the batch, against the card's copy bandwidth
    xb = torch.randn(1000, N_SIGNAL, generator=g).to(dev)
    copy = event_ms(lambda: xb.clone(), repeat=20)
    nbytes = 2 * xb.numel() * xb.element_size()
    copy_gbs = nbytes / (copy["median_ms"] * 1e-3) / 1e9
    for sigma in (16.0, 1024.0):
        t = event_ms(lambda s=sigma: fm.gaussian_filter1d(xb, s), repeat=10)
        gbs = nbytes / (t["median_ms"] * 1e-3) / 1e9
        rows.append({"job": f"gaussian_filter1d, batch 1000 × {N_SIGNAL}, σ={sigma:g}", **t,
                     "GB_per_s": gbs, "fraction_of_copy": gbs / copy_gbs, "target_fraction": 0.25})
        print(rows[-1], flush=True)
    return rows, {"copy_GB_per_s": copy_gbs}


def family(job: str) -> str:
    """The family a row belongs to (``--skip``'s names), from its job name."""
    return "disk" if job.startswith("Zernike") else "box" if job.startswith("Jacobi") else (
        "signal")


def kept_rows(path: Path, skip: list[str]) -> list[dict]:
    """The rows of the skipped families in the existing result file ``path`` (none if it does
    not exist), each marked with the date and commit of the run that measured it."""
    if not skip or not path.exists():
        return []
    old = json.loads(path.read_text())
    rows = []
    for r in old["rows"]:
        if family(r["job"]) in skip:
            r = dict(r)
            r.setdefault("measured", f"{old['meta'].get('date', '')}, commit "
                                     f"{old['meta'].get('commit', '')}")
            rows.append(r)
    return rows


def _git() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=False).stdout.strip()
    except OSError:
        return ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None, help="result stem (default gpu_targets_<device>)")
    ap.add_argument("--skip", nargs="*", default=[], choices=["disk", "box", "signal"])
    ap.add_argument("--baseline", default=None, help="an earlier result file to keep beside")
    ap.add_argument("--commit", default=None, help="the code's commit (default: git's HEAD)")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    name = torch.cuda.get_device_name(dev)
    meta = {"device": name, "torch": torch.__version__, "fastmoments": fm.__version__,
            "commit": args.commit or _git(), "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    stem = args.out or "gpu_targets_" + name.split()[-1].lower()
    kept = kept_rows(RESULTS / f"{stem}.json", args.skip)
    rows: list[dict] = []
    for fam, measure in (("disk", disk_rows), ("box", box_rows), ("signal", signal_rows)):
        if fam in args.skip:  # the family's rows of the existing file, in the same place
            rows += [r for r in kept if family(r["job"]) == fam]
        elif fam == "signal":
            srows, extra = measure(dev)
            rows += srows
            meta.update(extra)
        else:
            rows += measure(dev)
    RESULTS.mkdir(exist_ok=True)
    result = {"meta": meta, "rows": rows}
    before = {}
    if args.baseline:
        base = json.loads(Path(args.baseline).read_text())
        result["before"] = {"meta": base["meta"], "rows": base["rows"]}
        before = {r["job"]: r for r in base["rows"]}
        meta_before = ", ".join(f"{k} {v}" for k, v in base["meta"].items())
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=1))
    lines = [f"# GPU targets ({name})", "",
             ", ".join(f"{k} {v}" for k, v in meta.items()), ""]
    if before:
        lines += [f"*before*: {meta_before}", ""]
    kept = sorted({r["measured"] for r in rows if "measured" in r})
    if kept:
        lines += [f"Rows of {', '.join(args.skip)} not measured in this run: kept from the "
                  f"run of {', '.join(kept)}.", ""]
    lines += ["| job | median | spread | target | accuracy | peer | before |",
              "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "median_ms" in r:
            med, spread = f"{r['median_ms']:.3f} ms", f"{r['min_ms']:.3f}-{r['max_ms']:.3f} ms"
        else:
            med, spread = f"{r['median_us']:.1f} µs", f"p90 {r['p90_us']:.1f} µs"
        target = (f"<= {r['target_ms']} ms" if "target_ms" in r else
                  f"<= {r['target_us']} µs" if "target_us" in r else
                  f">= {r['target_fraction']:.0%} of copy (got {r['fraction_of_copy']:.0%})")
        acc = ", ".join(f"{k} {v:.1e}" for k, v in r.items()
                        if k.startswith("rel_err") and v is not None)
        peer = (f"cupyx {r['cupyx_median_us']:.1f} µs ({r['speedup_vs_cupyx']:.2f}×), "
                f"error {r['cupyx_rel_err_vs_exact']:.1e}" if "cupyx_median_us" in r else "")
        old = before.get(r["job"])
        was = ("" if old is None else f"{old['median_ms']:.3f} ms" if "median_ms" in old
               else f"{old['median_us']:.1f} µs")
        lines.append(f"| {r['job']} | {med} | {spread} | {target} | {acc} | {peer} | {was} |")
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
