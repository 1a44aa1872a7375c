"""Repeated GPU calls replayed as recorded Triton launches, straight through Triton's launcher.

A one-signal Gaussian filter on an H100 is two Triton kernels of a few microseconds each. The
eager call spends hundreds of microseconds in Python around them (checks, the choice of the
method, Triton's argument binding and specialisation at every launch), and a replayed CUDA graph
(:mod:`fastmoments.signal.graphs`) still copies the input into its static buffer and the result
out of it: 10 and 13 µs of host time per call on the H100 machine
(a profile of those calls). When the whole call is Triton launches on
the input, on fresh allocations and on constant tables, those launches can be replayed on the
caller's own tensors instead:

* :class:`Recording` runs one eager call and keeps every launch made through :func:`launch`
  (the compiled kernel, its grid, its arguments in the launcher's order) and every tensor the
  call allocates, seen through a :class:`~torch.utils._python_dispatch.TorchDispatchMode`.
* The call is *replayable* when the dispatcher saw nothing but allocations and views (no torch
  kernel, no copy, no host read), when Triton's launch hook counted no launch that bypassed
  :func:`launch`, and when the result is one of the call's allocations.
* :class:`LaunchProgram` then maps each pointer argument to the input, the result, the NaN/inf
  flag or a tensor kept from the recording (tables, scratch), and a replay is one allocation of
  the result and one launcher call per kernel, on the integer pointers. With CuPy installed,
  each launch is instead made by the driver from a parameter block built once
  (:class:`~fastmoments._triton.DriverLaunch`), only the pointers rewritten.

Scratch tensors are reused from one replay to the next: replays of one program run on one
stream (the stream is part of the caller's key), so each replay's kernels are ordered after the
previous ones. A tensor that is neither the input, nor the flag, nor allocated by the call is
assumed to be constant (a plan's table): the recording keeps it alive, and a kernel must not
write into it.

The flag: :func:`recorded_flag` hands the call a flag byte that its fused kernels clear when
the input holds NaN or infinity (:func:`fastmoments.signal.triton_sft.fused_apply`); when no
kernel took it, the recording adds the one-pass kernel of :mod:`fastmoments._finite_kernel`.
In a replay that checks, the flag is a byte of pinned host memory, which the GPU writes through
unified addressing: the host sets it to 1, launches, waits for the stream, and reads it, with no
copy and no fill kernel. A kernel that writes its verdict before it ends (1 or 0 over the
previous value, :func:`signal`) lets the host preset another value and wait for that write
instead of the stream (:attr:`LaunchProgram.signals`).
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ._triton import (
    HAVE_TRITON,
    RECORDING,
    DriverLaunch,
    launch_compiled,
    libcuda,
    on_tensor_device,
    plain_launcher,
    recording,
)

__all__ = ["MAX_LAUNCHES", "LaunchProgram", "Recording", "host_flag", "launch", "recorded_flag",
           "recording", "signal"]

#: Longest call replayed launch by launch (a CUDA graph replays more launches for less).
MAX_LAUNCHES = 8

#: Allocations the recorded call may make (besides views, which do no device work).
_ALLOCATIONS = frozenset(("empty.memory_format", "empty_strided.default", "empty_like.default",
                          "new_empty.default", "new_empty_strided.default"))

_IN, _OUT, _FLAG = 0, 1, 2


@on_tensor_device
def launch(fn: Any, grid: tuple[int, ...], *args: Any, **kwargs: Any) -> Any:
    """``fn[grid](*args, **kwargs)`` for a Triton kernel ``fn``, kept by the active
    :class:`Recording` of this thread, if any. Returns what the launch returns (the compiled
    kernel; ``None`` under the interpreter). The launch goes to the device of the first
    tensor argument, current or not (:func:`~fastmoments._triton.on_tensor_device`)."""
    kernel = fn[grid](*args, **kwargs)
    rec = recording()
    if rec is not None:
        rec.add(fn, kernel, grid, args, kwargs)
    return kernel


def signal(flag: torch.Tensor, t: torch.Tensor) -> None:
    """Note that the launch just made writes its final NaN/inf verdict on the tensor ``t``
    into ``flag`` before its work is done (``fastmoments.signal.triton_sft``'s one-launch
    kernel writes it at its barrier). When ``flag`` is the active recording's flag and ``t``
    is the whole recorded input, the replays of a checking call then wait for that write
    instead of the whole stream (:attr:`LaunchProgram.signals`)."""
    rec = recording()
    if (rec is not None and flag is rec.flag and t.data_ptr() == rec.x.data_ptr()
            and t.numel() == rec.x.numel() and rec.launches):
        rec.signal_at = len(rec.launches) - 1


def recorded_flag(t: torch.Tensor) -> torch.Tensor | None:
    """The flag byte of the active recording when ``t`` is its whole input (a ``uint8``
    device tensor set to 1, for fused kernels to clear on NaN or infinity), else ``None``."""
    rec = recording()
    if rec is None or t.data_ptr() != rec.x.data_ptr() or t.numel() != rec.x.numel():
        return None
    return rec.flag


_SIGNATURES: dict[int, inspect.Signature] = {}


def _launcher_values(fn: Any, args: tuple, kwargs: dict) -> list[Any]:
    """The kernel's parameters in order, defaults filled in: what ``JITFunction.run`` hands
    its compiled kernel's launcher (launch options such as ``num_warps`` are not parameters)."""
    sig = _SIGNATURES.get(id(fn))
    if sig is None:
        sig = _SIGNATURES[id(fn)] = inspect.signature(fn.fn)
    names = fn.arg_names
    bound = sig.bind(*args, **{k: v for k, v in kwargs.items() if k in names})
    bound.apply_defaults()
    return [bound.arguments[name] for name in names]


