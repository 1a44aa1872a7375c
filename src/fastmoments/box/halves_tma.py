r"""The halves product of :func:`.triton_gemm.halves_product` as a persistent kernel whose
operand tiles arrive by TMA (the tensor memory accelerator of Hopper GPUs and later).

The product and its epilogue are those of :func:`.triton_gemm._halves_kernel`: three
float16 tensor-core products per block of ``BK`` (:math:`x_l y_h + x_h y_l + x_h y_h`),
each block added to a float32 accumulator, then the factors, the mask and the stores of
:func:`.gemm_epilogue.store_tile`. What differs is how the tiles are fed:

* **One program per multiprocessor**, each walking the output tiles ``pid, pid + P, ...``
  of every batch entry in turn, with the tile loop and the ``K`` loop flattened into one
  software pipeline (``tl.range(..., flatten=True)``): the loads of a tile's first blocks
  are issued while the previous tile's last blocks are multiplied and stored. The engine's
  products are short in ``K`` (at most 512), so a kernel of one tile per program spends a
  large part of each tile filling its pipeline.
* **TMA descriptors** (host-side, :class:`triton.tools.tensor_descriptor.TensorDescriptor`)
  for the four operand halves: the copy engine moves whole boxes into shared memory and
  fills what lies outside the operand with zeros, so the ragged edges of ``M``, ``N`` and
  ``K`` need no masks.

Used for the products whose results are halves (every stage but the last of each
direction). On the H100, in the 512^3, order-500 job of ``benchmarks/box_tensor_cores.py``:

* the largest product (501 x 512 by 512 x 262144) took 0.75-0.76 ms against 0.88 ms with
  :func:`.triton_gemm._halves_kernel`; with the parity classes as one batch the first
  products took 0.46 / 0.24 ms against 0.62 / 0.32 ms;
* a flattened tile loop with pointer loads instead of TMA spilled registers and was 3.5
  times slower; a second program per multiprocessor (smaller tiles) was no faster;
* the float32 results stay with the plain kernel: their epilogue's layout change takes
  64 KB of shared memory, which leaves two pipeline stages instead of three, and those
  products were slower (0.31 against 0.44 ms, 0.83 against 0.98 ms).

TMA needs every operand's innermost axis contiguous, its other strides and its address
multiples of 16 bytes, and a GPU of compute capability 9.0 or later; :func:`layout` says
whether a product qualifies, and :func:`.triton_gemm.halves_product` uses the plain kernel
otherwise. Under ``TRITON_INTERPRET=1`` (the CPU tests) it runs when
``FASTMOMENTS_BOX_TMA=1``; on CUDA ``FASTMOMENTS_BOX_TMA=0`` turns it off.
"""

from __future__ import annotations

import os

import torch

from .._triton import HAVE_TRITON, FastLaunch, multiprocessors, tl, triton

__all__ = ["enabled", "launch", "layout"]

