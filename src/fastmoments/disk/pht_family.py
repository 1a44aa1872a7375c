r"""The polar harmonic families (PCET, PCT, PST and their generic versions with exponent
``s``): radial functions, normalizations and index rules (:mod:`fastmoments.disk.pht`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from .._cache import plan_cache
from .._validate import (
    check_choice,
    check_positive_float,
)
from .families import FAMILIES, DiskFamily
from .indexing import IndexSet

__all__ = ["KINDS", "PolarHarmonicFamily", "pht_family"]

KINDS = ("pcet", "pct", "pst")


class PolarHarmonicFamily(DiskFamily):
    r"""Radial functions, index rules and normalization of one polar harmonic transform.

    Parameters
    ----------
    kind : {"pcet", "pct", "pst"}
        Which transform.
    s : float
        Exponent of the generic transform (:math:`r^s` in place of :math:`r^2`); ``2`` gives
        the classical PCET/PCT/PST.
    """

    methods = ("table",)
    default_method = "table"
    selection_method = "table"

    def __init__(self, kind: str, s: float = 2.0) -> None:
        self.kind = check_choice("kind", kind, KINDS)
        self.s = check_positive_float("s", s)
        self.name = kind if self.s == 2.0 else f"g{kind}(s={self.s:g})"
        self.complex_radial = kind == "pcet"
        #: phase factor a in R_n = exp(i a n r^s) (PCET) or cos/sin(a n r^s)
        self.freq = 2.0 * math.pi if kind == "pcet" else math.pi
        self.nlow = {"pcet": None, "pct": 0, "pst": 1}[kind]
        self.rule_text = {"pcet": "need integers n and l",
                          "pct": "need n >= 0 (any integer l)",
                          "pst": "need n >= 1 (any integer l)"}[kind]

    def __repr__(self) -> str:
        return f"PolarHarmonicFamily({self.kind!r}, s={self.s!r})"

    @property
    def key(self) -> tuple[Any, ...]:
        """The kind and the exact exponent ``s`` (the name rounds ``s`` for display)."""
        return (self.kind, self.s)

    # -------------------------------------------------------------- index rules
    def is_valid(self, n: int, m: int) -> bool:
        return self.nlow is None or n >= self.nlow

    def stored(self, n: int, m: int) -> tuple[int, int, bool]:
        if m >= 0:
            return n, m, False
        if self.kind == "pcet":  # conj(H_{n,l}) = H_{-n,-l}
            return -n, -m, True
        return n, -m, True

    def orders(self, nmax: int) -> range:
        """All orders ``n`` with ``|n| <= nmax`` of this kind."""
        lo = -nmax if self.nlow is None else self.nlow
        return range(lo, nmax + 1)

    def full(self, order: int, repetitions: Sequence[int] | None = None) -> IndexSet:
        ms = (range(order + 1) if repetitions is None
              else sorted({abs(int(m)) for m in repetitions}))
        return IndexSet.from_columns({m: self.orders(order) for m in ms})

    # -------------------------------------------------------------- numbers
    def norm(self, index: IndexSet) -> np.ndarray:
        n = index.order_table()
        valid = index.valid_mask()
        if self.kind == "pcet":
            c = np.full(n.shape, 1.0 / math.pi)
        else:
            c = np.where(n == 0, 1.0 / math.pi, 2.0 / math.pi)
        return np.where(valid, c, 0.0)

    def radial(self, r: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        r""":math:`R_n(r)` as ``(len(n), len(r))`` float64 (complex128 for PCET)."""
        r = r.to(torch.float64)
        rs = r**self.s
        phase = self.freq * n.to(torch.float64)[:, None] * rs[None, :]
        if self.s == 2.0:
            amp = torch.ones_like(r)
        else:
            if self.s < 2.0 and bool((r == 0).any()):
                raise ValueError(f"s={self.s:g} < 2 makes the radial weight infinite at the "
                                 "disk centre, where this sampling has a point; use an even "
                                 "size or an even k, or s >= 2")
            amp = torch.sqrt(0.5 * self.s * r ** (self.s - 2.0))
        if self.kind == "pcet":
            return torch.polar(amp[None, :].expand_as(phase).contiguous(), phase)
        f = torch.cos(phase) if self.kind == "pct" else torch.sin(phase)
        return f * amp[None, :]

    def radial_steps(self, method: str, r: torch.Tensor, index: IndexSet) -> Iterator:
        """One step per row of the dense layout (at most one moment per column)."""
        table = index.order_table()
        dev = r.device
        for j in range(index.n_rows):
            cols = np.array([c for c in range(index.n_cols) if j < len(index.ns[c])],
                            dtype=np.int64)
            if cols.size == 0:
                continue
            n = torch.as_tensor(table[cols, j], device=dev)
            yield (torch.as_tensor(cols, device=dev),
                   torch.full((cols.size,), j, dtype=torch.long, device=dev),
                   self.radial(r, n))


for _kind in KINDS:
    FAMILIES[_kind] = PolarHarmonicFamily(_kind)


@plan_cache(maxsize=32)
def pht_family(kind: str, s: float = 2.0) -> PolarHarmonicFamily:
    """The family of ``kind`` with exponent ``s`` (registered ones for ``s = 2``)."""
    check_choice("kind", kind, KINDS)
    s = check_positive_float("s", s)
    fam = FAMILIES[kind]
    return fam if s == 2.0 else PolarHarmonicFamily(kind, s)  # type: ignore[return-value]
