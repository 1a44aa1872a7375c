"""Triton, when it is installed, and where its kernels can run (shared by the fused kernels
of :mod:`fastmoments.disk.triton_radial` and :mod:`fastmoments.box.triton_gemm`)."""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from collections.abc import Callable
from typing import Any

import torch

try:  # pragma: no cover - depends on the installation
    import triton
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor

    HAVE_TRITON = True
except ImportError:  # pragma: no cover
    triton = None
    tl = None
    TensorDescriptor = None
    HAVE_TRITON = False

__all__ = ["HAVE_TRITON", "DriverLaunch", "FastLaunch", "available", "current_device",
           "launch_compiled", "libcuda", "loop_bound", "multiprocessors", "on_tensor_device",
           "other_device", "parameter_block", "plain_launcher", "recording", "resident_programs",
           "tl", "triton"]

#: Per thread: the active recording of launches (:class:`fastmoments._launches.Recording`).
RECORDING = threading.local()


def recording() -> object | None:
    """The recording of launches active in this thread (see :mod:`fastmoments._launches`),
    or ``None``."""
    return RECORDING.__dict__.get("recording")  # (getattr with a default is 10x slower)


def current_device() -> int:
    """``torch.cuda.current_device()`` without its Python wrapper (for callers holding a CUDA
    tensor: CUDA is initialised)."""
    try:
        return torch._C._cuda_getDevice()
    except AttributeError:  # pragma: no cover - a torch without it
        return torch.cuda.current_device()


def other_device(args: tuple) -> int:
    """The CUDA device of the first tensor in ``args`` (or of a tensor descriptor's base)
    when it is not the current device, else -1.

    A Triton launch (``kernel[grid](...)``, a compiled launcher, a driver launch) goes to the
    *current* device and its current stream, whatever device its tensors are on; torch's
    own operations follow their tensors. A caller that gets an index here makes its launch
    under ``torch.cuda.device(index)``, so that a tensor on ``cuda:1`` is worked on by
    ``cuda:1`` in the order of ``cuda:1``'s stream while ``cuda:0`` is current (instead of
    a launch on the wrong device: an illegal address, or a read not ordered after the
    writes of the tensor's own stream). One comparison when the devices agree."""
    for a in args:
        t = type(a)
        if t is torch.Tensor:
            index = a.get_device()
        elif TensorDescriptor is not None and t is TensorDescriptor:
            index = a.base.get_device()
        else:
            continue
        return index if index >= 0 and index != current_device() else -1
    return -1


