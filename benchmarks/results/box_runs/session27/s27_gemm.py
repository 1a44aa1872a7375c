# ruff: noqa
"""Session 27 scratch: the 512^3 job's largest halves product (501 x 512 by 512 x 262144),
the shipped kernel at several tiles against persistent variants (flattened tile loop, TMA)."""
import os, sys, statistics, time
import torch, triton, triton.language as tl
from fastmoments.box import triton_gemm as tg

dev = torch.device("cuda")
torch.manual_seed(0)
M, K, F = 501, 512, 512 * 512
NSM = torch.cuda.get_device_properties(0).multi_processor_count


def bench(fn, reps=15):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


A = torch.randn(M, K, dtype=torch.float64, device=dev) / 30
x = torch.randn(1, F, K, dtype=torch.float32, device=dev)
data = tg.split_scaled(x)
const = tg.split_of(A.float())
rows = tg.table_exponents(A.float())[0]
ch, cl = const.hi, const.lo
if ch.ndim == 2:
    ch, cl = ch[None], cl[None]
const = tg.SplitOperand(ch, cl, const.inv_scale)
print("table halves", tuple(ch.shape), ch.stride(), "data", tuple(data.hi.shape), data.hi.stride(), flush=True)

# reference: float64 of the split operands
xs = (data.hi.double() + data.lo.double())[0]          # (F, K), scaled
As = (ch.double() + cl.double())[0]                     # (M, K), scaled
f = torch.exp2(rows.double()) * const.inv_scale
ref = (As @ xs[:65536].T) * f[:, None]                  # check on the first quarter of columns

def err(oh, ol):
    got = oh.view(M, F)[:, :65536].double() + ol.view(M, F)[:, :65536].double()
    return float((got - ref).norm() / ref.norm())

copy_src = torch.empty(2 * F * K, dtype=torch.float16, device=dev)
copy_dst = torch.empty(2 * M * F, dtype=torch.float16, device=dev)
t_copy = bench(lambda: copy_dst.copy_(copy_src[: copy_dst.numel()]))
print(f"copy of {copy_dst.numel()*4/1e9:.2f} GB r+w: {t_copy:.3f} ms; product min traffic {(2*F*K+2*M*F)*2/1e9:.2f} GB", flush=True)
flops = 3 * 2 * M * K * F

def report(name, t, e, extra=""):
    print(f"{name:48s} {t:7.3f} ms  {flops/t/1e9:6.0f} TFLOP/s(3 fp16 products)  err {e:.2e} {extra}", flush=True)

# --- the shipped kernel at several tiles
for tile in [None]:
    if tile is None:
        os.environ.pop("FASTMOMENTS_BOX_TILE", None)
    else:
        os.environ["FASTMOMENTS_BOX_TILE"] = tile
    try:
        fn = lambda: tg.halves_product(data, 2, const, data_first=False, out_exps=rows)
        y = fn()
        t = bench(fn)
        ks = list(tg._HALVES_LAUNCH._kernels.values())
        k = ks[-1] if ks else None
        occ = f"regs {k.n_regs} smem {k.metadata.shared//1024} KB spills {k.n_spills}" if k is not None else ""
        report(f"shipped tile {tile}", t, err(y.hi, y.lo), occ)
    except Exception as exc:
        print("shipped tile", tile, "failed:", type(exc).__name__, str(exc)[:200], flush=True)
os.environ.pop("FASTMOMENTS_BOX_TILE", None)


@triton.jit
def pers_kernel(xh_ptr, xl_ptr, yh_ptr, yl_ptr, rowf_ptr, oh_ptr, ol_ptr, M, N, K,
                s_xm, s_yn, s_om,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                NPROG: tl.constexpr, CHAIN: tl.constexpr, FLAT: tl.constexpr):
    start = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    num_tiles = tiles_m * tiles_n
    k_tiles = tl.cdiv(K, BK)
    per_group = GROUP * tiles_n
    rk = tl.arange(0, BK)
    for tile in tl.range(start, num_tiles, NPROG, flatten=FLAT):
        group = tile // per_group
        first_m = group * GROUP
        size_m = min(tiles_m - first_m, GROUP)
        pid_m = first_m + (tile % per_group) % size_m
        pid_n = (tile % per_group) // size_m
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rmc = tl.where(rm < M, rm, 0)
        x_off = rmc.to(tl.int64)[:, None] * s_xm + rk[None, :]
        y_off = rk[:, None] + rn.to(tl.int64)[None, :] * s_yn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kk in range(k_tiles):
            x_h = tl.load(xh_ptr + x_off)
            x_l = tl.load(xl_ptr + x_off)
            y_h = tl.load(yh_ptr + y_off)
            y_l = tl.load(yl_ptr + y_off)
            if CHAIN:
                acc = tl.dot(x_l, y_h, acc)
                acc = tl.dot(x_h, y_l, acc)
                acc = tl.dot(x_h, y_h, acc)
            else:
                t = tl.dot(x_l, y_h)
                t = tl.dot(x_h, y_l, t)
                t = tl.dot(x_h, y_h, t)
                acc += t
            x_off += BK
            y_off += BK
        acc = acc * tl.load(rowf_ptr + rm, mask=rm < M, other=0.0)[:, None]
        o_off = rm.to(tl.int64)[:, None] * s_om + rn[None, :]
        msk = (rm[:, None] < M) & (rn[None, :] < N)
        hi = acc.to(tl.float16)
        tl.store(oh_ptr + o_off, hi, mask=msk)
        tl.store(ol_ptr + o_off, (acc - hi.to(tl.float32)).to(tl.float16), mask=msk)


