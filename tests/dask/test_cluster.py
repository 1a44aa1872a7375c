"""fastmoments.dask on distributed clusters: two worker processes give the single-process
features, a plan is built once per worker process, torch threads are sized to the cores."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import torch  # noqa: E402

import fastmoments.dask as fmd  # noqa: E402
from fastmoments.dask import _features, _signal  # noqa: E402
from fastmoments.recognition import extract  # noqa: E402
from fastmoments.recognition import features as features_in_memory  # noqa: E402
from fastmoments.signal import GaussianFilter  # noqa: E402

CLUSTER = {"dashboard_address": ":0", "silence_logs": 50}


@pytest.fixture(scope="module")
def process_client():
    """Two worker processes with one thread each, started once for the module."""
    cluster = fmd.local_cluster(n_workers=2, threads_per_worker=1, torch_threads=1,
                                processes=True, **CLUSTER)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _torch_threads_in_task(_: int) -> int:
    fmd.configure_threads()
    return torch.get_num_threads()


def test_two_processes_give_the_single_process_features(process_client):
    x = np.random.default_rng(0).random((24, 20, 20))
    d = da.from_array(x, chunks=(3, 20, 20))
    got = fmd.features(d, "pseudo-zernike", 5, kind="magnitude").compute()
    ref = features_in_memory(x, family="pseudo-zernike", orders=5, kind="magnitude").matrix
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)
    # the work really went to both worker processes, each building its plan once
    builds = process_client.run(fmd.plan_builds)
    assert len(builds) == 2
    assert all(b.get("features", 0) <= 1 for b in builds.values())
    assert sum(b.get("features", 0) for b in builds.values()) >= 1


def test_two_processes_gaussian_on_a_chunked_signal(process_client):
    x = np.random.default_rng(1).standard_normal(20000)
    y = fmd.gaussian_filter1d(da.from_array(x, chunks=1000), 300.0, mode="nearest").compute()
    ref = GaussianFilter(300.0)(x, mode="nearest")
    assert float(np.max(np.abs(y - ref)) / np.max(np.abs(ref))) < 1e-12


def test_worker_threads_times_torch_threads_within_cores(process_client):
    counts = process_client.gather(process_client.map(_torch_threads_in_task, range(8)))
    assert set(counts) == {1}
    env = process_client.run(lambda: __import__("os").environ.get(fmd.THREADS_ENV))
    assert set(env.values()) == {"1"}


def test_plan_built_once_per_process_for_a_many_chunk_job(monkeypatch):
    """processes=False: every worker shares this process, so the counters here see every
    construction of the job (the plans' own caches are emptied first)."""
    built = []
    real = extract.DiskTransform

    def counting(*args, **kwargs):
        built.append(args[:2])
        return real(*args, **kwargs)

    monkeypatch.setattr(extract, "DiskTransform", counting)
    extract._plan.cache_clear()
    extract._dense.cache_clear()
    _features._feature_job.cache_clear()
    _signal._gaussian_plan.cache_clear()
    before = fmd.plan_builds()
    threads = torch.get_num_threads()
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=False,
                                      **CLUSTER) as cluster, distributed.Client(cluster):
            x = np.random.default_rng(2).random((40, 16, 16))
            f = fmd.features(da.from_array(x, chunks=(2, 16, 16)), "zernike", 4)
            assert f.npartitions == 20
            got = f.compute()
            s = np.random.default_rng(3).standard_normal(8000)
            y = fmd.gaussian_filter1d(da.from_array(s, chunks=500), 25.0)
            assert y.npartitions == 16
            y = y.compute()
    finally:
        torch.set_num_threads(threads)
    after = fmd.plan_builds()
    assert after.get("features", 0) - before.get("features", 0) == 1
    assert after.get("gaussian_filter", 0) - before.get("gaussian_filter", 0) == 1
    assert len(built) == 1  # the disk plan itself: one construction for 20 chunks
    np.testing.assert_allclose(got, features_in_memory(x, family="zernike", orders=4).matrix,
                               rtol=1e-12, atol=1e-14)
    assert float(np.max(np.abs(y - GaussianFilter(25.0)(s)))) < 1e-12