def on_tensor_device(fn: Callable) -> Callable:
    """Decorate ``fn`` so that it runs under ``torch.cuda.device(index)`` when the first
    tensor among its positional arguments is on a CUDA device ``index`` that is not the
    current one (:func:`other_device`), and as it is otherwise: the launch sites and the
    entries that record or replay launches, so that their work goes to the tensors' GPU."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        index = other_device(args)
        if index < 0:
            return fn(*args, **kwargs)
        with torch.cuda.device(index):
            return fn(*args, **kwargs)

    return run


def available(device: torch.device) -> bool:
    """True when Triton kernels can run on ``device``: CUDA, or the CPU under
    ``TRITON_INTERPRET=1`` (how the tests check them without a GPU)."""
    if not HAVE_TRITON:
        return False
    if device.type == "cuda":
        return True
    return os.environ.get("TRITON_INTERPRET", "") == "1"


def loop_bound(name: str, bound: int) -> dict[str, object]:
    """The constexpr arguments of a kernel loop whose bound is a runtime value: Triton's
    interpreter cannot loop to one (NumPy >= 2.4 refuses ``int()`` of its one-element
    arrays), so under ``TRITON_INTERPRET=1`` the kernel gets ``INTERPRET=True`` and the bound
    as the constexpr ``name``; compiled, ``INTERPRET=False`` and ``name=0`` (unused: one
    kernel serves every bound). The kernel loops to ``name if INTERPRET else <runtime>``."""
    interpret = os.environ.get("TRITON_INTERPRET", "") == "1"
    return {"INTERPRET": interpret, name: int(bound) if interpret else 0}


def libcuda() -> object | None:
    """The CUDA driver library through ``ctypes`` (loaded once), or ``None`` when it cannot be
    loaded under its usual name."""
    global _LIBCUDA
    if _LIBCUDA is None:
        import ctypes

        try:
            _LIBCUDA = ctypes.CDLL("libcuda.so.1")
        except OSError:  # pragma: no cover - no driver library under that name
            _LIBCUDA = False
    return _LIBCUDA or None


_LIBCUDA: object = None


def multiprocessors(device: torch.device) -> int:
    """Streaming multiprocessors of the CUDA ``device`` (asked once per device: the property
    query costs about 10 µs)."""
    idx = device.index if device.index is not None else torch.cuda.current_device()
    sms = _SMS.get(idx)
    if sms is None:
        sms = _SMS[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return sms


_SMS: dict[int, int] = {}


def resident_programs(kernel: object, num_warps: int, device: torch.device) -> int:
    """How many programs of the compiled Triton ``kernel`` (launched with ``num_warps``
    warps) the CUDA ``device`` holds at once: the driver's occupancy per multiprocessor
    (``cuOccupancyMaxActiveBlocksPerMultiprocessor``, with the kernel's registers and shared
    memory) times the multiprocessors. A grid no larger than this can wait at a barrier of
    all its programs (a cooperative launch refuses a larger one). 0 when the driver cannot
    say."""
    import ctypes

    kernel._init_handles()  # loads the binary: ``function`` is its handle
    cuda = libcuda()
    if cuda is None:  # pragma: no cover - no driver library under that name
        return 0
    blocks = ctypes.c_int(0)
    status = cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        ctypes.byref(blocks), ctypes.c_void_p(kernel.function), ctypes.c_int(32 * num_warps),
        ctypes.c_size_t(kernel.metadata.shared))
    if status != 0:  # pragma: no cover - a driver error: no single launch
        return 0
    return blocks.value * multiprocessors(device)


def plain_launcher(kernel: object) -> bool:
    """Whether the compiled ``kernel``'s launcher needs no scratch memory (then its
    ``launch`` can be called with none), as Triton 3's ``CudaLauncher`` describes it."""
    run = kernel.run
    return (getattr(run, "global_scratch_size", 1) == 0
            and getattr(run, "profile_scratch_size", 1) == 0
            and all(hasattr(run, a) for a in ("launch", "launch_cooperative_grid",
                                              "launch_pdl")))


def _specialization(v: object) -> object:
    """What of the argument ``v`` a compiled Triton kernel may depend on, as finely as
    Triton's own specialisation or finer: a tensor's dtype and 16-byte alignment, an
    integer's width class, whether it is 1 and whether it is a multiple of 16; a host-side
    TMA descriptor's element type, rank, box and padding; the type of anything else (floats
    are passed as float32 whatever their value)."""
    t = type(v)
    if t is torch.Tensor:
        return (v.dtype, v.data_ptr() % 16 == 0)
    if t is TensorDescriptor:
        return (t, v.base.dtype, len(v.shape), tuple(v.block_shape), v.padding)
    if t is int:
        return (v == 1, v % 16 == 0, -2**31 <= v < 2**31, v < 2**63)
    if t is float or t is bool or v is None:
        return (t, v) if t is bool else t
    raise TypeError(f"no fast launch for an argument of type {t.__name__}")


