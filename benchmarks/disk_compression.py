"""The compressed radial stage of the disk engine against the direct one, on a GPU.

The radial stage either evaluates every radial polynomial at every radius group (the fused
Jacobi-recurrence kernels, "direct") or compresses the sums over the radii to Chebyshev
nodes with one matrix product (:mod:`fastmoments.disk.compression`, "compressed"). This
script times both through the public plans (warm plan, image resident on the device, CUDA
events, median of several calls) for the target cases, and checks each against a float64
reference:

* Zernike and pseudo-Zernike, T = 700, 512², k = 1 and k = 11, float32 and float64;
* Zernike to order 2000 on a 2048² image (k = 1);
* reconstruction at T = 700.

It also times the parts of the compressed stage at k = 11 (angular sums of one chunk of
radii, and their local and global products).

Run on a CUDA machine from the repository root::

    PYTHONPATH=src python benchmarks/disk_compression.py [--quick]

writes ``benchmarks/results/disk_compression.json`` and ``.md`` (or into ``$OUT``);
``--report FILE.json`` rewrites the ``.md`` of a result file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fastmoments as fm
from disk_common import environment, out_dir, timeit, write_results
from fastmoments.disk import DiskTransform, routes

torch.backends.cuda.matmul.allow_tf32 = False

#: the targets (seconds) for the forward transform, 512², T = 700, float32
TARGETS = {("zernike", 1): 0.002, ("zernike", 11): 0.060}


def plan(family: str, size: int, order: int, k: int, dtype: str, dev: torch.device,
         compressed: bool) -> DiskTransform:
    decide = routes.compress  # the route table's rule, forced either way for the comparison
    routes.compress = lambda *args: compressed
    try:
        p = DiskTransform(family, size, order, k=k, dtype=dtype, device=dev)
    finally:
        routes.compress = decide
    assert (p.engine.compression is not None) == compressed
    return p


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def relmax(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--report", metavar="JSON", help="only rewrite the .md of a result file")
    args = ap.parse_args()
    if args.report:
        src = Path(args.report)
        src.with_suffix(".md").write_text(report(json.loads(src.read_text())))
        return
    dev = torch.device("cuda")
    env = environment(dev)
    print(env, flush=True)
    img = fm.data.sample_image("camera", 512)
    rows = []

    def case(family, size, order, k, dtype, *, direct=True, recon=False, image=img,
             repeat=5):
        x = torch.tensor(image, dtype=getattr(torch, dtype), device=dev)
        out = {"family": family, "size": size, "T": order, "k": k, "dtype": dtype}
        t0 = time.perf_counter()
        pc = plan(family, size, order, k, dtype, dev, True)
        A = pc.forward(x)
        torch.cuda.synchronize()
        out["compressed_first_s"] = time.perf_counter() - t0
        # warm-up past the third call: from then on the call replays a CUDA graph when
        # the job is small (DiskTransform._replayed_forward); "eager" times it without
        out["compressed"] = timeit(lambda: pc.forward(x), dev, repeat=repeat, warmup=4)
        os.environ["FASTMOMENTS_CUDA_GRAPHS"] = "0"
        try:
            out["compressed_eager"] = timeit(lambda: pc.forward(x), dev, repeat=repeat)
        finally:
            os.environ.pop("FASTMOMENTS_CUDA_GRAPHS", None)
        out["replayed"] = len(pc.__dict__.get("_graph_cache", ())) > 0
        Ac = A.numpy() if hasattr(A, "numpy") else np.asarray(A)
        # float64 reference: the compressed float64 plan (checked against the direct one
        # below where the direct one is timed)
        ref = Ac
        if dtype == "float32":
            p64 = plan(family, size, order, k, "float64", dev, True)
            ref = p64.forward(x.double()).numpy()
            out["f32_vs_f64_rel"] = rel(Ac, ref)
            out["f32_vs_f64_max"] = relmax(Ac, ref)

        if direct:
            pd = plan(family, size, order, k, dtype, dev, False)
            Ad = pd.forward(x).numpy()
            out["direct"] = timeit(lambda: pd.forward(x), dev, repeat=max(2, repeat // 2),
                                   warmup=1)
            out["compressed_vs_direct_rel"] = rel(Ac, Ad)
            if dtype == "float32":
                out["direct_f32_vs_f64_rel"] = rel(Ad, ref)
                out["direct_f32_vs_f64_max"] = relmax(Ad, ref)
            out["speedup"] = out["direct"]["median_s"] / out["compressed"]["median_s"]
        if recon:
            out["reconstruct_compressed"] = timeit(lambda: A.reconstruct(), dev, repeat=3)
        target = TARGETS.get((family, k)) if (order == 700 and size == 512) else None
        out["target_s"] = target
        print({kk: (v["median_s"] if isinstance(v, dict) else v) for kk, v in out.items()},
              flush=True)
        rows.append(out)
        torch.cuda.empty_cache()

    for fam in ("zernike", "pseudo-zernike"):
        for dt in ("float32", "float64"):
            case(fam, 512, 700, 1, dt, recon=True)
    for fam in ("zernike", "pseudo-zernike"):
        case(fam, 512, 700, 11, "float32", repeat=3)
    if not args.quick:
        case("zernike", 512, 700, 11, "float64", repeat=3)
        big = fm.data.sample_image("camera", 2048)
        case("zernike", 2048, 2000, 1, "float32", direct=False, image=big, repeat=3)
        case("zernike", 2048, 2000, 1, "float64", direct=False, image=big, repeat=3)

    # ------------------------------------------------ where the time goes at k = 11
    parts = {}
    p = plan("zernike", 512, 700, 11, "float32", dev, True)
    eng = p.engine
    comp = eng.compression
    lo = comp.local
    parts["groups"] = eng.sampling.n_groups
    parts["local"] = None if lo is None else {"first": lo.g0, "blocks": lo.nb, "L": lo.L,
                                              "points": lo.d}
    x = torch.tensor(img, dtype=torch.float32, device=dev).reshape(1, -1)
    chunks = list(eng._compressed_chunks(1))
    parts["chunks"] = [(g0, g1, local) for g0, g1, _o0, _o1, local in chunks]
    local_chunks = [c for c in chunks if c[4]]
    if local_chunks:
        g0, g1, o0, o1, _ = local_chunks[0]
        S = eng._angular(x, g0, g1, o0, o1, group_major=True).reshape(g1 - g0, eng.n_cols, 2)
        parts["angular_chunk_s"] = timeit(
            lambda: eng._angular(x, g0, g1, o0, o1, group_major=True), dev,
            repeat=5)["median_s"]
        parts["local_chunk_s"] = timeit(lambda: comp.moments_local(S, g0), dev,
                                        repeat=5)["median_s"]
        parts["chunk_groups"] = g1 - g0
    print(parts, flush=True)
    payload = {"environment": env, "rows": rows, "parts_k11": parts}
    path = write_results("disk_compression", payload, out_dir())
    path.with_suffix(".md").write_text(report(payload))
    print("wrote", path)


def _ms(entry) -> str:
    return f"{entry['median_s'] * 1e3:.2f}" if isinstance(entry, dict) else ""


def report(payload: dict) -> str:
    """The Markdown summary of a result file."""
    env = payload["environment"]
    lines = [
        "# Compressed radial stage of the disk transforms",
        "",
        f"{env['date']}, {env.get('gpu', env['device'])}, torch {env['torch']}, "
        f"Triton {env.get('triton')}, CUDA {env.get('cuda')}. Written by "
        "`benchmarks/disk_compression.py`. Public `DiskTransform.forward` on a warm plan, "
        "image resident on the GPU, median of repeated calls (CUDA events). *compressed*: "
        "the default (Chebyshev nodes, `fastmoments.disk.compression`), replayed as a CUDA "
        "graph from the third call when its scratch is below 1 GiB (*graph*); *eager*: the "
        "same with `FASTMOMENTS_CUDA_GRAPHS=0`; *direct*: the fused recurrence kernels on "
        "every radius (the route table's compression rule forced off). Errors: "
        "float32 against the float64 plan, largest difference over the largest moment.",
        "",
        "| family | N | T | k | dtype | compressed (ms) | graph | eager (ms) | direct (ms) "
        "| direct / compressed | target (ms) | float32 error | direct float32 error "
        "| reconstruction (ms) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in payload["rows"]:
        ratio = f"{r['speedup']:.1f}×" if "speedup" in r else ""
        tgt = f"{r['target_s'] * 1e3:g}" if r.get("target_s") else ""
        e32 = f"{r['f32_vs_f64_max']:.1e}" if "f32_vs_f64_max" in r else ""
        d32 = f"{r['direct_f32_vs_f64_max']:.1e}" if "direct_f32_vs_f64_max" in r else ""
        lines.append(
            f"| {r['family']} | {r['size']} | {r['T']} | {r['k']} | {r['dtype']} "
            f"| {_ms(r['compressed'])} | {'yes' if r.get('replayed') else 'no'} "
            f"| {_ms(r.get('compressed_eager'))} | {_ms(r.get('direct'))} | {ratio} | {tgt} "
            f"| {e32} | {d32} | {_ms(r.get('reconstruct_compressed'))} |")
    p = payload.get("parts_k11") or {}
    if p:
        lo = p.get("local") or {}
        lines += ["", f"At k = 11 (512², T = 700, float32): {p['groups']} radius groups; the "
                  f"local level takes groups {lo.get('first')} on in {lo.get('blocks')} blocks "
                  f"of {lo.get('L')} ({lo.get('points')} points each). One chunk of "
                  f"{p.get('chunk_groups')} groups: angular sums "
                  f"{p.get('angular_chunk_s', 0) * 1e3:.2f} ms, local and global products "
                  f"{p.get('local_chunk_s', 0) * 1e3:.2f} ms."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
