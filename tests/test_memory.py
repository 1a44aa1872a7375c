"""Memory budgets respect the process's limits (RLIMIT_AS/RLIMIT_DATA, cgroup v1 and v2) and
refuse bad budgets by name."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

from fastmoments import _memory
from fastmoments._memory import (
    cgroup_headroom,
    check_memory_budget,
    cpu_memory_limits,
    memory_budget,
    rlimit_headroom,
)

GiB = 2**30
MiB = 2**20
CPU = torch.device("cpu")


def _reader(files):
    return lambda path: files.get(path)


def test_cgroup_v2_limit_minus_current_with_reclaimable_cache():
    files = {
        "/proc/self/cgroup": "0::/user.slice/job.scope\n",
        "/fs/user.slice/job.scope/memory.max": f"{4 * GiB}\n",
        "/fs/user.slice/job.scope/memory.high": "max\n",
        "/fs/user.slice/job.scope/memory.current": f"{3 * GiB}\n",
        "/fs/user.slice/job.scope/memory.stat": f"anon 123\ninactive_file {GiB}\nfile 9\n",
    }
    assert cgroup_headroom("/proc/self/cgroup", "/fs", _reader(files)) == 2 * GiB


def test_cgroup_v2_an_ancestor_with_less_room_wins():
    files = {
        "/p": "0::/a/b\n",
        "/fs/a/b/memory.max": f"{8 * GiB}\n", "/fs/a/b/memory.current": f"{GiB}\n",
        "/fs/a/memory.max": f"{2 * GiB}\n", "/fs/a/memory.current": f"{1536 * MiB}\n",
        "/fs/memory.max": "max\n",
    }
    assert cgroup_headroom("/p", "/fs", _reader(files)) == 512 * MiB
    # memory.high counts as a limit too
    files["/fs/a/b/memory.high"] = f"{GiB + 100 * MiB}\n"
    assert cgroup_headroom("/p", "/fs", _reader(files)) == 100 * MiB


def test_cgroup_v2_no_limit_and_usage_above_limit():
    files = {"/p": "0::/\n", "/fs/memory.max": "max\n", "/fs/memory.current": "5\n"}
    assert cgroup_headroom("/p", "/fs", _reader(files)) is None
    files["/fs/memory.max"] = f"{GiB}\n"
    files["/fs/memory.current"] = f"{2 * GiB}\n"
    assert cgroup_headroom("/p", "/fs", _reader(files)) == 0
    assert cgroup_headroom("/missing", "/fs", _reader(files)) is None


def test_cgroup_v1_memory_controller_and_container_view():
    unlimited = "9223372036854771712\n"
    files = {
        "/p": ("12:pids:/x\n4:memory:/docker/abc\n1:name=systemd:/x\n0::/\n"),
        # the container sees its own cgroup at the mount root: /docker/abc does not exist
        "/fs/memory/memory.limit_in_bytes": f"{3 * GiB}\n",
        "/fs/memory/memory.usage_in_bytes": f"{2 * GiB}\n",
        "/fs/memory/memory.stat": f"cache 1\ntotal_inactive_file {512 * MiB}\n",
    }
    assert cgroup_headroom("/p", "/fs", _reader(files)) == GiB + 512 * MiB
    files["/fs/memory/memory.limit_in_bytes"] = unlimited
    assert cgroup_headroom("/p", "/fs", _reader(files)) is None
    # combined controllers on one hierarchy ("cpu,memory") and a real path
    files2 = {"/p": "3:cpu,memory:/slurm/job_7\n",
              "/fs/memory/slurm/job_7/memory.limit_in_bytes": f"{GiB}\n",
              "/fs/memory/slurm/job_7/memory.usage_in_bytes": f"{256 * MiB}\n"}
    assert cgroup_headroom("/p", "/fs", _reader(files2)) == 768 * MiB


def test_cgroup_on_real_files(tmp_path):
    (tmp_path / "cg").write_text("0::/job\n")
    job = tmp_path / "fs" / "job"
    job.mkdir(parents=True)
    (job / "memory.max").write_text(f"{GiB}\n")
    (job / "memory.current").write_text(f"{GiB // 4}\n")
    assert cgroup_headroom(str(tmp_path / "cg"), str(tmp_path / "fs")) == 3 * GiB // 4


def test_rlimit_headroom():
    assert rlimit_headroom(4 * GiB, GiB) == 3 * GiB
    assert rlimit_headroom(GiB, 2 * GiB) == 0
    assert rlimit_headroom(None, GiB) is None
    assert rlimit_headroom(GiB, None) is None


def test_cpu_memory_limits_takes_every_source():
    files = {
        "/mi": "MemTotal: 100 kB\nMemAvailable:   16777216 kB\n",
        "/st": "Name: python\nVmSize:\t 2097152 kB\nVmData:\t 1048576 kB\n",
        "/cg": "0::/j\n", "/fs/j/memory.max": f"{5 * GiB}\n", "/fs/j/memory.current": "0\n",
    }
    lim = cpu_memory_limits(meminfo="/mi", status="/st", proc_cgroup="/cg", cgroup_root="/fs",
                            rlimits={"RLIMIT_AS": 6 * GiB, "RLIMIT_DATA": 4 * GiB},
                            read=_reader(files))
    assert lim == {"MemAvailable": 16 * GiB, "RLIMIT_AS": 4 * GiB, "RLIMIT_DATA": 3 * GiB,
                   "cgroup": 5 * GiB}
    lim = cpu_memory_limits(meminfo="/mi", status="/st", proc_cgroup="/none",
                            rlimits={"RLIMIT_AS": None, "RLIMIT_DATA": None},
                            read=_reader(files))
    assert lim == {"MemAvailable": 16 * GiB}


def test_default_budget_follows_the_tightest_limit(monkeypatch):
    monkeypatch.delenv("FASTMOMENTS_MEMORY_BUDGET", raising=False)
    monkeypatch.setattr(_memory, "_CPU_FREE_CACHE", {})
    monkeypatch.setattr(_memory, "cpu_memory_limits",
                        lambda: {"MemAvailable": 64 * GiB, "cgroup": GiB})
    assert memory_budget(CPU) == int(0.4 * GiB)
    assert memory_budget(CPU, 0.5) == GiB // 2
    assert memory_budget(CPU, 3 * GiB) == 3 * GiB  # an explicit byte budget is the user's word
    monkeypatch.setattr(_memory, "_CPU_FREE_CACHE", {})
    monkeypatch.setattr(_memory, "cpu_memory_limits", lambda: {"MemAvailable": 64 * GiB})
    assert memory_budget(CPU) == 8 * GiB  # the CPU cap


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 0, 0.0, -5, -1e9])
def test_bad_budget_values(bad):
    with pytest.raises(ValueError, match="memory_budget must be"):
        memory_budget(CPU, bad)


@pytest.mark.parametrize("bad", [True, False, "1e9", b"1", [1e9], 1j])
def test_bad_budget_types(bad):
    with pytest.raises(TypeError, match="memory_budget must be a real number"):
        memory_budget(CPU, bad)
    with pytest.raises(TypeError, match="memory_budget must be a real number"):
        check_memory_budget(bad)


@pytest.mark.parametrize("env", ["lots", "nan", "-1", "0"])
def test_bad_budget_in_the_environment(monkeypatch, env):
    monkeypatch.setenv("FASTMOMENTS_MEMORY_BUDGET", env)
    with pytest.raises(ValueError, match="FASTMOMENTS_MEMORY_BUDGET must be"):
        memory_budget(CPU)


def test_budget_from_the_environment(monkeypatch):
    monkeypatch.setenv("FASTMOMENTS_MEMORY_BUDGET", "123456789")
    assert memory_budget(CPU) == 123456789


def test_rlimit_as_in_a_subprocess_lowers_the_budget():
    code = textwrap.dedent("""
        import resource, torch
        from fastmoments import _memory
        cpu = torch.device("cpu")
        free = _memory.cpu_memory_limits()["MemAvailable"]
        before = _memory.memory_budget(cpu)
        with open("/proc/self/status") as fh:
            vm = next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmSize:"))
        room = 512 * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (vm + room, resource.RLIM_INFINITY))
        _memory._CPU_FREE_CACHE.clear()
        lim = _memory.cpu_memory_limits()
        after = _memory.memory_budget(cpu)
        print(before, after, lim["RLIMIT_AS"], free)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ,
                                           "FASTMOMENTS_MEMORY_BUDGET": ""})
    assert res.returncode == 0, res.stderr
    before, after, headroom, free = map(int, res.stdout.split())
    assert 0 < headroom <= 512 * 2**20
    assert after <= max(0.4 * headroom, 64 * 2**20)
    if free > 4 * GiB:  # the machine has room: the limit is what binds
        assert after < before


@pytest.mark.parametrize("case", ["signal", "volume"])
def test_a_view_whose_copy_cannot_fit_fails_the_memory_check(monkeypatch, case):
    """An expanded view (4 bytes of storage seen as 4 GiB) is refused before the copy is
    allocated, saying what the copy needs, when that is more than the free memory."""
    import fastmoments as fm
    from fastmoments import _memory

    monkeypatch.setattr(_memory, "free_memory", lambda device: 1 << 30)
    if case == "signal":
        view = torch.zeros(1).expand(10**9)
        call = lambda: fm.gaussian_filter1d(view, 4.0)  # noqa: E731
    else:
        view = torch.zeros(1).expand(1024, 1024, 1024)
        call = lambda: fm.legendre_moments(view, 4)  # noqa: E731
    with pytest.raises(MemoryError, match=r"contiguous copy, which needs .*GiB"):
        call()
    assert view.stride() == (0,) * view.ndim  # the input is left as it was
