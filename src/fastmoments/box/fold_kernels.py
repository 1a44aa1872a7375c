r"""The parity folds of the box engine (:func:`fastmoments.box.engine.fold`) as one Triton
pass (CUDA, or the CPU under ``TRITON_INTERPRET=1``); elsewhere the engine folds with torch.

With :math:`\alpha = \beta` every axis's matrix satisfies :math:`M_{n,N-1-i} = (-1)^n M_{n,i}`
(thesis Eq. 18), so the engine folds the input along every axis at once: for a volume the
eight parts

.. math:: f_{s}[i,j,k] = \sum_{a \in \{0,1\}^3} (-1)^{s \cdot a}\,
          f[\rho_{a_0}(i), \rho_{a_1}(j), \rho_{a_2}(k)], \qquad \rho_0(i) = i,\;
          \rho_1(i) = N - 1 - i,

one per parity class :math:`s` (0 even, 1 odd per axis; the middle sample of an odd axis
only in the even part), each on half of the pixels per axis. Torch needs a flip, an addition
and a subtraction per axis (three passes over the data each); the kernels here read every
sample once and write every part once, with the butterflies in the same order as the torch
folds (the first axis first), so both paths give the same bits. :func:`unfold` is the
adjoint (the synthesis), the butterflies in the reverse order. Images are volumes of depth 1
whose first axis is not folded.
"""

from __future__ import annotations

import torch

from .._launches import launch
from .._triton import HAVE_TRITON, available, tl, triton

__all__ = ["fold", "fold_halves", "triton_on", "unfold", "usable"]

#: Tile of one program: ``_BY`` rows of ``_BX`` samples, one depth index.
_BY, _BX = 8, 128


def triton_on(device: torch.device) -> bool:
    """Whether the Triton kernels run on ``device``: CUDA, or the CPU under
    ``TRITON_INTERPRET=1``, with Triton installed."""
    return HAVE_TRITON and available(device)


def usable(t: torch.Tensor, sym: list[bool]) -> bool:
    """Whether the kernels take this job: Triton on ``t``'s device, a float32 or float64
    ``t``, 2 or 3 axes, a parity on at least one of them."""
    return (triton_on(t.device) and t.dtype in (torch.float32, torch.float64)
            and len(sym) in (2, 3) and any(sym))