@triton.jit
def tma_kernel(xh_ptr, xl_ptr, yh_ptr, yl_ptr, rowf_ptr, oh_ptr, ol_ptr, M, N, K,
               s_xm, s_yn, s_om,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
               NPROG: tl.constexpr, CHAIN: tl.constexpr, FLAT: tl.constexpr,
               WS: tl.constexpr = False, EPI_TMA: tl.constexpr = True):
    start = tl.program_id(0)
    xh_d = tl.make_tensor_descriptor(xh_ptr, shape=[M, K], strides=[s_xm, 1], block_shape=[BM, BK])
    xl_d = tl.make_tensor_descriptor(xl_ptr, shape=[M, K], strides=[s_xm, 1], block_shape=[BM, BK])
    yh_d = tl.make_tensor_descriptor(yh_ptr, shape=[N, K], strides=[s_yn, 1], block_shape=[BN, BK])
    yl_d = tl.make_tensor_descriptor(yl_ptr, shape=[N, K], strides=[s_yn, 1], block_shape=[BN, BK])
    oh_d = tl.make_tensor_descriptor(oh_ptr, shape=[M, N], strides=[s_om, 1], block_shape=[BM, BN])
    ol_d = tl.make_tensor_descriptor(ol_ptr, shape=[M, N], strides=[s_om, 1], block_shape=[BM, BN])
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    num_tiles = tiles_m * tiles_n
    k_tiles = tl.cdiv(K, BK)
    per_group = GROUP * tiles_n
    for tile in tl.range(start, num_tiles, NPROG, flatten=FLAT, warp_specialize=WS):
        group = tile // per_group
        first_m = group * GROUP
        size_m = min(tiles_m - first_m, GROUP)
        pid_m = first_m + (tile % per_group) % size_m
        pid_n = (tile % per_group) // size_m
        m0 = pid_m * BM
        n0 = pid_n * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kk in range(k_tiles):
            k0 = kk * BK
            x_h = xh_d.load([m0, k0])
            x_l = xl_d.load([m0, k0])
            y_h = yh_d.load([n0, k0]).T
            y_l = yl_d.load([n0, k0]).T
            if CHAIN:
                acc = tl.dot(x_l, y_h, acc)
                acc = tl.dot(x_h, y_l, acc)
                acc = tl.dot(x_h, y_h, acc)
            else:
                t = tl.dot(x_l, y_h)
                t = tl.dot(x_h, y_l, t)
                t = tl.dot(x_h, y_h, t)
                acc += t
        rm = m0 + tl.arange(0, BM)
        acc = acc * tl.load(rowf_ptr + rm, mask=rm < M, other=0.0)[:, None]
        hi = acc.to(tl.float16)
        if EPI_TMA:
            oh_d.store([m0, n0], hi)
            ol_d.store([m0, n0], (acc - hi.to(tl.float32)).to(tl.float16))
        else:
            rn = n0 + tl.arange(0, BN)
            o_off = rm.to(tl.int64)[:, None] * s_om + rn[None, :]
            msk = (rm[:, None] < M) & (rn[None, :] < N)
            tl.store(oh_ptr + o_off, hi, mask=msk)
            tl.store(ol_ptr + o_off, (acc - hi.to(tl.float32)).to(tl.float16), mask=msk)


