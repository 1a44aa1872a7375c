r"""The separable engine shared by 2-D and 3-D box moments: contract one axis at a time.

Moments (thesis Eq. 35 and 42) are :math:`J = A_0 \times_0 (A_1 \times_1 (A_2 \times_2 f))`,
where :math:`A_a` is the analysis matrix of axis :math:`a` and :math:`\times_a` a matrix product
along that axis; reconstruction (Eq. 23/26) is the same with the synthesis matrices transposed,
in the opposite order. Each product is one GEMM (``torch.matmul``; cuBLAS on a GPU), so the
same code runs 2-D images and 3-D volumes, on the CPU and on CUDA, and autograd flows through.

Two savings cut the GEMM work:

* **Parity** (thesis Eq. 18). When :math:`\alpha=\beta` the matrices satisfy
  :math:`M_{n,N-1-i} = (-1)^n M_{n,i}`. The input is folded along the axis,
  :math:`f^\pm_i = f_i \pm f_{N-1-i}`, even degrees are contracted with :math:`f^+` and odd
  degrees with :math:`f^-`, over half of the pixels: half the multiply-adds. Reconstruction
  computes the even and odd parts on half of the pixels and unfolds them.
* **Total-degree truncation** (:math:`m+n(+o)\le` order, the thesis's set). The degrees of
  every axis but the last one contracted are split into blocks; a block whose smallest degree
  is :math:`r_0` needs degrees only up to ``order - r0`` on the axes after it. On the second
  axis this halves the work, on the third it cuts it towards a sixth.

Inside the engine each axis's degrees are stored by *class*: all of them (no parity), or the
even degrees followed by the odd ones, so that every block is a contiguous range of rows and
every GEMM is large; the result is put back in natural degree order by one gather. Blocks are
keyed by ``(start, stop)`` row ranges (plain integers, never tensors) and are the same in
analysis and synthesis, which are exact adjoints of each other.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from . import triton_gemm

__all__ = ["PRECISIONS", "AxisOp", "analyze", "block_keys", "matmul_precision", "synthesize"]

#: A block of rows on one axis, in the engine's class order: ``(start, stop)``.
Block = tuple[int, int]


@dataclass(frozen=True)
class AxisOp:
    """One axis's matrix ``full`` (rows = degrees, columns = pixels), split by parity class.

    ``classes`` holds, per class, ``(first_row, degrees, matrix)``: the class's rows start at
    ``first_row`` in the engine's order, ``degrees`` lists their degrees (ascending) and
    ``matrix`` is their part of ``full`` over the pixels the class uses (the first
    ``ceil(N/2)`` for even degrees, ``floor(N/2)`` for odd ones, all ``N`` without parity).
    ``to_rows`` and ``to_degrees`` are the permutations between degree order and the engine's
    row order (``None`` without parity), kept on the device so that no call copies indices.
    """

    full: torch.Tensor
    classes: tuple[tuple[int, tuple[int, ...], torch.Tensor], ...]
    symmetric: bool
    to_rows: torch.Tensor | None = None
    to_degrees: torch.Tensor | None = None

    @classmethod
    def build(cls, full: torch.Tensor, symmetric: bool) -> AxisOp:
        p, n = full.shape
        if not symmetric:
            return cls(full, ((0, tuple(range(p)), full),), False)
        c, h = n - n // 2, n // 2
        even = tuple(range(0, p, 2))
        odd = tuple(range(1, p, 2))
        classes = [(0, even, full[0::2, :c].contiguous())]
        if odd:
            classes.append((len(even), odd, full[1::2, :h].contiguous()))
        degrees = list(even + odd)
        rows = [0] * p
        for r, d in enumerate(degrees):
            rows[d] = r
        return cls(full, tuple(classes), True, torch.tensor(rows, device=full.device),
                   torch.tensor(degrees, device=full.device))

    @property
    def npix(self) -> int:
        return int(self.full.shape[1])

    @property
    def nrows(self) -> int:
        return int(self.full.shape[0])

    def degree_of_row(self, row: int) -> int:
        for first, degrees, _m in self.classes:
            if first <= row < first + len(degrees):
                return degrees[row - first]
        raise IndexError(row)  # pragma: no cover


def _class_rows(op: AxisOp, nmax: int) -> list[tuple[int, int, int]]:
    """Per class: ``(class index, first row, rows with degree <= nmax)``."""
    out = []
    for ci, (first, degrees, _m) in enumerate(op.classes):
        n = sum(1 for d in degrees if d <= nmax)
        if n:
            out.append((ci, first, n))
    return out


def _pieces(first: int, n: int, op: AxisOp, split: bool, block: int) -> list[tuple[int, int]]:
    """Split rows ``first .. first + n`` into blocks spanning about ``block`` degrees."""
    if not split:
        return [(0, n)]
    step = block // 2 if op.symmetric else block
    step = max(step, 1)
    return [(j, min(j + step, n)) for j in range(0, n, step)]


def _splits(stage: int, nsp: int, total: bool) -> bool:
    """Whether stage ``stage`` splits its degrees into blocks (all but the last stage)."""
    return total and stage < nsp - 1


def _limit(ops: list[AxisOp], order: int, total: bool, key: dict[int, Block]) -> int:
    if not total:
        return order
    return order - sum(ops[ax].degree_of_row(r[0]) for ax, r in key.items())


def block_keys(ops: list[AxisOp], order: int, total: bool, block: int) -> list[tuple[Block, ...]]:
    """The coefficient blocks (one row range per axis) that :func:`analyze` produces."""
    nsp = len(ops)
    keys: list[dict[int, Block]] = [{}]
    for stage in range(nsp):
        ax = nsp - 1 - stage
        split = _splits(stage, nsp, total)
        new = []
        for key in keys:
            nmax = min(_limit(ops, order, total, key), ops[ax].nrows - 1)
            if nmax < 0:
                continue
            for _ci, first, n in _class_rows(ops[ax], nmax):
                for j0, j1 in _pieces(first, n, ops[ax], split, block):
                    new.append({**key, ax: (first + j0, first + j1)})
        keys = new
    return [tuple(k[ax] for ax in range(nsp)) for k in keys]


#: How float32 products are computed on CUDA: ``"float32"`` (cuBLAS on CUDA cores),
#: ``"fp16x3"`` (float16 tensor cores, each operand split into two scaled halves, float32
#: accuracy) or ``"tf32x3"`` (TF32 tensor cores, three TF32 products); both are in
#: :mod:`.triton_gemm`. Set per call by the plans through :func:`matmul_precision`; a
#: context variable, so that threads (one per GPU) and concurrent plans never see each
#: other's setting.
_PRECISION: contextvars.ContextVar[str] = contextvars.ContextVar("box_matmul_precision",
                                                                 default="float32")
PRECISIONS = ("float32", "fp16x3", "tf32x3")


@contextlib.contextmanager
def matmul_precision(precision: str) -> Iterator[None]:
    """Compute the engine's float32 CUDA products with ``precision`` inside the block."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    token = _PRECISION.set(precision)
    try:
        yield
    finally:
        _PRECISION.reset(token)


