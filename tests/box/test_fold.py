"""Parity folds of the box engine (engine.fold / unfold, box.fold_kernels).

The torch folds are checked against the definition (sums over reflections); the one-pass
Triton kernels (on CUDA, or on the CPU under TRITON_INTERPRET=1: ``box/test_interpreter.py``
runs this file so) must give the torch folds' bits. The engine with
parity must agree with the plain engine, including orders and sizes where some parity class
has no coefficient or no pixel."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from fastmoments.box import JacobiTransform, engine, fold_kernels

DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
KERNEL = fold_kernels.usable(torch.empty(0, device=DEV), [True, True])
needs_kernel = pytest.mark.skipif(not KERNEL,
                                  reason="needs CUDA or TRITON_INTERPRET=1 with Triton")

SHAPES = [(6, 7, 5), (4, 4, 4), (1, 3, 2), (5, 6), (7, 1)]


def _ops(shape, sym):
    return [engine.AxisOp.build(torch.ones(3, n, dtype=torch.float64), s)
            for n, s in zip(shape, sym, strict=True)]


def _torch_fold(x, ops):
    parts = {(): x}
    for ax, op in enumerate(ops):
        new = {}
        for key, t in parts.items():
            if op.symmetric:
                new[(*key, 0)], new[(*key, 1)] = engine._fold(t, 1 + ax)
            else:
                new[(*key, 0)] = t
        parts = new
    return parts


def _torch_unfold(parts, ops):
    for ax in reversed(range(len(ops))):
        if ops[ax].symmetric:
            parts = {k: engine._unfold(t, parts[(*k[:ax], 1, *k[ax + 1:])], 1 + ax,
                                       ops[ax].npix) for k, t in parts.items() if k[ax] == 0}
    return parts[(0,) * len(ops)]


def _cases():
    for shape in SHAPES:
        for sym in itertools.product([True, False], repeat=len(shape)):
            if any(sym):
                yield shape, sym


@pytest.mark.parametrize(("shape", "sym"), list(_cases()))
def test_torch_fold_is_the_sum_over_reflections(shape, sym):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, *shape))
    parts = _torch_fold(torch.from_numpy(x), _ops(shape, sym))
    for cls, part in parts.items():
        want = np.zeros(part.shape)
        for refl in itertools.product(*[(0, 1) if s else (0,) for s in sym]):
            sign = (-1) ** sum(a * c for a, c in zip(refl, cls, strict=True))
            y = x
            for ax, a in enumerate(refl):
                if a:
                    y = np.flip(y, 1 + ax)
            # the part's pixels: the first ceil(N/2) (even) or floor(N/2) (odd) of each axis;
            # a reflected middle sample of an odd axis is the sample itself: counted once
            idx = (slice(None), *(slice(0, n) for n in part.shape[1:]))
            term = y[idx].copy()
            for ax, a in enumerate(refl):
                n = shape[ax]
                if a and n % 2 and part.shape[1 + ax] > n // 2:
                    term[(slice(None),) * (1 + ax) + (n // 2,)] = 0.0
            want += sign * term
        np.testing.assert_allclose(part.numpy(), want, atol=1e-12)


@pytest.mark.parametrize(("shape", "sym"), list(_cases()))
def test_torch_unfold_is_the_adjoint(shape, sym):
    g = torch.Generator().manual_seed(2)
    ops = _ops(shape, sym)
    x = torch.randn(2, *shape, generator=g, dtype=torch.float64)
    parts = _torch_fold(x, ops)
    ys = {k: torch.randn(t.shape, generator=g, dtype=torch.float64) for k, t in parts.items()}
    lhs = sum(float((parts[k] * ys[k]).sum()) for k in parts)
    rhs = float((x * _torch_unfold(ys, ops)).sum())
    assert lhs == pytest.approx(rhs, rel=1e-12)


@needs_kernel
@pytest.mark.parametrize(("shape", "sym"), list(_cases()))
def test_kernel_gives_the_torch_bits(shape, sym):
    g = torch.Generator().manual_seed(3)
    ops = _ops(shape, sym)
    x = torch.randn(2, *shape, generator=g).to(DEV)
    want = _torch_fold(x, ops)
    got = fold_kernels.fold(x, list(sym))
    assert set(got) == set(want)
    for k in want:
        assert got[k].shape == want[k].shape and torch.equal(got[k], want[k]), k
    ys = {k: torch.randn(t.shape, generator=g).to(DEV) for k, t in want.items()}
    back = fold_kernels.unfold(ys, list(sym), list(shape))
    assert torch.equal(back, _torch_unfold(ys, ops))


@needs_kernel
def test_kernel_reads_strided_input_and_leaves_it_alone():
    x = torch.randn(3, 9, 8, 12, device=DEV)[:, :, :, 1:11]
    keep = x.clone()
    ops = _ops((9, 8, 10), (True, True, True))
    got = fold_kernels.fold(x, [True] * 3)
    want = _torch_fold(x, ops)
    assert all(torch.equal(got[k], want[k]) for k in want)
    assert torch.equal(x, keep)


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (1, 4, 3), (3, 1, 2), (5, 4, 6)])
@pytest.mark.parametrize("order", [0, 1, 2, 5])
@pytest.mark.parametrize("truncation", ["total", "box"])
def test_parity_agrees_with_the_plain_engine(shape, order, truncation):
    """Orders where some parity class has no coefficient (order 0 or 1) and axes of one
    pixel (an odd class without pixels) included."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, *shape))
    c = rng.standard_normal((2, *(order + 1,) * len(shape)))
    res = []
    for parity in (False, True):
        plan = JacobiTransform(shape, order, alpha=0.25, beta=0.25, k=2, dtype=torch.float64,
                               parity=parity, block=2, truncation=truncation)
        res.append((plan.forward(x).numpy(), plan.inverse(c), plan.adjoint(c)))
    for a, b in zip(*res, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_parity_default_follows_the_device_and_the_options(monkeypatch):
    """On by default only for volumes with alpha == beta, float32 products and the Triton
    folds; off on the CPU (where it pays for large volumes at high orders only) and never
    with alpha != beta."""
    for interp, want in (("0", False), ("1", fold_kernels.HAVE_TRITON)):
        monkeypatch.setenv("TRITON_INTERPRET", interp)
        vol = JacobiTransform((6, 6, 6), 4, alpha=0.2, beta=0.2)
        assert vol.symmetric is want and vol.block == 6  # capped at order + 2
        assert not JacobiTransform((6, 6), 4, alpha=0.2, beta=0.2).symmetric
        assert not JacobiTransform((6, 6, 6), 4, alpha=0.2, beta=0.3).symmetric
        assert not JacobiTransform((6, 6, 6), 4, alpha=0.2, beta=0.2,
                                   precision="fp16x3").symmetric
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    big = JacobiTransform((6, 6, 6), 400, alpha=0.2, beta=0.2)
    assert big.block == (256 if fold_kernels.HAVE_TRITON else 128)
    assert JacobiTransform((6, 6, 6), 400, alpha=0.2, beta=0.2, parity=False).block == 128


def test_kernels_take_triton_jobs_and_leave_gradients_to_torch():
    x = torch.randn(2, 5, 4, 3, dtype=torch.float64)
    assert fold_kernels.usable(x, [True] * 3) == fold_kernels.triton_on(x.device)
    assert not fold_kernels.usable(x.to(torch.int64), [True] * 3)
    assert not fold_kernels.usable(x, [False] * 3)
    ops = _ops((5, 4, 3), (True, True, True))
    xg = x.clone().requires_grad_(True)
    parts = engine.fold(xg, ops)  # the torch folds: differentiable
    sum(p.sum() for p in parts.values()).backward()
    assert xg.grad is not None and xg.grad.shape == x.shape
