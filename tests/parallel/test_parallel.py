"""Device lists on the CPU: ``device=["cpu", "cpu"]`` runs the split-and-gather path.

Every result is compared with the one-device path in float64 (1e-12 relative: the parts
compute the same sums, so only the order of a few additions may differ).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments import parallel
from fastmoments.box.api import JacobiTransform, legendre_moments
from fastmoments.box.split import BoxSplit
from fastmoments.disk import ZernikeTransform
from fastmoments.disk.api import pseudo_zernike_moments, zernike_moments
from fastmoments.disk.pht import PolarHarmonicTransform, pcet
from fastmoments.disk.split import DiskSplit
from fastmoments.recognition import features
from fastmoments.signal import cwt, gaussian_filter, gaussian_filter1d, morlet_transform

LISTS = [["cpu", "cpu"], ["cpu", "cpu", "cpu"]]
RTOL = 1e-12


@pytest.fixture(autouse=True)
def split_small_jobs(monkeypatch):
    """The tests' jobs are small: let ``split="auto"`` split them all the same."""
    monkeypatch.setattr(DiskSplit, "min_cost", 0.0)
    monkeypatch.setattr(BoxSplit, "min_cost", 0.0)


def close(a, b) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    scale = max(float(np.abs(b).max()), 1e-300) if b.size else 1.0
    assert (float(np.abs(a - b).max()) if a.size else 0.0) <= RTOL * scale


@pytest.fixture(scope="module")
def imgs() -> np.ndarray:
    return np.random.default_rng(1).random((5, 24, 24))


@pytest.mark.parametrize("devs", LISTS)
@pytest.mark.parametrize("count", [0, 1, 2, 3, 5])
def test_zernike_plan_batches_and_split(devs, count, imgs):
    x = imgs[:count]
    plan = ZernikeTransform(24, 9, dtype="float64", device=devs)
    one = ZernikeTransform(24, 9, dtype="float64")
    a, b = plan.forward(x), one.forward(x)
    assert isinstance(a.values(), np.ndarray) and a.batch_shape == b.batch_shape
    close(a.values(), b.values())
    if count:
        close(a.reconstruct(), b.reconstruct())
        close(a.reconstruct(orders=(2, 6), repetitions="positive"),
              b.reconstruct(orders=(2, 6), repetitions="positive"))


@pytest.mark.parametrize("devs", LISTS)
def test_single_image_work_split_balances_columns(devs, imgs):
    plan = ZernikeTransform(24, 12, dtype="float64", device=devs, k=2)
    one = ZernikeTransform(24, 12, dtype="float64", k=2)
    a, b = plan.forward(imgs[0], split="work"), one.forward(imgs[0])
    close(a.values(), b.values())
    close(a.reconstruct(), b.reconstruct())
    cols = [p[2] for p in plan.parts()]
    assert sorted(c for part in cols for c in part) == list(range(13))
    assert len(cols) == len(devs)
    # the long (low-m) columns are spread over the parts
    assert all(min(part) < 3 for part in cols[:2])


@pytest.mark.parametrize("split", ["batch", "work"])
def test_tensor_input_and_nd_batch(split, imgs):
    x = torch.as_tensor(imgs[:4]).reshape(2, 2, 24, 24)
    plan = ZernikeTransform(24, 7, dtype="float64", device=("cpu", "cpu", "cpu"))
    a = plan.forward(x, split=split)
    b = ZernikeTransform(24, 7, dtype="float64").forward(x)
    assert isinstance(a.values(), torch.Tensor) and a.batch_shape == (2, 2)
    close(a.values().numpy(), b.values().numpy())
    close(a.reconstruct().numpy(), b.reconstruct().numpy())
    close(plan.adjoint(a).numpy(), ZernikeTransform(24, 7, dtype="float64").adjoint(b).numpy())


def test_one_call_functions(imgs):
    for fn in (zernike_moments, pseudo_zernike_moments):
        a = fn(imgs, 8, device=["cpu", "cpu"])
        b = fn(imgs, 8)
        close(a.values(), b.values())
        a1 = fn(imgs[0], 8, device=["cpu", "cpu"])
        close(a1.values(), b.values()[0])
        close(a1.reconstruct(), b.reconstruct()[0])


def test_pht_plans_and_one_call(imgs):
    plan = PolarHarmonicTransform("pct", 24, 5, 4, dtype="float64", device=["cpu", "cpu"])
    one = PolarHarmonicTransform("pct", 24, 5, 4, dtype="float64")
    for x in (imgs, imgs[0]):
        a, b = plan.forward(x), one.forward(x)
        close(a.values(), b.values())
        close(a.reconstruct(), b.reconstruct())
    a, b = pcet(imgs[0], 4, 4, device=["cpu"] * 3), pcet(imgs[0], 4, 4)
    close(a.values(), b.values())
    close(a.reconstruct(), b.reconstruct())


