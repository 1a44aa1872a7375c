r"""Radial polynomials of the Zernike and pseudo-Zernike families, as step generators.

Every method computes the values :math:`R_{nm}(r_g)` at the distinct radii
:math:`r_g` of a sampling and hands them out in *steps*: each step is a block of rows of the
radial table together with the ``(column, row)`` positions where those rows belong. The disk
engine either stores the steps in a cached table (small jobs) or contracts each step with the
angular sums at once (large jobs), so a table of any size never has to exist in memory.

Positions follow the layout of :class:`~fastmoments.disk.indexing.IndexSet`: column ``c`` is
repetition ``ms[c]`` (``m >= 0``) and row ``j`` is the ``j``-th order ``n`` of that column.

Methods (Zernike):

``"deng"``
    The recurrence of the thesis, Eq. 3.10-3.11 (Deng et al.): :math:`R_{nn} = r^n`,
    :math:`R_{nm} = r (R_{n-1,|m-1|} + R_{n-1,m+1}) - R_{n-2,m}`. Information flows from low
    :math:`m` upwards, so nothing starts from an underflowed :math:`r^m`; accurate to order
    1000 and beyond. The default.
``"kintner"``
    Kintner's three-term recurrence in :math:`n` at fixed :math:`m`, started from
    :math:`R_{mm} = r^m`. Loses accuracy where :math:`r^m` underflows.
``"q-recursive"``
    Chong's recurrence in :math:`m` at fixed :math:`n`, started from :math:`R_{nn}` and
    :math:`R_{n,n-2}`; it divides by :math:`r^2`.
``"direct"``
    The factorial sum, Eq. 2.6, with float64 coefficients. Cancellation destroys it past
    order :data:`DIRECT_BREAKDOWN_ZERNIKE` (= 29: absolute error above 1e-6 from order 30 on);
    a warning is raised past it.
``"jacobi"``
    :math:`R_{nm}(r) = (-1)^{(n-m)/2} r^m P^{(m,0)}_{(n-m)/2}(1-2r^2)` by the Jacobi
    three-term recurrence in degree with a running exponent, so no value underflows or
    overflows. Used for selected moments; accurate at any order.

``"geometric"``, ``"geometric-exact"``
    Not radial methods: the moments as combinations of the image's geometric moments (thesis
    Eq. 3.1-3.9), in float64 or exact arithmetic (:mod:`fastmoments.disk.geometric`). They
    are listed here so that plans accept them; :func:`radial_steps` refuses them.

Methods (pseudo-Zernike): ``"deng"`` (Eq. 3.12-3.15, Deng and Gwo), ``"direct"`` (Eq. 2.14,
breakdown past :data:`DIRECT_BREAKDOWN_PSEUDO` = 13), and ``"jacobi"`` with
:math:`R_{nm}(r) = (-1)^{n-m} r^m P^{(2m+1,0)}_{n-m}(1-2r)`, and the two geometric ones.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence

import numpy as np
import torch

__all__ = [
    "DIRECT_BREAKDOWN_PSEUDO",
    "DIRECT_BREAKDOWN_ZERNIKE",
    "MOMENT_SPACE_METHODS",
    "PSEUDO_METHODS",
    "ZERNIKE_METHODS",
    "radial_steps",
]

ZERNIKE_METHODS = ("deng", "kintner", "q-recursive", "direct", "jacobi", "geometric",
                   "geometric-exact")
PSEUDO_METHODS = ("deng", "direct", "jacobi", "geometric", "geometric-exact")
#: Methods that work in moment space (:mod:`fastmoments.disk.geometric`): they have no radial
#: table; plans run them through :func:`fastmoments.disk.geometric.make_engine`.
MOMENT_SPACE_METHODS = ("geometric", "geometric-exact")

#: Highest Zernike order at which the float64 factorial formula stays within 1e-6 of the
#: exact values at 2000 radii in (0, 1] (measured against the Jacobi recurrence, which agrees
#: with mpmath to 1e-13; see ``benchmarks/radial_methods.py``).
DIRECT_BREAKDOWN_ZERNIKE = 29
#: Same for the pseudo-Zernike factorial formula.
DIRECT_BREAKDOWN_PSEUDO = 13

Step = tuple[torch.Tensor | slice, torch.Tensor, torch.Tensor]


def radial_steps(family: str, method: str, r: torch.Tensor, ms: Sequence[int],
                 ns: Sequence[Sequence[int]]) -> Iterator[Step]:
    """Yield ``(cols, rows, values)`` blocks of the radial table at radii ``r``.

    Parameters
    ----------
    family : {"zernike", "pseudo-zernike"}
    method : str
        One of :data:`ZERNIKE_METHODS` or :data:`PSEUDO_METHODS`.
    r : torch.Tensor
        Radii, shape ``(G,)``. The recurrence runs in their dtype: the engine always passes
        float64 (tables are computed in float64 and cast once); float32 radii reproduce the
        single-precision comparisons of the papers (``benchmarks/radial_methods.py``).
    ms : sequence of int
        Repetitions (``m >= 0``) of the table's columns.
    ns : sequence of sequences of int
        For each column, the orders ``n`` of its rows, ascending.

    Yields
    ------
    cols : torch.LongTensor or slice
        Column positions of the block (a slice when they are evenly spaced).
    rows : torch.LongTensor
        Row positions of the block.
    values : torch.Tensor
        ``(len(cols), G)`` values :math:`R_{n m}(r)` in the dtype of ``r``.
    """
    if method in MOMENT_SPACE_METHODS:
        raise ValueError(
            f"method={method!r} computes moments from the image's geometric moments and has no "
            "radial table; run it through fastmoments.disk.geometric.geometric_moments(plan, "
            "image) or an engine from fastmoments.disk.geometric.make_engine")
    if method == "direct":
        limit = DIRECT_BREAKDOWN_ZERNIKE if family == "zernike" else DIRECT_BREAKDOWN_PSEUDO
        top = max((max(col) for col in ns if len(col)), default=0)
        if top > limit:
            warnings.warn(
                f"method='direct' loses accuracy past order {limit} in float64 (asked for "
                f"order {top}); use method='deng' or 'jacobi'", RuntimeWarning, stacklevel=4)
    plan = _Placement(ms, ns, r.device)
    if family == "zernike":
        gen = {"deng": _zernike_deng, "kintner": _zernike_kintner,
               "q-recursive": _zernike_qrecursive, "direct": _direct,
               "jacobi": _jacobi}[method]
    else:
        gen = {"deng": _pseudo_deng, "direct": _direct, "jacobi": _jacobi}[method]
    yield from gen(family, r, plan)


class _Placement:
    """Maps (n, m) to table positions and says which (n, m) are wanted."""

    def __init__(self, ms: Sequence[int], ns: Sequence[Sequence[int]], device: torch.device):
        self.ms = [int(m) for m in ms]
        self.ns = [[int(n) for n in col] for col in ns]
        self.device = device
        self.col_of = {m: c for c, m in enumerate(self.ms)}
        self.nmax = max((col[-1] for col in self.ns if col), default=0)
        mmax = max(self.ms, default=0)
        # lookup tables [n, m] -> column / row (-1 where the moment is not wanted)
        self.lut_col = np.full((self.nmax + 1, max(mmax, self.nmax) + 1), -1, dtype=np.int64)
        self.lut_row = np.full_like(self.lut_col, -1)
        for c, (m, col) in enumerate(zip(self.ms, self.ns, strict=True)):
            for j, n in enumerate(col):
                self.lut_col[n, m] = c
                self.lut_row[n, m] = j

    def place(self, n_vals: Sequence[int], m_vals: Sequence[int], values: torch.Tensor
              ) -> Step | None:
        """Keep the rows of ``values`` whose (n, m) is wanted; ``None`` if none is."""
        n_arr = np.asarray(n_vals, dtype=np.int64)
        m_arr = np.asarray(m_vals, dtype=np.int64)
        ok = (n_arr >= 0) & (n_arr <= self.nmax) & (m_arr < self.lut_col.shape[1])
        cols = np.full(n_arr.shape, -1, dtype=np.int64)
        rows = np.full(n_arr.shape, -1, dtype=np.int64)
        cols[ok] = self.lut_col[n_arr[ok], m_arr[ok]]
        rows[ok] = self.lut_row[n_arr[ok], m_arr[ok]]
        keep = np.nonzero(cols >= 0)[0]
        if keep.size == 0:
            return None
        dev = self.device
        if keep.size == n_arr.size:
            vals = values
        else:
            vals = values.index_select(0, torch.as_tensor(keep, device=dev))
        return (_as_index(cols[keep], dev), torch.as_tensor(rows[keep], device=dev), vals)

    def place_range(self, n: int, m0: int, dm: int, values: torch.Tensor) -> Step | None:
        """:meth:`place` for the repetitions ``m0, m0 + dm, ...`` of one order ``n``."""
        count = values.shape[0]
        return self.place(np.full(count, n), m0 + dm * np.arange(count), values)


def _as_index(idx: np.ndarray, device: torch.device) -> torch.Tensor | slice:
    """A slice when ``idx`` is an increasing arithmetic progression (views instead of
    gathers downstream), else a tensor."""
    if idx.size == 1:
        return slice(int(idx[0]), int(idx[0]) + 1)
    d = np.diff(idx)
    if d[0] > 0 and np.all(d == d[0]):
        return slice(int(idx[0]), int(idx[-1]) + 1, int(d[0]))
    return torch.as_tensor(idx, device=device)


# ----------------------------------------------------------------------------- Zernike
def _zernike_deng(family: str, r: torch.Tensor, plan: _Placement) -> Iterator[Step]:
    """Eq. 3.10-3.11: iterate over n, all m of the parity of n at once.

    Order n holds m = p, p+2, ..., n (p = n mod 2), stored at position i = (m - p) / 2, so
    every term of the recurrence is a contiguous slice, computed in place."""
    T = plan.nmax
    G = r.shape[0]
    H = T // 2 + 2
    bufs = [torch.zeros(H, G, dtype=r.dtype, device=r.device) for _ in range(3)]
    prev2, prev1, cur = bufs
    for n in range(T + 1):
        L = n // 2 + 1  # number of repetitions of order n
        if n == 0:
            cur[0] = 1.0
        else:
            # R_nn = r * R_{n-1,n-1}: the last entry of order n-1 sits at (n-1)//2
            torch.mul(prev1[(n - 1) // 2], r, out=cur[L - 1])
            if n >= 2:
                if n % 2 == 0:
                    # m = 0: R_n0 = 2 r R_{n-1,1} - R_{n-2,0}
                    torch.mul(prev1[0], 2 * r, out=cur[0])
                    cur[0].sub_(prev2[0])
                    # m = 2i, i >= 1: neighbours m-1 -> i-1 and m+1 -> i
                    if L > 2:
                        out = cur[1 : L - 1]
                        torch.add(prev1[0 : L - 2], prev1[1 : L - 1], out=out)
                        out.mul_(r).sub_(prev2[1 : L - 1])
                else:  # m = 2i+1: neighbours m-1 -> i, m+1 -> i+1
                    out = cur[0 : L - 1]
                    torch.add(prev1[0 : L - 1], prev1[1:L], out=out)
                    out.mul_(r).sub_(prev2[0 : L - 1])
        step = plan.place_range(n, n % 2, 2, cur[:L])
        if step is not None:
            yield step
        prev2, prev1, cur = prev1, cur, prev2


def _zernike_kintner(family: str, r: torch.Tensor, plan: _Placement) -> Iterator[Step]:
    """Kintner's recurrence in n at fixed m, every wanted m at once."""
    ms = torch.tensor(plan.ms, dtype=r.dtype, device=r.device)[:, None]
    T = plan.nmax
    r2 = r * r
    Rm = r[None, :] ** ms  # R_{m,m}
    Rm2 = (ms + 2) * Rm * r2 - (ms + 1) * Rm  # R_{m+2,m}
    mlist = plan.ms
    jmax = (T - min(mlist)) // 2 if mlist else -1
    for j in range(jmax + 1):
        n_vals = [m + 2 * j for m in mlist]
        if j == 0:
            vals = Rm
        elif j == 1:
            vals = Rm2
        else:
            n = ms + 2 * j
            k1 = (n + ms) * (n - ms) * (n - 2) / 2
            k2 = 2 * n * (n - 1) * (n - 2)
            k3 = -ms**2 * (n - 1) - n * (n - 1) * (n - 2)
            k4 = -n * (n + ms - 2) * (n - ms - 2) / 2
            vals = ((k2 * r2 + k3) * Rm2 + k4 * Rm) / k1
            Rm, Rm2 = Rm2, vals
        step = plan.place(n_vals, mlist, vals)
        if step is not None:
            yield step