def alloc_fn(size, alignment, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


triton.set_allocator(alloc_fn)

yh, yl = data.hi[0], data.lo[0]            # (F, K)
xh, xl = ch[0], cl[0]                       # (M, K) with an aligned row stride
oh = torch.empty(M, F, dtype=torch.float16, device=dev)
ol = torch.empty_like(oh)
f32 = (torch.exp2(rows) * const.inv_scale).float().contiguous()
print("strides", xh.stride(), yh.stride(), flush=True)


@triton.jit
def wide_kernel(xh_ptr, xl_ptr, yh_ptr, yl_ptr, rowf_ptr, oh_ptr, ol_ptr, M, N, K,
                s_xm, s_yn, s_om,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                NPROG: tl.constexpr, SPLIT_M: tl.constexpr, EPI_TMA: tl.constexpr, FLAT: tl.constexpr):
    """Tiles BM x BN whose accumulator is two halves (along N, or along M with SPLIT_M), each
    with its own per-block sum: the operand tile shared by both halves is loaded once."""
    start = tl.program_id(0)
    if SPLIT_M:
        HM: tl.constexpr = BM // 2
        HN: tl.constexpr = BN
    else:
        HM: tl.constexpr = BM
        HN: tl.constexpr = BN // 2
    xh_d = tl.make_tensor_descriptor(xh_ptr, shape=[M, K], strides=[s_xm, 1], block_shape=[HM, BK])
    xl_d = tl.make_tensor_descriptor(xl_ptr, shape=[M, K], strides=[s_xm, 1], block_shape=[HM, BK])
    yh_d = tl.make_tensor_descriptor(yh_ptr, shape=[N, K], strides=[s_yn, 1], block_shape=[HN, BK])
    yl_d = tl.make_tensor_descriptor(yl_ptr, shape=[N, K], strides=[s_yn, 1], block_shape=[HN, BK])
    oh_d = tl.make_tensor_descriptor(oh_ptr, shape=[M, N], strides=[s_om, 1], block_shape=[HM, HN])
    ol_d = tl.make_tensor_descriptor(ol_ptr, shape=[M, N], strides=[s_om, 1], block_shape=[HM, HN])
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    num_tiles = tiles_m * tiles_n
    k_tiles = tl.cdiv(K, BK)
    per_group = GROUP * tiles_n
    for tile in tl.range(start, num_tiles, NPROG, flatten=FLAT):
        group = tile // per_group
        first_m = group * GROUP
        size_m = min(tiles_m - first_m, GROUP)
        pid_m = first_m + (tile % per_group) % size_m
        pid_n = (tile % per_group) // size_m
        m0 = pid_m * BM
        n0 = pid_n * BN
        acc0 = tl.zeros((HM, HN), dtype=tl.float32)
        acc1 = tl.zeros((HM, HN), dtype=tl.float32)
        for kk in range(k_tiles):
            k0 = kk * BK
            if SPLIT_M:
                y_h = yh_d.load([n0, k0]).T
                y_l = yl_d.load([n0, k0]).T
                x_h = xh_d.load([m0, k0])
                x_l = xl_d.load([m0, k0])
                t = tl.dot(x_l, y_h)
                t = tl.dot(x_h, y_l, t)
                t = tl.dot(x_h, y_h, t)
                acc0 += t
                x_h = xh_d.load([m0 + HM, k0])
                x_l = xl_d.load([m0 + HM, k0])
                t = tl.dot(x_l, y_h)
                t = tl.dot(x_h, y_l, t)
                t = tl.dot(x_h, y_h, t)
                acc1 += t
            else:
                x_h = xh_d.load([m0, k0])
                x_l = xl_d.load([m0, k0])
                y_h = yh_d.load([n0, k0]).T
                y_l = yl_d.load([n0, k0]).T
                t = tl.dot(x_l, y_h)
                t = tl.dot(x_h, y_l, t)
                t = tl.dot(x_h, y_h, t)
                acc0 += t
                y_h = yh_d.load([n0 + HN, k0]).T
                y_l = yl_d.load([n0 + HN, k0]).T
                t = tl.dot(x_l, y_h)
                t = tl.dot(x_h, y_l, t)
                t = tl.dot(x_h, y_h, t)
                acc1 += t
        rm0 = m0 + tl.arange(0, HM)
        rn0 = n0 + tl.arange(0, HN)
        if SPLIT_M:
            m1 = m0 + HM
            n1 = n0
        else:
            m1 = m0
            n1 = n0 + HN
        rm1 = m1 + tl.arange(0, HM)
        rn1 = n1 + tl.arange(0, HN)
        acc0 = acc0 * tl.load(rowf_ptr + rm0, mask=rm0 < M, other=0.0)[:, None]
        acc1 = acc1 * tl.load(rowf_ptr + rm1, mask=rm1 < M, other=0.0)[:, None]
        h0 = acc0.to(tl.float16)
        l0 = (acc0 - h0.to(tl.float32)).to(tl.float16)
        h1 = acc1.to(tl.float16)
        l1 = (acc1 - h1.to(tl.float32)).to(tl.float16)
        if EPI_TMA:
            oh_d.store([m0, n0], h0)
            ol_d.store([m0, n0], l0)
            oh_d.store([m1, n1], h1)
            ol_d.store([m1, n1], l1)
        else:
            o0 = rm0.to(tl.int64)[:, None] * s_om + rn0[None, :]
            k0m = (rm0[:, None] < M) & (rn0[None, :] < N)
            tl.store(oh_ptr + o0, h0, mask=k0m)
            tl.store(ol_ptr + o0, l0, mask=k0m)
            o1 = rm1.to(tl.int64)[:, None] * s_om + rn1[None, :]
            k1m = (rm1[:, None] < M) & (rn1[None, :] < N)
            tl.store(oh_ptr + o1, h1, mask=k1m)
            tl.store(ol_ptr + o1, l1, mask=k1m)


def launch(kern, nprog, bm, bn, bk, w, s, extra, ctas=1):
    extra = dict(extra)
    grp = extra.pop("GROUP", 8)
    def run():
        return kern[(nprog,)](xh, xl, yh, yl, f32, oh, ol, M, F, K, xh.stride(0), yh.stride(0), oh.stride(0),
                              BM=bm, BN=bn, BK=bk, GROUP=grp, NPROG=nprog, num_warps=w, num_stages=s,
                              **({"num_ctas": ctas} if ctas > 1 else {}), **extra)
    return run


NB = dict(CHAIN=False, FLAT=True)
configs = [("tma 128x128x64 w8 s3 (ref)", tma_kernel, 128, 128, 64, 8, 3, NB, 1, 1),
           ("tma 128x128x64 w8 s3 WS", tma_kernel, 128, 128, 64, 8, 3, dict(NB, WS=True), 1, 1),
           ("tma 128x128x64 w8 s2 WS", tma_kernel, 128, 128, 64, 8, 2, dict(NB, WS=True), 1, 1),
           ("tma 128x128x64 w4 s3 WS", tma_kernel, 128, 128, 64, 4, 3, dict(NB, WS=True), 1, 1),
           ("tma 128x128x32 w8 s4 WS", tma_kernel, 128, 128, 32, 8, 4, dict(NB, WS=True), 1, 1),
           ("tma 128x128x64 w8 s3 tl.store epi", tma_kernel, 128, 128, 64, 8, 3, dict(NB, EPI_TMA=False), 1, 1),
           ("tma 128x128x64 w8 s3 tl.store epi flat=False", tma_kernel, 128, 128, 64, 8, 3, dict(CHAIN=False, FLAT=False, EPI_TMA=False), 1, 1),
           ("tma 64x128x32 w4 s3 x2 progs", tma_kernel, 64, 128, 32, 4, 3, NB, 1, 2),
           ("tma 64x128x64 w4 s2 x2 progs", tma_kernel, 64, 128, 64, 4, 2, NB, 1, 2),
           ("tma 64x128x32 w4 s3 tl.store x2 progs", tma_kernel, 64, 128, 32, 4, 3, dict(NB, EPI_TMA=False), 1, 2),
           ("tma 64x128x32 w4 s4 tl.store x2 progs", tma_kernel, 64, 128, 32, 4, 4, dict(NB, EPI_TMA=False), 1, 2),
           ("tma 128x64x32 w4 s3 x2 progs", tma_kernel, 128, 64, 32, 4, 3, NB, 1, 2),
           ("tma 128x128x32 w8 s3 tl.store x2 progs", tma_kernel, 128, 128, 32, 8, 3, dict(NB, EPI_TMA=False), 1, 2),
           ("tma 128x128x64 w8 s3 GROUP=1", tma_kernel, 128, 128, 64, 8, 3, dict(NB, GROUP=1), 1, 1),
           ("tma 128x128x64 w8 s3 GROUP=32", tma_kernel, 128, 128, 64, 8, 3, dict(NB, GROUP=32), 1, 1),
           ]
for name, kern, bm, bn, bk, w, s, extra, ctas, occ in configs:
    try:
        run = launch(kern, NSM * occ, bm, bn, bk, w, s, extra, ctas)
        t0 = time.time()
        ck = run(); torch.cuda.synchronize()
        comp = time.time() - t0
        oh.zero_(); ol.zero_()
        run(); torch.cuda.synchronize()
        e = err(oh, ol)
        t = bench(run)
        report(name, t, e, f"regs {ck.n_regs} smem {ck.metadata.shared//1024} KB spills {ck.n_spills} compile {comp:.1f}s")
    except Exception as exc:
        print(name, "failed:", type(exc).__name__, str(exc)[:300], flush=True)