def _tensor_cores(t: torch.Tensor, mat: torch.Tensor) -> str | None:
    """The tensor-core scheme for this product, or ``None`` for ``torch.matmul``: float32
    operands on CUDA (or the Triton interpreter), no gradient to record."""
    mode = _PRECISION.get()
    if (mode == "float32" or t.dtype != torch.float32 or mat.dtype != torch.float32
            or (torch.is_grad_enabled() and (t.requires_grad or mat.requires_grad))
            or not triton_gemm.available(t.device)):
        return None
    return mode


def _split3(mat: torch.Tensor) -> triton_gemm.SplitOperand:
    """The float16 halves of a table view, with a batch axis of one."""
    s = triton_gemm.split_of(mat)
    return triton_gemm.SplitOperand(s.hi[None], s.lo[None], s.inv_scale)


def _contract(t: torch.Tensor, dim: int, mat: torch.Tensor) -> torch.Tensor:
    """``sum_i mat[r, i] * t[..., i, ...]`` along ``dim``: one (batched) GEMM."""
    shape = t.shape
    pre = math.prod(shape[:dim])
    n = shape[dim]
    post = math.prod(shape[dim + 1:])
    mode = _tensor_cores(t, mat)
    if mode == "fp16x3":
        if post == 1:  # (pre, n) @ mat^T
            y = triton_gemm.bmm_fp16x3(t.reshape(1, pre, n), _split3(mat.transpose(0, 1)),
                                       data_first=True)
        else:  # mat @ t[p] for every p
            y = triton_gemm.bmm_fp16x3(t.reshape(pre, n, post), _split3(mat),
                                       data_first=False)
        return y.reshape(*shape[:dim], mat.shape[0], *shape[dim + 1:])
    if mode == "tf32x3":
        if post == 1:  # (pre, n) @ mat^T
            y = triton_gemm.bmm(t.reshape(1, pre, n), mat.transpose(0, 1)[None])
        else:  # mat @ t[p] for every p
            y = triton_gemm.bmm(mat[None], t.reshape(pre, n, post))
        return y.reshape(*shape[:dim], mat.shape[0], *shape[dim + 1:])
    if post == 1:
        y = t.reshape(pre, n) @ mat.transpose(0, 1)
    elif pre == 1:
        y = mat @ t.reshape(n, post)
    else:
        y = torch.matmul(mat, t.reshape(pre, n, post))
    return y.reshape(*shape[:dim], mat.shape[0], *shape[dim + 1:])


