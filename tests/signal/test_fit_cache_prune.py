"""The size cap of the persistent fit cache (signal/fit_cache.py): ``fit_cache.MAX_SIZE``,
least-recently-used pruning, files that are not the cache's, temporaries of live writers, and
readers and writers (threads and processes) racing the pruning."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from fastmoments.signal import fit_cache

PAYLOAD = 1000  # float64 values per stored array: 8000 bytes, two 4 KiB blocks or so


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTMOMENTS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / f"fits-v{fit_cache.FORMAT_VERSION}"


def _big():
    calls = []

    @fit_cache.persistent()
    def f(a: float) -> tuple[float, np.ndarray]:
        calls.append(a)
        return a, np.full(PAYLOAD, a)

    return f, calls


def _file_size(folder: Path) -> int:
    """Bytes on disk of one stored value of :func:`_big` (as the cache counts them; they all
    take the same)."""
    sizes = set()
    for path in folder.glob("*.fit"):
        st = path.stat()
        sizes.add(max(st.st_size, 512 * getattr(st, "st_blocks", 0)))
    (size,) = sizes
    return size


def test_default_size():
    assert fit_cache.MAX_SIZE == 256 << 20


@pytest.mark.parametrize("size", [0, -5, 1.5, "64M", True, None])
def test_a_bad_size_is_an_error_naming_the_constant(folder, monkeypatch, size):
    monkeypatch.setattr(fit_cache, "MAX_SIZE", size)
    f, calls = _big()
    with pytest.raises(ValueError, match=r"fit_cache\.MAX_SIZE must be"):
        f(1.0)  # before any work: the setting is wrong whatever the call
    assert calls == []
    with pytest.raises(ValueError, match=r"fit_cache\.MAX_SIZE must be"):
        fit_cache.prune()


def test_prune_checks_its_limit(folder):
    with pytest.raises(TypeError, match="limit"):
        fit_cache.prune(True)
    with pytest.raises(TypeError, match="limit"):
        fit_cache.prune(1.5)
    with pytest.raises(ValueError, match="limit"):
        fit_cache.prune(-1)


def test_the_cap_holds_after_every_write(folder, monkeypatch):
    f, calls = _big()
    f(0.0)
    one = _file_size(folder)
    cap = 6 * one + one // 2
    monkeypatch.setattr(fit_cache, "MAX_SIZE", cap)
    for i in range(1, 30):
        assert f(float(i))[0] == float(i)
        files, size = fit_cache.usage()
        assert size <= cap, (i, files, size)
        assert files >= 1
    assert len(calls) == 30
    # pruned to three quarters of the cap, then filled again: between 4 and 6 files remain
    assert 4 <= fit_cache.usage()[0] <= 6
    assert f(29.0)[0] == 29.0 and len(calls) == 30  # the newest is still there


def test_least_recently_used_files_go_first(folder):
    f, calls = _big()
    for i in range(8):
        f(float(i))
    paths = {}
    now = time.time()
    for p in folder.glob("*.fit"):
        value = float(np.frombuffer(p.read_bytes()[-8 * PAYLOAD:], "<f8")[0])
        paths[value] = p
        os.utime(p, (now - 1000 + value, now - 1000 + value))  # written in order 0, 1, ... 7
    assert sorted(paths) == [float(i) for i in range(8)]
    f(1.0)  # read: the oldest but one becomes the most recently used
    assert len(calls) == 8
    one = _file_size(folder)
    freed = fit_cache.prune(3 * one)
    assert freed == 5 * one
    left = sorted(v for v, p in paths.items() if p.exists())
    assert left == [1.0, 6.0, 7.0]
    assert f(1.0)[0] == 1.0 and f(7.0)[0] == 7.0 and len(calls) == 8
    assert f(0.0)[0] == 0.0 and len(calls) == 9  # pruned: recomputed


def test_only_the_caches_own_files_are_pruned(folder, tmp_path):
    f, _ = _big()
    f(1.0)
    base = folder.parent
    old_format = base / "fits-v0"
    old_format.mkdir()
    (old_format / "0123.fit").write_bytes(b"x" * 5000)
    (base / "notes.txt").write_text("mine")
    (base / "other").mkdir()
    (base / "other" / "a.fit").write_bytes(b"not the cache's")
    (folder / "readme.md").write_text("mine too")
    files, size = fit_cache.usage()
    assert files == 2 and size >= 5000 + _file_size(folder)
    assert fit_cache.prune(0) >= size
    assert fit_cache.usage() == (0, 0)
    assert (base / "notes.txt").read_text() == "mine"
    assert (base / "other" / "a.fit").exists() and (folder / "readme.md").exists()


def test_temporaries_of_live_writers_stay_and_dead_ones_go(folder):
    f, _ = _big()
    f(1.0)
    live = folder / ".tmp-live.fit"
    dead = folder / ".tmp-dead.fit"
    live.write_bytes(b"being written")
    dead.write_bytes(b"left by a crash")
    old = time.time() - 2 * fit_cache.STALE_TEMPORARY
    os.utime(dead, (old, old))
    fit_cache.prune(0)
    assert live.exists() and not dead.exists()
    assert [p.name for p in folder.glob("*.fit")] == [live.name]


@pytest.mark.skipif(os.name == "nt", reason="POSIX keeps a removed file readable while open")
def test_a_file_pruned_while_it_is_read_is_read_whole(folder):
    f, _ = _big()
    f(3.0)
    (path,) = folder.glob("*.fit")
    want = path.read_bytes()
    with open(path, "rb") as fh:
        head = fh.read(100)
        assert fit_cache.prune(0) > 0 and not path.exists()
        assert head + fh.read() == want


def test_pruning_while_threads_read_and_write(folder, monkeypatch):
    f, _ = _big()
    f(0.0)
    monkeypatch.setattr(fit_cache, "MAX_SIZE", 4 * _file_size(folder))
    errors = []
    stop = threading.Event()

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(60):
                a = float(rng.integers(12))
                got = f(a)
                if got[0] != a or not np.array_equal(got[1], np.full(PAYLOAD, a)):
                    errors.append((a, got[0]))
        except Exception as exc:  # pragma: no cover - the failure being tested for
            errors.append(exc)

    def pruner():
        while not stop.is_set():
            fit_cache.prune(0)

    p = threading.Thread(target=pruner)
    p.start()
    workers = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    stop.set()
    p.join()
    assert errors == []


WORKER = """
import importlib.util, sys
import numpy as np
spec = importlib.util.spec_from_file_location("fit_cache", {path!r})
fit_cache = importlib.util.module_from_spec(spec)
sys.modules["fit_cache"] = fit_cache
spec.loader.exec_module(fit_cache)
fit_cache.MAX_SIZE = int(sys.argv[2])

@fit_cache.persistent()
def f(a):
    return a, np.full({payload}, a)

rng = np.random.default_rng(int(sys.argv[1]))
for _ in range(40):
    a = float(rng.integers(25))
    got = f(a)
    assert got[0] == a and np.array_equal(got[1], np.full({payload}, a)), a
print("ok")
"""


def test_processes_writing_at_once(folder, tmp_path, monkeypatch):
    f, _ = _big()
    f(0.0)
    one = _file_size(folder)
    cap = 8 * one
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent(WORKER.format(path=fit_cache.__file__, payload=PAYLOAD)))
    procs = [subprocess.Popen([sys.executable, str(script), str(seed), str(cap)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for seed in range(3)]
    for p in procs:
        out, err = p.communicate()
        assert p.returncode == 0, err
        assert out.strip() == "ok"
    # each process keeps the cap for what it sees; the others' writes since their last check
    # may still be there (a soft cap), never more than a cap's worth per process
    files, size = fit_cache.usage()
    assert size <= 3 * cap, (files, size)
    assert not list(folder.glob(".tmp-*"))
