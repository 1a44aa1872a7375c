"""Feasibility of the box engine's 5 ms target (issue 16): split float16 products whose data
operand arrives already split, against cuBLAS float32 and the shipped ``fp16x3`` kernel.

The 512^3, order-500, k = 23 job is bound by its matrix products (``box_runs/``: cuBLAS's
float32 GEMMs alone take about 7.3 ms at about 40 TFLOP/s). The shipped ``fp16x3`` kernel
(:func:`fastmoments.box.triton_gemm.bmm_fp16x3`) splits every data tile into two float16
halves inside the kernel, once per output tile, and adds each 32-wide block of products in
float32 outside the tensor cores. Both keep the products on the CUDA cores' side of the
pipeline. This script measures the alternative that a redesigned engine would use: the data
operand already stored as float16 halves ``hi + lo`` (each stage's epilogue would write them,
with a power-of-two scale per row of the stage's output, which is constant along the next
stage's contraction), so that the kernel only loads tiles and issues three tensor-core
products per block, ``a_l b_h + a_h b_l + a_h b_h``, promoting the partial sum to the float32
accumulator every ``PROMO`` blocks (the tensor cores' own long sums lose bits).

Operands are the real ones: the even half of the plan's Jacobi analysis table (alpha = beta
= 0.3, k = 23), applied to the all-even parity class of the folded 3-D phantom (stage 1)
and to that product's result (stage 2, mixed signs, a large dynamic range), and the full
table on the unfolded phantom (no parity). Errors are relative 2-norm errors against the
float64 product of the same float32 operands. Times are medians of CUDA-event timings after
warm-up; the split of the data is not timed (a previous stage would write it). The kernel
here is a measurement prototype, not library code.

    PYTHONPATH=src python benchmarks/box_presplit_gemm.py

Writes ``benchmarks/results/box_runs/box_presplit_gemm.{json,md}``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from fastmoments._triton import loop_bound
from fastmoments.box.triton_gemm import _tile_ranges

RESULTS = Path(__file__).resolve().parent / "results" / "box_runs"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from disk_common import time_samples  # noqa: E402 - after the path


@triton.jit
def _presplit_kernel(ah_ptr, al_ptr, bh_ptr, bl_ptr, sc_ptr, c_ptr, M, N, K,
                     s_am, s_ak, s_bk, s_bn, s_cm, s_cn, inv_a,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                     PROMO: tl.constexpr, GROUP: tl.constexpr, TERMS: tl.constexpr,
                     COLSCALE: tl.constexpr, INTERPRET: tl.constexpr, KTILES: tl.constexpr):
    rm, rn = _tile_ranges(M, N, BM, BN, GROUP)
    rk = tl.arange(0, BK)
    a_off = rm[:, None].to(tl.int64) * s_am + rk[None, :] * s_ak
    b_off = rk[:, None].to(tl.int64) * s_bk + rn[None, :] * s_bn
    mmask = rm[:, None] < M
    nmask = rn[None, :] < N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    # K is a multiple of BK * PROMO here; the interpreter loops to a constexpr bound
    for _kk in range(0, KTILES if INTERPRET else tl.cdiv(K, BK * PROMO)):
        t = tl.zeros((BM, BN), dtype=tl.float32)
        for _j in tl.static_range(PROMO):
            a_h = tl.load(ah_ptr + a_off, mask=mmask, other=0.0)
            b_h = tl.load(bh_ptr + b_off, mask=nmask, other=0.0)
            if TERMS == 3:
                a_l = tl.load(al_ptr + a_off, mask=mmask, other=0.0)
                b_l = tl.load(bl_ptr + b_off, mask=nmask, other=0.0)
                t = tl.dot(a_l, b_h, t)
                t = tl.dot(a_h, b_l, t)
            t = tl.dot(a_h, b_h, t)
            a_off += BK * s_ak
            b_off += BK * s_bk
        acc += t
    acc = acc * inv_a
    if COLSCALE:
        acc = acc * tl.load(sc_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(c_ptr + rm[:, None].to(tl.int64) * s_cm + rn[None, :] * s_cn, acc,
             mask=mmask & nmask)


def split_rows_scaled(b: torch.Tensor, per_column: bool) -> tuple:
    """``b`` (K, N) float32 as float16 ``hi + lo`` after a power-of-two scale per column
    (its largest magnitude into [2^14, 2^15)), or one scale for the whole matrix; returns
    ``hi, lo, inverse scales (N,)``."""
    top = b.abs().amax(dim=0) if per_column else b.abs().max().expand(b.shape[1])
    e = torch.floor(torch.log2(torch.where(top > 0, top, torch.ones_like(top))))
    scale = torch.exp2(14 - e)
    y = b * scale
    hi = y.half()
    lo = (y - hi.float()).half()
    return hi, lo, (1.0 / scale).float().contiguous()


def presplit(a_split, b_split, m: int, n: int, k: int, cfg: dict, terms: int = 3):
    ah, al, inv_a = a_split
    bh, bl, inv_b = b_split
    c = torch.empty((m, n), dtype=torch.float32, device=bh.device)
    bm, bn = cfg["BM"], cfg["BN"]
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _presplit_kernel[grid](ah, al, bh, bl, inv_b, c, m, n, k, ah.stride(0), ah.stride(1),
                           bh.stride(0), bh.stride(1), c.stride(0), c.stride(1), inv_a,
                           BM=bm, BN=bn, BK=cfg["BK"], PROMO=cfg["PROMO"], GROUP=8,
                           TERMS=terms, COLSCALE=True, num_warps=cfg["warps"],
                           **loop_bound("KTILES", triton.cdiv(k, cfg["BK"] * cfg["PROMO"])),
                           num_stages=cfg["stages"])
    return c


def timed(fn, reps: int) -> float:
    """Median milliseconds of ``reps`` calls after 3 warm-up calls (the benchmarks' timer)."""
    return 1e3 * statistics.median(time_samples(fn, torch.device("cuda"), warmup=3,
                                                repeat=reps))


CONFIGS = [dict(BM=128, BN=128, BK=32, PROMO=p, warps=8, stages=3) for p in (1, 2, 4)] + \
          [dict(BM=128, BN=128, BK=64, PROMO=p, warps=8, stages=3) for p in (1, 2, 4)] + \
          [dict(BM=128, BN=256, BK=64, PROMO=2, warps=8, stages=3),
           dict(BM=128, BN=128, BK=64, PROMO=2, warps=4, stages=4),
           dict(BM=64, BN=256, BK=64, PROMO=2, warps=4, stages=4)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", default=str(RESULTS / "box_presplit_gemm"))
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    from fastmoments.box import JacobiTransform
    from fastmoments.box.phantom import phantom_tensor
    from fastmoments.box.triton_gemm import SplitOperand, bmm_fp16x3, split_constant

    dev = torch.device("cuda")
    side, order, k = 512, 500, 23
    plan = JacobiTransform((side,) * 3, order, alpha=0.3, beta=0.3, k=k, dtype=torch.float64,
                           device=dev)
    full = plan.analysis_matrices()[0]  # (501, 512) float64
    even = full[0::2, : side // 2].contiguous()  # (251, 256): the even half (parity)
    x = phantom_tensor((side,) * 3, device=dev, dtype=torch.float32)
    h = side // 2
    fold = x[:h] + x.flip(0)[:h]
    fold = fold[:, :h] + fold.flip(1)[:, :h]
    fold = fold[:, :, :h] + fold.flip(2)[:, :, :h]  # the all-even class, (256, 256, 256)
    s1 = fold.reshape(h, h * h)  # stage 1: contract axis 0
    y1 = (even.float() @ s1).reshape(even.shape[0], h, h)
    s2 = y1.permute(1, 0, 2).reshape(h, -1).contiguous()  # stage 2: contract axis 1
    jobs = {
        "stage 1, parity class (251 x 256 @ 256 x 65536)": (even, s1),
        "stage 2, parity class (251 x 256 @ 256 x 64256)": (even, s2),
        "no parity (501 x 512 @ 512 x 262144)": (full, x.reshape(side, -1)),
    }
    meta = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                device=torch.cuda.get_device_name(), torch=torch.__version__,
                triton=triton.__version__, reps=args.reps)
    rows = []
    for name, (a64, b) in jobs.items():
        a = a64.float().contiguous()
        b = b.contiguous()
        m, kk = a.shape
        n = b.shape[1]
        ref = a.double() @ b.double()
        flop = 2.0 * m * n * kk

        def err(c, ref=ref):
            return float(torch.linalg.vector_norm(c.double() - ref) / torch.linalg.vector_norm(ref))

        def row(variant, fn, ref=ref, flop=flop, name=name):
            c = fn()
            ms = timed(fn, args.reps)
            r = dict(job=name, variant=variant, ms=ms, tflops=flop / ms / 1e9, rel_err=err(c))
            rows.append(r)
            print(r, flush=True)

        row("cuBLAS float32", lambda a=a, b=b: a @ b)
        const = split_constant(a)
        sc = SplitOperand(const.hi[None], const.lo[None], const.inv_scale)
        row("shipped fp16x3 (split inside)", lambda b=b, sc=sc: bmm_fp16x3(b[None], sc,
                                                                         data_first=False))
        asplit = (const.hi, const.lo, const.inv_scale)
        for per_col in (True, False):
            bsplit = split_rows_scaled(b, per_col)
            scale_name = "scale per column" if per_col else "one scale"
            for cfg in CONFIGS if per_col else CONFIGS[4:5]:
                tag = (f"presplit {cfg['BM']}x{cfg['BN']}x{cfg['BK']}, promote every "
                       f"{cfg['PROMO']}, {cfg['warps']} warps, {cfg['stages']} stages, "
                       f"{scale_name}")
                try:
                    row(tag, lambda cfg=cfg, bsplit=bsplit, m=m, n=n, kk=kk, asplit=asplit:
                        presplit(asplit, bsplit, m, n, kk, cfg))
                except Exception as exc:  # a configuration that does not compile or fit
                    print(tag, "failed:", type(exc).__name__, str(exc)[:200], flush=True)
        bsplit = split_rows_scaled(b, True)
        row("one float16 product (speed bound, inaccurate)",
            lambda bsplit=bsplit, m=m, n=n, kk=kk, asplit=asplit:
                presplit(asplit, bsplit, m, n, kk, CONFIGS[4], terms=1))
        del ref
        torch.cuda.empty_cache()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    lines = [f"# Split float16 products with a pre-split data operand ({meta['device']})", "",
             f"{meta['date']}; torch {meta['torch']}, triton {meta['triton']}; median of "
             f"{args.reps} CUDA-event timings after warm-up; TFLOP/s counted as float32 "
             "products (2 M N K per product, whatever the number of tensor-core products); "
             "error: relative 2-norm against the float64 product of the same float32 "
             "operands. Written by `benchmarks/box_presplit_gemm.py`.", "",
             "| job | variant | ms | TFLOP/s | rel. err |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['job']} | {r['variant']} | {r['ms']:.3f} | {r['tflops']:.1f} | "
                     f"{r['rel_err']:.1e} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
