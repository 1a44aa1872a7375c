r"""The separable engine shared by 2-D and 3-D box moments: contract one axis at a time.

Moments (thesis Eq. 35 and 42) are :math:`J = A_0 \times_0 (A_1 \times_1 (A_2 \times_2 f))`,
where :math:`A_a` is the analysis matrix of axis :math:`a` and :math:`\times_a` a matrix product
along that axis; reconstruction (Eq. 23/26) is the same with the synthesis matrices transposed,
in the opposite order. Each product is one GEMM (``torch.matmul``; cuBLAS on a GPU), so the
same code runs 2-D images and 3-D volumes, on the CPU and on CUDA, and autograd flows through.

Two savings cut the GEMM work:

* **Parity** (thesis Eq. 18). When :math:`\alpha=\beta` the matrices satisfy
  :math:`M_{n,N-1-i} = (-1)^n M_{n,i}`. The input is folded along every axis at once
  (:func:`fold`, one Triton pass on a GPU, torch folds elsewhere): one part per parity
  class (even or odd degrees on each axis), :math:`f^\pm_i = f_i \pm f_{N-1-i}` along
  each axis, on half of the pixels.
  Each class is then a plain problem with the even or odd rows of every axis's matrix
  (:attr:`AxisOp.halves`), and its moments are every other degree of the result: half the
  multiply-adds. Reconstruction synthesizes every class on half of the pixels and
  :func:`unfold` puts them together. On float16 halves (``precision="fp16x3"``, large
  jobs) the classes run as one batch instead, with both tables of each axis stacked
  (:mod:`.parity_batch`, :func:`_analyze_classes_halves`).
* **Total-degree truncation** (:math:`m+n(+o)\le` order, the thesis's set). The degrees of
  every axis but the last one contracted are split into blocks; a block whose smallest degree
  is :math:`r_0` needs degrees only up to ``order - r0`` on the axes after it. On the second
  axis this halves the work, on the third it cuts it towards a sixth. Within a parity class
  the rows are two degrees apart, so a block of ``block`` degrees has ``block / 2`` rows.

Blocks are keyed by ``(start, stop)`` row ranges (plain integers, never tensors) and are the
same in analysis and synthesis, which are exact adjoints of each other. A class's moments are
written straight into a strided view of the dense result; the entries outside the set are
zeroed once at the end.
"""

from __future__ import annotations

import bisect
import contextlib
import contextvars
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from . import fold_kernels, parity_batch, routes, triton_gemm

__all__ = ["PRECISIONS", "AxisOp", "analyze", "block_keys", "matmul_precision", "synthesize"]

#: A block of rows on one axis, in the engine's class order: ``(start, stop)``.
Block = tuple[int, int]


@dataclass(frozen=True)
class AxisOp:
    """One axis's matrix ``full`` (rows = degrees, columns = pixels) and, with parity, its halves.

    ``degrees`` lists the degree of each row of ``full`` (ascending). A plain op has
    ``halves == ()``. With parity (``symmetric``) ``halves`` holds two plain ops: the even
    degrees over the first ``ceil(N/2)`` pixels and the odd degrees over the first
    ``floor(N/2)``; the engine applies them to the folded input (see :func:`fold`).

    What the tensor-core products derive from the table (its float16 halves per block of
    rows, its exponents, its parity classes stacked) is computed on first use and kept with
    the op under plain keys (:meth:`memo`): the plan's tables are never modified.
    """

    full: torch.Tensor
    degrees: tuple[int, ...]
    halves: tuple[AxisOp, ...] = ()
    _memo: dict[tuple, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, full: torch.Tensor, symmetric: bool) -> AxisOp:
        p, n = full.shape
        plain = cls(full, tuple(range(p)))
        if not symmetric:
            return plain
        c, h = n - n // 2, n // 2
        even = cls(full[0::2, :c].contiguous(), tuple(range(0, p, 2)))
        odd = cls(full[1::2, :h].contiguous(), tuple(range(1, p, 2)))
        return cls(full, plain.degrees, (even, odd))

    @property
    def symmetric(self) -> bool:
        return bool(self.halves)

    @property
    def npix(self) -> int:
        return int(self.full.shape[1])

    @property
    def nrows(self) -> int:
        return int(self.full.shape[0])

    @property
    def spacing(self) -> int:
        """Degrees between consecutive rows: 1, or 2 for a parity half."""
        return self.degrees[1] - self.degrees[0] if len(self.degrees) > 1 else 1

    def rows_upto(self, degree: int) -> int:
        """How many rows have a degree ``<= degree``."""
        return bisect.bisect_right(self.degrees, degree)

    def memo(self, key: tuple, make: Callable[[], Any]) -> Any:
        """``make()``, computed once per plain ``key`` and kept with the op (concurrent
        first calls may both compute it; one result is kept and every caller gets it)."""
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo.setdefault(key, make())
        return hit

    def split_rows(self, j0: int, j1: int) -> triton_gemm.SplitOperand:
        """Rows ``j0:j1`` of the table as float16 halves
        (:func:`~.triton_gemm.split_constant`), with a batch axis of one."""
        def make() -> triton_gemm.SplitOperand:
            s = triton_gemm.split_constant(self.full[j0:j1].contiguous())
            return triton_gemm.SplitOperand(s.hi[None], s.lo[None], s.inv_scale)

        return self.memo(("split", j0, j1), make)

    @property
    def exponents(self) -> tuple[torch.Tensor, torch.Tensor, int]:
        """:func:`~.triton_gemm.table_exponents` of the table (one host read, once)."""
        return self.memo(("exponents",), lambda: triton_gemm.table_exponents(self.full))


