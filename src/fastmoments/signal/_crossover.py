"""Crossover table of ``method="auto"`` (:mod:`.selection`).

Written by ``benchmarks/signal_crossover.py``; rerun it instead of editing.
``DIRECT_UP_TO[(device, dtype, order)]``: ``(N, σ*_one, σ*_batch)``, the largest
σ at which the direct FIR was faster than the SFT for signals of N samples: one
signal, and a batch of ``BATCH`` samples.
"""

BATCH = 262144

MEASURED: dict = {
    'cpu': {
        'date': '2026-11-22T21:23:32+00:00',
        'device': 'cpu',
        'load': 1.71337890625,
        'name': 'x86_64',
        'numba': '0.68.1',
        'numpy': '2.4.6',
        'python': '3.11.7',
        'quick': False,
        'threads': 2,
        'torch': '2.13.0+cpu',
    },
}

DIRECT_UP_TO: dict = {
    ('cpu', 'float32', 0): (
        (100, 512, 22.6274),
        (1000, 512, 64),
        (10000, 64, 45.2548),
        (100000, 45.2548, 45.2548),
        (1000000, 45.2548, 45.2548),
    ),
    ('cpu', 'float32', 1): (
        (100, 512, 22.6274),
        (1000, 512, 32),
        (10000, 45.2548, 32),
        (100000, 45.2548, 45.2548),
        (1000000, 32, 32),
    ),
    ('cpu', 'float32', 2): (
        (100, 512, 22.6274),
        (1000, 512, 32),
        (10000, 64, 32),
        (100000, 45.2548, 32),
        (1000000, 32, 32),
    ),
    ('cpu', 'float64', 0): (
        (100, 512, 22.6274),
        (1000, 362.039, 32),
        (10000, 45.2548, 22.6274),
        (100000, 11.3137, 8),
        (1000000, 11.3137, 11.3137),
    ),
    ('cpu', 'float64', 1): (
        (100, 512, 22.6274),
        (1000, 256, 22.6274),
        (10000, 32, 22.6274),
        (100000, 8, 22.6274),
        (1000000, 16, 16),
    ),
    ('cpu', 'float64', 2): (
        (100, 512, 22.6274),
        (1000, 256, 16),
        (10000, 32, 22.6274),
        (100000, 16, 22.6274),
        (1000000, 16, 16),
    ),
}