class _Watch(TorchDispatchMode):
    """Sees every torch operation of the recorded call: keeps allocations, passes views,
    notes anything else (which makes the call not replayable)."""

    def __init__(self, rec: Recording) -> None:
        super().__init__()
        self.rec = rec

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = f"{func._schema.name.split('::')[-1]}.{func._overloadname}"
        if name in _ALLOCATIONS:
            self.rec.allocations.append(out)
        elif not func.is_view:
            self.rec.refused.append(name)
        return out


class Recording:
    """One eager call on the CUDA tensor ``x``, recorded (a context manager).

    Inside the ``with`` block, launches made through :func:`launch` (or through a
    :class:`~fastmoments._triton.FastLaunch`) are kept, the torch operations are watched,
    and :func:`recorded_flag` hands out ``flag`` (a device byte; ``None`` for a job that
    checks its input otherwise, :mod:`fastmoments.box.replay`). :meth:`program` then builds
    the :class:`LaunchProgram` of the call, or gives ``None`` with the reason in
    :attr:`refused`.
    """

    def __init__(self, x: torch.Tensor, flag: torch.Tensor | None) -> None:
        self.x, self.flag = x, flag
        self.launches: list[tuple[Any, tuple[int, int, int], list[Any]]] = []
        self.allocations: list[torch.Tensor] = []
        self.refused: list[str] = []
        #: The launch that writes the verdict into :attr:`flag` early (see :func:`signal`).
        self.signal_at: int | None = None
        self._hooked = 0
        self._thread = threading.get_ident()
        self._watch = _Watch(self)

    def add(self, fn: Any, kernel: Any, grid: tuple[int, ...], args: tuple,
            kwargs: dict) -> None:
        """Keep one launch (called by :func:`launch`)."""
        if kernel is None or not hasattr(kernel, "packed_metadata"):
            self.refused.append("launch without a compiled kernel")
            return
        g = tuple(int(v) for v in grid) + (1,) * (3 - len(grid))
        self.launches.append((kernel, g, _launcher_values(fn, args, kwargs)))

    def _hook(self, metadata: Any) -> None:  # Triton's launch hook: every launch, any thread
        if threading.get_ident() == self._thread:
            self._hooked += 1

    def __enter__(self) -> Recording:
        if recording() is not None:
            raise RuntimeError("a recording is already active in this thread")
        RECORDING.recording = self
        from triton import knobs

        knobs.runtime.launch_enter_hook.add(self._hook)
        self._watch.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        from triton import knobs

        try:
            self._watch.__exit__(*exc)
        finally:
            knobs.runtime.launch_enter_hook.remove(self._hook)
            RECORDING.recording = None

    def flag_taken(self) -> bool:
        """Whether a recorded launch received :attr:`flag`."""
        p = self.flag.data_ptr()
        return any(type(v) is torch.Tensor and v.data_ptr() == p
                   for _, _, vals in self.launches for v in vals)

    def check_launches(self) -> None:
        """Append to :attr:`refused` when a launch went around the recording, or there was
        none (what every program built from a recording needs)."""
        if self._hooked != len(self.launches):
            self.refused.append(f"{self._hooked - len(self.launches)} launches not recorded")
        if not self.launches:
            self.refused.append("no launch")

    def program(self, out: Any) -> LaunchProgram | None:
        """The replayable program of the call that returned ``out``, or ``None`` (the
        reasons are appended to :attr:`refused`)."""
        self.check_launches()
        if len(self.launches) > MAX_LAUNCHES:
            self.refused.append(f"{len(self.launches)} launches")
        if type(out) is not torch.Tensor or not out.is_cuda:
            self.refused.append("the result is not a CUDA tensor")
        if self.refused:
            return None
        base = out.untyped_storage().data_ptr()
        if not any(a.untyped_storage().data_ptr() == base for a in self.allocations):
            self.refused.append("the result is not one of the call's allocations")
            return None
        return LaunchProgram(self, out)


