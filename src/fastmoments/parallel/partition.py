r"""Partitioning one large job over devices so that each gets about the same work.

Two shapes of work:

* **Columns of a disk transform** (one repetition :math:`m` and all its orders). A column
  costs its angular stage (one pass over the :math:`O` orbits of sample points) plus its
  radial stage (the recurrence over its :math:`J_m` orders, each step over the :math:`G`
  radius groups), so :math:`c_m \approx \kappa_a O + J_m G`: high orders cost more than low
  ones because their columns are longer. Columns are independent (the recurrence runs along
  a column), so any set of columns is a valid piece; pieces are balanced with the
  longest-processing-time rule.
* **Degrees of a separable (box) transform** along the first axis. A block of degrees
  :math:`p \in P` costs :math:`|P|` passes of the first product plus the smaller later
  products, which shrink with :math:`p` under total-degree truncation; blocks are contiguous
  (each device takes a slice of the first analysis matrix) and cut at equal cumulative cost.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

__all__ = ["balance", "box_degree_costs", "contiguous_blocks", "disk_column_costs",
           "even_splits"]

#: Relative cost of one orbit in the angular stage against one radial step on one group
#: (two complex products per orbit and column against one multiply-add per group and row).
ANGULAR_WEIGHT = 2.0


def even_splits(n: int, parts: int) -> list[tuple[int, int]]:
    """``[start, stop)`` of ``min(n, parts)`` nearly equal pieces of ``range(n)``.

    >>> even_splits(5, 3)
    [(0, 1), (1, 3), (3, 5)]
    >>> even_splits(1, 3)
    [(0, 1)]
    """
    k = max(1, min(n, parts))
    bounds = [(i * n) // k for i in range(k + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(k)]


def balance(costs: Sequence[float], parts: int) -> list[list[int]]:
    """Split items of the given costs into ``parts`` groups of about equal total cost.

    Longest processing time first: items by decreasing cost, each to the least loaded group
    (within 4/3 of the optimum). Groups come back sorted, and empty groups are dropped.

    >>> balance([5, 1, 1, 1, 1, 1], 2)
    [[0], [1, 2, 3, 4, 5]]
    """
    loads = [0.0] * max(1, parts)
    groups: list[list[int]] = [[] for _ in loads]
    for i in sorted(range(len(costs)), key=lambda j: (-costs[j], j)):
        g = min(range(len(loads)), key=lambda j: (loads[j], j))
        groups[g].append(i)
        loads[g] += float(costs[i])
    return [sorted(g) for g in groups if g]


def contiguous_blocks(costs: Sequence[float], parts: int) -> list[tuple[int, int]]:
    """Cut ``range(len(costs))`` into at most ``parts`` contiguous ``[start, stop)`` blocks of
    about equal cost (each cut where the cumulative cost crosses a multiple of the mean).

    >>> contiguous_blocks([4, 1, 1, 1, 1], 2)
    [(0, 1), (1, 5)]
    """
    c = np.asarray(costs, dtype=np.float64)
    n = c.size
    k = max(1, min(parts, n))
    cum = np.concatenate([[0.0], np.cumsum(c)])
    cuts = [0]
    for j in range(1, k):
        target = cum[-1] * j / k
        i = int(np.searchsorted(cum, target))
        # the nearer of the two cut points around the target
        if i > 0 and abs(cum[i - 1] - target) <= abs(cum[min(i, n)] - target):
            i -= 1
        i = min(max(i, cuts[-1] + 1), n - (k - j))
        cuts.append(i)
    cuts.append(n)
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def disk_column_costs(rows: Sequence[int], n_groups: int, n_orbits: int) -> list[float]:
    r"""Model cost of each column of a disk transform: :math:`\kappa_a O + J_m G`."""
    return [ANGULAR_WEIGHT * n_orbits + int(j) * n_groups for j in rows]


def box_degree_costs(shape: Sequence[int], order: int, total: bool) -> list[float]:
    """Model cost of each degree ``p`` of the first axis of a separable transform.

    The first product costs ``prod(shape)`` per degree; the next ones run over the degrees
    left for the other axes (``order - p`` under total-degree truncation).
    """
    rest = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    out = []
    for p in range(order + 1):
        q = (order - p + 1) if total else (order + 1)
        cost = float(np.prod(shape))  # first axis
        if len(shape) == 2:
            cost += q * shape[1]
        else:
            cost += q * rest + q * q * shape[2]
        out.append(cost)
    return out
