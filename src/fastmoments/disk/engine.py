r"""The two-stage engine shared by every transform on the unit disk.

Forward (analysis), for a family with kernel :math:`V_{nm} = R_{nm}(r) e^{im\theta}` and
normalization :math:`c_{nm}`:

.. math:: A_{nm} = c_{nm} \sum_{g} R^*_{nm}(r_g)\, S_{gm}, \qquad
          S_{gm} = \sum_{p \in g} w_p f_p e^{-im\theta_p}.

1. **Angular stage** (:meth:`DiskEngine._angular`): the angular sums :math:`S_{gm}` over each
   group :math:`g` of points of equal radius. Points come as orbits of the 8 symmetries of the
   square; an orbit's 8 images sit at angles :math:`\pm\theta_0 + \kappa\pi/2`, so
   :math:`\sum e^{-im\theta} f = e^{-im\theta_0} F^+_{m \bmod 4} + e^{im\theta_0} F^-_{m \bmod 4}`
   with :math:`F^\pm` 4-point DFTs of the orbit's values: two complex products per orbit and
   repetition instead of eight (the symmetry of the thesis, Sec. 3.2, without special cases).
2. **Radial stage** (:meth:`DiskEngine._radial`): a batched matrix product over groups, one
   matrix per repetition, with the family's radial table. Small tables are computed once in
   float64, cast and cached; large ones are streamed from the recurrence (each step
   contracted at once), so no table larger than the memory budget ever exists.

Synthesis (reconstruction at pixel centres, and the adjoint at the sample points) runs the two
stages backwards: :math:`C_{gm} = \sum_n R_{nm}(r_g) a_{nm}`, then
:math:`f_p = \mathrm{Re} \sum_{m \ge 0} \gamma_m C_{g(p)m} e^{im\theta_p}`.

Work is split into chunks of radius groups sized from the memory budget, like the dynamic
partition of the thesis (Sec. 4.3); batches that do not fit are split.

On a CUDA device with Triton, the forward angular stage and (for the Jacobi method of the
Zernike families) both radial stages run in fused kernels (:mod:`.triton_radial`); the torch
code here stays the reference and the CPU path, and carries the gradients of the angular
stage.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from .._array import complex_dtype
from .._memory import format_bytes, memory_budget
from .._progress import progress_bar
from .._threads import threads_for
from . import routes, triton_radial
from .compression import RadialCompression, node_count
from .families import DiskFamily
from .indexing import IndexSet
from .sampling import DiskSampling

__all__ = ["DiskEngine"]

_ITEM = {torch.float32: 4, torch.float64: 8}

#: Largest share of padding in a block of the radial table (:meth:`DiskEngine._layout`).
BLOCK_PADDING = 0.125

#: Jobs of more operations (as counted by :meth:`DiskEngine.op_count`) than this get a
#: progress bar, shown once they have run for a second. Measured: 0.32-0.53 G of these
#: operations per second on one core of an AMD EPYC (N = 256, T = 100 and N = 512, T = 200,
#: float64), so about one to two seconds of work there.
PROGRESS_FROM = 5 * 10**8


class DiskEngine:
    """Angular and radial stages for one sampling, one family and one set of moments.

    Parameters
    ----------
    sampling : DiskSampling
        Sample points grouped by radius.
    family : DiskFamily
        Radial function and normalization.
    index : IndexSet
        The stored moments.
    method : str
        Radial method (see :mod:`fastmoments.disk.radial`).
    dtype : torch.dtype
        Working real dtype (float32 or float64).
    device : torch.device
        Where the work runs.
    budget : int, optional
        Scratch memory budget in bytes (default: a safe fraction of free memory).
    """

    def __init__(self, sampling: DiskSampling, family: DiskFamily, index: IndexSet, method: str,
                 dtype: torch.dtype, device: torch.device, budget: int | None = None) -> None:
        self.sampling = sampling
        self.family = family
        self.index = index
        self.method = method
        self.dtype = dtype
        self.cdtype = complex_dtype(dtype)
        self.device = device
        self.budget = memory_budget(device, budget)
        dev = device
        s = sampling
        self.theta0 = torch.as_tensor(s.theta0, dtype=torch.float64, device=dev)
        self.group = torch.as_tensor(s.group, device=dev)
        self.pix = torch.as_tensor(s.pix, device=dev)
        used = torch.as_tensor(s.slot_used, device=dev)
        w = torch.as_tensor(s.weight, dtype=torch.float64, device=dev)
        self.used = used.to(dtype)
        self.usedw = (used.to(torch.float64) * w[:, None]).to(dtype)
        self.radius = torch.as_tensor(s.radius, dtype=torch.float64, device=dev)
        # orbits are sorted by group: group g owns orbits [gstart[g], gstart[g+1])
        self.gstart = np.searchsorted(s.group, np.arange(s.n_groups + 1))
        self.ms = torch.as_tensor(index.ms, dtype=torch.long, device=dev)
        self.m64 = self.ms.to(torch.float64)
        self.quarter = self.ms % 4
        # columns grouped by m mod 4 (the angular stage works class by class)
        order = np.argsort(np.asarray(index.ms) % 4, kind="stable")
        self.class_order = torch.as_tensor(order, device=dev)
        self.class_inverse = torch.as_tensor(np.argsort(order), device=dev)
        self.class_bounds = np.searchsorted(np.asarray(index.ms)[order] % 4, np.arange(5))
        self.norm = torch.as_tensor(family.norm(index), device=dev).to(dtype)
        k = torch.arange(4, dtype=torch.float64)
        # D[kappa, q] = (-i)^(q kappa), Dinv[q, kappa] = i^(q kappa)
        ang = (np.pi / 2) * torch.outer(k, k)
        self.dft = torch.polar(torch.ones_like(ang), -ang).to(self.cdtype).to(dev)
        self.dft_re = self.dft.real.contiguous()
        self.dft_im = self.dft.imag.contiguous()
        self.idft = torch.polar(torch.ones_like(ang), ang).to(self.cdtype).to(dev)
        self.radial_is_complex = family.complex_radial
        self.fused = routes.fuse_radial(method, family.name, index,
                                        triton_radial.available(device))
        if self.fused:
            self.jn = torch.as_tensor([len(c) for c in index.ns], dtype=torch.int32, device=dev)
            self.jcoef = triton_radial.jacobi_coefficients(self.ms, index.n_rows,
                                                           family.name == "zernike")
        # the fused angular kernel serves every family (it does not involve R_nm)
        self.fused_angular = triton_radial.available(device)
        #: the compiled CPU angular stage (:mod:`._numba_angular`) for large chunks
        #: (:data:`.routes.NUMBA_ANGULAR_WORK`); off: the torch path
        self.numba_angular = device.type == "cpu" and sampling.symmetric
        #: every orbit is one point (a disk placed off the pixel grid's symmetries,
        #: :func:`.sampling.placed_sampling`): the angular stage multiplies each point's
        #: value by its exponentials, without the orbit's DFTs
        self.single = not sampling.symmetric
        if self.single:
            self.pix0 = self.pix[:, 0].contiguous()
            self.w0 = self.usedw[:, 0].contiguous()
        self._theta0_np = np.ascontiguousarray(sampling.theta0, dtype=np.float64)
        self._ms_np = np.asarray(index.ms, dtype=np.int64)
        counts = np.diff(self.gstart)
        self.max_orbits = int(counts.max()) if counts.size else 0
        self.gstart_t = torch.as_tensor(self.gstart, dtype=torch.int64, device=dev)
        self.ms32 = self.ms.to(torch.int32)
        self.compression = self._make_compression()
        self._node_table: list[tuple[Any, int, torch.Tensor]] | None = None
        self._table: list[tuple[Any, int, torch.Tensor]] | None = None
        self._layout_cache: tuple | None = None
        self._table_checked = False
        self._exp: torch.Tensor | None = None
        self._exp_checked = False
        self._cs: tuple[torch.Tensor, torch.Tensor] | None = None
        self._cs_checked = False
        #: whether the radial table is cached on the plan (else streamed or not needed)
        self.radial_table_cached = (self.compression is None and not self.fused
                                    and routes.use_table(self.table_bytes(), self.budget))
        #: the route of a call of one image (:meth:`route_for` for a batch)
        self.route = routes.engine_route(self)

    def route_for(self, batch: int) -> Any:
        """The route a call of ``batch`` images takes (:func:`.routes.engine_route`)."""
        return routes.engine_route(self, batch)

    def _make_compression(self) -> RadialCompression | None:
        """The Chebyshev-node compression of the radial stage (:mod:`.compression`), for
        the polynomial families when the radii far outnumber the nodes
        (:func:`.routes.compress`)."""
        name = self.family.name
        T = self.index.max_order
        # groups outside the unit disk (rule="centre" samples there) keep the direct
        # stage: the polynomials grow like cosh(j arccosh r) there, and their Chebyshev
        # sums would cancel
        self.g_inside = int(np.searchsorted(self.sampling.radius, 1.0, side="right"))
        if not routes.compress(name, self.radial_is_complex, self.g_inside, T):
            return None
        self._check_compression_memory(T)
        comp = RadialCompression(name, self.index.ms, T, self.device,
                                 radius=np.asarray(self.sampling.radius[:self.g_inside]))
        comp.cache_bytes = self.budget // 16
        self._ms_comp_np = self._ms_np[comp.order.cpu().numpy()]
        self.class_to_comp = self.class_inverse[comp.order]
        self.ms32_comp = self.ms32[comp.order].contiguous()
        return comp

    def compression_bytes(self, max_order: int, batch: int = 1) -> int:
        """Least memory of the compressed radial stage, before any of it is built: the node
        matrices of the basis, the radial table at the nodes (float64, unless the fused
        kernels compute it on the fly) and the node sums of ``batch`` images."""
        K = node_count(self.family.name, max_order)
        node_matrices = 2 * (max_order + 1) * K * 8
        node_table = 0 if self.fused else self.index.size * K * 8
        node_sums = 2 * self.n_cols * K * 2 * batch * 8
        return node_matrices + node_table + node_sums

    def _check_compression_memory(self, max_order: int) -> None:
        """Raise :class:`MemoryError` before anything of the compressed stage is built (or
        any work done) when its tables cannot fit in the budget."""
        item = _ITEM[self.dtype]
        one_image = (self.n_cols * self.n_rows * 2 * item * 3  # outputs
                     + self.sampling.n_pixels * item * 2)  # image in and out
        need = self.compression_bytes(max_order) + one_image
        if need > self.budget:
            raise MemoryError(
                f"{self.family.name} moments of order={max_order} ({self.index.size} moments)"
                f" need at least {format_bytes(need)} for the radial stage at "
                f"{node_count(self.family.name, max_order)} Chebyshev nodes (its tables and "
                f"one image), but the memory budget is {format_bytes(self.budget)}: lower "
                "order, or raise memory_budget")

    # ------------------------------------------------------------------ sizes
    @property
    def n_cols(self) -> int:
        return self.index.n_cols

    @property
    def n_rows(self) -> int:
        return self.index.n_rows

    def table_bytes(self) -> int:
        """Bytes of the radial table in the working dtype (its blocks, :meth:`_layout`)."""
        item = _ITEM[self.dtype] * (2 if self.radial_is_complex else 1)
        return self._layout()[2] * self.sampling.n_groups * item

    def _layout(self) -> tuple[list[tuple[Any, int, int, int]], np.ndarray, int]:
        """How the radial table is stored: blocks of columns of about the same length.

        The dense ``(cols, rows)`` layout pads every column to the longest (a full Zernike
        set uses half of its slots), and the table is the largest allocation of a plan (1.3
        GB at N = 256, T = 100, k = 3 in float64): filling its pages was most of a first
        call. Columns are sorted by length and cut into blocks whose padding stays below
        :data:`BLOCK_PADDING` of the block; block ``b`` is a ``(len(cols), rows, G)`` tensor.

        Returns ``(blocks, slot, total)``: ``blocks`` lists ``(cols, rows, start, count)``
        (``cols`` a slice when the columns are consecutive, else a LongTensor on the device;
        the block holds flat slots ``start .. start + count * rows``); ``slot[c, j]`` is the
        flat slot of column ``c``, row ``j`` (-1 beyond the column); ``total`` the slots.
        """
        if getattr(self, "_layout_cache", None) is None:
            lens = [len(c) for c in self.index.ns]
            order = sorted(range(len(lens)), key=lambda c: -lens[c])  # stable: ties keep order
            blocks, slot, start, i = [], np.full((len(lens), self.n_rows), -1, np.int64), 0, 0
            while i < len(order):
                rows = lens[order[i]]
                j, used = i + 1, rows
                while j < len(order) and (used + lens[order[j]]) >= (1 - BLOCK_PADDING) * rows * (
                        j + 1 - i):
                    used += lens[order[j]]
                    j += 1
                cols = order[i:j]
                for p, c in enumerate(cols):
                    slot[c, :lens[c]] = start + p * rows + np.arange(lens[c])
                if cols == list(range(cols[0], cols[-1] + 1)):
                    idx: Any = slice(cols[0], cols[-1] + 1)
                else:
                    idx = torch.as_tensor(cols, dtype=torch.long, device=self.device)
                blocks.append((idx, rows, start, len(cols)))
                start += rows * len(cols)
                i = j
            self._layout_cache = (blocks, slot, start)
        return self._layout_cache

    def exp_bytes(self) -> int:
        return self.sampling.n_orbits * self.n_cols * 2 * _ITEM[self.dtype]

    def _tensor_index(self, idx: torch.Tensor | slice) -> torch.Tensor:
        if isinstance(idx, slice):
            return torch.arange(idx.start, idx.stop, idx.step or 1, device=self.device)
        return idx

    # ------------------------------------------------------------------ cached tables
    def _steps(self, g0: int, g1: int):
        return self.family.radial_steps(self.method, self.radius[g0:g1], self.index)

    def table(self) -> list[tuple[Any, int, torch.Tensor]] | None:
        """The radial table as blocks ``(cols, rows, values)`` with ``values`` shaped
        ``(len(cols), rows, groups)`` (see :meth:`_layout`; zero beyond each column's
        length) if the route caches it (:func:`.routes.use_table`; each value computed in
        float64, then cast), else None (it will be streamed)."""
        if not self._table_checked:
            self._table_checked = True
            if self.radial_table_cached:
                dt = self.cdtype if self.radial_is_complex else self.dtype
                self._table = self._build_table(self.radius, dt)
        return self._table

    def _build_table(self, radius: torch.Tensor, dt: torch.dtype
                     ) -> list[tuple[Any, int, torch.Tensor]]:
        """The radial table at ``radius`` in the blocks of :meth:`_layout`, cast to ``dt``."""
        G = radius.shape[0]
        blocks, slot, total = self._layout()
        # every slot is written once: the values, or zero (padding and any slot the
        # recurrence does not reach), so the pages are touched once
        flat = torch.empty(total, G, dtype=dt, device=self.device)
        written = np.zeros(total, dtype=bool)
        steps = self.family.radial_steps(self.method, radius, self.index)
        for cols, rows, vals in steps:  # float64 values, cast per step
            c = (np.arange(cols.start, cols.stop, cols.step or 1)
                 if isinstance(cols, slice) else cols.cpu().numpy())
            where = slot[c, rows.cpu().numpy()]
            if (where < 0).any():  # pragma: no cover - a step outside the layout
                raise RuntimeError("a radial step wrote beyond its column's length")
            flat[torch.as_tensor(where, device=self.device)] = vals.to(dt)
            written[where] = True
        if not written.all():
            flat[torch.as_tensor(np.flatnonzero(~written), device=self.device)] = 0
        return [(idx, rows, flat[start:start + rows * count].view(count, rows, G))
                for idx, rows, start, count in blocks]

    def _nodes_table(self) -> list[tuple[Any, int, torch.Tensor]]:
        """The radial table at the compression's nodes, float64 (small: ``K`` radii)."""
        if self._node_table is None:
            self._node_table = self._build_table(self.compression.nodes, torch.float64)
        return self._node_table

    def _node_forward(self, W: torch.Tensor) -> torch.Tensor:
        """``sum_k R[col, row](x_k) W[col, k, :]`` -> ``(cols, rows, NB2)`` float64."""
        table = None if self.fused else self._nodes_table()
        return self._contract(W.contiguous(), self.compression.nodes, table)

    def _node_synthesis(self, a: torch.Tensor) -> torch.Tensor:
        """``sum_row R[col, row](x_k) a[col, row, :]`` -> ``(cols, K, NB2)`` float64."""
        table = None if self.fused else self._nodes_table()
        return self._expand(a.contiguous(), self.compression.nodes, table)

    def _contract(self, Sr: torch.Tensor, radius: torch.Tensor, table: Any) -> torch.Tensor:
        """``sum_g R[col, row](r_g) Sr[col, g, :]`` for real ``Sr`` ``(cols, G, NB2)`` and a
        real radial function: the fused kernels, or the blocks of ``table`` at ``radius``."""
        if self.fused:
            return triton_radial.FusedForward.apply(Sr, radius, self.ms, self.jn, self.n_rows,
                                       self.family.name == "zernike", self.jcoef)
        out = torch.zeros(self.n_cols, self.n_rows, Sr.shape[-1], dtype=Sr.dtype,
                          device=self.device)
        for cols, rows, t in table:
            out[cols, :rows] = torch.bmm(t, Sr[cols])
        return out

    def _expand(self, ar: torch.Tensor, radius: torch.Tensor, table: Any) -> torch.Tensor:
        """``sum_row R[col, row](r_g) ar[col, row, :]`` -> ``(cols, G, NB2)``: the transpose
        of :meth:`_contract` (every column is in one block, so the result is written
        everywhere)."""
        if self.fused:
            return triton_radial.FusedSynthesis.apply(ar, radius, self.ms, self.jn,
                                         self.family.name == "zernike", self.jcoef)
        out = torch.empty(self.n_cols, radius.shape[0], ar.shape[-1], dtype=ar.dtype,
                          device=self.device)
        for cols, rows, t in table:
            out[cols] = torch.bmm(t.transpose(1, 2), ar[cols, :rows])
        return out

    def _exponentials(self, o0: int, o1: int) -> torch.Tensor:
        r"""``exp(-i m theta0)`` for orbits ``[o0, o1)``, shape ``(orbits, cols)``; the phase
        :math:`m\theta_0` is formed in float64 so that high repetitions keep their accuracy."""
        if not self._exp_checked:
            self._exp_checked = True
            if self.exp_bytes() <= self.budget // 8:
                self._exp = self._make_exp(0, self.sampling.n_orbits)
        if self._exp is not None:
            return self._exp[o0:o1]
        return self._make_exp(o0, o1)

    def _make_exp(self, o0: int, o1: int) -> torch.Tensor:
        phase = torch.outer(self.theta0[o0:o1], self.m64)
        return torch.polar(torch.ones_like(phase), -phase).to(self.cdtype)

    # ------------------------------------------------------------------ chunking
    def _group_step(self, batch: int) -> int | None:
        """How many radius groups fit in one chunk for ``batch`` images (None: not one)."""
        G, O = self.sampling.n_groups, self.sampling.n_orbits
        c = _ITEM[self.dtype]
        Mc, J = self.n_cols, self.n_rows
        per_orbit = batch * Mc * 2 * c * 6 + batch * 8 * c * 4 + Mc * 2 * c * 3
        per_group = batch * Mc * 2 * c * 3
        if self.compression is not None:
            # float64 sums and their cast or local-level copy, basis and angles
            per_group += batch * Mc * 2 * 8 * 2 + self.compression.n_basis * 8 * 2
        elif self.fused:  # partial sums over radius blocks
            block_g, _ = triton_radial._blocks(2 * batch)
            per_group += (Mc * J * 2 * batch * c) // block_g + Mc * 2 * batch * c
        elif self.table() is None:  # streaming: recurrence state and per-step gathers
            T = self.index.max_order + 2
            per_group += 8 * (T + 2) * 8 + (Mc + T) * 2 * batch * c * 2 + J * 8
        room = self.budget - self._fixed_bytes(batch)
        avg = per_group + per_orbit * O / max(G, 1)
        self._last_need = self._fixed_bytes(batch) + avg
        if room < avg:
            return None
        return int(max(1, room // avg))

    def scratch_bytes(self, batch: int) -> float:
        """Memory one forward pass of ``batch`` images takes (infinite when it needs more
        than one chunk of radius groups)."""
        step = self._group_step(batch)
        G, O = self.sampling.n_groups, self.sampling.n_orbits
        if step is None or step < G:
            return math.inf
        fixed = self._fixed_bytes(batch)
        if self.compression is not None and self.fused_angular:
            # what the fused path allocates: float64 sums, the orbits' values and DFTs,
            # the node stage's partial sums, the outputs
            c = _ITEM[self.dtype]
            Mc, J = self.n_cols, self.n_rows
            return (G * Mc * 2 * batch * 8 + O * batch * c * 40
                    + 2 * Mc * J * 2 * batch * 8 + fixed)
        return fixed + (self._last_need - fixed) * G

    def _fixed_bytes(self, batch: int) -> int:
        fixed = 0 if self._table is None else sum(t.numel() * t.element_size()
                                                  for _c, _r, t in self._table)
        fixed += 0 if self._exp is None else self._exp.numel() * self._exp.element_size()
        fixed += 0 if self._cs is None else 2 * self._cs[0].numel() * self._cs[0].element_size()
        if self.compression is not None:
            fixed += self.compression._cached
            fixed += self.compression_bytes(self.index.max_order, batch)
        fixed += batch * self.n_cols * self.n_rows * 2 * _ITEM[self.dtype] * 3  # outputs
        fixed += batch * self.sampling.n_pixels * _ITEM[self.dtype] * 2  # images in and out
        return fixed

    def batch_size(self, batch: int) -> int:
        """The largest number of images (at most ``batch``) that one pass can take; large
        batches are split into passes of this size.

        Raises
        ------
        MemoryError
            When not even one image fits; the message says how much memory is needed.
        """
        if self._group_step(batch) is not None:
            return batch
        lo, hi = 1, batch
        if self._group_step(1) is None:
            raise MemoryError(
                f"this disk transform needs at least {format_bytes(self._last_need)} of "
                f"scratch memory for one image but the budget is {format_bytes(self.budget)};"
                " free device memory or raise memory_budget")
        while lo < hi:  # largest b with a feasible plan
            mid = (lo + hi + 1) // 2
            if self._group_step(mid) is not None:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _chunks(self, batch: int, lo: int = 0, hi: int | None = None, align: int = 1):
        """Split the radius groups ``[lo, hi)`` (default: all) into chunks whose scratch
        fits in the budget (whole multiples of ``align`` groups)."""
        G = self.sampling.n_groups if hi is None else hi
        step = self._group_step(batch)
        if step is None:  # callers split batches first; this is a safety net
            raise MemoryError(f"a batch of {batch} does not fit in the memory budget "
                              f"{format_bytes(self.budget)}")
        step = max(align, step // align * align)
        g0 = lo
        while g0 < G:
            g1 = min(G, g0 + step)
            yield g0, g1, int(self.gstart[g0]), int(self.gstart[g1])
            g0 = g1

    # ------------------------------------------------------------------ forward
    def op_count(self, batch: int) -> int:
        """Floating-point operations of :meth:`forward` (or a synthesis) on ``batch`` images,
        roughly: the 4-point DFTs and phase products of the angular stage, the radial
        contraction (or the recurrence and contraction when the table is streamed)."""
        O, G, K = self.sampling.n_orbits, self.sampling.n_groups, self.index.size
        radial = G * K * 8 * batch + (0 if self._table is not None else G * K * 6)
        return int(O * 8 * 16 * batch + O * self.n_cols * 16 * batch + radial)

    def _bar(self, batch: int, passes: int, what: str, progress: bool | None) -> Any:
        """A bar over the radius groups of every pass, for jobs of more than
        :data:`PROGRESS_FROM` flops (shown after a second; ``progress=True`` at once,
        ``False`` never)."""
        total = self.sampling.n_groups * passes
        large = self.op_count(batch) > PROGRESS_FROM
        return progress_bar(total, desc=f"{self.family.name} {what}", show=progress,
                            large=large, unit="radii")

    def forward(self, x: torch.Tensor, progress: bool | None = None) -> torch.Tensor:
        """Moments of images ``x`` shaped ``(B, N*N)`` -> ``(B, cols, rows)`` complex.

        ``progress``: a tqdm bar over the radius groups (``None``: only for jobs of more
        than :data:`PROGRESS_FROM` flops that run for over a second).
        """
        b = self.batch_size(x.shape[0])
        passes = list(range(0, x.shape[0], b)) if b < x.shape[0] else [0]
        bar = self._bar(x.shape[0], len(passes), "moments", progress)
        try:
            if len(passes) > 1:
                return torch.cat([self._forward(x[i:i + b], bar) for i in passes])
            return self._forward(x, bar)
        finally:
            bar.close()

    def _forward(self, x: torch.Tensor, bar: Any = None) -> torch.Tensor:
        B = x.shape[0]
        Mc, J = self.n_cols, self.n_rows
        if self.compression is not None:
            return self._forward_compressed(x, bar)
        acc = torch.zeros(Mc, J, B, dtype=self.cdtype, device=self.device)
        for g0, g1, o0, o1 in self._chunks(B):
            S = self._angular(x, g0, g1, o0, o1)
            acc = acc + self._radial(S, g0, g1)
            if bar is not None:
                bar.update(g1 - g0)
        acc = acc * self.norm[:, :, None]
        return acc.permute(2, 0, 1)

    def _forward_compressed(self, x: torch.Tensor, bar: Any) -> torch.Tensor:
        """The forward transform with the radial stage compressed to the nodes."""
        B = x.shape[0]
        comp = self.compression
        C = None
        for g0, g1, o0, o1, local in self._compressed_chunks(B):
            S = self._angular(x, g0, g1, o0, o1, group_major=True)  # (Gc, cols, B, 2)
            S = S.reshape(g1 - g0, self.n_cols, 2 * B)
            if local:
                C = comp.moments_local(S, g0, C)
            else:
                C = comp.moments(S, g0, C)
            if bar is not None:
                bar.update(g1 - g0)
        W = comp.node_weights(C, 2 * B)  # (cols, K, 2B)
        acc = self._node_forward(W).reshape(self.n_cols, self.n_rows, B, 2)
        acc = torch.view_as_complex(acc.to(self.dtype).contiguous())
        for g0, g1, o0, o1 in self._chunks(B, self.g_inside):  # outside the disk
            acc = acc + self._radial(self._angular(x, g0, g1, o0, o1), g0, g1)
            if bar is not None:
                bar.update(g1 - g0)
        acc = acc * self.norm[:, :, None]
        return acc.permute(2, 0, 1)

    def _compressed_chunks(self, batch: int):
        """Chunks of the groups inside the disk, as ``(g0, g1, o0, o1, local)``: those of
        the compression's local level (whole blocks) flagged."""
        lo = self.compression.local
        if lo is None:
            parts = [(0, self.g_inside, False)]
        else:
            parts = [(0, lo.g0, False), (lo.g0, lo.g1, True), (lo.g1, self.g_inside, False)]
        for a, b, local in parts:
            for g0, g1, o0, o1 in self._chunks(batch, a, b, lo.L if local else 1):
                yield g0, g1, o0, o1, local

    def _angular(self, x: torch.Tensor, g0: int, g1: int, o0: int, o1: int,
                 group_major: bool = False) -> torch.Tensor:
        """Angular sums ``S[col, group - g0, b]`` for the groups ``[g0, g1)``; with
        ``group_major``, a real float64 ``(groups, cols, B, 2)`` tensor with the columns in
        the compression's order instead."""
        B = x.shape[0]
        if self.single and not self.fused_angular:
            return self._angular_points(x, g0, g1, o0, o1, group_major)
        vals = x[:, self.pix[o0:o1]] * self.usedw[o0:o1]  # (B, O, 8)
        if (routes.numba_angular(self, B)
                and not (torch.is_grad_enabled() and x.requires_grad)):
            return self._angular_numba(vals, g0, g1, o0, o1, group_major)
        # 4-point DFTs of the two half-orbits, in real arithmetic: F = re + i im
        pr, pi = vals[..., :4] @ self.dft_re, vals[..., :4] @ self.dft_im
        mr, mi = vals[..., 4:] @ self.dft_re, vals[..., 4:] @ self.dft_im
        if self.fused_angular and not (torch.is_grad_enabled() and x.requires_grad):
            # gradients take the torch path below
            fp = torch.complex(pr, pi)
            fm = torch.complex(mr, mi)
            gs = self.gstart_t[g0:g1 + 1] - o0
            if group_major:
                return triton_radial.angular_forward(fp, fm, self.theta0[o0:o1], gs,
                                                     self.ms32_comp, g1 - g0,
                                                     self.max_orbits, group_major=True)
            S = triton_radial.angular_forward(fp, fm, self.theta0[o0:o1], gs, self.ms32,
                                              g1 - g0, self.max_orbits)
            return torch.view_as_complex(S)
        # e^{-i m th} F+ + e^{i m th} F-  =  (c u1 + s u2) + i (c u3 + s u4), where u takes
        # its value at q = m mod 4: the columns are visited class by class (cos/sin tables are
        # stored in that order), so every product is a broadcast, with no gather
        cos, sin = self._cos_sin(o0, o1)  # (O, Mc), columns in class order
        u1, u2 = (pr + mr).transpose(0, 1), (pi - mi).transpose(0, 1)  # (O, B, 4)
        u3, u4 = (pi + mi).transpose(0, 1), (mr - pr).transpose(0, 1)
        On = o1 - o0
        tre = torch.empty(On, self.n_cols, B, dtype=self.dtype, device=self.device)
        tim = torch.empty_like(tre)
        for q in range(4):
            a, b = self.class_bounds[q], self.class_bounds[q + 1]
            if a == b:
                continue
            c, s = cos[:, a:b, None], sin[:, a:b, None]  # (O, Mq, 1)
            tre[:, a:b] = c * u1[:, None, :, q] + s * u2[:, None, :, q]
            tim[:, a:b] = c * u3[:, None, :, q] + s * u4[:, None, :, q]
        return self._sum_groups(tre, tim, g0, g1, o0, o1, group_major)

    def _angular_points(self, x: torch.Tensor, g0: int, g1: int, o0: int, o1: int,
                        group_major: bool) -> torch.Tensor:
        r""":meth:`_angular` for orbits of one point: :math:`\sum_{p \in g} w_p f_p
        e^{-im\theta_p}`, the products written straight into the ``(cols, groups, B)``
        layout (summed over the groups' points only where a group has several)."""
        v = (x[:, self.pix0[o0:o1]] * self.w0[o0:o1]).transpose(0, 1)  # (O, B)
        E = self._exponentials(o0, o1).transpose(0, 1)  # (cols, O)
        terms = torch.empty(E.shape[0], E.shape[1], v.shape[1], dtype=self.cdtype,
                            device=self.device)
        torch.mul(E[:, :, None], v[None, :, :], out=terms)  # (cols, O, B), contiguous
        if g1 - g0 == o1 - o0:  # one point per group (orbits sorted by group)
            S = terms
        else:
            S = torch.zeros(self.n_cols, g1 - g0, v.shape[1], dtype=self.cdtype,
                            device=self.device).index_add_(1, self.group[o0:o1] - g0, terms)
        if group_major:
            order = self.class_order[self.class_to_comp]  # natural columns, compression order
            return torch.view_as_real(S[order]).transpose(0, 1).to(torch.float64)
        return S

    def _sum_groups(self, tre: torch.Tensor, tim: torch.Tensor, g0: int, g1: int, o0: int,
                    o1: int, group_major: bool) -> torch.Tensor:
        """Sum the orbits' terms ``(orbits, cols, B)`` (columns in class order) over each
        radius group, in the layout :meth:`_angular` returns."""
        B = tre.shape[-1]
        # sum the orbits of each group: rows of contiguous (cols x batch) blocks
        gidx = self.group[o0:o1] - g0
        shape = (g1 - g0, self.n_cols, B)
        Sre = torch.zeros(shape, dtype=self.dtype, device=self.device).index_add_(0, gidx, tre)
        Sim = torch.zeros(shape, dtype=self.dtype, device=self.device).index_add_(0, gidx, tim)
        if group_major:
            return torch.stack([Sre[:, self.class_to_comp], Sim[:, self.class_to_comp]],
                               -1).to(torch.float64)
        return torch.complex(Sre, Sim).transpose(0, 1)[self.class_inverse]

    def _angular_numba(self, vals: torch.Tensor, g0: int, g1: int, o0: int, o1: int,
                       group_major: bool) -> torch.Tensor:
        """:meth:`_angular` on the CPU by the compiled kernel (same layouts and orders)."""
        from . import _numba_angular as kern

        B, Gc = vals.shape[0], g1 - g0
        if B == 0:  # an empty batch: nothing to sum (and no strides to view as complex)
            if group_major:
                return torch.zeros(Gc, self.n_cols, 0, 2, dtype=torch.float64)
            return torch.zeros(self.n_cols, Gc, 0, dtype=self.cdtype)
        kern.set_threads(threads_for(vals.numel() * self.n_cols))
        v = vals.detach().contiguous().numpy()
        gs = (self.gstart[g0:g1 + 1] - o0).astype(np.int64)
        th = self._theta0_np[o0:o1]
        if group_major:
            out = np.empty((Gc, self.n_cols, B, 2), dtype=np.float64)
            kern.angular_sums(v, th, gs, self._ms_comp_np, out)
            return torch.from_numpy(out)
        dt = np.float64 if self.dtype == torch.float64 else np.float32
        store = np.empty((self.n_cols, Gc, B, 2), dtype=dt)
        kern.angular_sums(v, th, gs, self._ms_np, store.transpose(1, 0, 2, 3))
        return torch.view_as_complex(torch.from_numpy(store))

    def _cos_sin(self, o0: int, o1: int) -> tuple[torch.Tensor, torch.Tensor]:
        r"""``cos(m theta0)`` and ``sin(m theta0)`` for orbits ``[o0, o1)``, shaped
        ``(orbits, cols)`` with the columns in class order (``m mod 4``), in the working
        dtype; the phase is formed in float64. Cached when small."""
        if self._cs is None and not self._cs_checked:
            self._cs_checked = True
            if self.exp_bytes() <= self.budget // 8:
                self._cs = self._make_cos_sin(0, self.sampling.n_orbits)
        if self._cs is not None:
            return self._cs[0][o0:o1], self._cs[1][o0:o1]
        return self._make_cos_sin(o0, o1)

    def _make_cos_sin(self, o0: int, o1: int) -> tuple[torch.Tensor, torch.Tensor]:
        phase = torch.outer(self.theta0[o0:o1], self.m64[self.class_order])
        return torch.cos(phase).to(self.dtype), torch.sin(phase).to(self.dtype)

    def _radial(self, S: torch.Tensor, g0: int, g1: int) -> torch.Tensor:
        """``sum_g conj(R[col, row, g]) S[col, g, b]`` -> ``(cols, rows, B)``."""
        Mc, J = self.n_cols, self.n_rows
        B = S.shape[-1]
        table = None if self.fused else self.table()
        if self.fused or (table is not None and not self.radial_is_complex):
            Sr = torch.view_as_real(S).reshape(Mc, g1 - g0, 2 * B)
            part = None if table is None else [(c, r, t[:, :, g0:g1]) for c, r, t in table]
            out = self._contract(Sr, self.radius[g0:g1], part)
            return torch.view_as_complex(out.reshape(Mc, J, B, 2).contiguous())
        if table is not None:  # complex radial functions
            out = torch.zeros(Mc, J, B, dtype=self.cdtype, device=self.device)
            for cols, rows, t in table:
                out[cols, :rows] = torch.bmm(t[:, :, g0:g1].conj(), S[cols])
            return out
        # the recurrences reuse their buffers: autograd must keep a copy of each step
        copy = S.requires_grad and torch.is_grad_enabled()
        if self.radial_is_complex:
            out = torch.zeros(Mc, J, B, dtype=self.cdtype, device=self.device)
            for cols, rows, v in self._steps(g0, g1):
                vc = v.conj().to(self.cdtype, copy=copy)
                part = torch.bmm(vc[:, None, :], S[cols]).squeeze(1)
                out = out.index_put((self._tensor_index(cols), rows), part, accumulate=True)
            return out
        Sr = torch.view_as_real(S).reshape(Mc, g1 - g0, 2 * B)
        out = torch.zeros(Mc, J, 2 * B, dtype=self.dtype, device=self.device)
        for cols, rows, v in self._steps(g0, g1):
            part = torch.bmm(v.to(self.dtype, copy=copy)[:, None, :], Sr[cols]).squeeze(1)
            out = out.index_put((self._tensor_index(cols), rows), part, accumulate=True)
        return torch.view_as_complex(out.reshape(Mc, J, B, 2))

    # ------------------------------------------------------------------ synthesis
    def synthesize(self, coef: torch.Tensor, *, gamma: torch.Tensor, weighted: bool,
                   normalized: bool, progress: bool | None = None) -> torch.Tensor:
        r"""Images ``(B, N*N)`` from coefficients ``(B, cols, rows)``.

        ``gamma`` (per column) weighs the repetitions (``1`` for ``m = 0`` and ``2`` for
        ``m > 0`` in a full reconstruction of a real image). ``weighted`` multiplies by the
        quadrature weights and sums the sample points of each pixel (the adjoint);
        otherwise each pixel takes the value at its sample point (reconstruction with a
        one-point sampling). ``normalized`` multiplies by :math:`c_{nm}` (the adjoint).
        """
        b = self.batch_size(coef.shape[0])
        passes = list(range(0, coef.shape[0], b)) if b < coef.shape[0] else [0]
        bar = self._bar(coef.shape[0], len(passes), "synthesis", progress)
        try:
            if len(passes) == 1:
                return self._synthesize(coef, gamma, weighted, normalized, bar)
            return torch.cat([self._synthesize(coef[i:i + b], gamma, weighted, normalized, bar)
                              for i in passes])
        finally:
            bar.close()

    def _synthesize(self, coef: torch.Tensor, gamma: torch.Tensor, weighted: bool,
                    normalized: bool, bar: Any) -> torch.Tensor:
        B = coef.shape[0]
        N2 = self.sampling.n_pixels
        a = coef.permute(1, 2, 0).to(self.cdtype)  # (Mc, J, B)
        if normalized:
            a = a * self.norm[:, :, None]
        a = a * gamma.to(self.dtype)[:, None, None]
        out = torch.zeros(B, N2, dtype=self.dtype, device=self.device)
        if self.compression is not None:
            ar = torch.view_as_real(a).reshape(self.n_cols, self.n_rows, 2 * B)
            coef = self.compression.coefficients(self._node_synthesis(ar.to(torch.float64)))
            comp = self.compression
            for g0, g1, o0, o1, local in self._compressed_chunks(B):
                if local:
                    C = comp.expand_local(coef, g0, g1, self.dtype, 2 * B)
                else:
                    C = comp.expand(coef, g0, g1, self.dtype, 2 * B)
                C = torch.view_as_complex(C.reshape(self.n_cols, g1 - g0, B, 2))
                out = self._angular_synth(C, g0, o0, o1, out, weighted)
                bar.update(g1 - g0)
            for g0, g1, o0, o1 in self._chunks(B, self.g_inside):  # outside the disk
                C = self._radial_synth(a, g0, g1)
                out = self._angular_synth(C, g0, o0, o1, out, weighted)
                bar.update(g1 - g0)
            return out
        for g0, g1, o0, o1 in self._chunks(B):
            C = self._radial_synth(a, g0, g1)  # (Mc, Gc, B)
            out = self._angular_synth(C, g0, o0, o1, out, weighted)
            bar.update(g1 - g0)
        return out

    def _radial_synth(self, a: torch.Tensor, g0: int, g1: int) -> torch.Tensor:
        Mc, J = self.n_cols, self.n_rows
        B = a.shape[-1]
        Gc = g1 - g0
        table = None if self.fused else self.table()
        if self.fused or (table is not None and not self.radial_is_complex):
            ar = torch.view_as_real(a).reshape(Mc, J, 2 * B)
            part = None if table is None else [(c, r, t[:, :, g0:g1]) for c, r, t in table]
            out = self._expand(ar, self.radius[g0:g1], part)
            return torch.view_as_complex(out.reshape(Mc, Gc, B, 2).contiguous())
        if table is not None:  # complex radial functions; every column is in one block
            out = torch.empty(Mc, Gc, B, dtype=self.cdtype, device=self.device)
            for cols, rows, t in table:
                out[cols] = torch.bmm(t[:, :, g0:g1].transpose(1, 2), a[cols, :rows])
            return out
        copy = a.requires_grad and torch.is_grad_enabled()  # the recurrences reuse buffers
        if self.radial_is_complex:
            out = torch.zeros(Mc, Gc, B, dtype=self.cdtype, device=self.device)
            for cols, rows, v in self._steps(g0, g1):
                vc = v.to(self.cdtype, copy=copy)
                part = vc[:, :, None] * a[self._tensor_index(cols), rows][:, None, :]
                out = out.index_add(0, self._tensor_index(cols), part)
            return out
        ar = torch.view_as_real(a).reshape(Mc, J, 2 * B)
        out = torch.zeros(Mc, Gc, 2 * B, dtype=self.dtype, device=self.device)
        for cols, rows, v in self._steps(g0, g1):
            vr = v.to(self.dtype, copy=copy)
            part = vr[:, :, None] * ar[self._tensor_index(cols), rows][:, None, :]
            out = out.index_add(0, self._tensor_index(cols), part)
        return torch.view_as_complex(out.reshape(Mc, Gc, B, 2))

    def _angular_synth(self, C: torch.Tensor, g0: int, o0: int, o1: int, out: torch.Tensor,
                       weighted: bool) -> torch.Tensor:
        B = C.shape[-1]
        Cg = C[:, self.group[o0:o1] - g0, :]  # (Mc, O, B)
        e = self._exponentials(o0, o1).transpose(0, 1)[:, :, None]  # (Mc, O, 1) e^{-im th}
        On = o1 - o0
        gp = torch.zeros(4, On, B, dtype=self.cdtype, device=self.device)
        gp = gp.index_add(0, self.quarter, Cg * e.conj())
        gm = torch.zeros(4, On, B, dtype=self.cdtype, device=self.device)
        gm = gm.index_add(0, self.quarter, Cg * e)
        # value at slot (sigma, kappa) = Re sum_q G_sigma[q] i^(q kappa)
        vp = torch.einsum("qob,qk->bok", gp, self.idft).real
        vm = torch.einsum("qob,qk->bok", gm, self.idft).real
        vals = torch.cat([vp, vm], dim=-1) * (self.usedw if weighted else self.used)[o0:o1]
        return out.index_add(1, self.pix[o0:o1].reshape(-1), vals.reshape(B, -1))
