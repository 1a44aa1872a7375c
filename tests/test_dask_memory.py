"""local_cluster starts its worker processes with glibc's steady-state allocator settings
(REUSE_MEMORY_ENV) unless asked not to; the workers themselves are checked in
test_dask_cluster.py."""

from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed")

import fastmoments.dask as fmd  # noqa: E402


@pytest.fixture
def seen(monkeypatch):
    kwargs: dict = {}

    class Fake:
        def __init__(self, **kw):
            kwargs.clear()
            kwargs.update(kw)

    monkeypatch.setattr(distributed, "LocalCluster", Fake)
    return kwargs


def test_worker_processes_get_the_reusing_nanny(seen):
    fmd.local_cluster(n_workers=1)
    nanny = seen["worker_class"]
    assert issubclass(nanny, distributed.Nanny) and nanny is not distributed.Nanny
    assert set(fmd.REUSE_MEMORY_ENV) == {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"}


def test_reuse_memory_off_threads_or_own_worker_class_keep_dask_settings(seen):
    fmd.local_cluster(n_workers=1, reuse_memory=False)
    assert "worker_class" not in seen
    fmd.local_cluster(n_workers=1, processes=False)
    assert "worker_class" not in seen
    fmd.local_cluster(n_workers=1, worker_class=distributed.Nanny)
    assert seen["worker_class"] is distributed.Nanny


def test_reuse_memory_must_be_a_bool(seen):
    with pytest.raises(TypeError, match="reuse_memory"):
        fmd.local_cluster(n_workers=1, reuse_memory="yes")