@pytest.mark.parametrize("devs", LISTS)
@pytest.mark.parametrize("truncation", ["total", "box"])
def test_box_volume_work_split_and_batches(devs, truncation):
    vol = np.random.default_rng(2).random((3, 10, 12, 14))
    plan = JacobiTransform((10, 12, 14), 8, alpha=0.5, beta=0.5, truncation=truncation,
                           dtype="float64", device=devs)
    one = JacobiTransform((10, 12, 14), 8, alpha=0.5, beta=0.5, truncation=truncation,
                          dtype="float64")
    for x in (vol, vol[0], vol[:2]):
        a, b = plan.forward(x), one.forward(x)
        close(a.numpy(), b.numpy())
        close(a.reconstruct(), b.reconstruct())
        close(a.reconstruct(order=5), b.reconstruct(order=5))
    blocks = [p[2] for p in plan.parts()]
    assert blocks[0][0] == 0 and blocks[-1][1] == 9 and len(blocks) == len(devs)


def test_box_one_call_2d():
    img = np.random.default_rng(3).random((3, 20, 22))
    a = legendre_moments(img, 9, ndim=2, device=["cpu", "cpu"])
    b = legendre_moments(img, 9, ndim=2)
    close(a.numpy(), b.numpy())
    a = legendre_moments(img[0], 9, device=["cpu", "cpu"])
    close(a.numpy(), b.numpy()[0])
    close(a.reconstruct(), b.reconstruct()[0])


@pytest.mark.parametrize("devs", LISTS)
def test_signals(devs):
    x = np.random.default_rng(4).standard_normal((5, 200))
    # every axis filtered: no batch axis to split, the call runs on the first device
    close(gaussian_filter(x, 3.0, device=devs), gaussian_filter(x, 3.0))
    close(gaussian_filter(x, [1.5, 3.0], axes=(0, 1), device=devs),
          gaussian_filter(x, [1.5, 3.0], axes=(0, 1)))
    # split along the axis left out (axes=, channel_axis=) or not filtered (gaussian_filter1d)
    close(gaussian_filter(x, 3.0, axes=(1,), device=devs), gaussian_filter1d(x, 3.0))
    close(gaussian_filter(x, 3.0, channel_axis=0, device=devs), gaussian_filter1d(x, 3.0))
    close(gaussian_filter1d(x, 30.0, device=devs), gaussian_filter1d(x, 30.0))
    t = torch.as_tensor(x[:1])
    close(morlet_transform(t, 4.0, device=devs).numpy(), morlet_transform(t, 4.0).numpy())
    (a, fa), (b, fb) = cwt(x.T, [2.0, 5.0], axis=0, device=devs), cwt(x.T, [2.0, 5.0], axis=0)
    close(a, b)
    assert np.array_equal(fa, fb)
    out = np.empty((2, 5, 200), dtype=np.complex128)
    got, _ = cwt(x, [2.0, 5.0], out=out, device=devs)
    assert got is out
    close(out, cwt(x, [2.0, 5.0])[0])


@pytest.mark.parametrize("devs", LISTS)
def test_features(devs, imgs):
    for select in (None, 3):
        a = features(imgs, orders=5, kind="real", select=select, dtype="float64", device=devs)
        b = features(imgs, orders=5, kind="real", select=select, dtype="float64")
        assert a.pairs == b.pairs
        close(a.matrix, b.matrix)


def test_inputs_are_not_modified(imgs):
    x = imgs.copy()
    ZernikeTransform(24, 5, device=["cpu", "cpu"]).forward(x).reconstruct()
    assert np.array_equal(x, imgs)


# ---------------------------------------------------------------------- errors
def test_bad_calls_with_a_device_name_the_function():
    """A call that does not fit the signature raises Python's own error (naming the
    function), with device= given too, not the signature binding's."""
    with pytest.raises(TypeError, match=r"features\(\) takes 1 positional"):
        features(np.zeros((2, 8, 8)), "zernike", 4, device="cpu")
    with pytest.raises(TypeError, match=r"gaussian_filter1d\(\) takes"):
        gaussian_filter1d(np.zeros(8), 1.0, -1, 0, None, "reflect", 0.0, 4.0, 3, device="cpu")


