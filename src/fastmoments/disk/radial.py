r"""Radial polynomials of the Zernike and pseudo-Zernike families, as step generators.

Every method computes, in float64, the values :math:`R_{nm}(r_g)` at the distinct radii
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
    order :data:`DIRECT_BREAKDOWN_ZERNIKE` (relative error above 1e-6 at the disk's edge);
    a warning is raised past it.
``"jacobi"``
    :math:`R_{nm}(r) = (-1)^{(n-m)/2} r^m P^{(m,0)}_{(n-m)/2}(1-2r^2)` by the Jacobi
    three-term recurrence in degree with a running exponent, so no value underflows or
    overflows. Used for selected moments; accurate at any order.

Methods (pseudo-Zernike): ``"deng"`` (Eq. 3.12-3.15, Deng and Gwo), ``"direct"`` (Eq. 2.14,
breakdown at :data:`DIRECT_BREAKDOWN_PSEUDO`), and ``"jacobi"`` with
:math:`R_{nm}(r) = (-1)^{n-m} r^m P^{(2m+1,0)}_{n-m}(1-2r)`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence

import torch

__all__ = [
    "DIRECT_BREAKDOWN_PSEUDO",
    "DIRECT_BREAKDOWN_ZERNIKE",
    "PSEUDO_METHODS",
    "ZERNIKE_METHODS",
    "radial_steps",
]

ZERNIKE_METHODS = ("deng", "kintner", "q-recursive", "direct", "jacobi")
PSEUDO_METHODS = ("deng", "direct", "jacobi")

#: Highest Zernike order at which the float64 factorial formula stays within 1e-6 relative
#: error at every radius of a 512x512 sampling (measured by ``benchmarks/radial_methods.py``).
DIRECT_BREAKDOWN_ZERNIKE = 44
#: Same for the pseudo-Zernike factorial formula.
DIRECT_BREAKDOWN_PSEUDO = 22

Step = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def radial_steps(family: str, method: str, r: torch.Tensor, ms: Sequence[int],
                 ns: Sequence[Sequence[int]]) -> Iterator[Step]:
    """Yield ``(cols, rows, values)`` blocks of the radial table at radii ``r``.

    Parameters
    ----------
    family : {"zernike", "pseudo-zernike"}
    method : str
        One of :data:`ZERNIKE_METHODS` or :data:`PSEUDO_METHODS`.
    r : torch.Tensor
        Radii, float64, shape ``(G,)``.
    ms : sequence of int
        Repetitions (``m >= 0``) of the table's columns.
    ns : sequence of sequences of int
        For each column, the orders ``n`` of its rows, ascending.

    Yields
    ------
    cols, rows : torch.LongTensor
        Column and row positions of the block.
    values : torch.Tensor
        ``(len(cols), G)`` float64 values :math:`R_{n m}(r)`.
    """
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
        self.row_of = {(n, m): j for m, col in zip(self.ms, self.ns, strict=True)
                       for j, n in enumerate(col)}
        self.nmax = max((col[-1] for col in self.ns if col), default=0)

    def place(self, n_vals: Sequence[int], m_vals: Sequence[int], values: torch.Tensor
              ) -> Step | None:
        """Keep the rows of ``values`` whose (n, m) is wanted; ``None`` if none is."""
        keep, cols, rows = [], [], []
        for i, (n, m) in enumerate(zip(n_vals, m_vals, strict=True)):
            j = self.row_of.get((n, m))
            if j is not None:
                keep.append(i)
                cols.append(self.col_of[m])
                rows.append(j)
        if not keep:
            return None
        dev = self.device
        idx = torch.tensor(keep, device=dev)
        vals = values if len(keep) == values.shape[0] else values.index_select(0, idx)
        return (torch.tensor(cols, device=dev), torch.tensor(rows, device=dev), vals)


# ----------------------------------------------------------------------------- Zernike
def _zernike_deng(family: str, r: torch.Tensor, plan: _Placement) -> Iterator[Step]:
    """Eq. 3.10-3.11: iterate over n, all m of the parity of n at once."""
    T = plan.nmax
    G = r.shape[0]
    # rows indexed by m = 0..T+1 (one spare row so that m+1 never runs off the end)
    prev2 = torch.zeros(T + 2, G, dtype=torch.float64, device=r.device)
    prev1 = torch.zeros_like(prev2)
    for n in range(T + 1):
        cur = torch.zeros_like(prev1)
        cur[n] = prev1[n - 1] * r if n > 0 else torch.ones_like(r)
        if n >= 2:
            m = torch.arange(n % 2, n - 1, 2, device=r.device)
            left = prev1.index_select(0, (m - 1).abs())
            right = prev1.index_select(0, m + 1)
            cur[m] = r * (left + right) - prev2.index_select(0, m)
        ms = list(range(n % 2, n + 1, 2))
        step = plan.place([n] * len(ms), ms, cur[n % 2:n + 1:2])
        if step is not None:
            yield step
        prev2, prev1 = prev1, cur


def _zernike_kintner(family: str, r: torch.Tensor, plan: _Placement) -> Iterator[Step]:
    """Kintner's recurrence in n at fixed m, every wanted m at once."""
    ms = torch.tensor(plan.ms, dtype=torch.float64, device=r.device)[:, None]
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
                               dtype=torch.float64, device=r.device)
            block[:, at_zero] = fix[:, None]
        step = plan.place([n] * len(ms), ms, block)
        if step is not None:
            yield step


