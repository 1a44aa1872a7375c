r"""Radial compression: the sums over many radii replaced by sums over a few Chebyshev nodes.

The radial stage of the disk engine contracts the angular sums :math:`S_{gm}` of :math:`G`
radius groups with the radial polynomials, :math:`\sum_g R_{nm}(r_g) S_{gm}`. With
:math:`k \times k` sub-pixels :math:`G` is large (1.5 million groups for a 512² image at
:math:`k = 11`) while every :math:`R_{nm}` of a Zernike or pseudo-Zernike set of maximum order
:math:`T` is a polynomial of degree at most :math:`T`. A weighted sum of a polynomial of
degree :math:`\le T` over any set of points equals a weighted sum over :math:`T + 1` fixed
nodes, with weights that do not depend on the polynomial. Through the Chebyshev basis:

.. math::
    \sum_g R(r_g) S_g = \sum_j a_j C_j, \qquad C_j = \sum_g T_j(r_g) S_g, \qquad
    a_j = \frac{2 - \delta_{j0}}{M} \sum_{k=0}^{M-1} R(x_k) T_j(x_k),

with :math:`a_j` the Chebyshev coefficients of :math:`R`, exact from its values at the
:math:`M \ge T + 1` Chebyshev-Gauss nodes :math:`x_k = \cos(\pi (k + 1/2) / M)` (discrete
orthogonality of :math:`T_0 .. T_{M-1}` on those nodes). Exchanging the sums,

.. math::
    \sum_g R(r_g) S_g = \sum_k R(x_k) W_k, \qquad
    W_k = \frac{1}{M} \sum_j (2 - \delta_{j0}) T_j(x_k) C_j .

So the radial stage splits into

1. a matrix product over the radii, :math:`C = S^{\mathsf T} B` with the basis
   :math:`B_{gj} = T_j(r_g)`, shared by every repetition :math:`m` (one GEMM, on tensor
   cores on a GPU, instead of one recurrence per :math:`(n, m)` and radius);
2. a small product :math:`W = C P` to the node weights (:math:`P_{jk}` above);
3. the family's own radial stage at the :math:`M` nodes instead of the :math:`G` radii.

Synthesis runs it backwards: node values :math:`V_k = \sum_n R_{nm}(x_k) a_{nm}`,
coefficients :math:`v = P V`, and :math:`C_{gm} = \sum_j T_j(r_g) v_j`, which is exact
because :math:`V` is a polynomial of degree :math:`\le T` (interpolation at the nodes).

Zernike polynomials have the parity of :math:`m` (:math:`R_{nm}(-r) = (-1)^m R_{nm}(r)`),
so their expansions hold only :math:`T_j` with :math:`j \equiv m \pmod 2`, and the node pairs
:math:`\pm x_k` give equal terms: with :math:`M` even, only the :math:`M/2` positive nodes
and half of the :math:`T_j` are used, each with weight :math:`4/M` instead of :math:`2/M`.
Pseudo-Zernike polynomials have no parity; they use the shifted basis
:math:`T_j(2r - 1)` on :math:`[0, 1]` and all :math:`M = T + 1` nodes
:math:`r_k = (1 + x_k)/2`.

**Local level.** With many sub-pixels the product over radii still costs
:math:`O(G \cdot M \cdot M_c)`. In the angle :math:`\varphi = \arccos t` the basis is
:math:`\cos(j\varphi)`, band-limited to :math:`j \le T`, so on a block of consecutive radii
spanning :math:`\Delta\varphi \le 2/T` it is reproduced by its interpolant of degree 15 at
16 local Chebyshev points to below :math:`10^{-17}` (the bound at :data:`LOCAL_WIDTH`). Each
such block's sums move first to its 16 points (a batched product with the local Lagrange
weights :math:`\ell_i(\varphi_g)`), and only those points enter the product over radii:
at :math:`k = 11` (512², :math:`T = 700`) about 25 times fewer rows. Blocks wider than that
(the few radii near :math:`r = 0` and :math:`r = 1`, where radii are sparse in
:math:`\varphi`) stay as they are.

The coefficients are bounded (:math:`|a_j| \le 2` since :math:`|R_{nm}| \le 1` on the
interval) and the basis is evaluated as :math:`\cos(j \arccos r)` in float64, so the
compression adds only rounding to the sums. The work moves from
:math:`O(G \sum_m J_m)` recurrence steps to one product of :math:`O(G M \cdot 2 M_c)` flops at
the matrix-product rate. This is our construction; the papers evaluate the polynomials at
every radius.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["RadialCompression", "node_count"]

#: Nodes per block of the local level (:class:`_Local`).
LOCAL_NODES = 16
#: Largest :math:`T \Delta\varphi` of a block of the local level: the interpolation error
#: of :math:`\cos(j\varphi)`, :math:`j \le T`, by degree 15 on such a block is below
#: :math:`2 (T\Delta\varphi/4)^{16} / 16! < 10^{-17}`.
LOCAL_WIDTH = 2.0
#: Block lengths (consecutive radius groups) the local level tries.
LOCAL_BLOCKS = (128, 256, 512, 1024)


def node_count(family: str, max_order: int) -> int:
    """Nodes the radial stage runs at after compression (per parity class for Zernike)."""
    if family == "zernike":
        m_all = max_order + 1 if (max_order + 1) % 2 == 0 else max_order + 2
        return m_all // 2
    return max_order + 1


@dataclass
class _Class:
    """Columns that share one basis: a parity class (Zernike) or every column."""

    start: int  # first position in the compression order of the columns
    stop: int
    js: torch.Tensor  # float64 degrees j of the basis, on the device
    P: torch.Tensor  # (J, K) float64: W = C @ P and v = P @ V


class RadialCompression:
    """Chebyshev-node compression of the radial stage for one index set.

    Parameters
    ----------
    family : str
        ``"zernike"`` or ``"pseudo-zernike"``.
    ms : sequence of int
        Repetition of each column of the index set.
    max_order : int
        Highest order :math:`T` of the set.
    device : torch.device
        Where the tables live.

    Attributes
    ----------
    nodes : torch.Tensor
        The ``K`` node radii in :math:`(0, 1)`, float64.
    order : torch.Tensor
        Columns in compression order (grouped by class); ``inverse`` undoes it.
    classes : list
        ``(start, stop)`` ranges of that order with their basis degrees and node matrix.
    """

    def __init__(self, family: str, ms, max_order: int, device: torch.device,
                 radius: np.ndarray | None = None) -> None:
        if family not in ("zernike", "pseudo-zernike"):
            raise ValueError(f"radial compression needs a polynomial family, got {family!r}")
        self.family = family
        self.zernike = family == "zernike"
        T = int(max_order)
        ms = np.asarray(ms, dtype=np.int64)
        if self.zernike:
            M = 2 * node_count(family, T)
            K = M // 2
            x = np.cos(np.pi * (np.arange(K) + 0.5) / M)  # the positive nodes
            self.nodes = torch.as_tensor(x, dtype=torch.float64, device=device)
            order = np.concatenate([np.flatnonzero(ms % 2 == 0), np.flatnonzero(ms % 2 == 1)])
            scale = 4.0 / M
            parts = []
            pos = 0
            for p in (0, 1):
                count = int((ms % 2 == p).sum())
                if count:
                    js = np.arange(p, T + 1, 2)
                    parts.append((pos, pos + count, js, x))
                pos += count
        else:
            M = T + 1
            x = np.cos(np.pi * (np.arange(M) + 0.5) / M)
            self.nodes = torch.as_tensor((1 + x) / 2, dtype=torch.float64, device=device)
            order = np.arange(len(ms))
            scale = 2.0 / M
            parts = [(0, len(ms), np.arange(T + 1), x)]
        self.M = M
        self.classes: list[_Class] = []
        for start, stop, js, xs in parts:
            P = scale * np.cos(np.outer(js, np.arccos(xs)))  # T_j(x_k)
            P[js == 0] *= 0.5
            self.classes.append(_Class(start, stop,
                                       torch.as_tensor(js, dtype=torch.float64, device=device),
                                       torch.as_tensor(P, dtype=torch.float64, device=device)))
        self.order = torch.as_tensor(order, dtype=torch.long, device=device)
        self.inverse = torch.as_tensor(np.argsort(order), dtype=torch.long, device=device)
        self.n_basis = max(len(c.js) for c in self.classes)
        self.radius = (None if radius is None
                       else torch.as_tensor(radius, dtype=torch.float64, device=device))
        self.local = None if radius is None else _Local.build(self.phi_np(radius), T, device)
        #: bytes of bases the plan may keep (set by the engine from its memory budget)
        self.cache_bytes = 0
        self._cache: dict[tuple, torch.Tensor] = {}
        self._cached = 0

    def _angles(self, rows: tuple) -> torch.Tensor:
        """The angles of ``rows``: ``("radii", g0, g1)``, the groups ``[g0, g1)`` of
        :attr:`radius`, or ``("local", b0, nb)``, the points of local blocks
        ``[b0, b0 + nb)``."""
        if rows[0] == "local":
            _, b0, nb = rows
            d = self.local.d
            return self.local.phi[b0 * d:(b0 + nb) * d]
        return self.phi(self.radius[rows[1]:rows[2]])

    def _basis_at(self, rows: tuple, ci: int) -> torch.Tensor:
        """The float64 basis of class ``ci`` at ``rows`` (see :meth:`_angles`), for the
        forward products and the synthesis alike; kept while the kept bases stay within
        :attr:`cache_bytes` (the radii of a plan never change), so a repeated call neither
        recomputes the angles nor the cosines."""
        hit = self._cache.get((rows, ci))
        if hit is not None:
            return hit
        B = self.basis(self._angles(rows), self.classes[ci])
        size = B.numel() * 8
        if self._cached + size <= self.cache_bytes:
            self._cache[(rows, ci)] = B
            self._cached += size
        return B

    def phi_np(self, r: np.ndarray) -> np.ndarray:
        r"""The angle :math:`\varphi = \arccos t` of radii (float64 NumPy)."""
        t = r if self.zernike else 2 * r - 1
        return np.arccos(np.clip(t, -1.0, 1.0))

    def phi(self, r: torch.Tensor) -> torch.Tensor:
        r"""The angle :math:`\varphi = \arccos t` of radii (float64 tensor)."""
        t = r if self.zernike else 2 * r - 1
        return torch.arccos(t.clamp(-1.0, 1.0))

    # ------------------------------------------------------------------ basis
    def basis(self, phi: torch.Tensor, cls: _Class) -> torch.Tensor:
        r""":math:`T_j(t_g) = \cos(j \varphi_g)` for the class's degrees, ``(G, J)``
        float64 (:math:`t = r` for Zernike, :math:`2r - 1` for pseudo-Zernike,
        :math:`\varphi` from :meth:`phi`)."""
        return torch.cos(phi[:, None] * cls.js[None, :])

    # ------------------------------------------------------------------ forward
    def moments(self, S: torch.Tensor, g0: int, out: list[torch.Tensor] | None = None
                ) -> list[torch.Tensor]:
        r"""Add :math:`C = S^{\mathsf T} B` of the chunk of radius groups starting at
        ``g0`` to ``out``.

        ``S`` is ``(G, cols, NB2)`` real float64, radius-major, columns in compression
        order. Returns, per class, ``(cols_class * NB2, J)`` float64.

        The products run in float64 also for float32 plans. Measured against float64
        plans (N = 64-256, T = 30-200, k = 1-11, Zernike): float32 products left 1e-6 of
        the largest moment, as the direct radial stage does, float64 ones 4e-8 to 9e-8;
        pseudo-Zernike sets were worse still in float32 (1e-4 at T = 200: the rounding is
        multiplied by :math:`\sum_j |a_j|`). On an H100 the float64 product (cuBLAS, float64
        tensor cores) also ran faster than a 3xTF32 one (32.7 against 15.4 TFLOP/s at
        k = 11), and no float32 matmul setting of the user's (TF32, bfloat16) reaches it.
        """
        return self._products(S, ("radii", g0, g0 + S.shape[0]), out)

    def _products(self, S: torch.Tensor, rows: tuple, out: list[torch.Tensor] | None
                  ) -> list[torch.Tensor]:
        G, _C, NB2 = S.shape
        if out is None:
            out = [torch.zeros((c.stop - c.start) * NB2, len(c.js), dtype=torch.float64,
                               device=S.device) for c in self.classes]
        for ci, (acc, cls) in enumerate(zip(out, self.classes, strict=True)):
            A = S[:, cls.start:cls.stop].reshape(G, (cls.stop - cls.start) * NB2)  # a view
            acc += A.transpose(0, 1) @ self._basis_at(rows, ci)
        return out

    def moments_local(self, S: torch.Tensor, g0: int, out: list[torch.Tensor] | None = None
                      ) -> list[torch.Tensor]:
        """:meth:`moments` for a chunk of whole local blocks starting at group ``g0``: the
        sums move to the blocks' points first."""
        lo = self.local
        G, Mc, NB2 = S.shape
        b0 = (g0 - lo.g0) // lo.L
        nb = G // lo.L
        W = torch.bmm(lo.ell[b0:b0 + nb], S.reshape(nb, lo.L, Mc * NB2))  # (nb, d, cols*NB2)
        return self._products(W.reshape(nb * lo.d, Mc, NB2), ("local", b0, nb), out)

    def node_weights(self, C: list[torch.Tensor], NB2: int) -> torch.Tensor:
        """``(cols, K, NB2)`` float64 node weights in the original column order."""
        parts = []
        for acc, cls in zip(C, self.classes, strict=True):
            w = acc @ cls.P  # (cols_class * NB2, K)
            parts.append(w.reshape(cls.stop - cls.start, NB2, cls.P.shape[1]).transpose(1, 2))
        return torch.cat(parts)[self.inverse]

    # ------------------------------------------------------------------ synthesis
    def coefficients(self, V: torch.Tensor) -> list[torch.Tensor]:
        """Per class, ``(J, cols_class * NB2)`` Chebyshev coefficients of the node values
        ``V`` ``(cols, K, NB2)`` (original column order), float64."""
        V = V[self.order]
        out = []
        for cls in self.classes:
            v = V[cls.start:cls.stop].to(torch.float64)  # (c, K, NB2)
            out.append((cls.P @ v).transpose(0, 1).reshape(len(cls.js),
                                                           (cls.stop - cls.start) * V.shape[2]))
        return out

    def _rows(self, coef: list[torch.Tensor], rows: tuple, NB2: int) -> torch.Tensor:
        """``(G, cols, NB2)`` float64 values at ``rows`` (see :meth:`_angles`),
        compression order."""
        parts = []
        for ci, (v, cls) in enumerate(zip(coef, self.classes, strict=True)):
            B = self._basis_at(rows, ci)
            parts.append((B @ v).reshape(B.shape[0], cls.stop - cls.start, NB2))
        return torch.cat(parts, dim=1)

    def expand(self, coef: list[torch.Tensor], g0: int, g1: int, dtype: torch.dtype,
               NB2: int) -> torch.Tensor:
        r""":math:`C_{gm} = \sum_j T_j(r_g) v_{jm}` for the radius groups ``[g0, g1)``:
        ``(cols, G, NB2)`` in ``dtype``, original column order."""
        rows = self._rows(coef, ("radii", g0, g1), NB2)
        return rows.transpose(0, 1)[self.inverse].to(dtype)

    def expand_local(self, coef: list[torch.Tensor], g0: int, g1: int, dtype: torch.dtype,
                     NB2: int) -> torch.Tensor:
        """:meth:`expand` for whole local blocks ``[g0, g1)``: values at the blocks' points,
        then interpolated to the radii."""
        lo = self.local
        b0 = (g0 - lo.g0) // lo.L
        nb = (g1 - g0) // lo.L
        V = self._rows(coef, ("local", b0, nb), NB2)  # (nb * d, cols, NB2)
        Mc = V.shape[1]
        rows = torch.bmm(lo.ell[b0:b0 + nb].transpose(1, 2), V.reshape(nb, lo.d, Mc * NB2))
        rows = rows.reshape(nb * lo.L, Mc, NB2)
        return rows.transpose(0, 1)[self.inverse].to(dtype)