if HAVE_TRITON:
    from .gemm_epilogue import store_halves

    @triton.jit
    def _ld(base, z, y, x, sz, sy, mask, ENABLED: tl.constexpr):
        if ENABLED:
            v = tl.load(base + z * sz + y * sy + x, mask=mask, other=0.0)
        else:
            v = tl.zeros(mask.shape, dtype=base.dtype.element_ty)
        return v

    @triton.jit
    def _bf(a, b):
        return a + b, a - b

    @triton.jit
    def _part(ps, c):
        """Strides (batch, depth, row) of part ``c``; samples are contiguous."""
        return tl.load(ps + 3 * c), tl.load(ps + 3 * c + 1), tl.load(ps + 3 * c + 2)

    @triton.jit
    def _st(ptr, ps, c: tl.constexpr, b, i, j, k, v, nz, ny, nx, scale, lo_delta,
            HALVES: tl.constexpr, ENABLED: tl.constexpr):
        """Store ``v`` at its place in part ``c``; with ``HALVES``, ``scale * v`` as float16
        halves, the low half ``lo_delta`` entries after the high one (the same place in
        the buffer of the low halves)."""
        if ENABLED:
            sb, sz, sy = _part(ps, c)
            m = (i < nz) & (j < ny) & (k < nx)
            off = b * sb + i * sz + j * sy + k
            if HALVES:
                store_halves(ptr, ptr + lo_delta, off, v * scale, m)
            else:
                tl.store(ptr + off, v, mask=m)

    @triton.jit
    def _fold_kernel(x_ptr, sxb, sxz, sxy, D, H, W, CZ, CY, CX, HZ, HY, HX,
                     p0, p1, p2, p3, p4, p5, p6, p7, ps, scale, lo_delta,
                     FZ: tl.constexpr, FY: tl.constexpr, FX: tl.constexpr,
                     HALVES: tl.constexpr, BY: tl.constexpr, BX: tl.constexpr):
        """The parts of every class from the 8 reflections of a tile (see :func:`fold`)."""
        pid = tl.program_id(0).to(tl.int64)
        b = pid // CZ
        i = pid - b * CZ
        j = tl.program_id(1) * BY + tl.arange(0, BY)[:, None]
        k = tl.program_id(2) * BX + tl.arange(0, BX)[None, :]
        base = x_ptr + b * sxb
        m = (j < CY) & (k < CX)
        zi, zh = i, D - 1 - i
        yi, yh = j, H - 1 - j
        xi, xh = k, W - 1 - k
        mz = i < HZ
        my = j < HY
        mx = k < HX
        v000 = _ld(base, zi, yi, xi, sxz, sxy, m, True)
        v001 = _ld(base, zi, yi, xh, sxz, sxy, m & mx, FX)
        v010 = _ld(base, zi, yh, xi, sxz, sxy, m & my, FY)
        v011 = _ld(base, zi, yh, xh, sxz, sxy, m & my & mx, FY and FX)
        v100 = _ld(base, zh, yi, xi, sxz, sxy, m & mz, FZ)
        v101 = _ld(base, zh, yi, xh, sxz, sxy, m & mz & mx, FZ and FX)
        v110 = _ld(base, zh, yh, xi, sxz, sxy, m & mz & my, FZ and FY)
        v111 = _ld(base, zh, yh, xh, sxz, sxy, m & mz & my & mx, FZ and FY and FX)
        # depth first, then rows, then samples: the order of the torch folds
        a000, a100 = _bf(v000, v100)
        a001, a101 = _bf(v001, v101)
        a010, a110 = _bf(v010, v110)
        a011, a111 = _bf(v011, v111)
        b000, b010 = _bf(a000, a010)
        b001, b011 = _bf(a001, a011)
        b100, b110 = _bf(a100, a110)
        b101, b111 = _bf(a101, a111)
        c000, c001 = _bf(b000, b001)
        c010, c011 = _bf(b010, b011)
        c100, c101 = _bf(b100, b101)
        c110, c111 = _bf(b110, b111)
        s, d = scale, lo_delta
        _st(p0, ps, 0, b, i, j, k, c000, CZ, CY, CX, s, d, HALVES, True)
        _st(p1, ps, 1, b, i, j, k, c001, CZ, CY, HX, s, d, HALVES, FX)
        _st(p2, ps, 2, b, i, j, k, c010, CZ, HY, CX, s, d, HALVES, FY)
        _st(p3, ps, 3, b, i, j, k, c011, CZ, HY, HX, s, d, HALVES, FY and FX)
        _st(p4, ps, 4, b, i, j, k, c100, HZ, CY, CX, s, d, HALVES, FZ)
        _st(p5, ps, 5, b, i, j, k, c101, HZ, CY, HX, s, d, HALVES, FZ and FX)
        _st(p6, ps, 6, b, i, j, k, c110, HZ, HY, CX, s, d, HALVES, FZ and FY)
        _st(p7, ps, 7, b, i, j, k, c111, HZ, HY, HX, s, d, HALVES, FZ and FY and FX)

    @triton.jit
    def _ldp(ptr, ps, c: tl.constexpr, b, i, j, k, nz, ny, nx, ENABLED: tl.constexpr):
        if ENABLED:
            sb, sz, sy = _part(ps, c)
            m = (i < nz) & (j < ny) & (k < nx)
            v = tl.load(ptr + b * sb + i * sz + j * sy + k, mask=m, other=0.0)
        else:
            v = tl.zeros(((j < 0) | (k < 0)).shape, dtype=ptr.dtype.element_ty)
        return v

    @triton.jit
    def _unfold_kernel(x_ptr, sxb, sxz, sxy, D, H, W, CZ, CY, CX, HZ, HY, HX,
                       p0, p1, p2, p3, p4, p5, p6, p7, ps,
                       FZ: tl.constexpr, FY: tl.constexpr, FX: tl.constexpr,
                       BY: tl.constexpr, BX: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        b = pid // CZ
        i = pid - b * CZ
        j = tl.program_id(1) * BY + tl.arange(0, BY)[:, None]
        k = tl.program_id(2) * BX + tl.arange(0, BX)[None, :]
        c000 = _ldp(p0, ps, 0, b, i, j, k, CZ, CY, CX, True)
        c001 = _ldp(p1, ps, 1, b, i, j, k, CZ, CY, HX, FX)
        c010 = _ldp(p2, ps, 2, b, i, j, k, CZ, HY, CX, FY)
        c011 = _ldp(p3, ps, 3, b, i, j, k, CZ, HY, HX, FY and FX)
        c100 = _ldp(p4, ps, 4, b, i, j, k, HZ, CY, CX, FZ)
        c101 = _ldp(p5, ps, 5, b, i, j, k, HZ, CY, HX, FZ and FX)
        c110 = _ldp(p6, ps, 6, b, i, j, k, HZ, HY, CX, FZ and FY)
        c111 = _ldp(p7, ps, 7, b, i, j, k, HZ, HY, HX, FZ and FY and FX)
        # samples first, then rows, then depth: the order of the torch unfolds
        b000, b001 = _bf(c000, c001)
        b010, b011 = _bf(c010, c011)
        b100, b101 = _bf(c100, c101)
        b110, b111 = _bf(c110, c111)
        a000, a010 = _bf(b000, b010)
        a001, a011 = _bf(b001, b011)
        a100, a110 = _bf(b100, b110)
        a101, a111 = _bf(b101, b111)
        v000, v100 = _bf(a000, a100)
        v001, v101 = _bf(a001, a101)
        v010, v110 = _bf(a010, a110)
        v011, v111 = _bf(a011, a111)
        base = x_ptr + b * sxb
        m = (j < CY) & (k < CX)
        zh, yh, xh = D - 1 - i, H - 1 - j, W - 1 - k
        mz = i < HZ
        my = j < HY
        mx = k < HX
        tl.store(base + i * sxz + j * sxy + k, v000, mask=m)
        if FX:
            tl.store(base + i * sxz + j * sxy + xh, v001, mask=m & mx)
        if FY:
            tl.store(base + i * sxz + yh * sxy + k, v010, mask=m & my)
        if FY and FX:
            tl.store(base + i * sxz + yh * sxy + xh, v011, mask=m & my & mx)
        if FZ:
            tl.store(base + zh * sxz + j * sxy + k, v100, mask=m & mz)
        if FZ and FX:
            tl.store(base + zh * sxz + j * sxy + xh, v101, mask=m & mz & mx)
        if FZ and FY:
            tl.store(base + zh * sxz + yh * sxy + k, v110, mask=m & mz & my)
        if FZ and FY and FX:
            tl.store(base + zh * sxz + yh * sxy + xh, v111, mask=m & mz & my & mx)


def _geometry(shape: tuple[int, ...], sym: list[bool]) -> tuple[list[int], list[bool], list[int],
                                                               list[int]]:
    """Depth, rows and samples (a depth of 1 for images), the folds, and per axis the sizes
    of the even (``ceil(N/2)``, or ``N`` unfolded) and odd (``floor(N/2)``) parts."""
    dims = list(shape) if len(shape) == 3 else [1, *shape]
    flags = list(sym) if len(sym) == 3 else [False, *sym]
    even = [n - n // 2 if f else n for n, f in zip(dims, flags, strict=True)]
    odd = [n // 2 if f else 0 for n, f in zip(dims, flags, strict=True)]
    return dims, flags, even, odd


def _class_index(cls: tuple[int, ...]) -> int:
    """The kernel's part number of a class (depth, rows, samples bits)."""
    c = (0, *cls) if len(cls) == 2 else cls
    return 4 * c[0] + 2 * c[1] + c[2]


def _all_classes(flags: list[bool], nsp: int) -> list[tuple[int, ...]]:
    out = []
    for c in range(8):
        bits = ((c >> 2) & 1, (c >> 1) & 1, c & 1)
        if all(f or not s for f, s in zip(flags, bits, strict=True)):
            out.append(bits[3 - nsp:])
    return out


def _launch(kernel, x: torch.Tensor, parts: dict[tuple[int, ...], torch.Tensor],
            sym: list[bool], dims: list[int], even: list[int], odd: list[int],
            flags: list[bool], halves: tuple[float, int] | None = None) -> None:
    """Launch the fold or the unfold ``kernel``; ``halves``: ``(scale, offset of the low
    halves)`` of a fold into halves."""
    nsp = len(sym)
    ptrs = [parts[(0,) * nsp]] * 8
    strides = [0] * 24
    for cls, t in parts.items():
        c = _class_index(cls)
        ptrs[c] = t
        st = t.stride() if nsp == 3 else (t.stride(0), 0, *t.stride()[1:])
        strides[3 * c: 3 * c + 3] = st[:3]
    ps = _stride_table(tuple(strides), x.device)
    xs = x.stride() if nsp == 3 else (x.stride(0), 0, *x.stride()[1:])
    bsz = x.shape[0]
    grid = (bsz * even[0], triton.cdiv(even[1], _BY), triton.cdiv(even[2], _BX))
    extra: dict = {}
    if kernel is _fold_kernel:  # (scale, offset of the low halves) or a plain float fold
        scale, delta = halves if halves is not None else (1.0, 0)
        extra = {"scale": scale, "lo_delta": delta, "HALVES": halves is not None}
    launch(kernel, grid, x, xs[0], xs[1], xs[2], *dims, *even, *odd, *ptrs, ps, **extra,
           FZ=flags[0], FY=flags[1], FX=flags[2], BY=_BY, BX=_BX, num_warps=4)


def _stride_table(strides: tuple[int, ...], device: torch.device) -> torch.Tensor:
    """The parts' strides as an int64 tensor on ``device``, kept per strides and device: a
    copy from pageable host memory waits for the stream, so making it on every call held
    the unfold until the products before it had finished (0.16 ms of idle GPU before the
    unfold of the 512^3 job of ``benchmarks/box_tensor_cores.py``, on an H100)."""
    key = (strides, device)
    t = _STRIDES.get(key)
    if t is None:
        if len(_STRIDES) >= 64:
            _STRIDES.clear()
        t = _STRIDES[key] = torch.tensor(strides, dtype=torch.int64).to(device)
    return t


_STRIDES: dict[tuple, torch.Tensor] = {}


def _part_sizes(x: torch.Tensor, sym: list[bool]) -> dict[tuple[int, ...], tuple[int, ...]]:
    """The shape of each class's part of ``x`` ``(B, [D,] H, W)`` folded along ``sym``."""
    nsp = len(sym)
    _dims, flags, even, odd = _geometry(tuple(x.shape[1:]), sym)
    sizes = {}
    for cls in _all_classes(flags, nsp):
        full = (0, *cls) if nsp == 2 else cls
        sizes[cls] = (x.shape[0], *[odd[a] if full[a] else even[a] for a in range(3)][3 - nsp:])
    return sizes


def fold(x: torch.Tensor, sym: list[bool]) -> dict[tuple[int, ...], torch.Tensor]:
    """The parity parts of ``x`` ``(B, [D,] H, W)``, one contiguous tensor per class (see the
    module notes); ``sym`` says which axes are folded."""
    dims, flags, even, odd = _geometry(tuple(x.shape[1:]), sym)
    if x.stride(-1) != 1:
        x = x.contiguous()
    parts = {cls: x.new_empty(size) for cls, size in _part_sizes(x, sym).items()}
    if not x.numel():
        return parts
    if not triton_on(x.device):
        raise RuntimeError("fold needs Triton (CUDA, or TRITON_INTERPRET=1)")
    _launch(_fold_kernel, x, parts, sym, dims, even, odd, flags)
    return parts


def fold_halves(x: torch.Tensor, sym: list[bool], hi: dict[tuple[int, ...], torch.Tensor],
                lo_delta: int, scale: float) -> None:
    """:func:`fold` written as float16 halves, ``hi + lo = scale * part`` (the rounding of
    :func:`fastmoments.box.triton_gemm.split_scaled`, so the bits are those of a fold
    followed by that split): ``hi`` holds one float16 view per class of the part's shape
    (contiguous samples), and each low half is written ``lo_delta`` entries after its high
    half (views of one buffer, say). Triton only (CUDA, or the CPU under ``TRITON_INTERPRET=1``)."""
    dims, flags, even, odd = _geometry(tuple(x.shape[1:]), sym)
    if x.stride(-1) != 1:
        x = x.contiguous()
    for cls, size in _part_sizes(x, sym).items():
        t = hi.get(cls)
        if (t is None or tuple(t.shape) != size or t.stride(-1) != 1
                or t.dtype != torch.float16 or t.device != x.device):
            raise ValueError(f"fold_halves: hi[{cls}] must be a float16 tensor of shape {size} "
                             f"on {x.device} with contiguous rows")
    if not triton_on(x.device):
        raise RuntimeError("fold_halves needs Triton (CUDA, or TRITON_INTERPRET=1)")
    if x.numel():
        _launch(_fold_kernel, x, hi, sym, dims, even, odd, flags, (float(scale), int(lo_delta)))


def unfold(parts: dict[tuple[int, ...], torch.Tensor], sym: list[bool],
           npix: list[int]) -> torch.Tensor:
    """The adjoint of :func:`fold`: ``(B, [D,] H, W)`` from the parts of every class."""
    nsp = len(sym)
    dims, flags, even, odd = _geometry(tuple(npix), sym)
    parts = {c: (t if t.stride(-1) == 1 else t.contiguous()) for c, t in parts.items()}
    first = parts[(0,) * nsp]
    x = first.new_empty((first.shape[0], *npix))
    if not x.numel():
        return x
    if not triton_on(x.device):
        raise RuntimeError("unfold needs Triton (CUDA, or TRITON_INTERPRET=1)")
    _launch(_unfold_kernel, x, parts, sym, dims, even, odd, flags)
    return x
