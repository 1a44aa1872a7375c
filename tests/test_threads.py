"""The threads a CPU call may use: affinity, cgroup quota, torch's setting and the work."""

from __future__ import annotations

import threading

import pytest
import torch

from fastmoments import _threads
from fastmoments._threads import cgroup_cpu_quota, cpu_threads, thread_limit, threads_for


def test_cgroup_v2_quota_smallest_of_the_chain():
    files = {"/c": "0::/a/b\n", "/fs/a/b/cpu.max": "max 100000\n",
             "/fs/a/cpu.max": "250000 100000\n", "/fs/cpu.max": "400000 100000\n"}
    assert cgroup_cpu_quota("/c", "/fs", files.get) == pytest.approx(2.5)


def test_cgroup_v1_quota_and_unlimited():
    files = {"/c": "4:cpu,cpuacct:/job\n", "/fs/cpu/job/cpu.cfs_quota_us": "50000\n",
             "/fs/cpu/job/cpu.cfs_period_us": "100000\n"}
    assert cgroup_cpu_quota("/c", "/fs", files.get) == pytest.approx(0.5)
    unlimited = {"/c": "4:cpu,cpuacct:/job\n", "/fs/cpu/job/cpu.cfs_quota_us": "-1\n",
                 "/fs/cpu/job/cpu.cfs_period_us": "100000\n"}
    assert cgroup_cpu_quota("/c", "/fs", unlimited.get) is None
    assert cgroup_cpu_quota("/missing", "/fs", {}.get) is None


def test_limit_respects_quota_affinity_and_torch(monkeypatch):
    _threads.usable_cpus.cache_clear()
    monkeypatch.setattr(_threads, "cgroup_cpu_quota", lambda: 1.5)
    monkeypatch.setattr(_threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    try:
        assert _threads.usable_cpus() == 1
        with cpu_threads(4):
            assert thread_limit() == 1
    finally:
        _threads.usable_cpus.cache_clear()


def test_threads_for_scales_with_work(monkeypatch):
    monkeypatch.setattr(_threads, "thread_limit", lambda: 8)
    assert threads_for(0, grain=10) == 1
    assert threads_for(9, grain=10) == 1
    assert threads_for(35, grain=10) == 3
    assert threads_for(1e9, grain=10) == 8
    assert threads_for(float("nan"), grain=10) == 1


def test_cpu_threads_restores_and_is_per_thread():
    before = torch.get_num_threads()
    with cpu_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    seen = []

    def other():
        seen.append(torch.get_num_threads())

    with cpu_threads(1):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert torch.get_num_threads() == before
    assert len(seen) == 1 and seen[0] >= 1


def test_cpu_call_runs_small_work_on_one_thread_and_keeps_the_ceiling(monkeypatch):
    monkeypatch.setattr(_threads, "usable_cpus", lambda: 4)
    seen = {}

    @_threads.cpu_call(_threads.per_value(1.0))
    def call(x):
        seen["torch"] = torch.get_num_threads()
        seen["kernels"] = threads_for(1e12)  # a compiled kernel with work for every thread
        return x

    before = torch.get_num_threads()
    torch.set_num_threads(3)  # the user's setting
    try:
        x = torch.zeros(10)
        assert call(x) is x
        assert seen == {"torch": 1, "kernels": 3}  # the caller's ceiling, not the lowered count
        assert torch.get_num_threads() == 3
        big = torch.zeros(int(_threads.GRAIN) * 2 + 1)
        call(big)
        assert seen["torch"] == 2
    finally:
        torch.set_num_threads(before)


def test_cpu_call_leaves_gpu_work_alone():
    meta = torch.empty(10, device="meta")  # not on the CPU: no work the CPU threads do
    assert _threads.host_values(meta) is None
    assert _threads.host_values(torch.zeros(3, 4)) == 12
    assert _threads.host_values([[1.0, 2.0]]) == 2
    work = _threads.per_value(lambda self, x: 5.0, arg=1)
    assert work(None, torch.zeros(4)) == 20.0
    assert work(None, meta) is None


def test_moments_objects_count_by_their_data_without_a_copy(monkeypatch):
    """A plan's reconstruction takes its moments object: the threads' rule counts its data
    tensor and never converts the object (on a GPU ``np.asarray`` would copy the moments to
    the host on every reconstruction)."""
    import numpy as np

    import fastmoments as fm

    moments = fm.JacobiTransform((8, 8, 8), 4).forward(np.ones((8, 8, 8)))

    def refuse(*args, **kwargs):
        raise AssertionError("the moments were converted to count them")

    monkeypatch.setattr(type(moments), "__array__", refuse, raising=False)
    assert _threads.host_values(moments) == moments.data.numel()
    on_gpu = type("OnGpu", (), {"data": torch.empty(10, device="meta"), "__array__": refuse})()
    assert _threads.host_values(on_gpu) is None
    zm = fm.ZernikeTransform(16, 6).forward(np.ones((16, 16)))
    monkeypatch.setattr(type(zm), "__array__", refuse, raising=False)
    zm.reconstruct()


def test_public_calls_restore_the_callers_threads():
    import numpy as np

    import fastmoments as fm

    before = torch.get_num_threads()
    fm.gaussian_filter1d(np.arange(64.0), 2.0)
    fm.zernike_moments(np.ones((16, 16)), 4)
    fm.legendre_moments(np.ones((8, 8)), 3)
    assert torch.get_num_threads() == before


def test_bad_arguments_get_the_calls_own_error():
    import numpy as np

    import fastmoments as fm

    with pytest.raises((TypeError, ValueError), match="order"):
        fm.zernike3d_moments(np.zeros((8, 8, 8)), "a")
    with pytest.raises((TypeError, ValueError), match="scales"):
        fm.cwt(np.zeros(32), "a")
