"""Inference tensors (made under :func:`torch.inference_mode`) as input, and calls made under
inference mode.

An inference tensor has no version counter. The package kept values for tensors until they
changed (a box plan's split tables), and it read that counter to tell a change. Reading it
on an inference tensor raised ``RuntimeError``, so every box and disk call failed on such
input. Now nothing is kept for inference tensors, and every public call gives the result
that an ordinary tensor with the same values gives.
"""

from __future__ import annotations

import pytest
import torch

import fastmoments as fm


def _values(r):
    """The tensors of a result, for comparison."""
    if isinstance(r, torch.Tensor):
        return [r]
    if isinstance(r, (tuple, list)):
        return [v for item in r for v in _values(item)]
    if isinstance(r, float):
        return [torch.tensor(r)]
    for name in ("data", "tensor"):  # moments objects, feature sets
        data = getattr(r, name, None)
        if isinstance(data, torch.Tensor):
            return [data]
    return []


CALLS = {
    "legendre 2-D": lambda img, vol, sig: fm.legendre_moments(img, 8),
    "legendre 3-D": lambda img, vol, sig: fm.legendre_moments(vol, 5, ndim=3),
    "gegenbauer": lambda img, vol, sig: fm.gegenbauer_moments(img, 8, lam=0.75),
    "jacobi": lambda img, vol, sig: fm.jacobi_moments(img, 8, alpha=1.0, beta=2.0),
    "legendre, reconstruction": lambda img, vol, sig: fm.legendre_moments(
        img, 8).reconstruct(),
    "zernike": lambda img, vol, sig: fm.zernike_moments(img, 10),
    "pseudo-zernike": lambda img, vol, sig: fm.pseudo_zernike_moments(img, 8),
    "pcet": lambda img, vol, sig: fm.pcet(img, 4, 4),
    "features": lambda img, vol, sig: fm.features(img[None], orders=4),
    "psnr": lambda img, vol, sig: fm.psnr(img, img * 0.5),
    "gaussian_filter1d": lambda img, vol, sig: fm.gaussian_filter1d(sig, 3.0),
    "gaussian plan": lambda img, vol, sig: fm.GaussianFilter(40.0, order=1)(sig),
    "morlet": lambda img, vol, sig: fm.morlet_transform(sig, 8.0),
    "cwt": lambda img, vol, sig: fm.cwt(sig, [4.0, 9.0]),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_inference_tensors_give_the_ordinary_result(name, rng):
    img = torch.tensor(rng.random((24, 24)))
    vol = torch.tensor(rng.random((10, 10, 10)))
    sig = torch.tensor(rng.standard_normal((3, 700)))
    want = _values(CALLS[name](img, vol, sig))
    assert want
    with torch.inference_mode():
        inf = [t.clone() for t in (img, vol, sig)]
    for mode in (torch.no_grad, torch.inference_mode):
        with mode():
            for _ in range(2):  # (the second call finds what the first kept, if anything)
                got = _values(CALLS[name](*inf))
                assert len(got) == len(want)
                for g, w in zip(got, want, strict=True):
                    torch.testing.assert_close(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("build", ["inference", "ordinary"])
def test_plans_built_in_one_mode_run_in_the_other(build, rng):
    """A plan's cached tables and the engines' reused scratch made under inference mode
    are used outside it (scratch written in place outside inference mode is made afresh),
    and the other way round; the results equal a fresh plan's."""
    img = torch.tensor(rng.random((24, 24)))
    sig = torch.tensor(rng.standard_normal((3, 700)))

    def plans():
        return [(fm.ZernikeTransform(24, 8), img), (fm.JacobiTransform((24, 24), 6), img),
                (fm.GaussianFilter(12.0), sig), (fm.MorletTransform(8.0), sig),
                (fm.CWT([4.0, 9.0]), sig)]

    def values(plan, x):
        r = plan(x)
        return [r.reconstruct(), r.data] if hasattr(r, "reconstruct") else [r]

    want = [values(p, x) for p, x in plans()]
    from fastmoments.signal import chunked

    chunked._workspace(torch.device("cpu")).buffers.clear()  # made afresh in the first mode
    first, then = ((torch.inference_mode, torch.no_grad) if build == "inference"
                   else (torch.no_grad, torch.inference_mode))
    with first():
        built = plans()
        for p, x in built:
            values(p, x)
    with then():
        for (p, x), w in zip(built, want, strict=True):
            for g, v in zip(values(p, x), w, strict=True):
                torch.testing.assert_close(g, v, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("build", ["inference", "ordinary"])
def test_gpu_replays_captured_in_one_mode_run_in_the_other(build):
    """On a GPU, calls captured into a graph, or kept as box and disk plans' tables in one
    mode replay in the other with the first calls' results."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    sig = torch.randn(3000, device="cuda", generator=gen)
    sig64 = sig.double()
    img = torch.rand(64, 64, device="cuda", generator=gen)
    jobs = [(fm.GaussianFilter(16.0), sig, {}),  # graphs
            (fm.MorletTransform(16.0), sig, {}),
            (fm.GaussianFilter(16.0), sig64, dict(mode="constant", cval=0.1)),
            (fm.ZernikeTransform(64, 12), img, {}),
            (fm.JacobiTransform((64, 64), 12), img, {})]

    def values(plan, x, kw):
        r = plan(x, **kw)
        return [r.reconstruct(), r.data] if hasattr(r, "reconstruct") else [r]

    first, then = ((torch.inference_mode, torch.no_grad) if build == "inference"
                   else (torch.no_grad, torch.inference_mode))
    with first():
        want = [values(p, x, kw) for p, x, kw in jobs]
        for _ in range(3):  # the third call captures
            for p, x, kw in jobs:
                values(p, x, kw)
    with then():
        for _ in range(2):
            for (p, x, kw), w in zip(jobs, want, strict=True):
                for g, v in zip(values(p, x, kw), w, strict=True):
                    torch.testing.assert_close(g, v)  # (float32 rounding: atomics may reorder)
        bad = sig.clone()
        bad[7] = float("nan")
        with pytest.raises(ValueError, match="NaN or infinity"):
            jobs[0][0](bad)