def test_device_errors():
    with pytest.raises(ValueError, match="device"):
        ZernikeTransform(16, 4, device=[])
    with pytest.raises(ValueError, match=r"device\[1\]"):
        ZernikeTransform(16, 4, device=["cpu", "tpu:0"])
    with pytest.raises(TypeError, match="ordered"):
        parallel.device_list({"cpu"})
    with pytest.raises(TypeError, match=r"device\[0\]"):
        parallel.device_list([0])
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="cuda:all"):
            ZernikeTransform(16, 4, device="cuda:all")
        with pytest.raises(ValueError, match="cuda"):
            gaussian_filter(np.ones((2, 8)), 1.0, device=["cpu", "cuda:0"])
    with pytest.raises(ValueError, match="split"):
        ZernikeTransform(16, 4, device=["cpu", "cpu"]).forward(np.ones((16, 16)), split="x")


def test_duplicates_are_separate_replicas():
    plan = ZernikeTransform(16, 4, device=["cpu", "cpu"])
    plan.forward(np.ones((4, 16, 16)))
    assert plan.replica(0) is not plan.replica(1)


def test_out_of_memory_names_the_device(monkeypatch, imgs):
    plan = ZernikeTransform(24, 5, device=["cpu", "cpu"])
    rep = plan.replica(1)

    def boom(x):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.50 GiB")

    monkeypatch.setattr(rep, "forward", boom)
    with pytest.raises(MemoryError, match=r"device cpu .*2\.50 GiB"):
        plan.forward(imgs[:4])


def test_auto_keeps_small_jobs_on_the_first_device(monkeypatch, imgs):
    monkeypatch.setattr(DiskSplit, "min_cost", 1e10)
    plan = ZernikeTransform(24, 6, device=["cpu", "cpu"])
    assert plan.mode("auto", 1) == "one" and plan.mode("work", 1) == "work"
    assert plan.mode("auto", 2) == "batch"
    close(plan.forward(imgs[0]).values(), ZernikeTransform(24, 6).forward(imgs[0]).values())


def test_partition_helpers():
    costs = [3, 3, 2, 2, 2]
    groups = parallel.balance(costs, 2)
    assert sorted(i for g in groups for i in g) == list(range(5))
    loads = [sum(costs[i] for i in g) for g in groups]
    assert max(loads) <= 4 / 3 * 6  # the LPT bound against the optimum (6, 6)
    blocks = parallel.contiguous_blocks(parallel.box_degree_costs((8, 8, 8), 20, True), 3)
    assert blocks[0][0] == 0 and blocks[-1][1] == 21
    # total-degree truncation: later degrees are cheaper, so the first block is narrower
    assert blocks[0][1] - blocks[0][0] <= blocks[-1][1] - blocks[-1][0]


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_two_gpus_match_one(imgs):
    devs = ["cuda:0", "cuda:1"]
    for x in (imgs, imgs[0]):
        a = ZernikeTransform(24, 30, dtype="float64", device=devs).forward(x)
        b = ZernikeTransform(24, 30, dtype="float64", device="cuda:0").forward(x)
        assert a.values().shape == b.values().shape
        close(a.values(), b.values())
        close(a.reconstruct(), b.reconstruct())
    t = torch.as_tensor(imgs, device="cuda:1")
    a = features(t, family="zernike", orders=10, kind="magnitude", device="cuda:all")
    assert a.moments.device == torch.device("cuda", 0)
    close(a.matrix.cpu().numpy(), features(imgs, family="zernike", orders=10,
                                           kind="magnitude").matrix)
    vol = np.random.default_rng(5).random((12, 14, 16))
    a = JacobiTransform((12, 14, 16), 9, dtype="float64", device=devs).forward(vol)
    b = JacobiTransform((12, 14, 16), 9, dtype="float64").forward(vol)
    close(a.numpy(), b.numpy())
    close(a.reconstruct(), b.reconstruct())


def test_signal_functions_gain_a_documented_device_parameter():
    x = np.random.default_rng(6).standard_normal((3, 64))
    close(gaussian_filter(x, 2.0, device="cpu"), gaussian_filter(x, 2.0))
    t = torch.as_tensor(x)
    assert isinstance(morlet_transform(t, 3.0, device="cpu"), torch.Tensor)
    for fn in (gaussian_filter, gaussian_filter1d, morlet_transform, cwt):
        assert "device : str" in fn.__doc__


def test_device_list_accepts_big_endian_and_strided_input():
    """Host data reach each device through the shared conversion (native byte order,
    C order): a big-endian or reversed batch gives the one-device result."""
    x = np.random.default_rng(3).random((4, 16, 16))
    ref = zernike_moments(x, 4, dtype="float64").numpy()
    for view in (x.astype(">f8"), x[:, ::-1, ::-1].copy()[:, ::-1, ::-1]):
        got = zernike_moments(view, 4, dtype="float64", device=["cpu", "cpu"]).numpy()
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)
