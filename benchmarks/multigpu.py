"""Several GPUs in one process: the same jobs on one GPU and on two, in the same run.

Jobs:

a. Zernike invariants (order T = 100, k = 1, ``kind="magnitude"``) of a batch of 128 x 128
   images through :func:`fastmoments.features` (target: 2 GPUs >= 1.8x one);
b. one 2048 x 2048 image, Zernike moments to order 2000, the moment set split over the GPUs
   (target >= 1.7x), and its reconstruction; beside it the re-layout paper's 2-GPU Table 8
   (GeForce 9800GX2, all repetitions of one order of a 1024 x 1024 image) with the same
   experiment run here;
c. a Gaussian smoothing of a batch of long signals (host data in, host data out);
d. 3-D box (Legendre) moments: one 512^3 volume to order 500 split by blocks of degrees, and
   a batch of volumes split over the GPUs;
e. 3-D Zernike moments: a batch of 100^3 volumes to order 20 split by volumes, and one 150^3
   volume to order 300 split by shells of the ball.

Every row times the 1-GPU and the 2-GPU call in the same process: medians of CUDA-event
times on the first GPU after warm-up (each call returns only when every GPU has finished,
so the events bracket the whole job), with min-max, and the largest relative difference of
the 2-GPU result against the 1-GPU one. TF32 is off.

Run: ``PYTHONPATH=src python benchmarks/multigpu.py --out DIR`` (``--small`` for a quick
check on the CPU with ``device=["cpu", "cpu"]``). Writes ``multigpu.json`` and
``multigpu.md`` in DIR (the documentation draws its plot from the JSON).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from fastmoments.ball import Zernike3DTransform
from fastmoments.box import JacobiTransform
from fastmoments.box.split import BoxSplit
from fastmoments.disk import ZernikeTransform
from fastmoments.disk.api import order_pairs
from fastmoments.recognition import features
from fastmoments.signal import gaussian_filter1d

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

#: Table 8 of the re-layout paper: all repetitions of order n of a 1024 x 1024 image on a
#: GeForce 9800GX2, proposed method, ms on one GPU and on its two GPUs.
PAPER_TABLE8 = {4: (2.35, 1.35), 8: (3.02, 1.76), 12: (3.96, 2.29), 16: (5.18, 2.97),
                20: (6.63, 3.81), 24: (8.45, 4.79), 28: (10.40, 5.91), 32: (12.74, 7.1)}


#: The order of the jobs' rows in the result files.
JOB_ORDER = ["a", "b", "b'", "c", "d", "e"]


def sync(devs: list[torch.device]) -> None:
    for d in devs:
        if d.type == "cuda":
            torch.cuda.synchronize(d)


def timed(fn: Callable[[], Any], devs: list[torch.device], warm: int, reps: int
          ) -> tuple[list[float], Any]:
    """Milliseconds per call (CUDA events on the first device; wall clock on a CPU)."""
    out = None
    for _ in range(warm):
        out = None
        out = fn()
    sync(devs)
    times = []
    for _ in range(reps):
        out = None  # one output alive at a time (the signal batch's are 40 GB)
        sync(devs)
        if devs[0].type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(torch.cuda.current_stream(devs[0]))
            out = fn()
            sync(devs)
            end.record(torch.cuda.current_stream(devs[0]))
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            out = fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return times, out


def rel(a: Any, b: Any) -> float:
    """Largest difference of ``a`` from ``b`` relative to ``b``'s largest magnitude (by
    blocks of the first axis, so that 40 GB results need no 40 GB temporaries)."""
    def host(x: Any) -> np.ndarray:
        return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)

    if not isinstance(a, torch.Tensor):
        a = np.asarray(a)
    if not isinstance(b, torch.Tensor):
        b = np.asarray(b)
    if a.ndim == 0:
        a, b = a.reshape(1), b.reshape(1)
    step = max(1, 2**26 // max(1, int(np.prod(a.shape[1:]))))
    err = scale = 0.0
    for i in range(0, a.shape[0], step):
        x, y = host(a[i:i + step]), host(b[i:i + step])
        err = max(err, float(np.abs(x - y).max(initial=0.0)))
        scale = max(scale, float(np.abs(y).max(initial=0.0)))
    return err / (scale or 1.0)


def row(job: str, what: str, t1: list[float], t2: list[float], err: float,
        target: float | None = None, note: str = "") -> dict[str, Any]:
    m1, m2 = statistics.median(t1), statistics.median(t2)
    r = {"job": job, "what": what, "ms_1gpu": m1, "ms_1gpu_range": [min(t1), max(t1)],
         "ms_2gpu": m2, "ms_2gpu_range": [min(t2), max(t2)], "speedup": m1 / m2,
         "target": target, "rel_err_2_vs_1": err, "note": note}
    ok = "" if target is None else (" MET" if m1 / m2 >= target else " NOT MET")
    print(f"  {job}: {what}: 1 GPU {m1:.2f} ms, 2 GPUs {m2:.2f} ms, x{m1 / m2:.2f}{ok}, "
          f"rel err {err:.1e}", flush=True)
    return r


# ---------------------------------------------------------------------------- jobs
def job_features(one, two, n_img: int, size: int, order: int, reps: int) -> list[dict]:
    print(f"a. features: {n_img} images {size}^2, Zernike T={order} magnitudes", flush=True)
    g = torch.Generator().manual_seed(0)
    imgs = torch.rand((n_img, size, size), generator=g, dtype=torch.float32).numpy()
    kw = dict(family="zernike", orders=order, kind="magnitude")
    rows = []
    t_plain, f_plain = timed(lambda: features(imgs, device=one[0], **kw), one, 1, reps)
    t1, f1 = timed(lambda: features(imgs, device=one, **kw), one, 1, reps)
    t2, f2 = timed(lambda: features(imgs, device=two, **kw), two, 1, reps)
    best1 = t1 if statistics.median(t1) <= statistics.median(t_plain) else t_plain
    rows.append(row("a", f"features {n_img} x {size}^2, T={order} (host NumPy in)",
                    best1, t2, rel(f2.matrix, f_plain.matrix), 1.8,
                    f"1 GPU: the faster of device='{one[0]}' "
                    f"({statistics.median(t_plain):.1f} ms) and device=['{one[0]}'] "
                    f"({statistics.median(t1):.1f} ms, pinned sub-batches)"))
    # the same on data already on the first GPU
    dev_imgs = torch.from_numpy(imgs).to(one[0])
    t1, f1 = timed(lambda: features(dev_imgs, **kw), one, 1, reps)
    t2, f2 = timed(lambda: features(dev_imgs, device=two, **kw), two, 1, reps)
    rows.append(row("a", f"features {n_img} x {size}^2, T={order} (tensor on GPU 0)", t1, t2,
                    rel(f2.matrix, f1.matrix), 1.8))
    return rows


def job_big_zernike(one, two, size: int, order: int, reps: int) -> list[dict]:
    print(f"b. one {size}^2 image, Zernike to order {order}", flush=True)
    g = torch.Generator().manual_seed(1)
    img = torch.rand((size, size), generator=g, dtype=torch.float32).to(one[0])
    p1 = ZernikeTransform(size, order, device=one[0])
    p2 = ZernikeTransform(size, order, device=two)
    rows = []
    t1, a1 = timed(lambda: p1.forward(img), one, 1, reps)
    t2, a2 = timed(lambda: p2.forward(img), two, 1, reps)
    parts = [len(p[2]) for p in p2.parts()]
    rows.append(row("b", f"moments of one {size}^2 image, order {order} "
                         f"({p1.index.size} moments)", t1, t2,
                    rel(a2.values(), a1.values()), 1.7,
                    f"columns per GPU {parts}, balanced by the cost model"))
    t1, r1 = timed(lambda: a1.reconstruct(), one, 1, reps)
    t2, r2 = timed(lambda: a2.reconstruct(), two, 1, reps)
    # where the reconstruction's time goes: the synthesis alone on one GPU, and each GPU's
    # partial synthesis alone (its share of the columns)
    coef = a1.data.reshape(1, *a1.data.shape[-2:])
    ms = torch.as_tensor(p1.index.ms, device=one[0])
    gamma = torch.where(ms == 0, 1.0, 2.0)
    ts, _ = timed(lambda: p1.synthesize(coef, gamma), one, 1, reps)
    alone = []
    for slot, (i, _, cols) in enumerate(p2.parts()):
        part = p2._split._partial(p2, slot)  # the part's own plan, as the split runs it
        dev = two[i]
        c = torch.as_tensor(cols, device=one[0])
        pc = coef[:, c, :part.index.n_rows].to(dev)
        pg = gamma[c].to(dev)
        with torch.cuda.device(dev) if dev.type == "cuda" else _null():
            tp, _ = timed(lambda part=part, pc=pc, pg=pg: part.synthesize(pc, pg), [dev], 1,
                          reps)
        alone.append(round(statistics.median(tp), 2))
    rows.append(row("b", f"reconstruction of one {size}^2 image from order {order}", t1, t2,
                    rel(r2, r1), None,
                    f"sum of the partial reconstructions on GPU 0; synthesis alone on 1 GPU "
                    f"{statistics.median(ts):.1f} ms, each GPU's part alone {alone} ms"))
    return rows


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def job_table8(one, two, reps: int, size: int = 1024) -> list[dict]:
    print(f"b'. the paper's Table 8 experiment: all repetitions of order n, {size}^2",
          flush=True)
    g = torch.Generator().manual_seed(2)
    img = torch.rand((size, size), generator=g, dtype=torch.float32).to(one[0])
    rows = []
    for n, (paper1, paper2) in PAPER_TABLE8.items():
        pairs = order_pairs("zernike", n)
        p1 = ZernikeTransform(size, pairs=pairs, device=one[0])
        p2 = ZernikeTransform(size, pairs=pairs, device=two)
        t1, a1 = timed(lambda p1=p1: p1.forward(img), one, 2, reps)
        t2, a2 = timed(lambda p2=p2: p2.forward(img, split="work"), two, 2, reps)
        r = row("b'", f"Z{n},* ({len(pairs)} repetitions), {size}^2", t1, t2,
                rel(a2.values(), a1.values()))
        r.update(paper_ms_1gpu=paper1, paper_ms_2gpu=paper2, paper_speedup=paper1 / paper2)
        rows.append(r)
    return rows


def job_gaussian(one, two, rows_: int, length: int, sigma: float, reps: int,
                 device_rows: int) -> list[dict]:
    print(f"c. gaussian_filter1d of {rows_} x {length} float32 (host), sigma={sigma}", flush=True)
    g = torch.Generator().manual_seed(3)
    base = torch.randn(length, generator=g, dtype=torch.float32).numpy()
    x = np.empty((rows_, length), dtype=np.float32)  # rows: one random signal, rolled
    for i in range(rows_):
        x[i] = np.roll(base, 7919 * i)
    for devs in (one, two):  # plans built outside the timing, on two rows
        gaussian_filter1d(x[:2], sigma, device=devs)
    t1, y1 = timed(lambda: gaussian_filter1d(x, sigma, device=one), one, 0, reps)
    t2, y2 = timed(lambda: gaussian_filter1d(x, sigma, device=two), two, 0, reps)
    gb = 2 * x.nbytes / 1e9
    rows = [row("c", f"gaussian_filter1d {rows_} x {length}, sigma={sigma} (host NumPy in)",
                t1, t2, rel(y2, y1), None,
                f"{gb:.0f} GB moved in and out: {gb / (statistics.median(t1) / 1e3):.1f} GB/s "
                f"on 1 GPU, {gb / (statistics.median(t2) / 1e3):.1f} GB/s on 2")]
    y1 = y2 = None  # free 80 GB before the device copy
    xd = torch.from_numpy(x[:device_rows]).to(one[0])
    x = None
    t1, y1 = timed(lambda: gaussian_filter1d(xd, sigma), one, 1, reps)
    t2, y2 = timed(lambda: gaussian_filter1d(xd, sigma, device=two), two, 1, reps)
    rows.append(row("c", f"gaussian_filter1d {device_rows} x {length}, sigma={sigma} "
                         "(tensor on GPU 0)", t1, t2, rel(y2, y1)))
    return rows


def job_ball(one, two, batch: int, side: int, order: int, big_side: int, big_order: int,
             reps: int) -> list[dict]:
    print(f"e. 3-D Zernike: {batch} x {side}^3 to order {order}; one {big_side}^3 to order "
          f"{big_order}", flush=True)
    g = torch.Generator().manual_seed(5)
    vols = torch.rand((batch,) + (side,) * 3, generator=g, dtype=torch.float32).numpy()
    shape = (side,) * 3
    plain = Zernike3DTransform(shape, order, device=one[0])
    p1 = Zernike3DTransform(shape, order, device=one)
    p2 = Zernike3DTransform(shape, order, device=two)
    rows = []
    t_plain, a_plain = timed(lambda: plain.forward(vols), one, 1, reps)
    t1, _ = timed(lambda: p1.forward(vols), one, 1, reps)
    t2, a2 = timed(lambda: p2.forward(vols), two, 1, reps)
    best1 = t1 if statistics.median(t1) <= statistics.median(t_plain) else t_plain
    rows.append(row("e", f"3-D Zernike moments of {batch} volumes {side}^3, order {order} "
                         "(host NumPy in)", best1, t2, rel(a2.values(), a_plain.values()), None,
                    f"1 GPU: the faster of device='{one[0]}' "
                    f"({statistics.median(t_plain):.1f} ms) and device=['{one[0]}'] "
                    f"({statistics.median(t1):.1f} ms)"))
    dev_vols = torch.from_numpy(vols).to(one[0])
    vols = None
    t1, a1 = timed(lambda: plain.forward(dev_vols), one, 1, reps)
    t2, a2 = timed(lambda: p2.forward(dev_vols), two, 1, reps)
    rows.append(row("e", f"3-D Zernike moments of {batch} volumes {side}^3, order {order} "
                         "(tensor on GPU 0)", t1, t2, rel(a2.values(), a1.values())))
    dev_vols = a1 = a2 = a_plain = None
    big = torch.rand((big_side,) * 3, generator=g, dtype=torch.float32).to(one[0])
    q1 = Zernike3DTransform((big_side,) * 3, big_order, device=one[0])
    q2 = Zernike3DTransform((big_side,) * 3, big_order, device=two)
    t1, b1 = timed(lambda: q1.forward(big), one, 1, reps)
    t2, b2 = timed(lambda: q2.forward(big, split="work"), two, 1, reps)
    shells = [p[2] for p in q2.parts()]
    rows.append(row("e", f"3-D Zernike moments of one {big_side}^3 volume, order {big_order}",
                    t1, t2, rel(b2.values(), b1.values()), None,
                    f"radius groups per GPU {shells}, split by shells of the ball"))
    return rows


def job_box(one, two, side: int, order: int, batch: int, bside: int, border: int,
            reps: int) -> list[dict]:
    print(f"d. box: one {side}^3 volume to order {order}; {batch} x {bside}^3 to order "
          f"{border}", flush=True)
    g = torch.Generator().manual_seed(4)
    vol = torch.rand((side,) * 3, generator=g, dtype=torch.float32).to(one[0])
    p1 = JacobiTransform((side,) * 3, order, device=one[0])
    p2 = JacobiTransform((side,) * 3, order, device=two)
    rows = []
    # the split itself, asked for (split="auto" keeps jobs under BoxSplit.min_cost on one GPU)
    t1, a1 = timed(lambda: p1.forward(vol), one, 1, reps)
    t2, a2 = timed(lambda: p2.forward(vol, split="work"), two, 1, reps)
    blocks = [p[2] for p in p2.parts()]
    rows.append(row("d", f"Legendre moments of one {side}^3 volume, order {order}", t1, t2,
                    rel(a2.data, a1.data), None,
                    f"degree blocks {blocks}; split asked for (modelled cost "
                    f"{BoxSplit(p1).item_cost():.2g}; split='auto' spreads from "
                    f"{BoxSplit.min_cost:.0e})"))
    t1, r1 = timed(lambda: a1.reconstruct(), one, 1, reps)
    t2, r2 = timed(lambda: a2.reconstruct(), two, 1, reps)
    rows.append(row("d", f"reconstruction of one {side}^3 volume from order {order}", t1, t2,
                    rel(r2, r1)))
    vols = torch.rand((batch,) + (bside,) * 3, generator=g, dtype=torch.float32).numpy()
    q1 = JacobiTransform((bside,) * 3, border, device=one)
    q2 = JacobiTransform((bside,) * 3, border, device=two)
    t1, b1 = timed(lambda: q1.forward(vols), one, 1, reps)
    t2, b2 = timed(lambda: q2.forward(vols), two, 1, reps)
    rows.append(row("d", f"Legendre moments of {batch} volumes {bside}^3, order {border} "
                         "(host NumPy in)", t1, t2, rel(b2.data, b1.data)))
    return rows


# ---------------------------------------------------------------------------- report
def environment(devs: list[torch.device]) -> dict[str, Any]:
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "python": platform.python_version(), "torch": torch.__version__,
           "numpy": np.__version__, "cpu_threads": os.cpu_count(), "tf32": False,
           "devices": [str(d) for d in devs]}
    if devs[0].type == "cuda":
        env["gpus"] = [torch.cuda.get_device_name(d) for d in devs]
        env["cuda"] = torch.version.cuda
        try:
            import triton

            env["triton"] = triton.__version__
        except ImportError:
            env["triton"] = None
    return env


def _head() -> str | None:
    """The short commit of this source tree, or None where git cannot say."""
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=True, text=True,
                              capture_output=True,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _span(r: list[float] | None) -> str:
    """`` (min-max)`` of a row's times, or nothing where the run did not record them."""
    return "" if r is None else f" ({r[0]:.2f}-{r[1]:.2f})"