class FastLaunch:
    """Repeated launches of one Triton kernel straight through its compiled launcher.

    Triton's ``kernel[grid](...)`` binds and specialises every argument and builds launch
    metadata on every call: about 37 µs of host time for the 40 arguments of the box
    engine's product on the H100 machine, against 6 µs for its compiled launcher
    (host time, median of repeated calls). The first launch of each
    specialisation goes through Triton (which compiles it); the compiled kernel is then kept
    under a key at least as fine as Triton's (:func:`_specialization` of every argument,
    the constexpr values, the current device) and later launches with that key call its
    launcher with the tensors' addresses. Under the interpreter, with launch hooks set (a
    profiler), or for a launcher that needs scratch memory, every launch goes through
    Triton; so does every launch while a recording is active in the thread, which keeps it
    (:mod:`fastmoments._launches`). Positional arguments are the kernel's runtime
    parameters in order; keyword arguments are its constexpr parameters (in order) and
    launch options last (``num_warps``, ``num_stages``).
    """

    def __init__(self, fn: object) -> None:
        self.fn = fn
        self._kernels: dict[tuple, object] = {}

    @on_tensor_device
    def __call__(self, grid: tuple[int, ...], *args: object, **kwargs: object) -> None:
        rec = RECORDING.__dict__.get("recording")
        if rec is not None:
            rec.add(self.fn, self.fn[grid](*args, **kwargs), grid, args, kwargs)
            return
        if os.environ.get("TRITON_INTERPRET", "") == "1" or _hooked():
            self.fn[grid](*args, **kwargs)
            return
        try:
            key = (current_device(), tuple(kwargs.items()),
                   tuple([_specialization(a) for a in args]))
        except TypeError:
            self.fn[grid](*args, **kwargs)
            return
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = self.fn[grid](*args, **kwargs)
            if kernel is not None and plain_launcher(kernel):
                self._kernels[key] = kernel
            return
        names = self.fn.arg_names
        vals = [a.data_ptr() if type(a) is torch.Tensor else a for a in args]
        vals += [kwargs[name] for name in names[len(args):]]
        launch_compiled(kernel, (*grid, 1, 1), torch._C._cuda_getCurrentRawStream(key[0]), vals)


#: The C type of each scalar parameter type of a compiled Triton kernel, as its launcher passes
#: it (floating types by their bits); pointers are 64-bit addresses.
_C_TYPES = {"i1": ctypes.c_int8, "i8": ctypes.c_int8, "i16": ctypes.c_int16,
            "i32": ctypes.c_int32, "i64": ctypes.c_int64, "u1": ctypes.c_uint8,
            "u8": ctypes.c_uint8, "u16": ctypes.c_uint16, "u32": ctypes.c_uint32,
            "u64": ctypes.c_uint64, "fp32": ctypes.c_float, "f32": ctypes.c_float,
            "fp64": ctypes.c_double}


#: Triton versions whose compiled launcher was checked to pass the parameter block of
#: :func:`parameter_block` (the replays bit-exact against Triton's own launches on the H100,
#: ``tests/test_signal_graphs.py``); other versions keep Triton's launcher.
DRIVER_ABI_VERSIONS = ("3.6.",)


@functools.lru_cache(maxsize=1)
def _driver_abi() -> bool:
    """Whether :class:`DriverLaunch` may launch: CuPy importable and a checked Triton."""
    try:
        import cupy  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the installation
        return False
    return HAVE_TRITON and triton.__version__.startswith(DRIVER_ABI_VERSIONS)


def parameter_block(signature: list, vals: list) -> tuple[list, list] | None:
    """The parameter block that Triton's compiled launcher builds for a kernel of
    ``signature`` (its parameter types in order, ``"constexpr"`` for those compiled in) called
    with ``vals`` (tensors as addresses): per parameter its ``ctypes`` cell (``None`` for a
    constexpr), and the cells in the block's order, the two scratch pointers (null) last.
    ``None`` for a type or value it does not cover (tensor descriptors, tuples, ...)."""
    if len(signature) != len(vals):
        return None
    cells, storage = [], []
    for ty, v in zip(signature, vals, strict=True):
        if ty == "constexpr":
            cells.append(None)
            continue
        if not isinstance(ty, str):
            return None
        if ty[0] == "*":
            if not (v is None or type(v) is int):
                return None
            cell = ctypes.c_uint64(v or 0)
        elif ty in _C_TYPES and type(v) in (int, float, bool):
            cell = _C_TYPES[ty](v)
        else:
            return None
        cells.append(cell)
        storage.append(cell)
    storage += [ctypes.c_uint64(0), ctypes.c_uint64(0)]  # the scratch pointers: none
    return cells, storage


