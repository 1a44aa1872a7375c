"""GPU benchmark of the polar harmonic transforms: the paper's two workloads (Yang et al. 2020).

A. 128 real 512x512 patches, 1 <= n, l <= 25 (paper: about 1.67-1.71 s on a GTX 1060).
B. 1000 synthetic 2048x2048 images of integers 1..255, 11 <= n <= 16, 11 <= l <= 15
   (paper: about 5.7 s).

Images are resident on the GPU for the transform timings; host-to-device copies are timed
separately. Each row carries the relative error (2-norm over the moments) of the float32
result against the float64 two-stage engine (itself tested against the direct definition).
TF32 is off. Writes ``$OUT/pht_gpu.json`` and ``.md`` (or into ``benchmarks/results/``);
``--markdown`` rewrites the Markdown of the committed JSON.

Run: ``PYTHONPATH=src:benchmarks python benchmarks/pht_gpu.py``
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from disk_common import (
    PHT_PAPER,
    RESULTS,
    pht_environment,
    real_patches,
    rel_err,
    timeit,
    wall,
    write_json,
)
from fastmoments.disk.pht import PolarHarmonicTransform

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
#: PHT_SMOKE=1 shrinks every size (a quick run of the script itself on a CPU)
SMOKE = os.environ.get("PHT_SMOKE") == "1"
NA, SA, NB, SB = (128, 512, 1000, 2048) if not SMOKE else (6, 64, 20, 128)
out_dir = Path(os.environ.get("OUT", RESULTS))
rows: list[dict] = []
log = print


def ceilings() -> dict:
    a = torch.ones(2**28, dtype=torch.float32, device=dev)  # 1 GiB
    b = torch.empty_like(a)
    t = timeit(lambda: b.copy_(a), dev, warmup=3, repeat=10)["median_s"]
    s = 8192 if not SMOKE else 512
    m = torch.randn(s, s, device=dev)
    g = timeit(lambda: m @ m, dev, warmup=2, repeat=5)["median_s"]
    return {"copy_GBps": 2 * 2**30 / t / 1e9, "sgemm_TFLOPs_no_tf32": 2 * s**3 / g / 1e12}


def job(name: str, kind: str, x: torch.Tensor, nmax: int, lmax: int, nmin: int, lmin: int,
        methods: tuple[str, ...], ref_count: int, repeat: int) -> None:
    size = x.shape[-1]
    ref_plan = PolarHarmonicTransform(kind, size, nmax, lmax, nmin=nmin, lmin=lmin,
                                      method="engine", dtype="float64", device=dev)
    ref = ref_plan.forward(x[:ref_count].double()).values()
    K = ref_plan.index.size
    for label in methods:
        method = "gemm" if label.startswith("gemm") else label
        plan = PolarHarmonicTransform(kind, size, nmax, lmax, nmin=nmin, lmin=lmin,
                                      method=method, device=dev)
        plan._fold = label != "gemm-plain"
        _, build = wall(lambda p=plan: p.forward(x[:2]), dev)  # tables, kernel, warm-up
        err = rel_err(plan.forward(x[:ref_count]).values(), ref)
        t = timeit(lambda p=plan: p.forward(x), dev, warmup=1, repeat=repeat)
        core = {}
        if method == "gemm":  # the product alone, without the input checks of forward()
            x2 = x.reshape(x.shape[0], -1)
            core = {"core_median_s": timeit(lambda p=plan, x2=x2: p._gemm_forward(x2), dev,
                                            warmup=1, repeat=repeat)["median_s"]}
        # the paper's time for this many images (its batches: 128 patches, 1000 images)
        per_batch = {"patches_512": 128, "synthetic_2048": 1000}[name]
        paper = PHT_PAPER[name][kind] * x.shape[0] / per_batch
        row = {"job": name, "kind": kind, "method": label, "batch": int(x.shape[0]),
               "size": size, "moments": K, "build_s": build, **t, **core,
               "rel_err_vs_f64": err,
               "paper_s": paper, "speedup_vs_paper": paper / t["median_s"]}
        if method == "gemm":
            flops = 2.0 * x.shape[0] * plan.kernel_pixels() * 2 * K  # fold: half of each
            byts = x.numel() * 4 + plan.kernel_bytes()
            row.update(gemm_gflop=flops / 1e9, min_bytes_GB=byts / 1e9)
        rows.append(row)
        log(f"{name:15s} {kind:5s} {label:10s} B={x.shape[0]:5d} K={K:4d} "
            f"median {t['median_s'] * 1e3:9.2f} ms  [{t['min_s'] * 1e3:.2f}, "
            f"{t['max_s'] * 1e3:.2f}]  core {core.get('core_median_s', 0) * 1e3:7.2f} ms  "
            f"build {build:6.2f} s  err {err:.1e}  "
            f"x{row['speedup_vs_paper']:.0f} vs paper", flush=True)
        del plan
        torch.cuda.empty_cache()


def job_a(copies: dict) -> None:
    """128 real patches."""
    host = torch.from_numpy(real_patches(NA, SA))
    host = host.pin_memory() if dev.type == "cuda" else host
    copies["patches_512_f32_h2d_s"] = timeit(lambda: host.to(dev, non_blocking=True), dev,
                                             warmup=1, repeat=5)["median_s"]
    xa = host.to(dev)
    for kind in ("pcet", "pct", "pst"):
        job("patches_512", kind, xa, 25, 25, 1, 1, ("gemm", "gemm-plain", "engine"), 8, 20)


def h2d(copies: dict, xb8: torch.Tensor) -> None:
    pin = dev.type == "cuda"
    pinned = torch.empty(xb8.shape, dtype=torch.uint8, pin_memory=pin)
    pinned.copy_(xb8)
    copies["synthetic_2048_uint8_h2d_s"] = timeit(lambda: xb8.copy_(pinned, non_blocking=True),
                                                  dev, warmup=1, repeat=3)["median_s"]
    chunk = torch.empty((NB // 10, SB, SB), dtype=torch.float32, pin_memory=pin)
    chunk.copy_(xb8[:NB // 10])
    dst = torch.empty(chunk.shape, dtype=torch.float32, device=dev)
    copies["synthetic_2048_f32_h2d_tenth_of_batch_s"] = timeit(
        lambda: dst.copy_(chunk, non_blocking=True), dev, warmup=1, repeat=3)["median_s"]
    copies["synthetic_2048_uint8_to_f32_on_gpu_s"] = timeit(lambda: xb8.to(torch.float32), dev,
                                                           warmup=1, repeat=3)["median_s"]


def job_b_float32(xb8: torch.Tensor) -> None:
    xb = xb8.to(torch.float32)  # 16.8 GB resident
    for kind in ("pcet", "pct", "pst"):
        job("synthetic_2048", kind, xb, 16, 15, 11, 11, ("gemm", "gemm-plain"), 4, 10)


def job_b_uint8(xb8: torch.Tensor) -> None:
    """uint8 images straight into the plan (includes the conversion to float32)."""
    plan = PolarHarmonicTransform("pcet", SB, 16, 15, nmin=11, lmin=11, method="gemm",
                                  device=dev)
    t = timeit(lambda: plan.forward(xb8), dev, warmup=1, repeat=5)
    paper = PHT_PAPER["synthetic_2048"]["pcet"] * NB / 1000
    rows.append({"job": "synthetic_2048", "kind": "pcet", "method": "gemm (uint8 input)",
                 "batch": NB, "size": SB, "moments": plan.index.size, **t, "paper_s": paper,
                 "speedup_vs_paper": paper / t["median_s"]})
    log(f"uint8 input pcet gemm: {t['median_s'] * 1e3:.2f} ms", flush=True)


def main() -> None:
    env = pht_environment(dev)
    env["ceilings"] = ceilings()
    torch.cuda.empty_cache() if dev.type == "cuda" else None
    log(env, flush=True)
    copies: dict = {}
    job_a(copies)
    g = torch.Generator(device=dev).manual_seed(0)
    xb8 = torch.randint(1, 256, (NB, SB, SB), dtype=torch.uint8, device=dev, generator=g)
    h2d(copies, xb8)
    log(copies, flush=True)
    job_b_float32(xb8)
    job_b_uint8(xb8)
    # the two-stage engine on a tenth of the images (it is far slower on this job)
    job("synthetic_2048", "pcet", xb8[:NB // 10].to(torch.float32), 16, 15, 11, 11,
        ("engine",), 4, 3)
    rows[-1]["note"] = f"engine measured on {NB // 10} images (not {NB})"
    name = "pht_gpu.json" if not SMOKE else "pht_gpu_smoke.json"
    write_json(out_dir / name, {"environment": env, "copies": copies, "rows": rows})
    (out_dir / name).with_suffix(".md").write_text(markdown(env, rows))


def markdown(env: dict, rows: list[dict]) -> str:
    """The Markdown of a run: one row per job, transform and method."""
    out = [f"# Polar harmonic transforms on a GPU ({env.get('gpu')}, {env['date']})", "",
           ", ".join(f"{k} {env[k]}" for k in ("torch", "cuda", "triton") if env.get(k))
           + ", TF32 off. Median of repeated calls after a warm-up (CUDA events), images "
           "resident on the GPU unless a row says otherwise; paper: its GTX 1060 time for "
           "the same job. Written by `benchmarks/pht_gpu.py`.", "",
           "| job | kind | method | batch | median s | min..max s | rel. err vs f64 | paper s "
           "| paper / ours |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        err = f"{r['rel_err_vs_f64']:.1e}" if r.get("rel_err_vs_f64") is not None else "-"
        paper = r.get("paper_s")
        ratio = f"{paper / r['median_s']:.0f}" if paper else "-"
        job = r["job"] + (f" ({r['note']})" if r.get("note") else "")
        out.append(f"| {job} | {r['kind']} | {r['method']} | {r.get('batch', '-')} | "
                   f"{r['median_s']:.4f} | {r['min_s']:.4f}..{r['max_s']:.4f} | {err} | "
                   f"{paper if paper else '-'} | {ratio} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--markdown"]:  # rewrite the Markdown of the committed results
        path = RESULTS / "pht_gpu.json"
        data = json.loads(path.read_text())
        path.with_suffix(".md").write_text(markdown(data["environment"], data["rows"]))
    else:
        main()
