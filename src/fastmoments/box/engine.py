r"""The separable engine shared by 2-D and 3-D box moments: contract one axis at a time.

Moments (thesis Eq. 35 and 42) are :math:`J = A_0 \times_0 (A_1 \times_1 (A_2 \times_2 f))`,
where :math:`A_a` is the analysis matrix of axis :math:`a` and :math:`\times_a` a matrix product
along that axis; reconstruction (Eq. 23/26) is the same with the synthesis matrices transposed,
in the opposite order. Each product is one GEMM (``torch.matmul``; cuBLAS on a GPU), so the
same code runs 2-D images and 3-D volumes, on the CPU and on CUDA, and autograd flows through.

Two savings cut the GEMM work:

* **Parity** (thesis Eq. 18). When :math:`\alpha=\beta` the analysis and synthesis matrices
  satisfy :math:`M_{n,N-1-i} = (-1)^n M_{n,i}`. The input is folded along the axis,
  :math:`f^\pm_i = f_i \pm f_{N-1-i}`, and even degrees are contracted with :math:`f^+`, odd
  degrees with :math:`f^-`, over half of the pixels: half the multiply-adds. Reconstruction
  computes the even and odd parts on half the pixels and unfolds them.
* **Total-degree truncation** (:math:`m+n(+o)\le` order, the thesis's set). The first axis
  contracted is split into blocks of degrees; a block whose smallest degree is :math:`r_0`
  needs degrees only up to ``order - r0`` on the next axis, and so on. With blocks of
  ``block`` degrees the work on the second axis drops from :math:`P^2` to about
  :math:`P^2/2 + P\cdot\text{block}/2` pairs and on the third from :math:`P^3` towards
  :math:`P^3/6`.

Coefficient blocks are keyed by ``(start, stop, step)`` tuples (step 2 for a parity class),
never by tensors; the blocks of one call are the same in analysis and synthesis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

__all__ = ["AxisOp", "analyze", "block_keys", "synthesize"]

#: A block of degrees on one axis: ``(start, stop, step)`` as for ``slice``.
Block = tuple[int, int, int]


@dataclass(frozen=True)
class AxisOp:
    """One axis's matrix ``full`` (rows = degrees, columns = pixels), with its parity halves.

    ``even`` holds rows 0, 2, 4, ... over the first ``ceil(N/2)`` columns and ``odd`` rows
    1, 3, 5, ... over the first ``floor(N/2)`` columns; both are ``None`` when the axis has no
    parity symmetry (``alpha != beta`` or a subset of the pixels).
    """

    full: torch.Tensor
    even: torch.Tensor | None = None
    odd: torch.Tensor | None = None

    @classmethod
    def build(cls, full: torch.Tensor, symmetric: bool) -> AxisOp:
        if not symmetric:
            return cls(full)
        n = full.shape[1]
        c, h = n - n // 2, n // 2
        return cls(full, full[0::2, :c].contiguous(), full[1::2, :h].contiguous())

    @property
    def symmetric(self) -> bool:
        return self.even is not None

    @property
    def npix(self) -> int:
        return int(self.full.shape[1])

    @property
    def nrows(self) -> int:
        return int(self.full.shape[0])


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _stage_rows(nmax: int, symmetric: bool, split: bool, block: int):
    """Row classes of one stage: ``[(parity, nrows, [(key_slice, j0, j1), ...]), ...]``.

    ``parity`` is ``None`` (all degrees, step 1) or 0/1 (even/odd degrees, step 2); rows
    ``j0:j1`` of the class's GEMM output hold the degrees of ``key_slice``.
    """
    classes = [(None, 0, 1)] if not symmetric else [(0, 0, 2), (1, 1, 2)]
    out = []
    for parity, first, step in classes:
        nrows = (nmax - first) // step + 1 if nmax >= first else 0
        if nrows == 0:
            continue
        if split and block < nmax + 1:
            pieces = []
            for lo in range(0, nmax + 1, block):
                hi = min(lo + block, nmax + 1)
                j0 = max(0, _ceil_div(lo - first, step))
                j1 = min(nrows, _ceil_div(hi - first, step))
                if j1 > j0:
                    pieces.append(((first + step * j0, first + step * j1, step), j0, j1))
        else:
            pieces = [((first, first + step * nrows, step), 0, nrows)]
        out.append((parity, nrows, pieces))
    return out


def _limit(order: int, total: bool, key: tuple[Block, ...]) -> int:
    return order - sum(s[0] for s in key) if total else order


def block_keys(nrows: list[int], symmetric: list[bool], order: int, total: bool,
               block: int) -> list[tuple[Block, ...]]:
    """The coefficient blocks (one slice per axis) that :func:`analyze` produces."""
    nsp = len(nrows)
    keys: list[tuple[Block, ...]] = [()]
    for stage in range(nsp):
        ax = nsp - 1 - stage
        split = total and stage < nsp - 1
        new = []
        for key in keys:
            nmax = min(_limit(order, total, key), nrows[ax] - 1)
            if nmax < 0:
                continue
            for _parity, _n, pieces in _stage_rows(nmax, symmetric[ax], split, block):
                new.extend((s, *key) for s, _j0, _j1 in pieces)
        keys = new
    return keys


def _contract(t: torch.Tensor, dim: int, mat: torch.Tensor) -> torch.Tensor:
    """``sum_i mat[r, i] * t[..., i, ...]`` along ``dim``: one (batched) GEMM."""
    shape = t.shape
    pre = math.prod(shape[:dim])
    n = shape[dim]
    post = math.prod(shape[dim + 1:])
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


def _unfold(even: torch.Tensor | None, odd: torch.Tensor | None, dim: int, n: int) -> torch.Tensor:
    """Inverse of the parity split: full axis from the even part (ceil) and odd part (floor)."""
    h = n // 2
    c = n - h
    assert even is not None  # degree 0 is always present
    lo = even.narrow(dim, 0, h)
    first = lo if odd is None else lo + odd
    last = lo if odd is None else lo - odd
    parts = [first]
    if c > h:
        parts.append(even.narrow(dim, h, 1))
    parts.append(last.flip(dim))
    return torch.cat(parts, dim)


def analyze(x: torch.Tensor, ops: list[AxisOp], order: int, total: bool, block: int,
            outside: torch.Tensor | None) -> torch.Tensor:
    """Contract ``x`` of shape ``(B, N_0, ..., N_{d-1})`` with each axis's matrix.

    Returns the dense coefficients ``(B, P_0, ..., P_{d-1})``; with ``total`` the entries
    outside the set (``outside`` is their boolean mask) are zero.
    """
    nsp = len(ops)
    items: list[tuple[tuple[Block, ...], torch.Tensor]] = [((), x)]
    for stage in range(nsp):
        ax = nsp - 1 - stage
        dim = 1 + ax
        op = ops[ax]
        split = total and stage < nsp - 1
        new = []
        for key, t in items:
            nmax = min(_limit(order, total, key), op.nrows - 1)
            if nmax < 0:
                continue
            if op.symmetric:
                te, to = _fold(t, dim)
                inputs = {0: (te, op.even), 1: (to, op.odd)}
            else:
                inputs = {None: (t, op.full)}
            for parity, nrows, pieces in _stage_rows(nmax, op.symmetric, split, block):
                tp, mat = inputs[parity]
                y = _contract(tp, dim, mat[:nrows])
                for s, j0, j1 in pieces:
                    new.append(((s, *key), y if (j0 == 0 and j1 == nrows) else
                                y.narrow(dim, j0, j1 - j0)))
        items = new
    shape = (x.shape[0], *(op.nrows for op in ops))
    out = torch.zeros(shape, dtype=x.dtype, device=x.device)
    for key, t in items:
        out[(slice(None), *(slice(*s) for s in key))] = t
    if outside is not None:
        out = out.masked_fill(outside, 0.0)
    return out


def synthesize(c: torch.Tensor, ops: list[AxisOp], order: int, total: bool, block: int,
               outside: torch.Tensor | None) -> torch.Tensor:
    """Adjoint of :func:`analyze`: ``(B, P_0, ..., P_{d-1}) -> (B, N_0, ..., N_{d-1})``.

    Only coefficients in the set (degrees ``<= order``; total degree ``<= order`` with
    ``total``) contribute; ``outside`` masks the others to zero first.
    """
    nsp = len(ops)
    if outside is not None:
        c = c.masked_fill(outside, 0.0)
    keys = block_keys([op.nrows for op in ops], [op.symmetric for op in ops], order, total, block)
    items: dict[tuple[Block, ...], torch.Tensor] = {
        k: c[(slice(None), *(slice(*s) for s in k))] for k in keys}
    for ax in range(nsp):
        dim = 1 + ax
        op = ops[ax]
        groups: dict[tuple[Block, ...], list[tuple[Block, torch.Tensor]]] = {}
        for key, t in items.items():
            groups.setdefault(key[1:], []).append((key[0], t))
        new: dict[tuple[Block, ...], torch.Tensor] = {}
        for rest, members in groups.items():
            if op.symmetric:
                even = _synth_class([m for m in members if m[0][0] % 2 == 0], op.even, dim, 0)
                odd = _synth_class([m for m in members if m[0][0] % 2 == 1], op.odd, dim, 1)
                new[rest] = _unfold(even, odd, dim, op.npix)
            else:
                new[rest] = _synth_class(members, op.full, dim, None)
        items = new
    return items[()]


def _synth_class(members: list[tuple[Block, torch.Tensor]], mat: torch.Tensor, dim: int,
                 parity: int | None) -> torch.Tensor | None:
    """Contract blocks of consecutive degrees of one parity class with ``mat`` transposed."""
    if not members:
        return None
    members = sorted(members, key=lambda m: m[0][0])
    step = 1 if parity is None else 2
    first = 0 if parity is None else parity
    start = members[0][0][0]
    stop = start
    for s, _t in members:
        if s[0] != stop and stop != start:
            raise AssertionError("coefficient blocks are not contiguous")  # pragma: no cover
        stop = s[0] + step * len(range(*s))
    j0 = (start - first) // step
    j1 = (stop - first) // step
    t = members[0][1] if len(members) == 1 else torch.cat([m[1] for m in members], dim)
    return _contract(t, dim, mat[j0:j1].transpose(0, 1))
