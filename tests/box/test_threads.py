"""One box plan shared between threads: every call gives what it gives alone.

A plan's per-call state (the mask of the coefficients outside a partial order, the
reconstruction's operands) must not be shared between concurrent calls. The threads start
together (a barrier) and each makes many calls with its own orders; the interpreter is
asked to switch threads as often as it can, so that calls interleave at every bytecode.
No timing is measured: the test checks errors and results only.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest
import torch

from fastmoments.box import JacobiTransform

THREADS = 8
CALLS = 60

# Triton's interpreter runs kernels by patching module globals for the duration of a launch:
# two threads interpreting kernels at once break each other (compiled kernels do not)
pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") == "1",
                                reason="Triton's interpreter is not thread-safe")


@pytest.fixture
def switch_often():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _hammer(work, threads: int = THREADS) -> list[BaseException]:
    """Run ``work(i)`` on ``threads`` threads started together; the errors they raised."""
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            work(i)
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return errors


@pytest.mark.parametrize("shape", [(6, 5), (5, 4, 6)])
def test_partial_reconstructions_from_many_threads(switch_often, shape):
    plan = JacobiTransform(shape, 5, alpha=0.3, beta=0.3, dtype=torch.float64)
    x = np.random.default_rng(3).standard_normal((2, *shape))
    moments = plan.forward(x)
    want = {o: plan.inverse(moments, order=o) for o in range(plan.order + 1)}
    got: dict[int, list[np.ndarray]] = {i: [] for i in range(THREADS)}

    def work(i: int) -> None:
        for n in range(CALLS):
            o = (i + n) % (plan.order + 1)
            got[i].append((o, plan.inverse(moments, order=o)))

    assert _hammer(work) == []
    for i in range(THREADS):
        assert len(got[i]) == CALLS
        for o, y in got[i]:
            np.testing.assert_allclose(y, want[o], rtol=1e-13, atol=1e-13 * np.abs(x).max())


def test_masks_of_many_orders_from_many_threads(switch_often):
    """The mask of each order is the mask of that order, whichever thread asks."""
    plan = JacobiTransform((4, 4, 4), 3, dtype=torch.float64)
    idx = np.arange(4)
    total = idx[:, None, None] + idx[None, :, None] + idx[None, None, :]

    def work(i: int) -> None:
        for n in range(2500):  # partial orders only: each call may replace another's mask
            o = (i + n) % plan.order
            np.testing.assert_array_equal(plan.outside(o).numpy(), total > o)

    assert _hammer(work) == []


def test_forward_inverse_and_regions_from_many_threads(switch_often):
    shape = (6, 5, 4)
    plan = JacobiTransform(shape, 4, alpha=0.2, beta=0.2, k=2, dtype=torch.float64)
    xs = np.random.default_rng(5).standard_normal((THREADS, *shape))
    region = (slice(1, 4), 2, slice(None))
    want = []
    for x in xs:
        m = plan.forward(x)
        want.append((m.numpy(), plan.inverse(m, order=2), plan.inverse(m, region=region)))

    def work(i: int) -> None:
        for _ in range(CALLS // 4):
            m = plan.forward(xs[i])
            got = (m.numpy(), plan.inverse(m, order=2), plan.inverse(m, region=region))
            for a, b in zip(got, want[i], strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)

    assert _hammer(work) == []