if HAVE_TRITON:
    from triton.runtime.errors import OutOfResources
    from triton.tools.tensor_descriptor import TensorDescriptor

    from .gemm_epilogue import store_tile

    @triton.jit
    def _halves_tma_kernel(xh_d, xl_d, yh_d, yl_d, rowf_ptr, colf_ptr, oh_ptr, ol_ptr, z_ptr,
                           B, M, N, K, s_ob, s_om, s_on, W, s_ow, s_zm, s_zn, s_zw,
                           X_KMAJOR: tl.constexpr, Y_KMAJOR: tl.constexpr,
                           SHARED_X: tl.constexpr, SHARED_Y: tl.constexpr,
                           ROWF: tl.constexpr, COLF: tl.constexpr, HALVES: tl.constexpr,
                           SPLITN: tl.constexpr, ZERO: tl.constexpr,
                           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                           GROUP: tl.constexpr, NPROG: tl.constexpr,
                           INTERPRET: tl.constexpr, KTILES: tl.constexpr,
                           ITERS: tl.constexpr):
        """``C_b = X_b Y_b`` from the descriptors of the halves: ``X`` stored
        ``(B, M, K)`` (``X_KMAJOR``) or ``(B, K, M)``, ``Y`` stored ``(B, N, K)``
        (``Y_KMAJOR``) or ``(B, K, N)``, a batch of 1 with ``SHARED_X``/``SHARED_Y``.
        Program ``pid`` of ``NPROG`` takes tiles ``pid + i NPROG`` of the ``B`` batch
        entries' grouped tile orders, one after the other."""
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        per_batch = tiles_m * tiles_n
        per_group = GROUP * tiles_n
        # the interpreter cannot loop to a runtime bound: there each program takes ITERS
        # tiles (one program per tile), compiled ITERS is 0 and unused
        for i in tl.range(0, ITERS if INTERPRET else tl.cdiv(B * per_batch - pid, NPROG),
                          flatten=True):
            tile = pid + i * NPROG
            batch = tile // per_batch
            t = tile % per_batch
            first_m = (t // per_group) * GROUP
            size_m = min(tiles_m - first_m, GROUP)
            m0 = (first_m + (t % per_group) % size_m) * BM
            n0 = ((t % per_group) // size_m) * BN
            bx = 0 if SHARED_X else batch
            by = 0 if SHARED_Y else batch
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k in range(0, KTILES if INTERPRET else tl.cdiv(K, BK)):
                k0 = k * BK
                if X_KMAJOR:
                    x_h = xh_d.load([bx, m0, k0]).reshape(BM, BK)
                    x_l = xl_d.load([bx, m0, k0]).reshape(BM, BK)
                else:
                    x_h = xh_d.load([bx, k0, m0]).reshape(BK, BM).T
                    x_l = xl_d.load([bx, k0, m0]).reshape(BK, BM).T
                if Y_KMAJOR:
                    y_h = yh_d.load([by, n0, k0]).reshape(BN, BK).T
                    y_l = yl_d.load([by, n0, k0]).reshape(BN, BK).T
                else:
                    y_h = yh_d.load([by, k0, n0]).reshape(BK, BN)
                    y_l = yl_d.load([by, k0, n0]).reshape(BK, BN)
                p = tl.dot(x_l, y_h)  # the small terms first
                p = tl.dot(x_h, y_l, p)
                p = tl.dot(x_h, y_h, p)
                acc += p
            store_tile(acc, m0 + tl.arange(0, BM), n0 + tl.arange(0, BN), batch.to(tl.int64),
                       rowf_ptr, colf_ptr, oh_ptr, ol_ptr, z_ptr, M, N,
                       s_ob, s_om, s_on, W, s_ow, s_zm, s_zn, s_zw,
                       ROWF, COLF, HALVES, SPLITN, ZERO)


def enabled(device: torch.device) -> bool:
    """Whether products on ``device`` may take the TMA kernel: a CUDA GPU of compute
    capability 9.0 or later (unless ``FASTMOMENTS_BOX_TMA=0``), or the interpreter with
    ``FASTMOMENTS_BOX_TMA=1``."""
    if not HAVE_TRITON:
        return False
    flag = os.environ.get("FASTMOMENTS_BOX_TMA", "")
    if os.environ.get("TRITON_INTERPRET", "") == "1":
        return flag == "1"
    if device.type != "cuda" or flag == "0":
        return False
    idx = device.index if device.index is not None else torch.cuda.current_device()
    major = _CAPABILITY.get(idx)
    if major is None:
        major = _CAPABILITY[idx] = torch.cuda.get_device_capability(idx)[0]
    return major >= 9


_CAPABILITY: dict[int, int] = {}


def _operand(hi: torch.Tensor, lo: torch.Tensor, strides: tuple[int, int, int],
             rows: int, cols: int, batch: int) -> tuple[bool, tuple[int, int, int]] | None:
    """How a ``(batch, rows, cols)`` operand whose strides are ``strides`` (batch, row,
    column; batch 0 when shared) is stored for TMA: ``(cols_contiguous, (s_b, s_outer,
    1))`` with the stored axes ``(rows, cols)`` or ``(cols, rows)``, or ``None`` when its
    strides or addresses do not suit TMA (16-byte multiples, one contiguous axis, both
    halves alike)."""
    if hi.stride() != lo.stride() or hi.data_ptr() % 16 or lo.data_ptr() % 16:
        return None
    s_b, s_r, s_c = strides
    if s_c == 1 and (s_r % 8 == 0 or rows == 1):
        along_cols, outer = True, s_r
    elif s_r == 1 and (s_c % 8 == 0 or cols == 1):
        along_cols, outer = False, s_c
    else:
        return None
    if batch > 1 and s_b % 8:
        return None
    outer = outer if outer % 8 == 0 else -(-outer // 8) * 8  # an axis of one: any stride
    return along_cols, (s_b, outer, 1)


def layout(x: tuple[torch.Tensor, torch.Tensor], y: tuple[torch.Tensor, torch.Tensor],
           s_x: tuple[int, int, int], s_y: tuple[int, int, int], m: int, n: int,
           k: int, batch: int) -> tuple | None:
    """The stored layouts of the product's operands ``X`` ``(B, m, k)`` (strides ``s_x``,
    batch stride 0 when shared) and ``Y`` ``(B, k, n)`` (``s_y``) for :func:`launch`, or
    ``None`` when one of them does not suit TMA (or a size is 0: descriptors need
    positive sizes)."""
    if min(m, n, k, batch) == 0:
        return None
    lx = _operand(*x, s_x, m, k, 1 if s_x[0] == 0 else batch)
    ly = _operand(*y, s_y, k, n, 1 if s_y[0] == 0 else batch)
    if lx is None or ly is None:
        return None
    return lx, ly


def _descriptor(t: torch.Tensor, batch: int, rows: int, cols: int, along_cols: bool,
                strides: tuple[int, int, int], block: tuple[int, int]) -> TensorDescriptor:
    """A 3-D descriptor of the stored operand: ``(batch, rows, cols)`` when its columns
    are contiguous, else ``(batch, cols, rows)``; ``block`` in the same (logical) order."""
    shape = [batch, rows, cols] if along_cols else [batch, cols, rows]
    box = [1, *block] if along_cols else [1, block[1], block[0]]
    s_b = strides[0] if batch > 1 else max(strides[1] * shape[1], 8)
    s_b = -(-s_b // 8) * 8
    return TensorDescriptor(t, shape, [s_b, strides[1], 1], box)


def launch(lay: tuple, x: tuple[torch.Tensor, torch.Tensor],
           y: tuple[torch.Tensor, torch.Tensor], batch: int, shared_x: bool, shared_y: bool,
           m: int, n: int, k: int, tail: tuple, flags: dict[str, bool],
           tile: tuple[int, int, int, int, int], interpret: bool) -> bool:
    """Run the product of :func:`layout`'s operands: ``tail`` holds the epilogue's
    arguments after the descriptors (``rowf, colf, oh, ol, z``, then ``s_ob, s_om, s_on,
    W, s_ow, s_zm, s_zn, s_zw``), ``flags`` its constexpr flags (``ROWF, COLF, HALVES,
    SPLITN, ZERO``), ``tile`` ``(BM, BN, BK, warps, stages)``. ``False`` (nothing ran)
    when the kernel does not fit the GPU's shared memory even with two pipeline stages
    (GPUs with less of it than an H100): the caller then takes the plain kernel."""
    (x_cols, s_x), (y_cols, s_y) = lay
    bm, bn, bk, warps, stages = tile
    bx, by = (1 if shared_x else batch), (1 if shared_y else batch)
    xd = [_descriptor(t, bx, m, k, x_cols, s_x, (bm, bk)) for t in x]
    # Y is (k, n) logically; stored with its columns (n) contiguous or its rows (k)
    yd = [_descriptor(t, by, k, n, y_cols, s_y, (bk, bn)) for t in y]
    tiles = batch * triton.cdiv(m, bm) * triton.cdiv(n, bn)
    nprog = tiles if interpret else min(tiles, multiprocessors(x[0].device))
    rowf, colf, oh, ol, z, *strides = tail
    key = (tile, x_cols, y_cols, tuple(flags.values()))
    stages = _STAGES.get(key, stages)  # fewer where the first launch found too little
    while stages >= 1:
        try:
            _LAUNCH((nprog,), *xd, *yd, rowf, colf, oh, ol, z, batch, m, n, k, *strides,
                    X_KMAJOR=x_cols, Y_KMAJOR=not y_cols, SHARED_X=shared_x,
                    SHARED_Y=shared_y, **flags, BM=bm, BN=bn, BK=bk, GROUP=8, NPROG=nprog,
                    INTERPRET=interpret, KTILES=triton.cdiv(k, bk) if interpret else 0,
                    ITERS=1 if interpret else 0, num_warps=warps, num_stages=stages)
            return True
        except OutOfResources:  # raised before the launch: nothing ran
            stages = stages - 1 if stages > 2 else 0  # down to two stages, no fewer
            _STAGES[key] = stages
    return False


#: Pipeline stages that fit in shared memory, by tile, layouts and epilogue, where the
#: first launch found fewer than asked for (0: the kernel does not fit).
_STAGES: dict[tuple, int] = {}


_LAUNCH = FastLaunch(_halves_tma_kernel) if HAVE_TRITON else None
