"""local_cluster switches Dask's worker profiler off unless asked (it samples every task
thread every 10 ms)."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")

import fastmoments.dask as fmd
from fastmoments.dask._workers import PROFILE_ENV


def test_local_cluster_profile_option(monkeypatch):
    import distributed

    seen = {}

    class Fake:
        def __init__(self, **kw):
            seen.update(kw)

    monkeypatch.setattr(distributed, "LocalCluster", Fake)
    fmd.local_cluster(n_workers=1)
    assert seen["env"][PROFILE_ENV] == "False"
    seen.clear()
    fmd.local_cluster(n_workers=1, profile=True)
    assert PROFILE_ENV not in seen["env"]
    seen.clear()
    fmd.local_cluster(n_workers=1, env={PROFILE_ENV: "True"})
    assert seen["env"][PROFILE_ENV] == "True"  # the caller's setting wins
    with pytest.raises(TypeError, match="profile"):
        fmd.local_cluster(n_workers=1, profile="yes")
