"""Checks of a Dask cluster before :mod:`fastmoments.collections` submits work to it.

A worker that cannot import fastmoments (or its Dask extra) dies on its first task and the
scheduler waits for another, so a job on such a cluster would wait forever; a worker with
another version computes values that differ in the last digits, silently. Both are checked
before anything is submitted, with a probe that needs nothing but the standard library on the
worker: it is sent by value (cloudpickle pickles functions of a module that is not importable
by value), so it runs even where fastmoments is missing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_workers", "wait_for_workers"]

#: What every worker must import for the tasks of ``fastmoments features``.
NEEDED = ("fastmoments", "fastmoments.collections", "fastmoments.dask", "torch", "zarr")

_PROBE_SOURCE = '''
def probe(needed):
    import importlib
    out = {"missing": []}
    for name in needed:
        try:
            importlib.import_module(name)
        except Exception as exc:
            out["missing"].append(f"{name} ({type(exc).__name__}: {exc})")
    try:
        from fastmoments._collection_outputs import library_identity
        out.update(library_identity())
    except Exception:
        try:
            out["version"] = importlib.import_module("fastmoments").__version__
        except Exception:
            out["version"] = None
    return out
'''


def _probe() -> Any:
    namespace: dict[str, Any] = {"__name__": "fastmoments_worker_probe"}
    exec(_PROBE_SOURCE, namespace)
    return namespace["probe"]


def wait_for_workers(client: Any, n: int, timeout: float) -> None:
    """Wait until ``n`` workers have joined, at most ``timeout`` seconds.

    Raises
    ------
    ValueError
        Saying how many of ``n`` joined in that time (and what to check).
    """
    try:
        client.wait_for_workers(n, timeout=timeout)
    except TimeoutError:
        joined = len(client.scheduler_info().get("workers", {}))
        raise ValueError(
            f"--scheduler {client.scheduler.address!r}: {joined} of {n} workers joined within "
            f"{timeout:g} s (--worker-timeout); start more workers, ask for fewer with "
            "--workers, or give them longer") from None


def check_workers(client: Any, *, timeout: float = 60.0, needed: tuple[str, ...] = NEEDED,
                  expected: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Ask every worker of ``client`` for its fastmoments version and the modules the tasks
    need; refuse a cluster that cannot run the job or runs another version.

    Parameters
    ----------
    client : distributed.Client
    timeout : float
        Seconds to wait for a first worker when the cluster has none.
    needed : tuple of str
        The modules every worker must import (default :data:`NEEDED`).
    expected : dict, optional
        The ``{"version", "commit"}`` the workers must run (default: this process's,
        :func:`fastmoments.collections.library_identity`).

    Returns
    -------
    dict
        ``{worker address: {"version", "commit", "missing"}}``.

    Raises
    ------
    ValueError
        Naming the workers that lack fastmoments or a module it needs, or run another version
        or git commit than this process, or when no worker joins within ``timeout``.
    """
    from ._collection_outputs import library_identity

    if not client.scheduler_info().get("workers"):
        wait_for_workers(client, 1, timeout)
    found = client.run(_probe(), tuple(needed))
    here = library_identity() if expected is None else expected
    problems = []
    for address, info in sorted(found.items()):
        if info.get("missing"):
            problems.append(f"worker {address} cannot import {', '.join(info['missing'])}")
        elif info.get("version") != here["version"] or (
                info.get("commit") and here["commit"] and info["commit"] != here["commit"]):
            problems.append(f"worker {address} runs fastmoments {info.get('version')}"
                            + (f" (commit {str(info['commit'])[:12]})" if info.get("commit")
                               else "") + f", this process {here['version']}"
                            + (f" (commit {here['commit'][:12]})" if here["commit"] else ""))
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise ValueError("the Dask workers cannot run this job: " + "; ".join(problems[:3])
                         + more + "; install the same fastmoments with its dask extra "
                         "(pip install 'fastmoments[dask]') on every worker")
    return found
