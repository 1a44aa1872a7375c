"""The recording behind replayed launches (fastmoments._launches), on the CPU.

What can be checked without a GPU: which torch operations make a call unfit for a replay,
the launcher's argument order, and the flag handed to the recorded input only. The replays
themselves are checked on CUDA in ``tests/test_signal_graphs.py``.
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("triton")

from fastmoments import _launches
from fastmoments._launches import Recording, recorded_flag, recording


def _recording():
    x = torch.arange(12.0)
    return x, Recording(x, torch.ones((), dtype=torch.uint8))


def test_allocations_and_views_are_allowed_other_work_is_not():
    x, rec = _recording()
    with rec:
        a = torch.empty(5)
        b = torch.empty_like(x)
        x.view(3, 4).permute(1, 0)
        x[2:7]
        torch.view_as_real(torch.empty(3, dtype=torch.complex64))
    assert rec.refused == []
    assert [t.shape for t in rec.allocations] == [a.shape, b.shape, torch.Size([3])]
    with Recording(x, rec.flag) as rec2:
        x + 1
        torch.ones(3)
        x.clone()
    assert len(rec2.refused) == 3
    assert any(name.startswith("add") for name in rec2.refused)


def test_a_call_without_launches_gives_no_program():
    _, rec = _recording()
    with rec:
        out = torch.empty(4)
    assert rec.program(out) is None
    assert "no launch" in rec.refused


def test_only_one_recording_per_thread_and_it_ends():
    x, rec = _recording()
    assert recording() is None
    with rec:
        assert recording() is rec
        with pytest.raises(RuntimeError, match="already active"):
            Recording(x, rec.flag).__enter__()
    assert recording() is None


def test_the_flag_goes_to_the_whole_recorded_input_only():
    x, rec = _recording()
    assert recorded_flag(x) is None  # no recording
    with rec:
        assert recorded_flag(x) is rec.flag
        assert recorded_flag(x[1:]) is None
        assert recorded_flag(x[:6]) is None
        assert recorded_flag(torch.zeros(12)) is None


def test_an_early_verdict_is_noted_for_the_whole_recorded_input_only():
    """:func:`_launches.signal` marks the launch just recorded as the one that writes the
    NaN/inf verdict early, when it is the recording's flag on its whole input."""
    x, rec = _recording()
    _launches.signal(rec.flag, x)  # no recording: nothing to note
    with rec:
        _launches.signal(rec.flag, x)
        assert rec.signal_at is None  # no launch recorded yet
        rec.launches.append(("kernel", (1, 1, 1), [x, rec.flag]))
        _launches.signal(rec.flag, x[1:])
        _launches.signal(torch.ones((), dtype=torch.uint8), x)
        assert rec.signal_at is None
        _launches.signal(rec.flag, x)
        assert rec.signal_at == 0


def test_launcher_values_follow_the_kernel_signature():
    import triton
    import triton.language as tl

    @triton.jit
    def kern(a_ptr, n, scale, B: tl.constexpr, C: tl.constexpr = 4):
        pass

    t = torch.zeros(3)
    vals = _launches._launcher_values(kern, (t, 7), dict(scale=0.5, B=16, num_warps=2))
    assert vals[0] is t and vals[1:] == [7, 0.5, 16, 4]


def test_span_of_strided_views():
    assert _launches._span((4, 3), (3, 1)) == 12
    assert _launches._span((3,), (2,)) == 5
    assert _launches._span((0, 3), (3, 1)) == 0


def test_fast_launches_are_kept_by_an_active_recording(monkeypatch):
    """Box products launch through ``FastLaunch``, which skips Triton's launch path (and its
    hooks) once a kernel is compiled: while a recording is active it takes Triton's path and
    hands the launch to the recording, so a recorded job misses none of its launches."""
    import triton
    import triton.language as tl

    from fastmoments._triton import FastLaunch

    @triton.jit
    def kern(a_ptr, n, B: tl.constexpr):
        pass

    compiled = object()  # what Triton's launch returns: the compiled kernel
    calls = []

    class Fn:  # the JIT function, its launch replaced
        fn, arg_names = kern.fn, kern.arg_names

        def __getitem__(self, grid):
            def run(*args, **kwargs):
                calls.append((grid, args, kwargs))
                return compiled
            return run

    fast = FastLaunch(Fn())
    x, rec = _recording()
    seen = []
    monkeypatch.setattr(rec, "add", lambda *a: seen.append(a))
    with rec:
        fast((5,), x, 3, B=8, num_warps=2)
    assert calls == [((5,), (x, 3), {"B": 8, "num_warps": 2})]
    (_fn, kernel, grid, args, kwargs), = seen
    assert kernel is compiled and grid == (5,) and args == (x, 3) and kwargs["B"] == 8
    assert recording() is None


def test_parameter_blocks_follow_the_launchers_c_types():
    """The driver launches' parameter block (:func:`fastmoments._triton.parameter_block`):
    one cell per non-constexpr parameter in the C type Triton's launcher passes (pointers as
    64-bit addresses, floats by their float32 bits), the two null scratch pointers last, and
    nothing for what the block does not cover."""
    import ctypes
    import struct

    from fastmoments._triton import parameter_block

    sig = ["*fp32", "i32", "constexpr", "fp32", "i64", "*u8", "i1", "u64", "fp64"]
    vals = [0x7F0012345600, -7, 5, 0.1, -(2**40), None, True, 2**63, 0.25]
    cells, storage = parameter_block(sig, vals)
    assert cells[2] is None and [c for c in cells if c is not None] == storage[:-2]
    raw = b"".join(ctypes.string_at(ctypes.addressof(c), ctypes.sizeof(c)) for c in storage)
    assert raw == struct.pack("<QifqQbQdQQ", 0x7F0012345600, -7, 0.1, -(2**40), 0, 1, 2**63,
                              0.25, 0, 0)
    cells[0].value = 99  # a replay rewrites the pointers in place
    assert storage[0].value == 99
    assert parameter_block(sig, vals[:-1]) is None  # not one value per parameter
    assert parameter_block(["nvTmaDesc"], [0]) is None  # tensor descriptors: Triton's launcher
    assert parameter_block([("i32", "i32")], [(1, 2)]) is None  # tuples
    assert parameter_block(["*fp32"], [torch.zeros(1)]) is None  # a tensor, not an address
    import numpy as np

    assert parameter_block(["fp32"], [np.float32(1.0)]) is None  # NumPy scalars
