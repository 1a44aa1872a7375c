"""3-D Zernike transforms over a list of devices (CPU entries stand in for GPUs)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from fastmoments.ball import Zernike3DTransform, routes, zernike3d_moments
from fastmoments.ball.sampling import ball_sampling
from fastmoments.ball.split import BallSplit, group_costs, shell_sampling
from fastmoments.parallel import ParallelPlan

RNG = np.random.default_rng(7)
VOLS = RNG.random((3, 12, 12, 12))


def _close(a, b, tol=1e-13):
    a, b = np.asarray(a), np.asarray(b)
    assert np.abs(a - b).max() <= tol * np.abs(b).max()


@pytest.mark.parametrize("gemm", [True, False])
def test_work_split_equals_one_device(monkeypatch, gemm):
    if not gemm:  # the two-stage route (Legendre, then radial)
        monkeypatch.setitem(routes.GEMM_CACHE, "cpu", 0)
    one = Zernike3DTransform((12, 12, 12), 8, dtype="float64")
    par = Zernike3DTransform((12, 12, 12), 8, dtype="float64", device=["cpu", "cpu"])
    assert isinstance(par, ParallelPlan)
    assert (par.route.kernel == "ring-gemm") is gemm
    v = VOLS[0]
    v0 = v.copy()
    ref = one.forward(v)
    got = par.forward(v, split="work")
    assert np.array_equal(v, v0)  # the input is not modified
    assert isinstance(got.values(), np.ndarray)
    _close(got.values(), ref.values())
    _close(got.invariants(), ref.invariants())
    _close(got.reconstruct(), ref.reconstruct())
    # two shells of the ball, one per device, covering every radius group once
    (d0, _, (a0, z0)), (d1, _, (a1, z1)) = par.parts()
    assert (d0, d1, a0, z1, z0) == (0, 1, 0, one.sampling.n_groups, a1)


def test_batch_split_and_one_call_function():
    one = Zernike3DTransform((12, 12, 12), 6, dtype="float64")
    ref = one.forward(VOLS)
    par = Zernike3DTransform((12, 12, 12), 6, dtype="float64", device=["cpu", "cpu"])
    _close(par.forward(VOLS).values(), ref.values())  # 3 volumes on 2 devices: by volumes
    got = zernike3d_moments(VOLS, 6, dtype="float64", device=["cpu", "cpu"])
    assert got.values().shape == ref.values().shape
    _close(got.values(), ref.values())
    t = zernike3d_moments(torch.as_tensor(VOLS[:1]), 6, device=("cpu", "cpu"))
    assert isinstance(t.values(), torch.Tensor) and t.values().dtype == torch.complex128
    _close(t.values().numpy(), ref.values()[:1])


def test_three_devices_gauss_quadrature():
    kw = {"k": 2, "quadrature": "gauss", "dtype": "float64"}
    one = Zernike3DTransform((10, 11, 12), 5, **kw)
    par = Zernike3DTransform((10, 11, 12), 5, device=["cpu"] * 3, **kw)
    v = RNG.random((10, 11, 12))
    _close(par.forward(v, split="work").values(), one.forward(v).values())
    assert len(par.parts()) == 3


def test_shells_partition_the_sampling_and_costs():
    s = ball_sampling((9, 9, 9), 2)
    cut = s.n_groups // 3
    a, b = shell_sampling(s, 0, cut), shell_sampling(s, cut, s.n_groups)
    assert np.array_equal(np.concatenate([a.voxel, b.voxel]), s.voxel)
    assert np.array_equal(np.concatenate([a.radii, b.radii]), s.radii)
    assert a.ring_group.max() == cut - 1 and b.ring_group.min() == 0
    assert b.ring_point[0] == 0 and b.group[0] == 0 and b.ring[0] == 0
    assert np.array_equal(b.xyz[b.ring_point], s.xyz[s.ring_point[s.ring_group >= cut]])
    with pytest.raises(ValueError, match="groups"):
        shell_sampling(s, 3, 3)
    c = group_costs(s, 6, gemm=False)
    assert c.shape == (s.n_groups,) and (c > 0).all()
    plan = Zernike3DTransform((9, 9, 9), 6, k=2)
    split = BallSplit(plan)
    assert split.item_cost() == pytest.approx(
        group_costs(plan.sampling, 6, plan.route.kernel == "ring-gemm").sum())
    blocks = split.pieces(4)
    assert blocks[0][0] == 0 and blocks[-1][1] == s.n_groups
    assert all(p[1] == q[0] for p, q in itertools.pairwise(blocks))


def test_bad_input_through_a_device_list():
    par = Zernike3DTransform((8, 8, 8), 4, device=["cpu", "cpu"])
    with pytest.raises(ValueError, match="volume"):
        par.forward(np.ones((7, 8, 8)), split="work")
    bad = np.ones((8, 8, 8))
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        par.forward(bad, split="work")


@pytest.mark.parametrize("k", [1, 2])
def test_reconstruction_split_equals_one_device(monkeypatch, k):
    one = Zernike3DTransform((11, 11, 11), 7, k=k, dtype="float64")
    par = Zernike3DTransform((11, 11, 11), 7, k=k, dtype="float64", device=["cpu", "cpu"])
    v = VOLS[:, :11, :11, :11]
    ref = one.forward(v)
    _close(par.forward(v).reconstruct(), ref.reconstruct())  # 3 volumes: by volumes
    _close(par.inverse(ref.values()), ref.reconstruct())
    monkeypatch.setattr(BallSplit, "min_cost", 0.0)  # one volume is split into shells
    got = par.forward(v[0])
    _close(got.reconstruct(), ref.reconstruct()[0])
    _close(got.reconstruct(orders=(2, 5)), ref.reconstruct(orders=(2, 5))[0])
    parts = par._split._recon_parts  # the shells of the voxel centres, one engine each
    assert len(parts) == 2 and all(p[1] is not None for p in parts)
    assert parts[0][2][0] == 0 and parts[1][2][1] == one.recon_engine().sampling.n_groups


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_two_gpus_match_one_cpu():
    devs = ["cuda:0", "cuda:1"]
    one = Zernike3DTransform((12, 12, 12), 10, dtype="float64")
    par = Zernike3DTransform((12, 12, 12), 10, dtype="float64", device=devs)
    for x, split in ((VOLS, "auto"), (VOLS[0], "work")):
        a, b = par.forward(x, split=split), one.forward(x)
        assert isinstance(a.values(), np.ndarray)
        _close(a.values(), b.values(), 1e-12)
        _close(a.reconstruct(), b.reconstruct(), 1e-12)
    t = zernike3d_moments(torch.as_tensor(VOLS, device="cuda:1"), 10, device="cuda:all")
    assert t.values().device == torch.device("cuda", 0)
    _close(t.values().cpu().numpy(), one.forward(VOLS).values(), 1e-12)  # float64 in and out