def _fold(t: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Even and odd folds ``t[i] +/- t[N-1-i]`` (the middle sample kept once in the even one)."""
    n = t.shape[dim]
    h = n // 2
    c = n - h
    lo = t.narrow(dim, 0, h)
    hi = t.narrow(dim, c, h).flip(dim)
    even = lo + hi
    odd = lo - hi
    if c > h:
        even = torch.cat([even, t.narrow(dim, h, 1)], dim)
    return even, odd


def _unfold(even: torch.Tensor, odd: torch.Tensor | None, dim: int, n: int) -> torch.Tensor:
    """Inverse of the parity split: full axis from the even part (ceil) and odd part (floor)."""
    h = n // 2
    c = n - h
    lo = even.narrow(dim, 0, h)
    first = lo if odd is None else lo + odd
    last = lo if odd is None else lo - odd
    parts = [first]
    if c > h:
        parts.append(even.narrow(dim, h, 1))
    parts.append(last.flip(dim))
    return torch.cat(parts, dim)


def _permute(t: torch.Tensor, ops: list[AxisOp], which: str) -> torch.Tensor:
    """Reorder the coefficient axes between degree order and class order (one gather)."""
    idx = [getattr(op, which) for op in ops]
    if all(i is None for i in idx):
        return t
    nsp = len(ops)
    full = []
    for ax, (op, i) in enumerate(zip(ops, idx, strict=True)):
        i = torch.arange(op.nrows, device=t.device) if i is None else i
        shape = [1] * nsp
        shape[ax] = op.nrows
        full.append(i.reshape(shape))
    return t[(slice(None), *full)]


def analyze(x: torch.Tensor, ops: list[AxisOp], order: int, total: bool, block: int,
            outside: torch.Tensor | None) -> torch.Tensor:
    """Contract ``x`` of shape ``(B, N_0, ..., N_{d-1})`` with each axis's matrix.

    Returns the dense coefficients ``(B, P_0, ..., P_{d-1})`` in degree order; with ``total``
    the entries outside the set (``outside`` is their boolean mask) are zero.
    """
    nsp = len(ops)
    # an item's tensor is either plain or already folded along the axis it goes to next
    items: list[tuple[dict[int, Block], Any]] = [({}, x)]
    for stage in range(nsp):
        ax = nsp - 1 - stage
        dim = 1 + ax
        op = ops[ax]
        split = _splits(stage, nsp, total)
        fold_next = stage < nsp - 1 and ops[ax - 1].symmetric
        new = []
        for key, t in items:
            nmax = min(_limit(ops, order, total, key), op.nrows - 1)
            if nmax < 0:
                continue
            if isinstance(t, tuple):
                inputs = t
            else:
                inputs = _fold(t, dim) if op.symmetric else (t,)
            for ci, first, n in _class_rows(op, nmax):
                y = _contract(inputs[ci], dim, op.classes[ci][2][:n])
                ys = _fold(y, dim - 1) if fold_next else None
                for j0, j1 in _pieces(first, n, op, split, block):
                    whole = j0 == 0 and j1 == n
                    if ys is not None:
                        part: Any = ys if whole else tuple(
                            v.narrow(dim, j0, j1 - j0) for v in ys)
                    else:
                        part = y if whole else y.narrow(dim, j0, j1 - j0)
                    new.append(({**key, ax: (first + j0, first + j1)}, part))
        items = new
    shape = (x.shape[0], *(op.nrows for op in ops))
    out = x.new_zeros(shape)
    plain = all(op.to_rows is None for op in ops)
    for key, t in items:
        where = tuple(slice(*key[ax]) for ax in range(nsp))
        out[(slice(None), *where)] = t
        if plain and outside is not None and not _inside(key, order, total):
            out[(slice(None), *where)].masked_fill_(outside[where], 0.0)
    if not plain:
        out = _permute(out, ops, "to_rows")
        if outside is not None:
            out.masked_fill_(outside, 0.0)
    return out


def _inside(key: dict[int, Block] | tuple[Block, ...], order: int, total: bool) -> bool:
    """Whether every coefficient of a block (degree ranges, no parity) is in the set."""
    ranges = key.values() if isinstance(key, dict) else key
    last = [stop - 1 for _start, stop in ranges]
    return sum(last) <= order if total else max(last) <= order


def synthesize(c: torch.Tensor, ops: list[AxisOp], order: int, total: bool, block: int,
               outside: torch.Tensor | None) -> torch.Tensor:
    """Adjoint of :func:`analyze`: ``(B, P_0, ..., P_{d-1}) -> (B, N_0, ..., N_{d-1})``.

    Only coefficients in the set (degrees ``<= order``; total degree ``<= order`` with
    ``total``) contribute; ``outside`` masks the others to zero first.
    """
    nsp = len(ops)
    plain = all(op.to_degrees is None for op in ops)
    if not plain:
        c = _permute(c if outside is None else c.masked_fill(outside, 0.0), ops, "to_degrees")
    keys = block_keys(ops, order, total, block)
    items: dict[tuple[Block, ...], torch.Tensor] = {}
    for k in keys:
        where = tuple(slice(*r) for r in k)
        part = c[(slice(None), *where)]
        if plain and outside is not None and not _inside(k, order, total):
            # the caller's coefficients outside the set are ignored: zeroed in a copy
            part = part.masked_fill(outside[where], 0.0)
        items[k] = part
    for ax in range(nsp):
        dim = 1 + ax
        op = ops[ax]
        groups: dict[tuple[Block, ...], list[tuple[Block, torch.Tensor]]] = {}
        for key, t in items.items():
            groups.setdefault(key[1:], []).append((key[0], t))
        new: dict[tuple[Block, ...], torch.Tensor] = {}
        for rest, members in groups.items():
            parts = []
            for first, degrees, mat in op.classes:
                mine = sorted((m for m in members if first <= m[0][0] < first + len(degrees)),
                              key=lambda m: m[0][0])
                if not mine:
                    parts.append(None)
                    continue
                j0 = mine[0][0][0] - first
                j1 = mine[-1][0][1] - first
                if sum(r[1] - r[0] for r, _t in mine) != j1 - j0:
                    raise AssertionError("blocks are not contiguous")  # pragma: no cover
                t = mine[0][1] if len(mine) == 1 else torch.cat([m[1] for m in mine], dim)
                parts.append(_contract(t, dim, mat[j0:j1].transpose(0, 1)))
            if op.symmetric:
                new[rest] = _unfold(parts[0], parts[1] if len(parts) > 1 else None, dim,
                                    op.npix)
            else:
                new[rest] = parts[0]
        items = new
    return items[()]