def write_md(path: Path, env: dict, rows: list[dict], errors: list[str]) -> None:
    gpus = ", ".join(env.get("gpus", env["devices"]))
    lines = [f"# Several GPUs in one process ({gpus})", "",
             f"{env['date']}; torch {env['torch']}, CUDA {env.get('cuda')}, triton "
             f"{env.get('triton')}, numpy {env['numpy']}; TF32 off. Written by "
             "`benchmarks/multigpu.py`.", "",
             "Medians of CUDA-event times on the first GPU after warm-up (min-max in "
             "brackets); 1 GPU and 2 GPUs in the same run; the error is the largest "
             "difference of the 2-GPU result from the 1-GPU one, relative to its largest "
             "value (float32).", "",
             "| job | what | 1 GPU (ms) | 2 GPUs (ms) | speed-up | target | rel. err | note |",
             "|---|---|---|---|---|---|---|---|"]
    runs = [f"- jobs {', '.join(run['jobs'])}: {run['date']}"
            + (f", commit {run['commit']}" if run.get("commit") else "")
            + (f"; {run['note']}" if run.get("note") else "") for run in env.get("runs", [])]
    if runs:
        lines[4:4] = ["The rows come from several runs of this script:", "", *runs, ""]
    for r in rows:
        tgt = "" if r["target"] is None else (
            f"{r['target']}x {'met' if r['speedup'] >= r['target'] else 'NOT met'}")
        t1 = f"{r['ms_1gpu']:.2f}{_span(r['ms_1gpu_range'])}"
        t2 = f"{r['ms_2gpu']:.2f}{_span(r['ms_2gpu_range'])}"
        lines.append(f"| {r['job']} | {r['what']} | {t1} | {t2} | {r['speedup']:.2f}x | {tgt} | "
                     f"{r['rel_err_2_vs_1']:.1e} | {r['note']} |")
    t8 = [r for r in rows if "paper_ms_1gpu" in r]
    if t8:
        lines += ["", "## Beside the re-layout paper's Table 8 (their hardware, our ratio)", "",
                  "All repetitions of one order of a 1024 x 1024 image. The paper: GeForce "
                  "9800GX2 (its two GPUs); ours: the GPUs above.", "",
                  "| set | paper 1 GPU (ms) | paper 2 GPUs (ms) | paper ratio | ours 1 GPU (ms) |"
                  " ours 2 GPUs (ms) | our ratio |", "|---|---|---|---|---|---|---|"]
        for r in t8:
            lines.append(f"| {r['what']} | {r['paper_ms_1gpu']} | {r['paper_ms_2gpu']} | "
                         f"{r['paper_speedup']:.2f}x | {r['ms_1gpu']:.3f} | {r['ms_2gpu']:.3f} | "
                         f"{r['speedup']:.2f}x |")
    if errors:
        lines += ["", "## Jobs that failed", ""] + [f"- {e}" for e in errors]
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of other jobs already in OUT/multigpu.json")
    ap.add_argument("--small", action="store_true", help="quick check on the CPU")
    ap.add_argument("--images", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--jobs", default="a,b,t8,d,e,c")
    ap.add_argument("--commit", default=None,
                    help="the commit measured, recorded with the run (default: the tree's "
                         "HEAD, where git can read it)")
    args = ap.parse_args()
    if args.small or torch.cuda.device_count() < 2:
        if not args.small:
            print("fewer than two GPUs: running the small CPU check", flush=True)
        one, two = [torch.device("cpu")], [torch.device("cpu")] * 2
        cfg = dict(n_img=64, size=32, order=10, big=64, big_order=40, g_rows=8, g_len=4096,
                   g_dev_rows=4, side=24, border_=12, batch=4, bside=16, border=8, t8=128,
                   z_batch=4, z_side=16, z_order=6, z_big=20, z_big_order=12)
    else:
        one, two = [torch.device("cuda", 0)], [torch.device("cuda", 0), torch.device("cuda", 1)]
        cfg = dict(n_img=args.images, size=128, order=100, big=2048, big_order=2000,
                   g_rows=1000, g_len=10**7, g_dev_rows=250, side=512, border_=500, batch=16,
                   bside=256, border=100, t8=1024, z_batch=2048, z_side=100, z_order=20,
                   z_big=150, z_big_order=300)
    env = environment(two)
    print(json.dumps(env), flush=True)
    jobs = args.jobs.split(",")
    rows: list[dict] = []
    errors: list[str] = []
    out = Path(args.out)
    if args.merge and (out / "multigpu.json").is_file():  # another run's other jobs
        prev = json.loads((out / "multigpu.json").read_text())
        mine = {"t8" if j == "b'" else j for j in jobs}
        rows = [r for r in prev["rows"] if ("t8" if r["job"] == "b'" else r["job"]) not in mine]
        errors = [e for e in prev["errors"] if e.split(":")[0] not in mine]
        pe = prev["environment"]
        runs = pe.get("runs") or [{"date": pe["date"], "jobs": sorted({r["job"] for r in rows})}]
        kept = [dict(r, jobs=[j for j in r["jobs"] if j not in mine]) for r in runs]
        env["runs"] = [r for r in kept if r["jobs"]] + [
            {"date": env["date"], "jobs": sorted("b'" if j == "t8" else j for j in mine),
             "commit": args.commit or _head()}]
    runs = {
        "a": lambda: job_features(one, two, cfg["n_img"], cfg["size"], cfg["order"],
                                  args.reps),
        "b": lambda: job_big_zernike(one, two, cfg["big"], cfg["big_order"], args.reps),
        "t8": lambda: job_table8(one, two, max(args.reps, 5), cfg["t8"]),
        "c": lambda: job_gaussian(one, two, cfg["g_rows"], cfg["g_len"], 50.0,
                                  min(args.reps, 2), cfg["g_dev_rows"]),
        "d": lambda: job_box(one, two, cfg["side"], cfg["border_"], cfg["batch"], cfg["bside"],
                             cfg["border"], args.reps),
        "e": lambda: job_ball(one, two, cfg["z_batch"], cfg["z_side"], cfg["z_order"],
                              cfg["z_big"], cfg["z_big_order"], args.reps),
    }
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    for name in jobs:
        t0 = time.perf_counter()
        try:
            rows += runs[name]()
        except Exception as exc:  # one failed job must not lose the others
            traceback.print_exc()
            errors.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
        print(f"   ({name} took {time.perf_counter() - t0:.1f} s)", flush=True)
        for d in two:
            if d.type == "cuda":
                torch.cuda.empty_cache()
        env["elapsed_s"] = time.perf_counter() - t_start
        rows.sort(key=lambda r: JOB_ORDER.index(r["job"]))
        (out / "multigpu.json").write_text(json.dumps(
            {"environment": env, "config": cfg, "rows": rows, "errors": errors}, indent=1))
        write_md(out / "multigpu.md", env, rows, errors)
    print(f"wrote {out}/multigpu.json and .md in {time.perf_counter() - t_start:.1f} s")


if __name__ == "__main__":
    main()