@dataclass
class _Local:
    """The local level: groups ``[g0, g0 + nb L)`` in ``nb`` blocks of ``L`` consecutive
    groups, each narrow enough (:data:`LOCAL_WIDTH`) to move to ``d`` points."""

    g0: int
    nb: int
    L: int
    d: int
    ell: torch.Tensor  # (nb, d, L) float64 Lagrange weights of the groups
    phi: torch.Tensor  # (nb * d,) float64 angles of the points

    @property
    def g1(self) -> int:
        return self.g0 + self.nb * self.L

    @staticmethod
    def build(phi: np.ndarray, T: int, device: torch.device) -> _Local | None:
        """The block length that leaves the fewest rows, or None when it does not halve
        them. The blocks are the longest run of narrow ones."""
        G = phi.shape[0]
        d = LOCAL_NODES
        best = None
        for L in LOCAL_BLOCKS:
            nb = G // L
            if nb == 0:
                continue
            p = phi[:nb * L].reshape(nb, L)
            ok = (p.max(1) - p.min(1)) * max(T, 1) <= LOCAL_WIDTH
            run = _longest_run(ok)
            if run is None:
                continue
            b0, b1 = run
            rows = G - (b1 - b0) * (L - d)
            if best is None or rows < best[0]:
                best = (rows, L, b0, b1)
        if best is None or best[0] > G // 2:
            return None
        _rows, L, b0, b1 = best
        p = torch.as_tensor(phi[b0 * L:b1 * L], dtype=torch.float64, device=device)
        p = p.reshape(b1 - b0, L)
        lo, hi = p.amin(1, keepdim=True), p.amax(1, keepdim=True)
        mid, half = (lo + hi) / 2, ((hi - lo) / 2).clamp_min(1e-300)
        x = torch.cos(torch.pi * (torch.arange(d, dtype=torch.float64, device=device) + 0.5)
                      / d)  # the d local Chebyshev points on [-1, 1]
        s = ((p - mid) / half).clamp(-1.0, 1.0)  # (nb, L)
        k = torch.arange(d, dtype=torch.float64, device=device)
        Ts = torch.cos(torch.arccos(s)[..., None] * k)  # (nb, L, d): T_k(s_g)
        Tx = torch.cos(torch.arccos(x)[:, None] * k)  # (d, d): T_k(x_i)
        Tx[:, 1:] *= 2
        ell = (Ts @ Tx.T / d).transpose(1, 2).contiguous()  # (nb, d, L): l_i(s_g)
        pts = (mid + half * x).reshape(-1)
        return _Local(b0 * L, b1 - b0, L, d, ell, pts)


def _longest_run(ok: np.ndarray) -> tuple[int, int] | None:
    """``[start, stop)`` of the longest run of True in ``ok``."""
    best, start = None, None
    for i, v in enumerate(np.append(ok, False)):
        if v and start is None:
            start = i
        elif not v and start is not None:
            if best is None or i - start > best[1] - best[0]:
                best = (start, i)
            start = None
    return best
