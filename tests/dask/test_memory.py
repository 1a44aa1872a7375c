"""local_cluster gives its worker processes the preload fastmoments.dask.memory, which sets
glibc's allocator thresholds so that freed buffers stay for the next task (unless asked not
to); the preload's effect is measured here in a plain subprocess, the workers themselves are
checked in dask/test_cluster.py."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

distributed = pytest.importorskip("distributed")

import dask  # noqa: E402
import fastmoments.dask as fmd  # noqa: E402
from fastmoments.dask import memory  # noqa: E402


@pytest.fixture
def seen(monkeypatch):
    kwargs: dict = {}

    class Fake:
        def __init__(self, **kw):
            kwargs.clear()
            kwargs.update(kw)

    monkeypatch.setattr(distributed, "LocalCluster", Fake)
    return kwargs


def test_worker_processes_get_the_memory_preload(seen):
    fmd.local_cluster(n_workers=1)
    assert seen["preload"] == [fmd.MEMORY_PRELOAD] == ["fastmoments.dask.memory"]
    assert "worker_class" not in seen
    assert fmd.REUSE_MEMORY_ENV == {"MALLOC_MMAP_THRESHOLD_": str(memory.MMAP_THRESHOLD),
                                    "MALLOC_TRIM_THRESHOLD_": str(memory.TRIM_THRESHOLD)}


def test_the_preload_joins_the_users_and_the_configured_ones(seen):
    fmd.local_cluster(n_workers=1, preload="mine")
    assert seen["preload"] == ["mine", fmd.MEMORY_PRELOAD]
    fmd.local_cluster(n_workers=1, preload=["a", fmd.MEMORY_PRELOAD])
    assert seen["preload"] == ["a", fmd.MEMORY_PRELOAD]
    with dask.config.set({"distributed.worker.preload": ["configured"]}):
        fmd.local_cluster(n_workers=1)
    assert seen["preload"] == ["configured", fmd.MEMORY_PRELOAD]


def test_reuse_memory_off_or_threads_keep_dask_settings(seen):
    fmd.local_cluster(n_workers=1, reuse_memory=False)
    assert "preload" not in seen
    fmd.local_cluster(n_workers=1, processes=False)
    assert "preload" not in seen


def test_reuse_memory_must_be_a_bool(seen):
    with pytest.raises(TypeError, match="reuse_memory"):
        fmd.local_cluster(n_workers=1, reuse_memory="yes")


_REFILL = r"""
import resource, sys
import numpy as np
if sys.argv[1] == "preload":
    from fastmoments.dask.memory import applied, dask_setup
    dask_setup(None)
    assert applied()
def refill():
    [np.ones(1 << 17) for _ in range(4)]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    [np.ones(1 << 17) for _ in range(4)]
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(min(refill() for _ in range(5)))
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="the allocator settings are glibc's")
def test_the_preload_keeps_freed_buffers_under_dasks_setting():
    """A process started with Dask's MALLOC_TRIM_THRESHOLD_=65536 maps four freed 1 MiB
    buffers afresh (4 x 256 pages of 4 KiB faulted again); after the preload it reuses them.
    The least of five refills, so that another thread's faults cannot add to both counts."""
    env = dict(os.environ, MALLOC_TRIM_THRESHOLD_="65536")
    env.pop("MALLOC_MMAP_THRESHOLD_", None)

    def faults(mode: str) -> int:
        out = subprocess.run([sys.executable, "-c", _REFILL, mode], env=env, check=True,
                             capture_output=True, text=True)
        return int(out.stdout.split()[-1])

    assert faults("dask") >= 1000
    assert faults("preload") < 256