class LaunchProgram:
    """The launches of a :class:`Recording`, replayed on new input, result and flag pointers.

    Calling it allocates the result (the recorded result's size, strides and dtype, in a
    storage of the recorded size) and launches each kernel through its compiled launcher.
    """

    def __init__(self, rec: Recording, out: torch.Tensor) -> None:
        x, flag = rec.x, rec.flag
        x_lo = x.untyped_storage().data_ptr()
        x_hi = x_lo + x.untyped_storage().nbytes()
        o_lo = out.untyped_storage().data_ptr()
        o_hi = o_lo + out.untyped_storage().nbytes()
        self._kept: list[torch.Tensor] = []  # tables and scratch the kernels read, kept alive
        self._steps = []
        flag_steps = []
        for step, (kernel, grid, vals) in enumerate(rec.launches):
            vals = list(vals)
            slots = []
            for i, v in enumerate(vals):
                if type(v) is not torch.Tensor:
                    continue
                p = v.data_ptr()
                if p == flag.data_ptr():
                    slots.append((i, _FLAG, 0))
                    flag_steps.append(step)
                elif x_lo <= p < x_hi:
                    slots.append((i, _IN, p - x.data_ptr()))
                elif o_lo <= p < o_hi:
                    slots.append((i, _OUT, p - out.data_ptr()))
                else:
                    self._kept.append(v)
                vals[i] = p
            self._steps.append((kernel, grid, vals, tuple(slots)))
        #: Whether the last launch that takes the flag writes the verdict before it ends (the
        #: host may then wait for the flag, not for the stream; no later launch touches it).
        self.signals = bool(flag_steps) and rec.signal_at == flag_steps[-1]
        # Triton's launcher object allocates per-launch scratch when a kernel needs some;
        # kernels that need none are launched through its compiled ``launch`` directly, or,
        # where CuPy can make every launch of the program, by the driver from parameter
        # blocks built once (:class:`~fastmoments._triton.DriverLaunch`)
        self._direct = all(plain_launcher(kernel) for kernel, _, _, _ in self._steps)
        drivers = [DriverLaunch.make(kernel, grid, vals) for kernel, grid, vals, _ in self._steps]
        self._drivers = (list(zip(drivers, [s[3] for s in self._steps], strict=True))
                         if all(drivers) else None)
        self.shape, self.strides = tuple(out.shape), tuple(out.stride())
        self.offset, self.dtype, self.device = out.storage_offset(), out.dtype, out.device
        self.storage_elems = out.untyped_storage().nbytes() // out.element_size()
        # the result's view covers its whole storage: one allocation of that view (decided
        # here: the test costs 4 µs per call on the H100 machine's host)
        self._dense = self.offset == 0 and self.storage_elems == _span(self.shape, self.strides)
        from triton import knobs

        self._runtime = knobs.runtime  # its launch hooks, read at every replay

    def _result(self) -> torch.Tensor:
        if self._dense:
            return torch.empty_strided(self.shape, self.strides, dtype=self.dtype,
                                       device=self.device)
        buf = torch.empty(self.storage_elems, dtype=self.dtype, device=self.device)
        return buf.as_strided(self.shape, self.strides, self.offset)

    def __call__(self, x: torch.Tensor, stream: int, flag_ptr: int) -> torch.Tensor:
        """Replay on the input ``x`` (the recorded shape, dtype, device and 16-byte
        alignment), on the raw CUDA stream ``stream``, with the flag byte at ``flag_ptr``;
        returns the new result."""
        out = self._result()
        bases = (x.data_ptr(), out.data_ptr(), flag_ptr)
        runtime = self._runtime
        enter, leave = runtime.launch_enter_hook, runtime.launch_exit_hook
        hooks = bool(enter.calls or leave.calls)
        done = 0  # launches made by the driver
        if self._drivers is not None and not hooks:
            for drv, slots in self._drivers:
                if not drv(stream, slots, bases):
                    break  # (refused: this launch and the rest through Triton)
                done += 1
            else:
                return out
        for kernel, grid, vals, slots in self._steps[done:]:
            if slots:
                vals = vals.copy()
                for i, which, delta in slots:
                    vals[i] = bases[which] + delta
            if self._direct and not hooks:
                launch_compiled(kernel, grid, stream, vals)
            else:  # through the launcher object, with the hooks when any are set
                meta = kernel.launch_metadata(grid, stream, *vals) if hooks else None
                kernel.run(grid[0], grid[1], grid[2], stream, kernel.function,
                           kernel.packed_metadata, meta, enter if hooks else None,
                           leave if hooks else None, *vals)
        return out


