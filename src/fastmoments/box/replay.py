"""Repeated box jobs on a GPU replayed as their recorded launches.

A large box job is a few dozen Triton launches: 512^3 at order 500 with parity is a fold,
six products and an interleave forward, a split, six products and an unfold back, 4.2 ms
of kernels on an H100. The Python that decides and launches them (the engine's
blocks, the operands' layouts, Triton's argument handling) took as long as the kernels,
2-3.6 ms per direction on the H100 machines
(``benchmarks/box_tensor_cores.py`` times the job), so the GPU waited for the host.

Those decisions depend only on the plan, on the input's shape, strides, dtype, device and
16-byte alignment, and on the scales the engine derives from the input's largest magnitude
(:func:`scale_key`). So a job is recorded once per such key and then replayed:

* the recording (:class:`fastmoments._launches.Recording`) runs the eager job and keeps
  every launch (compiled kernel, grid, arguments) and every allocation; a job is replayable
  when it made no torch operation but allocations and views (no copy, no host read), and
  every launch was recorded;
* :class:`JobProgram` maps each pointer argument, and each host-side TMA descriptor, to the
  input, to one of the job's allocations (*slots*) or to a tensor kept from the recording
  (the plan's tables and factors, which kernels only read);
* a replay allocates each slot just before its first launch and lets it go after its last
  one (the eager job's peak memory, from torch's caching allocator on the current stream),
  launches each kernel through its compiled launcher on the new addresses, and returns the
  result as a view of its slot.

A replay produces the same bits as the eager job: the same kernels with the same scalar
arguments on the same data. The key needs the input's largest magnitude: from the input
check before the work (NaN or infinity, a host read), or, for a call run on the scales of
the last calls, from the job itself, which finds it on the way and is checked after the
work (:meth:`fastmoments.box.JacobiTransform.forward`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple

import torch

from .._launches import Recording
from .._triton import (
    HAVE_TRITON,
    TensorDescriptor,
    _hooked,
    launch_compiled,
    on_tensor_device,
    plain_launcher,
)
from .triton_gemm import scale_exponent

__all__ = ["JobProgram", "Refused", "enabled", "replayed", "scale_key"]

#: Recordings tried per key before the key runs eagerly for good (the first call of a plan
#: fills its caches with torch operations, which a recording refuses).
TRIES = 3

#: Programs kept per plan (the oldest is dropped first).
MAX_PROGRAMS = 16


def enabled(t: torch.Tensor) -> bool:
    """Whether a job on ``t`` may be replayed: a CUDA tensor with Triton compiled (not the
    interpreter), no gradient to record, no Triton launch hooks (a profiler sees every
    launch), and ``FASTMOMENTS_BOX_REPLAY`` not ``0``."""
    if not (HAVE_TRITON and t.is_cuda) or os.environ.get("FASTMOMENTS_BOX_REPLAY") == "0":
        return False
    if os.environ.get("TRITON_INTERPRET", "") == "1":
        return False
    if torch.is_grad_enabled() and t.requires_grad:
        return False
    return not _hooked()


def scale_key(top: float) -> tuple[int | None, ...]:
    """What the engine derives from the largest magnitude ``top`` of its input: the
    exponents of the halves' scales for the input itself and for parts that sum 4 or 8
    samples (the parity folds of images and volumes), as
    :func:`~fastmoments.box.triton_gemm.scale_exponent` computes them."""
    return (scale_exponent(top), scale_exponent(top * 4.0), scale_exponent(top * 8.0))


class _Address(int):
    """A device address that also answers ``data_ptr()`` (what Triton's launcher asks of a
    TMA descriptor's base)."""

    def data_ptr(self) -> int:
        return int(self)


class _Descriptor:
    """A host-side TMA descriptor on a new address (the fields Triton's launcher reads)."""

    __slots__ = ("base", "block_shape", "padding", "shape", "strides")

    def __init__(self, base: int, like: Any) -> None:
        self.base = _Address(base)
        self.shape, self.strides = like.shape, like.strides
        self.block_shape, self.padding = like.block_shape, like.padding


_IN = -1


class JobProgram:
    """The launches of a recorded job, replayed on a new input (see the module notes).

    Build it with :meth:`build`; call it with an input of the recorded geometry.
    """

    def __init__(self, slots: list[tuple[int, torch.dtype]], steps: list[tuple],
                 results: tuple, many: bool, kept: list[Any], device: torch.device) -> None:
        self._slots = slots  # (elements, dtype) of each allocation
        self._steps = steps  # (kernel, grid, values, pointers, descriptors, new, done)
        # (slot, offset in elements, shape, strides) of each result (None for a None);
        # ``many``: the job returned them as a tuple, else the one result
        self._results, self._many = results, many
        self._kept = kept  # tables and factors the kernels read, kept alive
        self._device = device
        self._direct = all(plain_launcher(s[0]) for s in steps)

    @property
    def launches(self) -> int:
        """How many kernels a replay launches."""
        return len(self._steps)

    @classmethod
    def build(cls, rec: Recording, x: torch.Tensor, out: Any) -> JobProgram | None:
        """The program of the recorded job on ``x`` that returned ``out`` (a tensor, or a
        tuple of tensors and ``None``), or ``None`` (the reasons are appended to
        ``rec.refused``)."""
        rec.check_launches()
        outs = out if isinstance(out, tuple) else (out,)
        if not any(type(o) is torch.Tensor for o in outs) or any(
                o is not None and (type(o) is not torch.Tensor or o.device != x.device)
                for o in outs):
            rec.refused.append("the result is not tensors on the input's device")
        if rec.refused:
            return None
        x_lo = x.untyped_storage().data_ptr()
        x_hi = x_lo + x.untyped_storage().nbytes()
        ranges: list[tuple[int, int]] = []
        slots: list[tuple[int, torch.dtype]] = []
        for a in rec.allocations:
            st = a.untyped_storage()
            lo = st.data_ptr()
            if all(r[0] != lo for r in ranges):
                ranges.append((lo, lo + st.nbytes()))
                slots.append((st.nbytes() // a.element_size(), a.dtype))

        def where(p: int) -> tuple[int, int] | None:
            if x_lo <= p < x_hi:
                return _IN, p - x.data_ptr()
            for i, (lo, hi) in enumerate(ranges):
                if lo <= p < hi:
                    return i, p - lo
            return None

        kept: list[Any] = []
        steps = []
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for n, (kernel, grid, vals) in enumerate(rec.launches):
            vals = list(vals)
            ptrs, descs = [], []
            for i, v in enumerate(vals):
                if type(v) is torch.Tensor:
                    at = where(v.data_ptr())
                    if at is None:
                        kept.append(v)
                        vals[i] = v.data_ptr()
                    else:
                        ptrs.append((i, *at))
                        vals[i] = 0  # (the recorded tensor is not kept)
                elif TensorDescriptor is not None and type(v) is TensorDescriptor:
                    at = where(v.base.data_ptr())
                    if at is None:
                        kept.append(v.base)
                    else:
                        descs.append((i, *at, _Descriptor(0, v)))
                        vals[i] = None
                else:
                    continue
                if at is not None and at[0] != _IN:
                    first.setdefault(at[0], n)
                    last[at[0]] = n
            steps.append([kernel, grid, vals, tuple(ptrs), tuple(descs), (), ()])
        results = []
        for o in outs:
            res = None if o is None else where(o.data_ptr())
            if o is None:
                results.append(None)
                continue
            if res is None or res[0] == _IN:
                rec.refused.append("the result is not one of the job's allocations")
                return None
            slot, offset = res
            if slots[slot][1] != o.dtype or offset % o.element_size():
                rec.refused.append("the result is not a whole-element view of its allocation")
                return None
            first.setdefault(slot, 0)
            last[slot] = len(steps)  # never let go: it is a result
            results.append((slot, offset // o.element_size(), tuple(o.shape), tuple(o.stride())))
        for s, n in first.items():
            steps[n][5] += (s,)
        for s, n in last.items():
            if n < len(steps):
                steps[n][6] += (s,)
        return cls(slots, [tuple(s) for s in steps], tuple(results), isinstance(out, tuple),
                   kept, x.device)

    def __call__(self, x: torch.Tensor) -> Any:
        """Replay on ``x`` (the recorded shape, strides, dtype, device and alignment) on the
        current stream; returns the new result (or results, as the job did)."""
        dev = self._device
        stream = torch._C._cuda_getCurrentRawStream(dev.index) if dev.type == "cuda" else 0
        bufs: list[torch.Tensor | None] = [None] * len(self._slots)
        base = [0] * len(self._slots)
        x_ptr = x.data_ptr()
        direct = self._direct
        for kernel, grid, vals, ptrs, descs, new, done in self._steps:
            for s in new:
                n, dtype = self._slots[s]
                t = bufs[s] = torch.empty(n, dtype=dtype, device=dev)
                base[s] = t.data_ptr()
            if ptrs or descs:
                vals = vals.copy()
                for i, s, off in ptrs:
                    vals[i] = (x_ptr if s == _IN else base[s]) + off
                for i, s, off, like in descs:
                    vals[i] = _Descriptor((x_ptr if s == _IN else base[s]) + off, like)
            if direct:
                launch_compiled(kernel, grid, stream, vals)
            else:  # pragma: no cover - a launcher with scratch memory (not the box kernels)
                kernel.run(grid[0], grid[1], grid[2], stream, kernel.function,
                           kernel.packed_metadata, None, None, None, *vals)
            for s in done:
                bufs[s] = None
        outs = tuple(None if r is None else bufs[r[0]].as_strided(r[2], r[3], r[1])
                     for r in self._results)
        return outs if self._many else outs[0]


@on_tensor_device
def replayed(programs: dict, key: tuple, x: torch.Tensor, job: Callable[[], Any]) -> Any:
    """``job()`` (the eager job on ``x``), or its replay when ``programs`` holds one under
    ``key``; records a program for ``key`` while it has none (at most :data:`TRIES`
    times). ``key`` must hold everything the job's launches depend on besides the
    addresses of ``x`` (see the module notes). Recorded and replayed with the device of
    ``x`` current (:func:`~fastmoments._triton.on_tensor_device`)."""
    entry = programs.get(key)
    if isinstance(entry, JobProgram):
        return entry(x)
    tries = entry.tries if isinstance(entry, Refused) else 0
    if tries >= TRIES:
        return job()
    with Recording(x, None) as rec:
        out = job()
    prog = JobProgram.build(rec, x, out)
    if len(programs) >= MAX_PROGRAMS and key not in programs:
        programs.pop(next(iter(programs)))
    programs[key] = prog if prog is not None else Refused(tries + 1, tuple(rec.refused))
    return out


class Refused(NamedTuple):
    """A key whose recordings were refused: how many, and why the last one was (the torch
    operations it made, launches that went around it)."""

    tries: int
    reasons: tuple[str, ...]

