"""Crossover table of ``method="auto"`` (:mod:`.selection`).

Written by ``benchmarks/signal_crossover.py``; rerun it instead of editing. Placeholder until
the first run: no device measured (every device uses the unmeasured rule).
"""

MEASURED: dict = {}

DIRECT_UP_TO: dict = {}