# ----------------------------------------------------------------------- pseudo-Zernike
def _pseudo_deng(family: str, r: torch.Tensor, plan: _Placement) -> Iterator[Step]:
    """Eq. 3.12-3.15 (Deng and Gwo): R and the intermediate K, over n, all m at once."""
    T = plan.nmax
    G = r.shape[0]
    R = torch.zeros(T + 2, G, dtype=torch.float64, device=r.device)  # R_{n-1, m}
    K = torch.zeros_like(R)  # K_{n-1, m}
    R[0] = 1.0
    K[0] = 1.0
    step = plan.place([0], [0], R[:1])
    if step is not None:
        yield step
    for n in range(1, T + 1):
        Knew = torch.zeros_like(K)
        Knew[n] = R[n - 1] * r  # K_nn = R_nn = r^n
        if n >= 2:
            m = torch.arange(1, n, device=r.device)
            Knew[m] = r * (R[m - 1] + R[m]) - K[m]  # Eq. 3.13
        Knew[0] = 2 * r * R[0] - K[0]  # Eq. 3.14
        Rnew = torch.zeros_like(R)
        Rnew[n] = Knew[n]
        m = torch.arange(0, n, device=r.device)
        Rnew[m] = Knew[m] + Knew[m + 1] - R[m]  # Eq. 3.15
        R, K = Rnew, Knew
        step = plan.place([n] * (n + 1), list(range(n + 1)), R[: n + 1])
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
    m = torch.tensor(mlist, dtype=torch.float64, device=dev)[:, None]
    a = m if zern else 2 * m + 1  # alpha; beta = 0
    x = (1 - 2 * r * r) if zern else (1 - 2 * r)
    x = x[None, :]
    # log r^m (m = 0 contributes 0 also at r = 0)
    logr = torch.log(torch.where(r > 0, r, torch.ones_like(r)))[None, :]
    base_log = torch.where(m > 0, m * logr, torch.zeros_like(logr))
    zero_r = (r == 0)[None, :] & (m > 0)
    jmax = max(((col[-1] - mm) // (2 if zern else 1)) for mm, col in zip(mlist, plan.ns,
                                                                        strict=True) if col)
    p_prev = torch.zeros(len(mlist), r.shape[0], dtype=torch.float64, device=dev)
    p_cur = torch.ones_like(p_prev)
    scale = base_log.expand_as(p_cur).clone()  # log of the common factor
    big = 1e150
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
        mag = p_cur.abs().clamp_min(1e-300)
        resc = mag > big
        if bool(resc.any()):
            f = torch.where(resc, mag, torch.ones_like(mag))
            p_cur = p_cur / f
            p_prev = p_prev / f
            scale = scale + torch.log(f)
        sign = -1.0 if j % 2 else 1.0
        vals = sign * p_cur * torch.exp(scale)
        vals = torch.where(zero_r, torch.zeros_like(vals), vals)
        n_vals = [mm + (2 * j if zern else j) for mm in mlist]
        step = plan.place(n_vals, mlist, vals)
        if step is not None:
            yield step