class DriverLaunch:
    """One launch of a compiled Triton kernel with its parameter block built once, made by the
    CUDA driver through CuPy's binding (``launchKernel``, or ``launchCooperativeKernel`` for a
    kernel compiled with ``launch_cooperative_grid``).

    Triton's compiled launcher parses every parameter from Python on each launch: 9.4 µs of
    host time for the 43 of the one-launch SFT kernel on one H100 machine's host
    (host time, median of repeated calls). Here the block is
    the one that launcher builds (each non-constexpr parameter in its C type, then the two
    scratch pointers, null), the grid, block and shared memory are Triton's, and a replay
    only rewrites the pointer parameters that change (:meth:`__call__`). :meth:`make`
    refuses what it does not cover (then the caller keeps Triton's launcher): no CuPy, a
    Triton whose launcher was not checked (:data:`DRIVER_ABI_VERSIONS`), a kernel that needs
    scratch memory, clusters or programmatic launch, or a parameter type other than a
    pointer or a plain scalar. On the H100 machine it saved 0.2-4.3 µs per replayed
    one-signal call against Triton's launcher
    (``benchmarks/signal_latency.py`` times such calls). The same kernel, grid and
    parameters give the same bits. The launches are not thread-safe (the block is shared): a
    caller serialises them (a replay holds its lock).
    """

    __slots__ = ("_cells", "_cooperative", "_error", "_launch", "_params", "_storage",
                 "block", "function", "grid", "shared")

    def __init__(self, kernel: object, grid: tuple[int, ...], cells: list, storage: list,
                 cooperative: bool) -> None:
        import cupy

        meta = kernel.metadata
        self.function, self.grid = kernel.function, (*grid, 1, 1)[:3]
        self.block, self.shared = 32 * meta.num_warps, meta.shared
        self._cells = cells  # per parameter: its ctypes cell (None for constexprs)
        self._storage = storage  # the cells in the block's order (kept alive with it)
        self._params = (ctypes.c_void_p * len(storage))(*map(ctypes.addressof, storage))
        self._cooperative = cooperative
        drv = cupy.cuda.driver
        self._launch = drv.launchCooperativeKernel if cooperative else drv.launchKernel
        self._error = drv.CUDADriverError

    @classmethod
    def make(cls, kernel: object, grid: tuple[int, ...], vals: list) -> DriverLaunch | None:
        """The launch of the compiled ``kernel`` on ``grid`` with ``vals`` (its parameters in
        order, tensors as addresses), or ``None`` where Triton's launcher must make it."""
        if not _driver_abi():
            return None
        meta = kernel.metadata
        if (not plain_launcher(kernel) or getattr(meta, "num_ctas", 1) != 1
                or getattr(meta, "launch_pdl", False)):
            return None
        block = parameter_block(list(getattr(kernel.src, "signature", {}).values()), vals)
        if block is None:
            return None
        kernel._init_handles()
        return cls(kernel, grid, *block, bool(meta.launch_cooperative_grid))

    def __call__(self, stream: int, slots: tuple = (), bases: tuple = ()) -> bool:
        """Launch on the raw CUDA ``stream`` after setting the pointer parameters ``slots``
        (``(index, base, offset)``: parameter ``index`` becomes ``bases[base] + offset``);
        whether the driver took it (a refusal queues nothing: the caller then launches
        through Triton, which reports the error if there is one)."""
        cells = self._cells
        for i, which, delta in slots:
            cells[i].value = bases[which] + delta
        g, params = self.grid, ctypes.addressof(self._params)
        try:
            if self._cooperative:
                self._launch(self.function, g[0], g[1], g[2], self.block, 1, 1, self.shared,
                             stream, params)
            else:
                self._launch(self.function, g[0], g[1], g[2], self.block, 1, 1, self.shared,
                             stream, params, 0)
        except self._error:
            return False
        return True


def launch_compiled(kernel: object, grid: tuple[int, ...], stream: int, vals: list) -> None:
    """Launch the compiled Triton ``kernel`` on ``grid`` (at least three sizes) and the raw
    CUDA ``stream`` straight through its compiled launcher, with ``vals`` (the kernel's
    parameters in order; tensors as addresses). For launchers that need no scratch memory
    (:func:`plain_launcher`), with no launch hooks set."""
    run = kernel.run
    run.launch(grid[0], grid[1], grid[2], stream, kernel.function, run.launch_cooperative_grid,
               run.launch_pdl, None, None, kernel.packed_metadata, None, None, None, *vals)


def _hooked() -> bool:
    """Whether Triton's launch hooks are set (a profiler): launches then go through Triton."""
    from triton import knobs

    rt = knobs.runtime
    return bool(rt.launch_enter_hook.calls or rt.launch_exit_hook.calls)
