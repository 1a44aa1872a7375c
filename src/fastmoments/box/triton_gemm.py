r"""Batched float32 GEMMs on tensor cores with float32 accuracy, for the box engine.

The box engine's work is matrix products (:mod:`.engine`). On CUDA cores float32 products
run at the card's float32 rate; tensor cores run TF32 or float16 many times faster on an
H100, but one such product is only accurate to about :math:`10^{-3}`. Splitting each operand
into a head and a remainder, :math:`a = a_h + a_l`, and summing three products

.. math:: a b \approx a_h b_h + a_h b_l + a_l b_h

drops only :math:`a_l b_l` and the rounding of the remainders (each about :math:`2^{-22}|ab|`),
so the result is as accurate as a float32 product. Two kernels do this, each a batched GEMM

.. math:: C_b = A_b B_b, \qquad A_b \in \mathbb{R}^{M \times K},\; B_b \in \mathbb{R}^{K \times N},

with arbitrary strides (a zero batch stride shares an operand between the batch entries):

* :func:`bmm_fp16x3` (``precision="fp16x3"``): float16 halves. float16 has TF32's 11
  significant bits but half its range, so the plan's table is scaled once by a power of two
  (:func:`split_constant`) and each row of every data tile by its own power of two inside
  the kernel. The tensor cores' running sums over long ``K`` lose bits on an H100 (1.8e-6
  against float64 at ``K = 512``); each tile's products are therefore added in float32
  outside them (1.3e-7).
* :func:`halves_product`: the engine's ``fp16x3`` stages (:mod:`.engine`), whose operands
  are already float16 halves (:class:`Halves`): each stage's epilogue writes the next
  stage's data as halves, scaled by powers of two known in advance, so that no product
  splits its data; :func:`bmm_fp16x3` serves the data out of those scales' range.

Measured on an H100 and an H200 with ``benchmarks/box_tensor_cores.py`` (the 512^3,
order-500 job): the halves stages took 4.4-4.9 ms (launches replayed; eagerly, as now, the
whole public job takes about 5 ms on an H200, ``benchmarks/gpu_targets.py``)
for forward and reconstruction against 10.6-11.6 ms for cuBLAS's float32 products, with
the error against float64 below 1e-6. The torch ``matmul`` stays the reference and the
CPU path. (Triton's own ``input_precision="tf32x3"`` took 13.8-13.9 ms there: not offered.)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import torch

from .._launches import launch
from .._triton import HAVE_TRITON as _HAVE_TRITON
from .._triton import available, loop_bound, tl, triton

__all__ = ["MAX_EXPONENT", "Halves", "SplitOperand", "available", "bmm_fp16x3",
           "halves_product", "l1_exponents", "padded_row", "scale_exponent", "split_constant",
           "split_scaled", "table_exponents"]

_MAX_GRID_Y = 65535

if _HAVE_TRITON:
    from .gemm_epilogue import store_halves, store_tile  # defined where Triton is

    @triton.jit
    def _tile_ranges(M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
        """Rows and columns of the output tile of program ``program_id(0)``, in grouped
        order: ``GROUP`` row tiles in a row share their column tiles in L2."""
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        per_group = GROUP * tiles_n
        group = pid // per_group
        first_m = group * GROUP
        size_m = min(tiles_m - first_m, GROUP)
        pid_m = first_m + (pid % per_group) % size_m
        pid_n = (pid % per_group) // size_m
        return pid_m * BM + tl.arange(0, BM), pid_n * BN + tl.arange(0, BN)

def _loop_bound(k: int, bk: int) -> dict[str, object]:
    """The kernels' loop-bound arguments: under ``TRITON_INTERPRET=1`` the number of K tiles
    as a constexpr, compiled a constant 0 (unused; the loop runs to ``cdiv(K, BK)``, so that
    one compiled kernel serves every K)."""
    return loop_bound("KTILES", triton.cdiv(k, bk))


# ------------------------------------------------------------------ split half precision
if _HAVE_TRITON:

    @triton.jit
    def _scaled_halves(d, AXIS: tl.constexpr):
        """Split the float32 tile ``d`` into float16 ``hi + lo`` after scaling each row
        (``AXIS=1``) or column (``AXIS=0``) by a power of two that brings its largest
        magnitude into [2^14, 2^15); returns ``hi, lo`` and the two factors of the inverse
        scale (each a normal float32, their product may not be)."""
        m = tl.max(tl.abs(d), axis=AXIS)
        e = (m.to(tl.int32, bitcast=True) >> 23) & 0xFF  # biased exponent, 0 for m = 0
        big = 141 - e  # m * 2^big < 2^15: float16 holds 65504
        e1 = big >> 1
        e2 = big - e1
        s1 = ((e1 + 127) << 23).to(tl.float32, bitcast=True)
        s2 = ((e2 + 127) << 23).to(tl.float32, bitcast=True)
        r1 = ((127 - e1) << 23).to(tl.float32, bitcast=True)
        r2 = ((127 - e2) << 23).to(tl.float32, bitcast=True)
        if AXIS == 1:
            y = d * s1[:, None] * s2[:, None]
        else:
            y = d * s1[None, :] * s2[None, :]
        hi = y.to(tl.float16)
        lo = (y - hi.to(tl.float32)).to(tl.float16)
        return hi, lo, r1, r2

    @triton.jit
    def _fp16x3_kernel(d_ptr, ch_ptr, cl_ptr, o_ptr, M, N, K, inv_c,
                       s_db, s_d0, s_d1, s_cb, s_c0, s_c1, s_ob, s_om, s_on,
                       DATA_A: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                       BK: tl.constexpr, GROUP: tl.constexpr, INTERPRET: tl.constexpr,
                       KTILES: tl.constexpr):
        batch = tl.program_id(1).to(tl.int64)
        rm, rn = _tile_ranges(M, N, BM, BN, GROUP)
        rk = tl.arange(0, BK)
        if DATA_A:  # data (M, K) @ constant (K, N)
            d_ptrs = (d_ptr + batch * s_db + rm[:, None].to(tl.int64) * s_d0
                      + rk[None, :] * s_d1)
            c_off = batch * s_cb + rk[:, None] * s_c0 + rn[None, :].to(tl.int64) * s_c1
            d_step = BK * s_d1
            c_step = BK * s_c0
        else:  # constant (M, K) @ data (K, N)
            d_ptrs = (d_ptr + batch * s_db + rk[:, None] * s_d0
                      + rn[None, :].to(tl.int64) * s_d1)
            c_off = batch * s_cb + rm[:, None].to(tl.int64) * s_c0 + rk[None, :] * s_c1
            d_step = BK * s_d0
            c_step = BK * s_c1
        ch_ptrs = ch_ptr + c_off
        cl_ptrs = cl_ptr + c_off
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        # the interpreter cannot loop to a runtime bound (NumPy >= 2.4 refuses int() of its
        # one-element scalars): there the bound is the constexpr KTILES (0 when compiled)
        for k in range(0, KTILES if INTERPRET else tl.cdiv(K, BK)):
            left = K - k * BK
            if DATA_A:
                d = tl.load(d_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
                cmask = (rk[:, None] < left) & (rn[None, :] < N)
                ch = tl.load(ch_ptrs, mask=cmask, other=0.0)
                cl = tl.load(cl_ptrs, mask=cmask, other=0.0)
                dh, dl, r1, r2 = _scaled_halves(d, 1)
                t = tl.dot(dl, ch)
                t = tl.dot(dh, cl, t)
                t = tl.dot(dh, ch, t)
                # promoted: each block of BK products is summed on the tensor cores, the
                # blocks in float32 here (the tensor cores' own long sums lose bits)
                acc += t * r1[:, None] * r2[:, None]
            else:
                d = tl.load(d_ptrs, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
                cmask = (rm[:, None] < M) & (rk[None, :] < left)
                ch = tl.load(ch_ptrs, mask=cmask, other=0.0)
                cl = tl.load(cl_ptrs, mask=cmask, other=0.0)
                dh, dl, r1, r2 = _scaled_halves(d, 0)
                t = tl.dot(cl, dh)
                t = tl.dot(ch, dl, t)
                t = tl.dot(ch, dh, t)
                acc += t * r1[None, :] * r2[None, :]
            d_ptrs += d_step
            ch_ptrs += c_step
            cl_ptrs += c_step
        acc = acc * inv_c
        o_ptrs = o_ptr + batch * s_ob + rm[:, None].to(tl.int64) * s_om + rn[None, :] * s_on
        tl.store(o_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@dataclass(frozen=True)
class SplitOperand:
    """A float32 matrix ``m`` kept as two float16 halves: ``m = (hi + lo) * inv_scale`` up to
    :math:`2^{-24}\\max|m|` per entry (``inv_scale`` a power of two, so scaling is exact)."""

    hi: torch.Tensor
    lo: torch.Tensor
    inv_scale: float


def _exponent_scale(top: float) -> float:
    """The power of two ``s`` with ``top * s`` in [2^14, 2^15)."""
    if not top > 0.0:
        return 1.0
    return 2.0 ** (14 - math.floor(math.log2(top)))


def split_constant(mat: torch.Tensor) -> SplitOperand:
    """Split a constant float32 matrix (a plan's table) into scaled float16 halves.

    One power-of-two scale for the whole matrix puts its largest entry in [2^14, 2^15);
    ``hi`` is the scaled matrix rounded to float16 and ``lo`` the rounded remainder, so
    ``(hi + lo) * inv_scale`` differs from ``mat`` by at most :math:`2^{-24}` of its largest
    entry (float16 keeps 11 significant bits, twice: 22, and the second rounding half a unit
    of the 12th bit below). Entries below :math:`2^{-10}` of the largest keep less relative
    precision, but no less absolute precision than that bound.
    """
    top = float(mat.detach().abs().max()) if mat.numel() else 0.0
    if not math.isfinite(top):
        raise ValueError("split_constant needs a finite matrix")
    scale = _exponent_scale(top)
    y = mat.detach().float() * scale
    hi = _padded(y.shape, torch.float16, y.device)
    lo = _padded(y.shape, torch.float16, y.device)
    hi.copy_(y)
    lo.copy_(y - hi.float())
    return SplitOperand(hi, lo, 1.0 / scale)


#: Rows are padded to this many elements, so that every row starts on a 16-element
#: boundary: Triton then loads whole vectors (a 501-element row stride halved the speed).
_ALIGN = 16


def _padded(shape: tuple[int, ...] | torch.Size, dtype: torch.dtype,
            device: torch.device) -> torch.Tensor:
    """An uninitialised tensor of ``shape`` whose rows have an aligned stride (a view)."""
    last = shape[-1]
    wide = -(-last // _ALIGN) * _ALIGN
    return torch.empty((*shape[:-1], wide), dtype=dtype, device=device)[..., :last]


def _tile16(m: int, n: int) -> tuple[int, int, int, int, int]:
    """``(BM, BN, BK, warps, stages)`` of the split kernel, measured on an H100
    (``benchmarks/box_tensor_cores.py``); small tiles under the interpreter."""
    if os.environ.get("TRITON_INTERPRET", "") == "1":
        return 16, 16, 16, 1, 1
    bm = 64 if m <= 64 else 128
    bn = 64 if n <= 64 else 128
    return bm, bn, 32, 4 if bm * bn <= 8192 else 8, 3


def bmm_fp16x3(data: torch.Tensor, const: SplitOperand, *, data_first: bool,
               tile: tuple[int, int, int, int, int] | None = None) -> torch.Tensor:
    r"""Batched ``data @ const`` (``data_first``) or ``const @ data`` on float16 tensor cores
    with float32 accuracy.

    ``data`` is float32 ``(B, M, K)`` (or ``(B, K, N)``), ``const`` a :class:`SplitOperand`
    ``(Bc, K, N)`` (or ``(Bc, M, K)``), ``Bc`` 1 (shared) or ``B``; strides are free.
    Inside the kernel each row (or column) of every ``BK``-wide tile of ``data`` is scaled by
    a power of two into float16's range and split into two float16 halves, so the product
    is three float16 products,

    .. math:: a b \approx (a_h b_h + a_h b_l + a_l b_h)\, s_a^{-1} s_b^{-1},

    whose dropped terms (:math:`a_l b_l` and the halves' roundings) are below
    :math:`3\cdot 2^{-23}|a||b|`. The tensor cores sum each tile's ``BK`` products; the
    tiles are added in float32 outside them, because the tensor cores' own running sum
    over all of ``K`` rounds towards zero (measured on an H100: 1.8e-6 relative error
    against 1.3e-7 promoted, ``K = 512``). Powers of two make every scaling exact, so a
    row keeps this accuracy whatever its magnitude, float32 subnormals included; only an
    entry more than :math:`2^{29}` below the largest of its row in a tile falls into
    float16's subnormals, with an absolute error below :math:`2^{-39}` of that largest.

    Returns a new ``(B, M, N)`` float32 tensor whose rows are padded to a 16-element
    stride (a view of a wider buffer); data that is neither row- nor column-major with such
    an aligned stride is copied first.
    """
    if data.dtype != torch.float32:
        raise TypeError(f"bmm_fp16x3 needs float32 data, got {data.dtype}")
    if data.ndim != 3 or const.hi.ndim != 3:
        raise ValueError("bmm_fp16x3 needs 3-D (batch, rows, columns) operands")
    a_shape = data.shape if data_first else const.hi.shape
    b_shape = const.hi.shape if data_first else data.shape
    if a_shape[2] != b_shape[1]:
        raise ValueError(f"bmm_fp16x3: inner sizes differ, {tuple(a_shape)} @ {tuple(b_shape)}")
    batch = max(data.shape[0], const.hi.shape[0])
    if data.shape[0] not in (1, batch) or const.hi.shape[0] not in (1, batch):
        raise ValueError("bmm_fp16x3: batch sizes do not broadcast")
    m, k, n = a_shape[1], a_shape[2], b_shape[2]
    out = _padded((batch, m, n), torch.float32, data.device)
    if out.numel() == 0:
        return out
    if k == 0:
        return out.zero_()
    rows = data.stride(2) == 1 and data.stride(1) % _ALIGN == 0
    cols = data.stride(1) == 1 and data.stride(2) % _ALIGN == 0  # a transposed view
    if not (rows or cols):
        # unaligned rows halve the kernel's speed; one copy costs less (measured: 6.4 ms
        # for a 512 x 512 x 501 operand read in place, 1.7 ms aligned)
        data = _padded(data.shape, torch.float32, data.device).copy_(data)
    s_db = data.stride(0) if data.shape[0] > 1 else 0
    s_cb = const.hi.stride(0) if const.hi.shape[0] > 1 else 0
    bm, bn, bk, warps, stages = _tile16(m, n) if tile is None else tile
    for start in range(0, batch, _MAX_GRID_Y):
        stop = min(batch, start + _MAX_GRID_Y)
        dd = data[start:stop] if s_db else data
        hh = const.hi[start:stop] if s_cb else const.hi
        ll = const.lo[start:stop] if s_cb else const.lo
        grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn), stop - start)
        launch(_fp16x3_kernel, grid, dd, hh, ll, out[start:stop], m, n, k, const.inv_scale,
               s_db, data.stride(1), data.stride(2), s_cb, const.hi.stride(1),
               const.hi.stride(2), out.stride(0), out.stride(1), out.stride(2),
               DATA_A=data_first, BM=bm, BN=bn, BK=bk, GROUP=8,
               **_loop_bound(k, bk), num_warps=warps, num_stages=stages)
    return out


# ------------------------------------------------------- operands kept as float16 halves
# The engine's stages can hand each other their results as float16 halves (see
# :mod:`.engine`, ``_analyze_halves``): every product then loads ready halves, and no pass
# splits its data. A stage's output is scaled by powers of two known before it is computed,
# from a bound on its magnitude: the row (or column) sums of the table times the bound of
# its input (measured on an H100 with ``benchmarks/box_tensor_cores.py``: a product of
# ready halves is 2.9x cuBLAS's float32 GEMM; splitting in a pass of its own costs what
# that saves).

if _HAVE_TRITON:

    @triton.jit
    def _split_scaled_kernel(x_ptr, hi_ptr, lo_ptr, zero_ptr, n, n_zero, scale, row, prow,
                             ZERO: tl.constexpr, PAD: tl.constexpr, BLOCK: tl.constexpr):
        """``hi + lo = scale * x`` as float16 halves, for a contiguous float32 ``x``; with
        ``ZERO``, 0 where the boolean ``zero`` (repeated every ``n_zero`` entries) is set;
        with ``PAD``, rows of ``row`` entries written ``prow`` apart."""
        i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = i < n
        y = tl.load(x_ptr + i, mask=mask, other=0.0) * scale
        if ZERO:
            y = tl.where(tl.load(zero_ptr + i % n_zero, mask=mask, other=0) != 0, 0.0, y)
        o = (i // row) * prow + i % row if PAD else i
        store_halves(hi_ptr, lo_ptr, o, y, mask)

    @triton.jit
    def _split_rows_kernel(x_ptr, hi_ptr, lo_ptr, zero_ptr, row, prow, zrows, scale,
                           ZERO: tl.constexpr, BLOCK: tl.constexpr):
        """:func:`_split_scaled_kernel` for rows written ``prow`` apart: one program per row
        (and block of ``BLOCK`` samples), so that no sample's place needs an integer
        division (the flat kernel's 64-bit divisions by the row length and by the mask's
        size made the reconstruction's split of 501^3 coefficients take 0.79 against
        0.45 ms for rows of 512). ``zero``: a mask of ``zrows`` rows, repeated."""
        r = tl.program_id(0).to(tl.int64)
        c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = c < row
        y = tl.load(x_ptr + r * row + c, mask=mask, other=0.0) * scale
        if ZERO:
            z = tl.load(zero_ptr + (r % zrows) * row + c, mask=mask, other=0)
            y = tl.where(z != 0, 0.0, y)
        store_halves(hi_ptr, lo_ptr, r * prow + c, y, mask)

    @triton.jit
    def _halves_kernel(xh_ptr, xl_ptr, yh_ptr, yl_ptr, rowf_ptr, colf_ptr, oh_ptr, ol_ptr,
                       z_ptr, M, N, K, s_xb, s_xm, s_xk, s_yb, s_yk, s_yn, s_ob, s_om, s_on,
                       W, s_ow, WX, s_xw, s_zm, s_zn, s_zw,
                       ROWF: tl.constexpr, COLF: tl.constexpr, HALVES: tl.constexpr,
                       SPLITN: tl.constexpr, SPLITM: tl.constexpr, ZERO: tl.constexpr,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       GROUP: tl.constexpr, INTERPRET: tl.constexpr, KTILES: tl.constexpr):
        """``C = X Y`` from float16 halves of both operands: three tensor-core products per
        block of ``BK`` (``x_l y_h + x_h y_l + x_h y_h``), each block added to the float32
        accumulator (the tensor cores' own long sums lose bits); then the epilogue
        :func:`.gemm_epilogue.store_tile`. With ``SPLITM`` row ``m`` of ``X`` is read at
        ``(m // WX) s_xm + (m % WX) s_xw``."""
        batch = tl.program_id(1).to(tl.int64)
        rm, rn = _tile_ranges(M, N, BM, BN, GROUP)
        rk = tl.arange(0, BK)
        if SPLITM:
            xrows = (rm // WX).to(tl.int64) * s_xm + (rm % WX).to(tl.int64) * s_xw
        else:
            xrows = rm.to(tl.int64) * s_xm
        x_off = batch * s_xb + xrows[:, None] + rk[None, :] * s_xk
        y_off = batch * s_yb + rk[:, None] * s_yk + rn[None, :].to(tl.int64) * s_yn
        mmask = rm[:, None] < M
        nmask = rn[None, :] < N
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, KTILES if INTERPRET else tl.cdiv(K, BK)):
            left = K - k * BK
            xm = mmask & (rk[None, :] < left)
            ym = (rk[:, None] < left) & nmask
            x_h = tl.load(xh_ptr + x_off, mask=xm, other=0.0)
            x_l = tl.load(xl_ptr + x_off, mask=xm, other=0.0)
            y_h = tl.load(yh_ptr + y_off, mask=ym, other=0.0)
            y_l = tl.load(yl_ptr + y_off, mask=ym, other=0.0)
            t = tl.dot(x_l, y_h)  # the small terms first
            t = tl.dot(x_h, y_l, t)
            t = tl.dot(x_h, y_h, t)
            acc += t
            x_off += BK * s_xk
            y_off += BK * s_yk
        store_tile(acc, rm, rn, batch, rowf_ptr, colf_ptr, oh_ptr, ol_ptr, z_ptr, M, N,
                   s_ob, s_om, s_on, W, s_ow, s_zm, s_zn, s_zw,
                   ROWF, COLF, HALVES, SPLITN, ZERO)


#: The halves of :func:`split_scaled` start their rows a multiple of this many entries apart.
ROW_ALIGN = 16

#: Largest power-of-two exponent, in magnitude, of a scale of the halves (beyond it the
#: factors that undo the scales could leave float32's normal range: the engine then uses
#: :func:`bmm_fp16x3`).
MAX_EXPONENT = 60


@dataclass(frozen=True)
class Halves:
    r"""A float32 tensor ``t`` of shape ``(B, D_1, ..., D_d)`` kept as float16 halves,

    .. math:: t = (h + l)\, 2^{-(e_0 + \sum_a e_a[i_a])},

    with ``base`` :math:`e_0` an integer and ``exps[a]`` either ``None`` (0 along that axis)
    or an integer vector (float32 values) over axis ``a + 1``. The scales bound the
    magnitude: :math:`|h + l| < 2^{16}`, the range of float16."""

    hi: torch.Tensor
    lo: torch.Tensor
    base: int
    exps: tuple[torch.Tensor | None, ...]

    @property
    def shape(self) -> torch.Size:
        return self.hi.shape

    def narrow(self, dim: int, start: int, length: int) -> Halves:
        """The view ``t.narrow(dim, start, length)`` (``dim >= 1``)."""
        e = self.exps[dim - 1]
        exps = (*self.exps[:dim - 1], None if e is None else e.narrow(0, start, length),
                *self.exps[dim:])
        return Halves(self.hi.narrow(dim, start, length), self.lo.narrow(dim, start, length),
                      self.base, exps)

    def exponents(self, axes: range) -> torch.Tensor | None:
        """:math:`e_0 + \\sum_a e_a` over ``axes`` (1-based, consecutive), flattened in
        row-major order (a float32 vector); ``None`` when no axis has an exponent (the
        constant ``base``)."""
        if all(self.exps[a - 1] is None for a in axes):
            return None
        total = None
        for a in axes:
            e = self.exps[a - 1]
            if e is None:
                e = torch.zeros(self.hi.shape[a], device=self.hi.device)
            total = e if total is None else (total[:, None] + e).reshape(-1)
        return total + self.base


def largest_magnitude(t: torch.Tensor) -> float:
    """``max |t|`` as a Python float (one reduction and one host read; 0 for an empty ``t``,
    NaN or infinity when ``t`` holds one). Computed on every call: nothing is kept."""
    if not t.numel():
        return 0.0
    return float(torch.linalg.vector_norm(t.detach(), ord=math.inf))


def scale_exponent(top: float) -> int | None:
    """The exponent ``e`` of the scale :math:`2^e` that brings ``top`` (a bound of the
    magnitudes, ``> 0``, or ``0``) into :math:`[2^{14}, 2^{15})`: 0 for 0, ``None`` when
    ``top`` is not finite or ``|e|`` exceeds :data:`MAX_EXPONENT`."""
    if not math.isfinite(top):
        return None
    base = 0 if top == 0.0 else 14 - math.floor(math.log2(top))
    return None if abs(base) > MAX_EXPONENT else base


def padded_row(row: int) -> int:
    """Entries between the starts of two rows of ``row`` entries in split halves: a multiple
    of :data:`ROW_ALIGN` for rows of ``4 ROW_ALIGN`` entries or more, else ``row``."""
    return -(-row // ROW_ALIGN) * ROW_ALIGN if row >= 4 * ROW_ALIGN else row


def split_scaled(t: torch.Tensor, zero: torch.Tensor | None = None,
                 top: float | None = None) -> Halves | None:
    """``t`` as :class:`Halves` with one scale, :math:`2^{e_0}` bringing its largest
    magnitude into :math:`[2^{14}, 2^{15})` (one reduction, one host read, one pass);
    ``None`` when that scale is beyond :data:`MAX_EXPONENT` or ``t`` is not finite.
    ``zero``: a boolean mask of ``t``'s trailing axes (broadcast over the leading ones)
    whose entries become 0 in the halves (the largest magnitude is taken over all).
    ``top``: a known bound of that largest magnitude, used instead of measuring it (no
    reduction, no host read; the scale brings the bound into :math:`[2^{14}, 2^{15})`, so
    the halves stay in range as long as it holds).

    Rows (the last axis) of at least ``4 ROW_ALIGN`` entries start a multiple of
    :data:`ROW_ALIGN` entries apart (the halves are then views of padded buffers, at most
    a quarter larger): the products read strided blocks of them, and strides that are not
    multiples of 16 kept Triton from vectorising those reads (the reconstruction of 501^3
    coefficients: 0.69 against 0.40 ms for its first product on an H100). Shorter rows
    are not padded (a row of 5 would take 3.2 times the memory)."""
    if top is None:
        top = largest_magnitude(t)
    base = scale_exponent(top)
    if base is None:
        return None
    x = t.contiguous()
    row = x.shape[-1] if x.ndim else 1
    prow = padded_row(row) if x.ndim > 1 else row
    hi = torch.empty((*x.shape[:-1], prow), dtype=torch.float16, device=x.device)
    lo = torch.empty_like(hi)
    n = x.numel()
    block = 4096
    z = None if zero is None else zero.to(device=x.device, dtype=torch.bool).contiguous()
    if z is not None and (z.ndim > x.ndim or tuple(x.shape[x.ndim - z.ndim:]) != z.shape):
        raise ValueError(f"split_scaled: a mask of shape {tuple(z.shape)} for {tuple(x.shape)}")
    if n and prow != row and n // row < 2**31:  # padded rows: one program per row
        if z is not None and z.ndim == 0:  # one flag for every entry: a row of it
            z = z.reshape(1).expand(row).contiguous()
        width = min(triton.next_power_of_2(row), 1024)
        launch(_split_rows_kernel, (n // row, triton.cdiv(row, width)),
               x, hi, lo, x if z is None else z, row, prow,
               1 if z is None else max(z.numel() // row, 1), 2.0 ** base, ZERO=z is not None,
               BLOCK=width, num_warps=4)
    elif n:
        launch(_split_scaled_kernel, (triton.cdiv(n, block),),
               x, hi, lo, x if z is None else z, n, 1 if z is None else max(z.numel(), 1),
               2.0 ** base, row, prow, ZERO=z is not None, PAD=prow != row, BLOCK=block,
               num_warps=8)
    if prow != row:
        hi, lo = hi[..., :row], lo[..., :row]
    return Halves(hi, lo, base, (None,) * (x.ndim - 1))


def table_exponents(mat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Integer exponents (float32 vectors) ``e_row``, ``e_col`` of a table with
    :math:`2^{e}\\,\\|row\\|_1 \\le 1` and :math:`2^{e}\\,\\|column\\|_1 \\le 1`
    (``-ceil(log2)`` of the sums, 0 for a zero row), and the largest of their magnitudes
    (an ``int``; one host read). The engine keeps them with the plan's table
    (:meth:`fastmoments.box.engine.AxisOp.exponents`)."""
    a = mat.detach().double().abs()
    return l1_exponents(a.sum(1), a.sum(0))


def l1_exponents(row_sums: torch.Tensor,
                 col_sums: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
    r"""For sums of magnitudes ``s`` (of a table's rows and columns): the integer exponents
    ``e = -ceil(log2 s)`` (0 for a zero sum), so that :math:`2^e s \le 1`, as float32
    vectors, and the largest of their magnitudes (an ``int``, one host read)."""
    def exps(s: torch.Tensor) -> torch.Tensor:
        return -torch.ceil(torch.log2(torch.where(s > 0, s, torch.ones_like(s))))

    rows, cols = exps(row_sums), exps(col_sums)
    top = max(float(rows.abs().max()) if rows.numel() else 0.0,
              float(cols.abs().max()) if cols.numel() else 0.0)
    return rows.float(), cols.float(), int(top)


def halves_product(data: Halves, k_axis: int, const: SplitOperand, *, data_first: bool,
                   out_exps: torch.Tensor | None,
                   out: torch.Tensor | tuple[torch.Tensor, torch.Tensor] | None = None,
                   zero: torch.Tensor | None = None) -> Halves | torch.Tensor:
    """One stage of the engine on halves, summing the axis ``k_axis`` of ``data`` (1 or the
    last; no exponent along it) with the table ``const``:

    * ``data_first=False``, ``k_axis`` last: ``const @ data``, the new axis (the table's
      rows) right after the batch, ``(B, M, *free)``;
    * ``data_first=True``, ``k_axis = 1``: ``data @ const``, the new axis (the table's
      columns) last, ``(B, *free, N)``.

    With ``out_exps`` (the exponents of the new axis) the result is :class:`Halves`, the
    data's exponents carried over on its free axes; without, a float32 tensor (the scales
    undone). ``out``: where to write the result, of its shape: for the float32 result of
    ``const @ data`` a view of any strides with at most two free axes (the engine's dense
    coefficients); for halves with the data first, ``(hi, lo)`` views whose free axes and
    new axis merge into two strided axes (a slice along axis 1 of a contiguous buffer).
    A data view whose free axes do not merge is read as two strided axes (at most two).
    ``zero``: with ``out`` for ``const @ data``, a boolean mask of the result's shape less
    the batch (any strides) whose entries are written as 0.
    """
    b = data.hi.shape[0]
    free, hi, lo, s_d, wx, s_xw = _data_operand(data, k_axis, data_first)
    free_shape = tuple(data.hi.shape[a] for a in free)
    kdim = data.hi.shape[k_axis]
    a_shape = (b, math.prod(free_shape), kdim) if data_first else const.hi.shape
    b_shape = const.hi.shape if data_first else hi.shape
    m, k, n = a_shape[1], a_shape[2], b_shape[2]
    if a_shape[2] != b_shape[1]:
        raise ValueError("halves_product: inner sizes differ")
    halves = out_exps is not None
    # (scalars from the host are Python numbers: a tensor made from one would be a copy
    # that waits for the GPU)
    f = _factors(data, free, out_exps, const.inv_scale, m if data_first else n)
    rowf, colf = (f, None) if halves == (not data_first) else (None, f)
    shape = (b, *free_shape, n) if data_first else (b, m, *free_shape)
    oh, ol, s_o, w, s_ow = _output(out, halves, data_first, shape, (b, m, n), free_shape,
                                   data.hi.device)
    shared = const.hi.shape[0] == 1
    s_c = (0 if shared else const.hi.stride(0), const.hi.stride(1), const.hi.stride(2))
    if data_first:
        x, y, s_x, s_y = (hi, lo), (const.hi, const.lo), s_d, s_c
    else:
        x, y, s_x, s_y = (const.hi, const.lo), (hi, lo), s_c, s_d
    s_z = (0, 0, 0)
    if zero is not None:
        if out is None or halves or tuple(zero.shape) != shape[1:]:
            raise ValueError("halves_product: zero= takes a mask of the float32 out=")
        s_z = (zero.stride(0), zero.stride(1), zero.stride(2) if zero.ndim > 2 else 0)
    flags = {"ROWF": rowf is not None, "COLF": colf is not None, "HALVES": halves,
             "SPLITN": s_ow != 0, "SPLITM": s_xw != 0, "ZERO": zero is not None}
    scalars = (m, n, k, *s_x, *s_y, *s_o, w, s_ow, wx, s_xw, *s_z)
    _launch_halves(x, y, (s_x[0], s_y[0]), (f if rowf is None else rowf,
                   f if colf is None else colf), (oh, ol), f if zero is None else zero,
                   scalars, flags, _tile_halves(m, n, not shared), b)
    return _halves_result(data, free, out_exps, data_first, out, oh, ol, shape)


def _data_operand(data: Halves, k_axis: int, data_first: bool
                  ) -> tuple[range, torch.Tensor, torch.Tensor, tuple[int, int, int], int, int]:
    """The data operand of :func:`halves_product` as the kernel reads it: its free axes,
    the halves as ``(B, F, K)`` (``data_first``) or ``(B, K, F)`` views, their strides,
    and ``(WX, s_xw)``: the free axes read as two strided axes when they do not merge
    (``WX = 1``, ``s_xw = 0`` otherwise)."""
    b = data.hi.shape[0]
    nd = data.hi.ndim
    kdim = data.hi.shape[k_axis]
    if data.exps[k_axis - 1] is not None:
        raise ValueError("halves_product: the summed axis carries an exponent")
    if data_first != (k_axis == 1) or (not data_first and k_axis != nd - 1):
        raise ValueError("halves_product: sums axis 1 with the data first, else the last")
    free = range(2, nd) if data_first else range(1, nd - 1)
    if not data_first:  # (B, F, K) -> (B, K, F)
        hi, lo = data.hi.reshape(b, -1, kdim).mT, data.lo.reshape(b, -1, kdim).mT
        return free, hi, lo, (hi.stride(0), hi.stride(1), hi.stride(2)), 1, 0
    try:  # (B, K, F) -> (B, F, K), a transposed view
        hi, lo = data.hi.view(b, kdim, -1).mT, data.lo.view(b, kdim, -1).mT
    except RuntimeError:  # free axes that do not merge (a block of a larger array)
        if nd == 4 and data.hi.stride() == data.lo.stride():
            # rows read in place as two strided axes, (m // WX, m % WX)
            hi = data.hi
            return (free, hi, data.lo, (hi.stride(0), hi.stride(2), hi.stride(1)),
                    hi.shape[3], hi.stride(3))
        hi = data.hi.reshape(b, kdim, -1).mT
        lo = data.lo.reshape(b, kdim, -1).mT
    return free, hi, lo, (hi.stride(0), hi.stride(1), hi.stride(2)), 1, 0


def _output(out: torch.Tensor | tuple[torch.Tensor, torch.Tensor] | None, halves: bool,
            data_first: bool, shape: tuple[int, ...], bmn: tuple[int, int, int],
            free_shape: tuple[int, ...], device: torch.device
            ) -> tuple[torch.Tensor, torch.Tensor, tuple[int, int, int], int, int]:
    """Where :func:`halves_product` writes: ``(oh, ol)`` as ``(B, M, N)`` (the same tensor
    twice for a float32 result), their strides and ``(W, s_ow)``: the columns written as
    two strided axes (``W = N``, ``s_ow = 0`` otherwise)."""
    b, m, n = bmn
    if out is not None and halves:
        if not data_first or tuple(out[0].shape) != shape or tuple(out[1].shape) != shape:
            raise ValueError("halves_product: out= takes halves of data @ const")
        oh, ol = out[0].view(b, m, n), out[1].view(b, m, n)
        if oh.stride() != ol.stride():
            raise ValueError("halves_product: out= halves of different strides")
        return oh, ol, (oh.stride(0), oh.stride(1), oh.stride(2)), n, 0
    if out is not None:
        if data_first or len(free_shape) > 2 or tuple(out.shape) != shape:
            raise ValueError("halves_product: out= takes the float32 result of const @ data")
        s_o = (out.stride(0), out.stride(1), out.stride(2))
        if len(free_shape) == 2:
            return out, out, s_o, free_shape[1], out.stride(3)
        return out, out, s_o, n, 0
    oh = torch.empty((b, m, n), dtype=torch.float16 if halves else torch.float32, device=device)
    ol = torch.empty_like(oh) if halves else oh
    return oh, ol, (oh.stride(0), oh.stride(1), oh.stride(2)), n, 0


def _launch_halves(x: tuple[torch.Tensor, torch.Tensor], y: tuple[torch.Tensor, torch.Tensor],
                   batch_strides: tuple[int, int], factors: tuple[torch.Tensor, torch.Tensor],
                   o: tuple[torch.Tensor, torch.Tensor], z: torch.Tensor, scalars: tuple,
                   flags: dict[str, bool], tile: tuple[int, int, int, int, int],
                   b: int) -> None:
    """Launch :func:`_halves_kernel` over the ``b`` batch entries (several launches when
    they exceed one grid axis); ``scalars``: ``M, N, K`` and the strides, in the kernel's
    order."""
    m, n, k = scalars[:3]
    bm, bn, bk, warps, stages = tile
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    for start in range(0, b, _MAX_GRID_Y):
        stop = min(b, start + _MAX_GRID_Y)
        if stop - start == b:  # one launch for the batch: no views of its part
            parts = (*x, *y)
            outs = o
        else:
            sl = slice(start, stop)
            parts = (_part(x[0], batch_strides[0], sl), _part(x[1], batch_strides[0], sl),
                     _part(y[0], batch_strides[1], sl), _part(y[1], batch_strides[1], sl))
            outs = (o[0][sl], o[1][sl])
        launch(_halves_kernel, (tiles, stop - start), *parts, *factors, *outs, z, *scalars,
               **flags, BM=bm, BN=bn, BK=bk, GROUP=8,
               **_loop_bound(k, bk), num_warps=warps, num_stages=stages)


def _halves_result(data: Halves, free: range, out_exps: torch.Tensor | None,
                   data_first: bool, out: object, oh: torch.Tensor, ol: torch.Tensor,
                   shape: tuple[int, ...]) -> Halves | torch.Tensor:
    """What :func:`halves_product` returns once its kernel is queued."""
    if out_exps is None:
        return oh if out is not None else oh.reshape(shape)
    kept = tuple(data.exps[a - 1] for a in free)
    exps = (*kept, out_exps) if data_first else (out_exps, *kept)
    if out is not None:
        return Halves(out[0], out[1], data.base, exps)
    return Halves(oh.reshape(shape), ol.reshape(shape), data.base, exps)


def _factors(data: Halves, free: range, out_exps: torch.Tensor | None, inv_scale: float,
             length: int) -> torch.Tensor:
    """The factors :func:`halves_product` applies to its result: :math:`2^{e}` times the
    table's ``inv_scale`` for the new axis (``out_exps``, halves out), else those that undo
    the data's scales along its free axes (float32 out). They depend only on the scales, so
    they are kept (at most :data:`_MAX_FACTORS` sets) under the addresses of the exponent
    vectors they come from, which each entry keeps alive (so no other vector can take those
    addresses while it is kept; the exponents are never modified), the base and the
    table's scale: a product then launches no small kernels of its own."""
    if out_exps is not None:
        parts: tuple[torch.Tensor | None, ...] = (out_exps,)
        key: tuple = ("new", _address(out_exps), inv_scale)
    else:
        parts = tuple(data.exps[a - 1] for a in free)
        key = ("undo", tuple(None if e is None else _address(e) for e in parts),
               tuple(data.hi.shape[a] for a in free), data.base, inv_scale, length,
               data.hi.device)
    hit = _FACTORS.get(key)
    if hit is not None:
        return hit[1]
    if out_exps is not None:
        f = torch.exp2(out_exps).mul_(inv_scale)
    else:
        e = data.exponents(free)
        f = (torch.exp2(-e).mul_(inv_scale) if e is not None
             else torch.full((length,), inv_scale * 2.0 ** -data.base, device=data.hi.device))
    if len(_FACTORS) >= _MAX_FACTORS:
        _FACTORS.clear()
    _FACTORS[key] = (parts, f)
    return f


def _address(e: torch.Tensor) -> tuple:
    return (e.data_ptr(), e.numel(), e.stride(0), e.dtype, e.device)


#: Factor sets kept by :func:`_factors` (the box jobs of a process need a few dozen).
_MAX_FACTORS = 256
_FACTORS: dict[tuple, tuple] = {}


def _part(t: torch.Tensor, batch_stride: int, sl: slice) -> torch.Tensor:
    """The batch entries ``sl`` of ``t`` for one launch (all of it when it is shared)."""
    return t[sl] if batch_stride else t


def _tile_halves(m: int, n: int, classes: bool = False) -> tuple[int, int, int, int, int]:
    """``(BM, BN, BK, warps, stages)`` of the halves product, measured on an H100
    (``benchmarks/box_tensor_cores.py``: 64-wide blocks for the large products, 32-wide
    where a side is at most 256; ten other settings were no faster on the 512^3 job; the
    products of the parity classes as one batch (``classes``: one table per batch entry),
    whose sides are about 251, were faster with 64-wide blocks, 5.8-6.0 against 6.1-7.8 ms
    for the 512^3 job); small tiles under the interpreter."""
    bm, bn, bk, warps, stages = _tile16(m, n)  # the split kernel's tiles, wider blocks
    if bk == 32 and (min(m, n) > 256 or (classes and min(m, n) > 128)):
        bk = 64
    return bm, bn, bk, warps, stages