def _span(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements from the first to one past the last of a strided view at offset 0."""
    if any(s == 0 for s in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))


#: ``CU_POINTER_ATTRIBUTE_DEVICE_POINTER`` of the CUDA driver API.
_DEVICE_POINTER = 3


def host_flag() -> tuple[torch.Tensor, Any] | None:
    """A pinned host byte the GPU can write through unified addressing, as ``(tensor, NumPy
    view)``; ``None`` when pinned memory cannot be had or the driver does not map it
    (checked once per process with ``cuPointerGetAttribute``)."""
    try:
        t = torch.ones((), dtype=torch.uint8, pin_memory=True)
    except RuntimeError:  # pragma: no cover - no pinned memory
        return None
    return (t, t.numpy()) if _pinned_memory_mapped(t.data_ptr()) else None


@functools.lru_cache(maxsize=1)
def _pinned_memory_mapped(ptr: int) -> bool:
    """Whether the driver maps pinned host memory at its own address (asked once, for the
    first pinned byte: torch's pinned allocations all come from ``cudaHostAlloc``)."""
    return _device_pointer(ptr) == ptr


def _device_pointer(ptr: int) -> int | None:
    """The device address of host address ``ptr`` (``CU_POINTER_ATTRIBUTE_DEVICE_POINTER``),
    or ``None`` when the driver cannot say."""
    cuda = libcuda()
    if cuda is None:  # pragma: no cover - no driver library under that name
        return None
    dev = ctypes.c_uint64(0)
    status = cuda.cuPointerGetAttribute(ctypes.byref(dev), ctypes.c_int(_DEVICE_POINTER),
                                        ctypes.c_uint64(ptr))
    return int(dev.value) if status == 0 else None


def replayable_call(x: torch.Tensor, run: Callable[[torch.Tensor], Any]
                    ) -> tuple[Any, LaunchProgram | None, list[str], torch.Tensor]:
    """Run ``run(x)`` once, recorded: returns its result, the :class:`LaunchProgram` (or
    ``None``), the reasons it is not replayable, and the recording's flag byte (which holds
    the NaN/inf check of ``x`` when there is a program). When the recording took no flag,
    the one-pass NaN/inf kernel on ``x`` is recorded after the call, so every program checks
    its input."""
    flag = torch.ones((), dtype=torch.uint8, device=x.device)
    if not HAVE_TRITON:  # pragma: no cover - no launches to record: the graph takes the call
        return run(x), None, ["Triton is not installed"], flag
    with Recording(x, flag) as rec:
        out = run(x)
        if not rec.refused and not rec.flag_taken():
            from ._finite_kernel import clear_if_nonfinite, usable

            if usable(x):
                clear_if_nonfinite(x, flag)
            else:
                rec.refused.append("no NaN/inf kernel for this input")
    prog = rec.program(out)
    return out, prog, rec.refused, flag
