"""Which moments a disk transform computes: columns of repetitions, rows of orders.

Coefficients are stored for repetitions ``m >= 0`` only (a real image has
``A[n, -m] = conj(A[n, m])``, or the family's own partner rule), in a dense
``(columns, rows)`` layout: column ``c`` holds repetition ``ms[c]``, row ``j`` of that column
holds the ``j``-th order ``ns[c][j]``; shorter columns are padded (padding is never read).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

__all__ = ["REPETITION_SETS", "IndexSet"]

#: Named subsets of repetitions for partial reconstruction (thesis Fig. 5.7 / 5.13).
REPETITION_SETS = ("all", "positive", "negative", "zero", "nonnegative", "nonpositive")


@dataclass(frozen=True)
class IndexSet:
    """Repetitions ``ms`` (columns) and, per column, orders ``ns[c]`` (rows, ascending)."""

    ms: tuple[int, ...]
    ns: tuple[tuple[int, ...], ...]
    _pos: dict = field(default=None, compare=False, hash=False, repr=False)  # type: ignore

    def __post_init__(self) -> None:
        pos = {(n, m): (c, j) for c, (m, col) in enumerate(zip(self.ms, self.ns, strict=True))
               for j, n in enumerate(col)}
        object.__setattr__(self, "_pos", pos)

    @classmethod
    def from_columns(cls, columns: dict[int, Iterable[int]]) -> IndexSet:
        ms = tuple(sorted(columns))
        return cls(ms, tuple(tuple(sorted(set(columns[m]))) for m in ms))

    @property
    def n_cols(self) -> int:
        return len(self.ms)

    # (the set is frozen: these are computed once; a plan's every call reads them)
    @cached_property
    def n_rows(self) -> int:
        """Rows of the dense layout (the longest column)."""
        return max((len(c) for c in self.ns), default=0)

    @cached_property
    def size(self) -> int:
        """Number of stored moments."""
        return sum(len(c) for c in self.ns)

    @cached_property
    def max_order(self) -> int:
        return max((c[-1] for c in self.ns if c), default=0)

    def position(self, n: int, m: int) -> tuple[int, int] | None:
        """``(column, row)`` of the stored moment ``(n, m)`` with ``m >= 0``, or None."""
        return self._pos.get((int(n), int(m)))

    def pairs(self) -> list[tuple[int, int]]:
        """All stored ``(n, m)``, column by column."""
        return [(n, m) for m, col in zip(self.ms, self.ns, strict=True) for n in col]

    def valid_mask(self) -> np.ndarray:
        """Boolean ``(n_cols, n_rows)``: True where a slot holds a moment."""
        out = np.zeros((self.n_cols, self.n_rows), dtype=bool)
        for c, col in enumerate(self.ns):
            out[c, : len(col)] = True
        return out

    def order_table(self) -> np.ndarray:
        """``(n_cols, n_rows)`` int array of the order ``n`` in each slot (-1 for padding)."""
        out = np.full((self.n_cols, self.n_rows), -1, dtype=np.int64)
        for c, col in enumerate(self.ns):
            out[c, : len(col)] = col
        return out

    def subset(self, keep: Sequence[tuple[int, int]]) -> IndexSet:
        """The index set holding only ``keep`` (each must be stored here)."""
        cols: dict[int, list[int]] = {}
        for n, m in keep:
            cols.setdefault(m, []).append(n)
        return IndexSet.from_columns(cols)