def test_local_cluster_refuses_oversubscription():
    cores = fmd._workers.available_cores()
    with pytest.raises(ValueError, match="torch_threads"):
        fmd.local_cluster(n_workers=1, threads_per_worker=1, torch_threads=cores + 1)
    with pytest.raises(TypeError, match="threads_per_worker"):
        fmd.local_cluster(threads_per_worker=1.0)


def _faults_of_a_reused_buffer() -> int:
    """Minor page faults of filling four 1 MiB buffers the second time (the first four freed;
    1 MiB, so that no transparent huge page hides the faults), the least of five tries."""
    import resource

    def refill() -> int:
        [np.ones(1 << 17) for _ in range(4)]
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        [np.ones(1 << 17) for _ in range(4)]
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    return min(refill() for _ in range(5))


def test_workers_keep_freed_buffers_for_the_next_task(process_client):
    import os
    import platform

    from fastmoments.dask import memory

    # local_cluster leaves this process's allocator settings alone
    assert all(os.environ.get(k) != v for k, v in fmd.REUSE_MEMORY_ENV.items())
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("the allocator settings are glibc's")
    assert all(process_client.run(memory.applied).values())
    # 4 x 256 pages of 4 KiB when the buffers are mapped afresh (Dask's default settings);
    # the least of five refills, so that a worker thread's own faults cannot add to it
    faults = process_client.run(_faults_of_a_reused_buffer)
    assert all(f < 256 for f in faults.values()), faults


# --------------------------------------------------------------------------- clusters that cannot
# run the job fail at once, with the reason

def test_workers_are_checked_before_submitting(tmp_path):
    from fastmoments.collections import check_workers, library_identity, open_images, run_features

    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1,
                                  **CLUSTER) as cluster, distributed.Client(cluster) as client:
        found = check_workers(client)
        assert [info["version"] for info in found.values()] == [library_identity()["version"]]
        with pytest.raises(ValueError, match=r"workers cannot run this job: worker .* cannot "
                                             r"import fastmoments_missing_extra .*pip install"):
            check_workers(client, needed=("fastmoments", "fastmoments_missing_extra"))
        with pytest.raises(ValueError, match=r"worker .* runs fastmoments .*, this process "
                                             r"9\.9\.9"):
            check_workers(client, expected={"version": "9.9.9", "commit": None})
        # and run_features asks before it submits anything
        np.save(tmp_path / "s.npy", np.zeros((4, 8, 8), np.uint8))
        rep = run_features(open_images(tmp_path / "s.npy"), tmp_path / "o.zarr", orders=2,
                           progress=False, client=client)
        assert rep.computed == 1


def test_waiting_for_workers_times_out_with_a_message(tmp_path):
    from fastmoments.collections import open_images, run_features

    np.save(tmp_path / "s.npy", np.zeros((4, 8, 8), np.uint8))
    with distributed.LocalCluster(n_workers=0, processes=False, **CLUSTER) as cluster, \
            distributed.Client(cluster) as client:
        with pytest.raises(ValueError, match=r"0 of 1 workers joined within 0\.01 s "
                                             r"\(--worker-timeout\)"):
            run_features(open_images(tmp_path / "s.npy"), tmp_path / "o.zarr", orders=2,
                         progress=False, client=client, worker_timeout=0.01)
        from fastmoments.cli.cmd_features import _client

        with pytest.raises(ValueError, match=r"0 of 3 workers joined within 0\.01 s"):
            _client(cluster.scheduler_address, 3, 0.01)


def test_the_worker_probe_runs_where_fastmoments_is_missing():
    """The probe travels by value: a worker without fastmoments can run it and say so."""
    import subprocess
    import sys

    import cloudpickle

    from fastmoments._collection_cluster import NEEDED, _probe

    blob = cloudpickle.dumps(_probe())
    code = ("import pickle, sys; sys.modules['fastmoments'] = None; "
            f"f = pickle.loads(sys.stdin.buffer.read()); print(f({NEEDED!r})['missing'][0])")
    proc = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True,
                          check=True)
    assert proc.stdout.decode().startswith("fastmoments (ModuleNotFoundError")