def _pieces(n: int, op: AxisOp, split: bool, block: int) -> list[tuple[int, int]]:
    """Split rows ``0 .. n`` into blocks spanning about ``block`` degrees."""
    if not split:
        return [(0, n)]
    step = max(block // op.spacing, 1)
    return [(j, min(j + step, n)) for j in range(0, n, step)]


def _splits(stage: int, nsp: int, total: bool) -> bool:
    """Whether stage ``stage`` splits its degrees into blocks (all but the last stage)."""
    return total and stage < nsp - 1


def _limit(ops: list[AxisOp], order: int, total: bool, key: dict[int, Block]) -> int:
    if not total:
        return order
    return order - sum(ops[ax].degrees[r[0]] for ax, r in key.items())


def block_keys(ops: list[AxisOp], order: int, total: bool, block: int) -> list[tuple[Block, ...]]:
    """The coefficient blocks (one row range per axis) that :func:`analyze` produces for plain
    ``ops``."""
    nsp = len(ops)
    keys: list[dict[int, Block]] = [{}]
    for stage in range(nsp):
        ax = nsp - 1 - stage
        split = _splits(stage, nsp, total)
        new = []
        for key in keys:
            n = ops[ax].rows_upto(_limit(ops, order, total, key))
            for j0, j1 in _pieces(n, ops[ax], split, block) if n else ():
                new.append({**key, ax: (j0, j1)})
        keys = new
    return [tuple(k[ax] for ax in range(nsp)) for k in keys]


#: How float32 products are computed on CUDA: ``"float32"`` (cuBLAS on CUDA cores) or
#: ``"fp16x3"`` (float16 tensor cores, each operand split into two scaled halves, float32
#: accuracy; :mod:`.triton_gemm`). Set per call by the plans through :func:`matmul_precision`; a
#: context variable, so that threads (one per GPU) and concurrent plans never see each
#: other's setting.
_PRECISION: contextvars.ContextVar[str] = contextvars.ContextVar("box_matmul_precision",
                                                                 default="float32")
PRECISIONS = ("float32", "fp16x3")


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


def _product(data: torch.Tensor, op: AxisOp, j0: int, j1: int,
             mat_first: bool) -> torch.Tensor:
    """``mat @ data[i]`` (``mat_first``) or ``data[i] @ mat`` for every item ``i`` of a 3-D
    ``data`` and the rows ``j0:j1`` of ``op``'s table, ``mat``: the engine's only product.

    ``data`` is a transposed view (the engine's operands are read in place): the BLAS, cuBLAS
    and the Triton kernels take it as it is. One item is one GEMM; several are one batched
    GEMM sharing ``mat``.
    """
    mat = op.full[j0:j1]
    k = mat.shape[1] if mat_first else mat.shape[0]
    if k == 0:  # nothing to sum (an odd half of a one-pixel axis)
        rows, cols = (mat.shape[0], data.shape[2]) if mat_first else (data.shape[1], mat.shape[1])
        return data.new_zeros((data.shape[0], rows, cols))
    mode = _tensor_cores(data, mat)
    if mode == "fp16x3":
        return triton_gemm.bmm_fp16x3(data, op.split_rows(j0, j1), data_first=not mat_first)
    if data.shape[0] == 1:
        return (mat @ data[0] if mat_first else data[0] @ mat)[None]
    return torch.matmul(mat, data) if mat_first else torch.matmul(data, mat)


def _analysis_step(t: torch.Tensor, op: AxisOp, n: int) -> torch.Tensor:
    """Contract the last axis of ``t`` ``(B, ..., K)`` with the first ``n`` rows of ``op``'s
    table, ``mat`` ``(n, K)``; the new axis comes right after the batch axis:
    ``y[b, r, ...] = sum_k mat[r, k] t[b, ..., k]``.

    Contracting the last axis and putting the result first rotates the axes of every item, so
    that every step is one GEMM per item whose large dimension is all the item's other axes
    together (no small per-slice products), and the batch stays first: the result is already
    in the caller's layout, with no transposing copy of the batch at either end.
    """
    b, k = t.shape[0], t.shape[-1]
    y = _product(t.reshape(b, math.prod(t.shape[1:-1]), k).mT, op, 0, n, True)
    return y.reshape(b, n, *t.shape[1:-1])


def _synthesis_step(t: torch.Tensor, op: AxisOp, j0: int, j1: int) -> torch.Tensor:
    """The adjoint of :func:`_analysis_step`: contract the axis after the batch of ``t``
    ``(B, P, ...)`` with the rows ``j0:j1`` (``P`` of them) of ``op``'s table ``(P, N)``;
    the new axis comes last."""
    b, p = t.shape[0], t.shape[1]
    y = _product(t.reshape(b, p, math.prod(t.shape[2:])).mT, op, j0, j1, False)
    return y.reshape(b, *t.shape[2:], op.npix)


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


def _unfold(even: torch.Tensor, odd: torch.Tensor, dim: int, n: int) -> torch.Tensor:
    """The adjoint of :func:`_fold`: the full axis from the even part (``ceil(N/2)``
    samples) and the odd part (``floor(N/2)``), ``f[i] = e[i] + o[i]``,
    ``f[N-1-i] = e[i] - o[i]``."""
    h = n // 2
    c = n - h
    lo = even.narrow(dim, 0, h)
    parts = [lo + odd]
    if c > h:
        parts.append(even.narrow(dim, h, 1))
    parts.append((lo - odd).flip(dim))
    return torch.cat(parts, dim)


#: A parity class: per axis 0 (even degrees) or 1 (odd degrees); 0 on axes without parity.
Parity = tuple[int, ...]


def _classes(ops: list[AxisOp]) -> list[Parity]:
    return list(itertools.product(*[(0, 1) if op.symmetric else (0,) for op in ops]))


def _class_ops(ops: list[AxisOp], cls: Parity) -> list[AxisOp]:
    return [op.halves[s] if op.symmetric else op for op, s in zip(ops, cls, strict=True)]


def _class_view(t: torch.Tensor, ops: list[AxisOp], cls: Parity, lead: int) -> torch.Tensor:
    """The coefficients of parity class ``cls`` in ``t`` (degree order along the last axes;
    ``lead`` leading axes kept): every other degree on the axes with parity, a strided view."""
    where = [slice(s, None, 2) if op.symmetric else slice(None)
             for op, s in zip(ops, cls, strict=True)]
    return t[(slice(None),) * lead + tuple(where)]


def fold(x: torch.Tensor, ops: list[AxisOp]) -> dict[Parity, torch.Tensor]:
    r"""Fold ``x`` ``(B, N_0, ..., N_{d-1})`` along every axis with parity at once.

    For a class :math:`s` (0 even, 1 odd per axis) the part is
    :math:`f_s[i] = \sum_{a} (-1)^{s \cdot a} f[\rho_a(i)]`, the sum running over the
    :math:`2^d` reflections :math:`\rho_a` (axis :math:`k` reflected,
    :math:`i_k \to N_k - 1 - i_k`, where :math:`a_k = 1`), the middle sample of an odd axis
    counted once in the even part. Even-degree rows of that axis act on the even part and
    odd-degree rows on the odd part, over half of the pixels each (thesis Eq. 18): the
    products then cost half of the plain ones. On a Triton device one pass reads ``x`` once
    (:mod:`.fold_kernels`); elsewhere, and while autograd records, one torch fold per axis
    (the same bits).
    """
    sym = [op.symmetric for op in ops]
    if fold_kernels.usable(x, sym) and not _recording(x):
        return fold_kernels.fold(x, sym)
    parts: dict[Parity, torch.Tensor] = {(): x}
    for ax, s in enumerate(sym):
        new = {}
        for key, t in parts.items():
            if s:
                even, odd = _fold(t, 1 + ax)
                new[(*key, 0)], new[(*key, 1)] = even, odd
            else:
                new[(*key, 0)] = t
        parts = new
    return parts


def unfold(parts: dict[Parity, torch.Tensor], ops: list[AxisOp]) -> torch.Tensor:
    """The adjoint of :func:`fold`: ``(B, N_0, ..., N_{d-1})`` from every class's part
    (``f[ρ_a(i)] = Σ_s (-1)^{s·a} f_s[i]``)."""
    sym = [op.symmetric for op in ops]
    first = next(iter(parts.values()))
    if fold_kernels.usable(first, sym) and not _recording(*parts.values()):
        return fold_kernels.unfold(parts, sym, [op.npix for op in ops])
    for ax in reversed(range(len(ops))):
        if not sym[ax]:
            continue
        new = {}
        for key, t in parts.items():
            if key[ax] == 0:
                odd = parts[(*key[:ax], 1, *key[ax + 1:])]
                new[key] = _unfold(t, odd, 1 + ax, ops[ax].npix)
        parts = new
    return parts[(0,) * len(ops)]


def _zero_(t: torch.Tensor, mask: torch.Tensor) -> None:
    """Set the entries of ``t`` under ``mask`` (broadcast) to zero, in place.

    On the CPU one ``torch.where`` pass (1.5-2x faster there than ``masked_fill_``); on CUDA,
    and while autograd records (``out=`` is not differentiable), ``masked_fill_``: on an
    H100 the ``torch.where`` form made batches slower (the ``torch.where`` variant in
    ``git show a8e7402:benchmarks/results/box_batches_gpu.md``).
    """
    if t.is_cuda or _recording(t):
        t.masked_fill_(mask, 0.0)
    else:
        torch.where(mask, t.new_zeros(()), t, out=t)


def _zeroed(t: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """A copy of ``t`` with the entries under ``mask`` set to zero (as :func:`_zero_`)."""
    if t.is_cuda:
        return t.masked_fill(mask, 0.0)
    return torch.where(mask, t.new_zeros(()), t)


def _recording(*ts: torch.Tensor) -> bool:
    """Whether autograd records an operation on any of ``ts`` (the kernels do not take part)."""
    return torch.is_grad_enabled() and any(t.requires_grad for t in ts)


def analyze(x: torch.Tensor, ops: list[AxisOp], order: int, total: bool, block: int,
            outside: torch.Tensor | None, top: float | None = None) -> torch.Tensor:
    """Contract ``x`` of shape ``(B, N_0, ..., N_{d-1})`` with each axis's matrix.

    Returns the dense coefficients ``(B, P_0, ..., P_{d-1})`` in degree order; with ``total``
    the entries outside the set (``outside`` is their boolean mask) are zero. Axes with
    parity are folded first (:func:`fold`) and every parity class is then a plain problem on
    half of the pixels per axis, whose coefficients are every other degree of the result.
    ``outside`` must be the mask of the set that ``order`` and ``total`` define (the
    parity classes on halves compute it from them, :func:`_analyze_classes_halves`).
    ``top``: ``max |x|`` when the caller has it (its input check read it), so that the
    halves' scale needs no reduction of its own; measured here otherwise.
    """
    if any(op.symmetric for op in ops):
        done = _analyze_classes_halves(x, ops, order, total, block, top)
        if done is not None:
            return done
    out = torch.zeros((x.shape[0], *(op.nrows for op in ops)), dtype=x.dtype, device=x.device)
    if not any(op.symmetric for op in ops):
        _analyze_plain(x, ops, order, total, block, outside, out, top)
        return out
    parts = fold(x, ops)
    for cls in _classes(ops):
        part = parts.pop(cls)  # dropped as soon as it is used
        cops = _class_ops(ops, cls)
        if all(op.nrows for op in cops):
            _analyze_plain(part, cops, order, total, block, None, _class_view(out, ops, cls, 1))
        del part
    if outside is not None:  # one pass, not one per block of every class
        _zero_(out, outside)
    return out


def _analyze_plain(x: torch.Tensor, ops: list[AxisOp], order: int, total: bool, block: int,
                   outside: torch.Tensor | None, out: torch.Tensor,
                   top: float | None = None) -> None:
    """:func:`analyze` for plain ops, written into the zeroed ``out`` (a view, maybe strided);
    ``top``: ``max |x|`` when known.

    Each stage contracts the last axis and puts its degrees right after the batch axis
    (:func:`_analysis_step`): ``(B, N_0, N_1, N_2) -> (B, P_2, N_0, N_1) -> (B, P_1, P_2, N_0)
    -> (B, P_0, P_1, P_2)``; a block of degrees is a slice of the axis after the batch.
    """
    if (routes.halves_job(x.numel()) and _tensor_cores(x, ops[0].full) == "fp16x3"
            and _analyze_halves(x, ops, order, total, block, outside, out, top)):
        return
    nsp = len(ops)
    items: list[tuple[dict[int, Block], torch.Tensor]] = [({}, x)]
    for stage in range(nsp):
        ax = nsp - 1 - stage
        op = ops[ax]
        split = _splits(stage, nsp, total)
        new = []
        for key, t in items:
            n = op.rows_upto(_limit(ops, order, total, key))
            if n == 0:
                continue
            y = _analysis_step(t, op, n)
            for j0, j1 in _pieces(n, op, split, block):
                part = y if (j0 == 0 and j1 == n) else y.narrow(1, j0, j1 - j0)
                new.append(({**key, ax: (j0, j1)}, part))
        items = new
    for key, t in items:
        where = (slice(None), *(slice(*key[ax]) for ax in range(nsp)))
        out[where] = t
        if outside is not None and not _inside(key, ops, order, total):
            _zero_(out[where], outside[where[1:]])


def _inside(key: dict[int, Block] | tuple[Block, ...], ops: list[AxisOp], order: int,
            total: bool) -> bool:
    """Whether every coefficient of a block (row ranges of plain ops) is in the set."""
    ranges = key.items() if isinstance(key, dict) else enumerate(key)
    last = [ops[ax].degrees[stop - 1] for ax, (_start, stop) in ranges]
    return sum(last) <= order if total else max(last) <= order


def synthesize(c: torch.Tensor, ops: list[AxisOp], order: int, total: bool, block: int,
               outside: torch.Tensor | None) -> torch.Tensor:
    """Adjoint of :func:`analyze`: ``(B, P_0, ..., P_{d-1}) -> (B, N_0, ..., N_{d-1})``.

    Only coefficients in the set (degrees ``<= order``; total degree ``<= order`` with
    ``total``) contribute; ``outside`` masks the others to zero first. With parity every
    class is synthesized on half of the pixels per axis and :func:`unfold` puts them together.
    As in :func:`analyze`, ``outside`` is either ``None`` (coefficients already in the set)
    or the mask of the set that ``order`` and ``total`` define.
    """
    if not any(op.symmetric for op in ops):
        return _synthesize_plain(c, ops, order, total, block, outside)
    done = _synthesize_classes_halves(c, ops, order, total, block)
    if done is not None:
        return done
    if outside is not None:  # one masked copy, not one per block of every class
        c = torch.where(outside, 0.0, c)
    parts = {}
    for cls in _classes(ops):
        cops = _class_ops(ops, cls)
        part = None
        if all(op.nrows for op in cops):
            part = _synthesize_plain(_class_view(c, ops, cls, 1), cops, order, total, block,
                                     None)
        if part is None:  # no coefficient of the set in this class
            part = c.new_zeros((c.shape[0], *(op.npix for op in cops)))
        parts[cls] = part
    return unfold(parts, ops)


def _synthesize_plain(c: torch.Tensor, ops: list[AxisOp], order: int, total: bool, block: int,
                      outside: torch.Tensor | None) -> torch.Tensor | None:
    """:func:`synthesize` for plain ops; ``None`` when the set has no coefficient.

    The stages run in the opposite order of :func:`_analyze_plain`, each contracting the
    degree axis after the batch and putting its pixels last (:func:`_synthesis_step`):
    ``(B, P_0, P_1, P_2) -> (B, P_1, P_2, N_0) -> (B, P_2, N_0, N_1) -> (B, N_0, N_1, N_2)``;
    the blocks that share their degree ranges on the axes still to come are put side by
    side first.
    """
    nsp = len(ops)
    keys = block_keys(ops, order, total, block)
    if not keys:
        return None
    if routes.halves_job(c.numel()) and _tensor_cores(c, ops[0].full) == "fp16x3":
        done = _synthesize_halves(c, ops, order, total, keys, outside)
        if done is not None:
            return done
    items: dict[tuple[Block, ...], torch.Tensor] = {}
    for k in keys:
        where = tuple(slice(*r) for r in k)
        part = c[(slice(None), *where)]
        if outside is not None and not _inside(k, ops, order, total):
            # the caller's coefficients outside the set are ignored: zeroed in a copy
            part = _zeroed(part, outside[where])
        items[k] = part
    for ax in range(nsp):
        op = ops[ax]
        groups: dict[tuple[Block, ...], list[tuple[Block, torch.Tensor]]] = {}
        for key, t in items.items():
            groups.setdefault(key[1:], []).append((key[0], t))
        new: dict[tuple[Block, ...], torch.Tensor] = {}
        for rest, members in groups.items():
            # one product over the blocks put side by side: adding one product per block
            # into the result instead rewrites the (larger) result once per block, which
            # measured slower on an H100
            members.sort(key=lambda m: m[0][0])
            j0, j1 = members[0][0][0], members[-1][0][1]
            if sum(r[1] - r[0] for r, _t in members) != j1 - j0:
                raise AssertionError("blocks are not contiguous")  # pragma: no cover
            t = members[0][1] if len(members) == 1 else torch.cat([m[1] for m in members], 1)
            new[rest] = _synthesis_step(t, op, j0, j1)
        items = new
    return items[()]


# ------------------------------------------------------------- fp16x3: stages as halves
def _analyze_halves(x: torch.Tensor | triton_gemm.Halves, ops: list[AxisOp], order: int,
                    total: bool, block: int, outside: torch.Tensor | None,
                    out: torch.Tensor, top: float | None = None) -> bool:
    r""":func:`_analyze_plain` with ``precision="fp16x3"``, every stage handing the next its
    result as float16 halves (:class:`~.triton_gemm.Halves`): the input is split once (one
    scale), each stage's rows are scaled by :math:`2^{e_r}` with :math:`2^{e_r}\|A_r\|_1
    \le 1` (so the halves stay in float16's range whatever the data), and the last stage
    writes float32 with the scales undone. Returns ``False`` (nothing done) when the
    input's magnitude is out of the scales' range. ``x`` may come split already, and
    ``ops`` may be :class:`~.parity_batch.StackedOp` (the parity classes as one batch,
    :func:`_analyze_classes_halves`).

    Error: each product is within :math:`(K + 6)\,2^{-23}\sum_k |a_k b_k|` of the exact
    product of its operands (:func:`~.triton_gemm.bmm_fp16x3`), plus, for entries far below
    their scale's bound, the low half's float16 rounding: at most :math:`2^{-25}` in scaled
    units, i.e. :math:`2^{-40}` of the bound :math:`2^{15 - e}`. Against float64 the 512^3,
    order-500 job measured 3.1e-7 (moments) and 7.7e-7 (reconstruction) relative 2-norm
    errors (``benchmarks/box_tensor_cores.py``; its last results: ``git show
    e675642:benchmarks/results/box_tensor_cores.md``); the tests hold every job below 1e-6."""
    data = x if isinstance(x, triton_gemm.Halves) else triton_gemm.split_scaled(x, top=top)
    if data is None or not _scales_fit(data, ops):
        return False
    nsp = len(ops)
    items: list[tuple[dict[int, Block], triton_gemm.Halves]] = [({}, data)]
    for stage in range(nsp):
        ax = nsp - 1 - stage
        op = ops[ax]
        split = _splits(stage, nsp, total)
        last = stage == nsp - 1
        new = []
        for key, t in items:
            n = op.rows_upto(_limit(ops, order, total, key))
            if n == 0:
                continue
            mat = _table_rows(op, 0, n)
            if last:  # float32, straight into the dense result (one block on this axis)
                where = (slice(None), slice(0, n), *(slice(*key[a]) for a in range(1, nsp)))
                zero = None  # the entries outside the set are written as 0 by the kernel
                if outside is not None and not _inside({**key, ax: (0, n)}, ops, order, total):
                    zero = outside[where[1:]]
                dst = out[where]
                if dst.ndim > 3 and dst.shape[-1] % triton_gemm.ROW_ALIGN:
                    # a block whose rows do not split into aligned groups: written through a
                    # contiguous result (the kernel's strided writes and mask reads by
                    # column cost more than the copy: 0.82 against 0.44 ms for the
                    # 245-wide block of the 512^3 job on an H100)
                    y = triton_gemm.halves_product(t, t.hi.ndim - 1, mat, data_first=False,
                                                   out_exps=None)
                    dst.copy_(y if zero is None else y.masked_fill(zero, 0.0))
                    continue
                triton_gemm.halves_product(t, t.hi.ndim - 1, mat, data_first=False,
                                           out_exps=None, out=dst, zero=zero)
                continue
            rows = _table_exponents(op)[0][:n]
            y = triton_gemm.halves_product(t, t.hi.ndim - 1, mat, data_first=False,
                                           out_exps=rows)
            for j0, j1 in _pieces(n, op, split, block):
                part = y if (j0 == 0 and j1 == n) else y.narrow(1, j0, j1 - j0)
                new.append(({**key, ax: (j0, j1)}, part))
        items = new
    return True


def _synthesize_halves(c: torch.Tensor | triton_gemm.Halves, ops: list[AxisOp], order: int,
                       total: bool, keys: list[tuple[Block, ...]],
                       outside: torch.Tensor | None) -> torch.Tensor | None:
    r""":func:`_synthesize_plain` with ``precision="fp16x3"`` on float16 halves (as
    :func:`_analyze_halves`; each new pixel axis scaled by :math:`2^{e_p}` with
    :math:`2^{e_p}\|S_{:,p}\|_1 \le 1` over all of the table's rows, so that the blocks put
    side by side share their scales). The coefficients outside the set are zeroed in the
    split; the blocks of the first stage are read side by side as one view of the split
    coefficients, and every later stage's blocks are written side by side into one buffer
    by the products that make them, so nothing is copied or concatenated. ``None``
    (nothing done) when the coefficients' magnitude is out of the scales' range. ``c`` may
    come split already (and masked), and ``ops`` may be :class:`~.parity_batch.StackedOp`
    (as in :func:`_analyze_halves`)."""
    data = c if isinstance(c, triton_gemm.Halves) else triton_gemm.split_scaled(c, outside)
    if data is None or not _scales_fit(data, ops):
        return None
    b = data.hi.shape[0]
    # items: the blocks still to come (rest) -> (rows of the axis contracted next, halves)
    items: dict[tuple[Block, ...], tuple[Block, triton_gemm.Halves]] = {}
    for rest, (j0, j1) in _side_by_side([(k[1:], k[0]) for k in keys]).items():
        items[rest] = ((j0, j1), _narrowed(data, ((j0, j1), *rest)))
    for ax, op in enumerate(ops):
        if ax == len(ops) - 1:
            ((j0, j1), t), = items.values()
            return triton_gemm.halves_product(t, 1, _table_rows(op, j0, j1), data_first=True,
                                              out_exps=None)
        cols = _table_exponents(op)[1]
        new: dict[tuple[Block, ...], tuple[Block, triton_gemm.Halves]] = {}
        for rest2, (r0, r1) in _side_by_side([(r[1:], r[0]) for r in items]).items():
            firsts = sorted(r[0] for r in items if r[1:] == rest2)
            shape = (b, r1 - r0, *items[(firsts[0], *rest2)][1].hi.shape[3:], op.npix)
            hi = torch.empty(shape, dtype=torch.float16, device=data.hi.device)
            lo = torch.empty_like(hi)
            joined = None
            for first in firsts:
                (j0, j1), t = items[(first, *rest2)]
                off, width = first[0] - r0, first[1] - first[0]
                joined = triton_gemm.halves_product(
                    t, 1, _table_rows(op, j0, j1), data_first=True, out_exps=cols,
                    out=(hi.narrow(1, off, width), lo.narrow(1, off, width)))
            new[rest2] = ((r0, r1), triton_gemm.Halves(hi, lo, joined.base, joined.exps))
        items = new
    raise AssertionError("no axis")  # pragma: no cover


def _side_by_side(pairs: list[tuple[tuple[Block, ...], Block]]
                  ) -> dict[tuple[Block, ...], Block]:
    """For ``(rest, rows)`` pairs, the rows of each ``rest`` put side by side: one range
    (they must be contiguous)."""
    groups: dict[tuple[Block, ...], list[Block]] = {}
    for rest, rows in pairs:
        groups.setdefault(rest, []).append(rows)
    out = {}
    for rest, rows in groups.items():
        rows.sort()
        if any(a[1] != b[0] for a, b in itertools.pairwise(rows)):
            raise AssertionError("blocks are not contiguous")  # pragma: no cover
        out[rest] = (rows[0][0], rows[-1][1])
    return out


def _narrowed(data: triton_gemm.Halves, ranges: tuple[Block, ...]) -> triton_gemm.Halves:
    """The view of ``data`` (batch first) on the row ranges ``ranges``, one per axis."""
    for ax, r in enumerate(ranges):
        data = data.narrow(1 + ax, r[0], r[1] - r[0])
    return data


def _scales_fit(data: triton_gemm.Halves, ops: list[AxisOp]) -> bool:
    """Whether every factor that undoes the halves' scales, :math:`2^{-(e_0 + \\sum_a e_a)}`,
    is a normal float32 (its exponent at most 120 in magnitude)."""
    worst = abs(data.base) + sum(_table_exponents(op)[2] for op in ops)
    return worst <= 120


def _table_rows(op: AxisOp | parity_batch.StackedOp, j0: int,
                j1: int) -> triton_gemm.SplitOperand:
    """Rows ``j0:j1`` of an axis's table as float16 halves (one table for the batch, or one
    per batch entry for the parity classes as a batch)."""
    if isinstance(op, parity_batch.StackedOp):
        return op.rows(j0, j1)
    return op.split_rows(j0, j1)


def _table_exponents(op: AxisOp | parity_batch.StackedOp) -> tuple[torch.Tensor, torch.Tensor,
                                                                    int]:
    """:func:`~.triton_gemm.table_exponents` of an axis's table (or of both stacked)."""
    return op.exponents


# ------------------------------------------------ fp16x3: the parity classes as one batch
def _classes_on_halves(t: torch.Tensor, ops: list[AxisOp],
                       top: float | None = None) -> float | None:
    """For :func:`_analyze_classes_halves` and :func:`_synthesize_classes_halves`: the
    largest magnitude of ``t`` (``top`` when given) when the job runs there
    (``precision="fp16x3"``, parity on every axis, at least :data:`~.routes.HALVES_MIN`
    elements, no gradient recorded, a Triton device); else ``None``."""
    if (not routes.halves_job(t.numel()) or not all(op.symmetric for op in ops)
            or len(ops) not in (2, 3) or _tensor_cores(t, ops[0].full) != "fp16x3"
            or _recording(t)):
        return None
    if top is None:
        top = triton_gemm.largest_magnitude(t)
    return top if math.isfinite(top) else None


def _analyze_classes_halves(x: torch.Tensor, ops: list[AxisOp], order: int, total: bool,
                            block: int, known: float | None = None) -> torch.Tensor | None:
    r""":func:`analyze` with parity for ``precision="fp16x3"``: the parity classes as one
    batch on halves (:mod:`.parity_batch`). The input is folded straight into the float16
    halves of one class-major buffer (:func:`~.fold_kernels.fold_halves`, one pass), with a
    scale from :math:`2^d \max|x|` (each part sums :math:`2^d` samples, so no reduction of
    its own). :func:`_analyze_halves` transforms it with the stacked tables, and the
    class-major coefficients are interleaved into the dense result with the entries
    outside the set zeroed. ``known``: ``max |x|`` when the caller has it. ``None`` when
    the job does not run here (see :func:`_classes_on_halves`), or its scales are out of
    range."""
    top = _classes_on_halves(x, ops, known)
    if top is None:
        return None
    nsp, b, ncls = len(ops), x.shape[0], 1 << len(ops)
    base = triton_gemm.scale_exponent(top * 2.0 ** nsp)  # each part sums 2^d samples
    if base is None:
        return None
    sops = [parity_batch.stacked(op, a, nsp, b) for a, op in enumerate(ops)]
    sizes = [s.npix for s in sops]
    odd = any(op.npix % 2 for op in ops)  # odd parts are shorter: zero padding around them
    # the high and low halves of every class's part, rows padded as split_scaled pads them
    shape = (2, ncls * b, *sizes[:-1], triton_gemm.padded_row(sizes[-1]))
    both = (torch.zeros(shape, dtype=torch.float16, device=x.device) if odd
            else torch.empty(shape, dtype=torch.float16, device=x.device))
    hi, lo = both[0][..., :sizes[-1]], both[1][..., :sizes[-1]]
    parts = _class_parts(hi, ops, b)
    fold_kernels.fold_halves(x, [True] * nsp, parts, both.stride(0), 2.0 ** base)
    data = triton_gemm.Halves(hi, lo, base, (None,) * nsp)
    cm = torch.empty(((1 << nsp) * b, *(s.nrows for s in sops)), dtype=x.dtype,
                     device=x.device)
    if not _analyze_halves(data, sops, order, total, block, None, cm):
        return None
    return parity_batch.interleave(cm, nsp, b, tuple(op.nrows for op in ops), order, total)


def _synthesize_classes_halves(c: torch.Tensor, ops: list[AxisOp], order: int, total: bool,
                               block: int) -> torch.Tensor | None:
    """:func:`synthesize` with parity for ``precision="fp16x3"``, the adjoint of
    :func:`_analyze_classes_halves`: the classes' coefficients are gathered, masked to the
    set and split in one pass (:func:`~.parity_batch.split_classes`), synthesized as one
    batch, and :func:`unfold` puts the parts together. ``None`` when the job does not run
    here or its scales are out of range."""
    top = _classes_on_halves(c, ops)
    if top is None:
        return None
    nsp, b = len(ops), c.shape[0]
    sops = [parity_batch.stacked(op, a, nsp, b) for a, op in enumerate(ops)]
    keys = block_keys(sops, order, total, block)
    if not keys:
        return None
    data = parity_batch.split_classes(c, nsp, tuple(s.nrows for s in sops), order, total, top)
    if data is None:
        return None
    y = _synthesize_halves(data, sops, order, total, keys, None)
    if y is None:
        return None
    return unfold(_class_parts(y, ops, b), ops)


def _class_parts(t: torch.Tensor, ops: list[AxisOp],
                 b: int) -> dict[tuple[int, ...], torch.Tensor]:
    """Each parity class's part of the class-major ``t`` ``(2^d b, ...)`` (padded to the
    even parts' sizes): batch entries ``i b .. (i + 1) b`` for the ``i``-th class of
    :func:`_classes`, narrowed to that class's sizes (views)."""
    parts = {}
    for i, cls in enumerate(_classes(ops)):
        view = t[i * b:(i + 1) * b]
        for a, (op, s) in enumerate(zip(ops, cls, strict=True)):
            view = view.narrow(1 + a, 0, op.halves[s].npix)
        parts[cls] = view
    return parts
