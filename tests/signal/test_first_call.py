"""The first call of a process takes the route of every later call and gives the same bits:
no route depends on whether something (a compile, a load) has finished. Checked in a fresh
interpreter, whose first calls find no kernel loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("numba")

SCRIPT = """
import hashlib, json, sys
import numpy as np
import torch
import fastmoments as fm

def digest(y):
    a = y.numpy() if isinstance(y, torch.Tensor) else np.asarray(y)
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()

rng = np.random.default_rng(0)
x = rng.standard_normal(3000)
img = rng.random((40, 50)).astype(np.float32)
sig = rng.standard_normal(40_000).astype(np.float32)
plan = fm.GaussianFilter(300.0)
cwt = fm.CWT(np.geomspace(2.0, 200.0, 8))
calls = {
    "gaussian_filter1d": lambda: fm.gaussian_filter1d(x, 300.0),
    "gaussian_filter": lambda: fm.gaussian_filter(img, 2.0),
    "plan_tensor": lambda: plan(torch.from_numpy(x)),
    "cwt": lambda: cwt(sig),
}
seen = {}
for name, call in calls.items():
    runs = []
    for _ in range(3):
        y = call()
        route = str(getattr(plan, "route", "")) if name == "plan_tensor" else ""
        runs.append((digest(y), route))
    seen[name] = runs
    if name == "gaussian_filter1d":
        seen["values"] = y.tolist()
seen["numba"] = "fastmoments.signal._numba_sft" in sys.modules
print(json.dumps(seen))
"""


def test_first_call_takes_the_route_and_gives_the_bits_of_later_calls():
    import fastmoments as fm

    x = np.random.default_rng(0).standard_normal(3000)
    for _ in range(3):  # this process has run the call before
        here = fm.gaussian_filter1d(x, 300.0)
    # a fresh interpreter: its first calls find no numba kernel loaded in the process
    env = dict(os.environ, OMP_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    assert seen.pop("numba")  # the first CPU calls ran the numba kernels, compiled on demand
    values = np.array(seen.pop("values"))
    for name, runs in seen.items():
        assert runs[0] == runs[1] == runs[2], name
    assert seen["plan_tensor"][0][1] == "sft/numba:recursions"  # the first call's route
    # across processes the same route; the bits agree unless one process compiled the numba
    # kernels and the other loaded them from numba's cache (its object code may round
    # differently: 3.5e-16 relative, measured)
    np.testing.assert_allclose(values, here, rtol=0, atol=1e-14 * np.abs(here).max())
