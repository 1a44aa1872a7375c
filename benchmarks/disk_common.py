"""Shared helpers of the benchmarks (disk, PHT, features, box, signal): environment record, the
timer, result files, the PHT benchmarks' paper times and real patches, and the Markdown of the
disk results (``python benchmarks/disk_common.py``
rewrites it from the committed JSON; it measures nothing)."""

from __future__ import annotations

import datetime as _dt
import importlib
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

RESULTS = Path(__file__).resolve().parent / "results"


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or what :mod:`platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment(device: torch.device, extra_packages: tuple[str, ...] = ()) -> dict[str, Any]:
    """Device, versions and date, recorded with every result file (plus the versions of
    ``extra_packages``, ``None`` where not installed)."""
    info: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "cpu": cpu_name(),
        "cpu_threads": torch.get_num_threads(),
        "device": str(device),
    }
    for name in extra_packages:
        try:
            info[name] = importlib.import_module(name).__version__
        except ImportError:
            info[name] = None
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        info["cuda"] = torch.version.cuda
        info["tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
        try:
            import triton

            info["triton"] = triton.__version__
        except ImportError:
            info["triton"] = None
    return info


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_samples(fn: Callable[[], Any], device: torch.device, *, warmup: int = 2,
                 repeat: int = 5, device_only: bool = False) -> list[float]:
    """Seconds of ``repeat`` calls after ``warmup`` calls (CUDA events on a GPU, the wall
    clock on a CPU): the one timer of the benchmarks.

    On a GPU the start event is recorded when the GPU is idle, so the time includes the host
    work before the first launch (what a caller waits for). ``device_only`` measures the
    device's time alone: a sleep kernel (:data:`SLEEP_CYCLES`) is queued before the start
    event, long enough for ``fn`` to queue its launches behind it."""
    for _ in range(warmup):
        fn()
    sync(device)
    times = []
    for _ in range(repeat):
        if device.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            if device_only:
                torch.cuda._sleep(SLEEP_CYCLES)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize(device)
            times.append(start.elapsed_time(end) / 1e3)
        else:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return times


#: Clock cycles of the sleep kernel of ``time_samples(device_only=True)`` (about 0.5 ms on an
#: H100, several times the host work of one call).
SLEEP_CYCLES = 1_000_000


def timeit(fn: Callable[[], Any], device: torch.device, *, warmup: int = 2, repeat: int = 5,
           ) -> dict[str, float]:
    """Median and spread of :func:`time_samples`."""
    times = time_samples(fn, device, warmup=warmup, repeat=repeat)
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "repeat": repeat}


def write_results(name: str, payload: dict[str, Any], out_dir: str | None = None) -> Path:
    """Write ``payload`` as JSON to ``benchmarks/results`` (or ``$OUT`` when given), and its
    Markdown beside it for the results that :data:`MARKDOWN` renders."""
    folder = Path(out_dir) if out_dir else RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, default=float))
    write_markdown(path)
    return path


def out_dir() -> str | None:
    """``$OUT`` when it is set (a folder to collect the results in), else None (write into
    benchmarks/results)."""
    return os.environ.get("OUT") or None


# ----------------------------------------------------------------- PHT benchmarks
FIGURES = Path(__file__).resolve().parent.parent / "docs" / "figures"

#: the paper's GTX 1060 times (Yang et al. 2020, Tables 5 and 6), seconds
PHT_PAPER = {
    "patches_512": {"pct": 1.6742, "pst": 1.6691, "pcet": 1.7136},
    "synthetic_2048": {"pct": 5.726, "pst": 5.674, "pcet": 5.745},
}


def pht_environment(device: torch.device) -> dict[str, Any]:
    """Device, versions (finufft's too) and date, recorded with every result file."""
    return environment(device, ("finufft",))


def wall(fn: Callable[[], Any], device: torch.device) -> tuple[Any, float]:
    """Run once and return (result, seconds), synchronized."""
    sync(device)
    t0 = time.perf_counter()
    out = fn()
    sync(device)
    return out, time.perf_counter() - t0


def real_patches(count: int = 128, size: int = 512, seed: int = 0) -> np.ndarray:
    """``count`` grey ``size x size`` patches (float32, 0..255) cut at random places from the
    scikit-image photographs (resized to twice the patch size), randomly rotated by multiples
    of 90 degrees and mirrored: a stand-in for the paper's 128 traffic-scene patches."""
    from fastmoments.data import sample_image

    names = ("camera", "astronaut", "coffee", "moon", "brick", "coins")
    big = [sample_image(n, 2 * size).astype(np.float32) for n in names]
    rng = np.random.default_rng(seed)
    out = np.empty((count, size, size), dtype=np.float32)
    for i in range(count):
        img = big[i % len(big)]
        r0, c0 = rng.integers(0, size + 1, size=2)
        p = img[r0:r0 + size, c0:c0 + size]
        p = np.rot90(p, int(rng.integers(4)))
        if rng.integers(2):
            p = p[:, ::-1]
        out[i] = p
    return out


def rel_err(got: Any, ref: Any) -> float:
    got = torch.as_tensor(got).detach().cpu().to(torch.complex128)
    ref = torch.as_tensor(ref).detach().cpu().to(torch.complex128)
    return float(torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref))


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1, default=str) + "\n")


# --------------------------------------------------------- Markdown of the disk results
def _head(env: dict, script: str) -> list[str]:
    device = env.get("gpu") or f"CPU {env.get('cpu', '')}, {env.get('cpu_threads')} threads"
    versions = ", ".join(f"{k} {env[k]}" for k in ("torch", "cuda", "triton", "numpy", "mahotas")
                         if env.get(k))
    return [f"{device}; {env.get('date', '?')}; {versions}. Written by `benchmarks/{script}`.",
            ""]


def psnr_md(d: dict) -> str:
    env = d["environment"]
    out = ["# Reconstruction PSNR of Zernike and pseudo-Zernike moments", "",
           *_head(env, "disk_psnr.py"),
           "PSNR (dB) of the image rebuilt from all moments up to order T, for k x k points per "
           "pixel; in brackets, with the reconstruction clipped to the grey range.", ""]
    for r in d["results"]:
        if "psnr" not in r:
            continue
        out += [f"## {r['image']}, {r['family']}, {r['quadrature']}", "",
                "| k \\ T | " + " | ".join(map(str, r["orders"])) + " |",
                "|---" * (len(r["orders"]) + 1) + "|"]
        for k, row, clip in zip(r["ks"], r["psnr"], r["psnr_clipped"], strict=True):
            cells = [f"{v:.2f} ({c:.1f})" for v, c in zip(row, clip, strict=True)]
            out.append(f"| {k} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def gpu_md(d: dict) -> str:
    env = d["environment"]
    out = ["# Zernike and pseudo-Zernike moments on a GPU", "", *_head(env, "disk_gpu.py"),
           f"Image: {d.get('image', '?')}, resident on the GPU; median of repeated calls after "
           "a warm-up (CUDA events), TF32 off; the plan is built beforehand (its first call is "
           "listed). Thesis: its TITAN V time for the same job.", "",
           "| family | T | k | dtype | method | forward ms | reconstruct ms | first call s | "
           "thesis s | thesis / ours |", "|---" * 10 + "|"]
    for r in d["rows"]:
        rec = f"{r['reconstruct']['median_s'] * 1e3:.2f}" if r.get("reconstruct") else "-"
        th = f"{r['thesis_s']}" if r.get("thesis_s") else "-"
        sp = f"{r['speedup_forward_vs_thesis']:.0f}x" if r.get("thesis_s") else "-"
        out.append(f"| {r['family']} | {r['T']} | {r['k']} | {r['dtype']} | {r['method']}"
                   f"{' (fused)' if r.get('fused') else ''} | "
                   f"{r['forward']['median_s'] * 1e3:.3f} | {rec} | "
                   f"{r['first_call_s']:.2f} | {th} | {sp} |")
    out += ["", "Accuracy against the float64 plan (largest relative error):", "",
            "| family | dtype | method | moments | reconstruction |", "|---" * 5 + "|"]
    for c in d.get("checks", []):
        if "dtype" in c:
            out.append(f"| {c['family']} | {c['dtype']} | {c.get('method', '')} | "
                       f"{c['rel_err_moments']:.1e} | {c['rel_err_reconstruction']:.1e} |")
    out.append("")
    for s in d.get("selected", []):
        out.append(f"Selected moments, one order (n = {s['order']}, {s['moments']} moments, "
                   f"{s['family']}): {s['forward']['median_s'] * 1e3:.2f} ms.")
    return "\n".join(out) + "\n"


def cpu_md(d: dict) -> str:
    env = d["environment"]
    out = ["# Zernike and pseudo-Zernike moments on the CPU", "", *_head(env, "disk_cpu.py"),
           "Seconds; *cold*: the call builds its plan (sampling, radial tables), *warm*: the "
           "median of calls that reuse the cached plan. Against mahotas (centre of mass): "
           "*cold* is a call on a new centre, *warm* a repeated call on the same image.",
           ""]
    for r in d["rows"]:
        out.append("* " + ", ".join(f"{k}: {v:.3g}" if isinstance(v, float) else f"{k}: {v}"
                                    for k, v in r.items()))
    return "\n".join(out) + "\n"


MARKDOWN = {"disk_gpu": gpu_md, "disk_cpu": cpu_md, "disk_psnr": psnr_md}


def write_markdown(path: Path) -> Path | None:
    """Write the Markdown of the result file ``path`` (a ``disk_gpu*``, ``disk_cpu*`` or
    ``disk_psnr*`` JSON) next to it; None for other files."""
    path = Path(path)
    for stem, render in MARKDOWN.items():
        if path.stem == stem or path.stem.startswith(stem + "_"):
            md = path.with_suffix(".md")
            md.write_text(render(json.loads(path.read_text())))
            return md
    return None


if __name__ == "__main__":  # rewrite the Markdown of the committed disk results from their JSON
    for p in sorted(RESULTS.glob("disk_*.json")):
        md = write_markdown(p)
        if md:
            print("wrote", md)