def _zernike_qrecursive(family: str, r: torch.Tensor, plan: _Placement) -> Iterator[Step]:
    """Chong's q-recursive method: at fixed n, down in m from R_nn and R_{n,n-2}."""
    wanted_n = sorted({n for col in plan.ns for n in col})
    rsafe = torch.where(r == 0, torch.ones_like(r), r)
    inv_r2 = 1.0 / (rsafe * rsafe)
    at_zero = r == 0
    for n in wanted_n:
        vals: dict[int, torch.Tensor] = {n: r**n}
        if n >= 2:
            rn2 = r ** (n - 2)
            vals[n - 2] = n * vals[n] - (n - 1) * rn2
        for m in range(n, 3, -2):  # m -> m - 4
            h3 = -4.0 * (m - 2) * (m - 3) / ((n + m - 2) * (n - m + 4))
            h2 = h3 * (n + m) * (n - m + 2) / (4.0 * (m - 1)) + (m - 2)
            h1 = m * (m - 1) / 2.0 - m * h2 + h3 * (n + m + 2) * (n - m) / 8.0
            vals[m - 4] = h1 * vals[m] + (h2 + h3 * inv_r2) * vals[m - 2]
        ms = sorted(vals)
        block = torch.stack([vals[m] for m in ms])
        # at r = 0 the 1/r^2 term is undefined: R_nm(0) = 0 for m > 0, (-1)^(n/2) for m = 0
        if bool(at_zero.any()):
            fix = torch.tensor([((-1.0) ** (n // 2)) if m == 0 else 0.0 for m in ms],
                               dtype=r.dtype, device=r.device)
            block[:, at_zero] = fix[:, None]
        step = plan.place([n] * len(ms), ms, block)
        if step is not None:
            yield step


# ----------------------------------------------------------------------- pseudo-Zernike
def _pseudo_deng(family: str, r: torch.Tensor, plan: _Placement) -> Iterator[Step]:
    """Eq. 3.12-3.15 (Deng and Gwo): R and the intermediate K, over n, all m at once."""
    T = plan.nmax
    G = r.shape[0]
    R, K, Rn, Kn = (torch.zeros(T + 2, G, dtype=r.dtype, device=r.device)
                    for _ in range(4))
    R[0] = 1.0
    K[0] = 1.0
    step = plan.place_range(0, 0, 1, R[:1])
    if step is not None:
        yield step
    for n in range(1, T + 1):
        torch.mul(R[n - 1], r, out=Kn[n])  # K_nn = R_nn = r^n
        if n >= 2:  # Eq. 3.13, m = 1..n-1
            out = Kn[1:n]
            torch.add(R[0 : n - 1], R[1:n], out=out)
            out.mul_(r).sub_(K[1:n])
        torch.mul(R[0], 2 * r, out=Kn[0])  # Eq. 3.14
        Kn[0].sub_(K[0])
        Rn[n] = Kn[n]
        out = Rn[0:n]
        torch.add(Kn[0:n], Kn[1 : n + 1], out=out)  # Eq. 3.15
        out.sub_(R[0:n])
        R, Rn = Rn, R
        K, Kn = Kn, K
        step = plan.place_range(n, 0, 1, R[: n + 1])
        if step is not None:
            yield step


# ------------------------------------------------------------------------ both families
def _direct(family: str, r: torch.Tensor, plan: _Placement) -> Iterator[Step]:
    """The factorial sums, Eq. 2.6 (Zernike) and Eq. 2.14 (pseudo-Zernike), in float64."""
    for m, col in zip(plan.ms, plan.ns, strict=True):
        rows = []
        for n in col:
            acc = torch.zeros_like(r)
            if family == "zernike":
                for s in range((n - m) // 2 + 1):
                    c = ((-1) ** s * math.factorial(n - s)
                         / (math.factorial(s) * math.factorial((n + m) // 2 - s)
                            * math.factorial((n - m) // 2 - s)))
                    acc = acc + float(c) * r ** (n - 2 * s)
            else:
                for s in range(n - m + 1):
                    c = ((-1) ** s * math.factorial(2 * n + 1 - s)
                         / (math.factorial(s) * math.factorial(n + m + 1 - s)
                            * math.factorial(n - m - s)))
                    acc = acc + float(c) * r ** (n - s)
            rows.append(acc)
        if rows:
            step = plan.place(col, [m] * len(col), torch.stack(rows))
            if step is not None:
                yield step


def _jacobi(family: str, r: torch.Tensor, plan: _Placement) -> Iterator[Step]:
    r"""Jacobi recurrence in degree with a running exponent (no underflow, no overflow).

    Zernike: :math:`R = (-1)^j r^m P_j^{(m,0)}(1-2r^2)`, :math:`n = m + 2j`.
    Pseudo-Zernike: :math:`R = (-1)^j r^m P_j^{(2m+1,0)}(1-2r)`, :math:`n = m + j`.
    """
    zern = family == "zernike"
    dev = r.device
    mlist = plan.ms
    if not mlist:
        return
    m = torch.tensor(mlist, dtype=r.dtype, device=dev)[:, None]
    a = m if zern else 2 * m + 1  # alpha; beta = 0
    x = (1 - 2 * r * r) if zern else (1 - 2 * r)
    x = x[None, :]
    # log r^m (m = 0 contributes 0 also at r = 0)
    logr = torch.log(torch.where(r > 0, r, torch.ones_like(r)))[None, :]
    base_log = torch.where(m > 0, m * logr, torch.zeros_like(logr))
    zero_r = (r == 0)[None, :] & (m > 0)
    jmax = max(((col[-1] - mm) // (2 if zern else 1)) for mm, col in zip(mlist, plan.ns,
                                                                        strict=True) if col)
    p_prev = torch.zeros(len(mlist), r.shape[0], dtype=r.dtype, device=dev)
    p_cur = torch.ones_like(p_prev)
    scale = base_log.expand_as(p_cur).clone()  # log of the common factor
    factor = torch.exp(scale)  # recomputed only when the exponent moves
    big = 1e150 if r.dtype == torch.float64 else 1e30
    tiny = torch.finfo(r.dtype).tiny
    for j in range(jmax + 1):
        if j == 1:
            p_prev, p_cur = p_cur, ((a + 2) * x + a) / 2 * p_cur
        elif j >= 2:
            jj = j - 1  # compute P_{jj+1} from P_jj, P_{jj-1}
            c = 2 * jj + a
            num1 = (c + 1) * ((c + 2) * c * x + a * a)
            num2 = 2 * (jj + a) * jj * (c + 2)
            den = 2 * (jj + 1) * (jj + a + 1) * c
            p_prev, p_cur = p_cur, (num1 * p_cur - num2 * p_prev) / den
        # rescale so that nothing overflows; the exponent travels in `scale`
        mag = p_cur.abs().clamp_min(tiny)
        resc = mag > big
        if bool(resc.any()):
            f = torch.where(resc, mag, torch.ones_like(mag))
            p_cur = p_cur / f
            p_prev = p_prev / f
            scale = scale + torch.log(f)
            factor = torch.exp(scale)
        sign = -1.0 if j % 2 else 1.0
        vals = sign * p_cur * factor
        vals = torch.where(zero_r, torch.zeros_like(vals), vals)
        n_vals = [mm + (2 * j if zern else j) for mm in mlist]
        step = plan.place(n_vals, mlist, vals)
        if step is not None:
            yield step
