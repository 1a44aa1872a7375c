"""Array handling shared by every transform: input conversion, the dtype policy, output kind.

One policy decides the working dtype everywhere (STYLE.md, convention 4):

* float32 stays float32, float64 stays float64;
* integers and booleans are computed in float32;
* half precision (float16, bfloat16) is computed in float32;
* complex input is refused unless the caller allows it (complex64 -> float32 working
  precision, complex128 -> float64);
* an explicit ``dtype=`` argument may only name a working dtype: float32 or float64
  (``torch.float32``, ``np.float64``, ``"float32"``, ``"double"``, Python ``float`` ...);
  another dtype (integer, bool, half, complex) is a :class:`DtypeError` (both a
  :class:`TypeError` and a :class:`ValueError`) naming ``dtype``; an object that is not a
  dtype at all is a :class:`TypeError`.

Input of any byte order, memory layout (non-contiguous, negative strides) and writability is
accepted and never modified. NumPy in gives NumPy out; a torch tensor in gives a tensor out on
the same device (autograd flows through the conversion).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ._threads import cpu_threads, threads_for

__all__ = [
    "ArrayKind",
    "ChannelMove",
    "DtypeError",
    "as_tensor",
    "complex_dtype",
    "input_shape",
    "move_channels",
    "native_array",
    "numeric_array",
    "policy_dtype",
    "real_dtype",
    "resolve_device",
    "restore_channels",
    "same_device",
    "to_output",
    "working_dtype",
]


@dataclass(frozen=True)
class ArrayKind:
    """What the caller passed in, so that results go back in the same kind."""

    numpy: bool
    device: torch.device


def resolve_device(device: str | torch.device | None, fallback: torch.device | None = None,
                   *, name: str = "the input"):
    """Return a :class:`torch.device` from a user value.

    ``None`` keeps ``fallback`` (the input's device) or the CPU; a fallback that is neither
    the CPU nor CUDA (a 'meta' tensor's) is a :class:`ValueError` naming ``name``, the input.
    ``"cuda"`` without a visible GPU raises :class:`ValueError` naming the parameter.

    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if device is None:
        if fallback is None:
            return torch.device("cpu")
        if fallback.type not in ("cpu", "cuda"):
            raise ValueError(f"{name} is on the {fallback.type!r} device; fastmoments computes "
                             f"on 'cpu' or 'cuda' tensors (move it with .to('cpu'))")
        return fallback
    if isinstance(device, bool) or not isinstance(device, (str, torch.device, int)):
        raise TypeError(f"device must be 'cpu', 'cuda', 'cuda:N' or a torch.device, "
                        f"got {device!r}")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was asked for but no CUDA device is available")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    return dev


class DtypeError(TypeError, ValueError):
    """A dtype that is not a working dtype (float32 or float64) where one is needed.

    Both a :class:`TypeError` (it is about a type) and a :class:`ValueError` (a dtype object
    is the right kind of argument with a wrong value), so that either ``except`` catches it.
    """


_DTYPE_NAMES = {"float32": torch.float32, "float64": torch.float64,
                "single": torch.float32, "double": torch.float64}


def _as_torch_dtype(dtype: Any) -> torch.dtype | None:
    """``dtype`` as a torch dtype when it is a dtype object NumPy or torch understands."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type)
                                       and issubclass(dtype, (np.generic, float, int, complex))):
        dt = np.dtype(dtype)
        if not dt.isnative:
            dt = dt.newbyteorder("=")
        if dt.kind == "b":
            return torch.bool
        if dt.kind in "iufc":
            return torch.from_numpy(np.zeros(0, dtype=dt)).dtype
    return None


def real_dtype(dtype: Any, *, name: str = "dtype") -> torch.dtype:
    """The working dtype a user's explicit ``dtype=`` argument names: float32 or float64.

    ``None`` gives the default, float32. Strings may be ``"float32"``, ``"float64"``,
    ``"single"`` or ``"double"``; dtype objects may be torch's, NumPy's or Python's ``float``
    (which NumPy reads as float64). To pick the working dtype of an *input* array, use
    :func:`policy_dtype` (or :func:`working_dtype`, which does both).

    Raises
    ------
    ValueError
        For a string that is not one of the names above.
    DtypeError
        For any other dtype (integers, bool, half precision, complex); it is both a
        ``TypeError`` and a ``ValueError``.
    TypeError
        For an object that is not a dtype (``3``, ``np.float64(2.0)``).

    Examples
    --------
    >>> real_dtype("double")
    torch.float64
    >>> real_dtype(np.float32)
    torch.float32
    >>> real_dtype(torch.int32)
    Traceback (most recent call last):
    ...
    fastmoments._array.DtypeError: dtype must be float32 or float64, got torch.int32
    """
    if dtype is None:
        return torch.float32
    if isinstance(dtype, str):
        if dtype not in _DTYPE_NAMES:
            raise ValueError(f"{name} must be one of {sorted(_DTYPE_NAMES)}, got {dtype!r}")
        return _DTYPE_NAMES[dtype]
    try:
        dt = _as_torch_dtype(dtype)
    except TypeError:
        dt = None
    if dt in (torch.float32, torch.float64):
        return dt
    if dt is None:
        raise TypeError(f"{name} must be float32 or float64 (the working dtypes), got "
                        f"{dtype!r}")
    raise DtypeError(f"{name} must be float32 or float64, got {dt}")


def policy_dtype(dtype: Any, *, name: str = "x") -> torch.dtype:
    """The working real dtype for data of ``dtype`` (the one dtype policy of the package).

    float64 and complex128 give float64; every other numeric dtype (float32, complex64,
    integers, bool, float16, bfloat16) gives float32. ``name`` is the data's parameter name,
    used when ``dtype`` holds no numbers (strings, objects): a :class:`TypeError`.

    >>> policy_dtype(np.dtype(">i2"))
    torch.float32
    >>> policy_dtype(torch.complex128)
    torch.float64
    """
    try:
        dt = _as_torch_dtype(dtype)
    except TypeError:
        dt = None
    if dt is None:
        raise TypeError(f"{name} must hold numbers, got dtype {dtype}")
    return torch.float64 if dt in (torch.float64, torch.complex128) else torch.float32


def working_dtype(dtype: Any, input_dtype: Any, *, name: str = "x") -> torch.dtype:
    """The working dtype of a call: the user's ``dtype`` if given (checked by
    :func:`real_dtype`), else the policy's choice for the input's dtype (:func:`policy_dtype`,
    ``name`` being the input's parameter name).

    >>> working_dtype(None, np.dtype("uint8"), name="image")
    torch.float32
    >>> working_dtype("float64", np.dtype("uint8"), name="image")
    torch.float64
    """
    if dtype is not None:
        return real_dtype(dtype)
    return policy_dtype(input_dtype, name=name)


def complex_dtype(dtype: torch.dtype) -> torch.dtype:
    """The complex dtype with the same precision as real ``dtype``."""
    return torch.complex128 if dtype == torch.float64 else torch.complex64


_NP_OF = {torch.float32: np.float32, torch.float64: np.float64,
          torch.complex64: np.complex64, torch.complex128: np.complex128}


def _numpy_input(x: Any, name: str) -> np.ndarray:
    """``x`` as a NumPy array of numbers, or a clear error naming ``name``."""
    if x is None or isinstance(x, (str, bytes, dict, set)):
        raise TypeError(f"{name} must be an array of numbers (a NumPy array, a torch tensor or "
                        f"nested lists), got {type(x).__name__}")
    # a masked array cannot exist before numpy.ma is imported: asking first keeps a first call
    # from importing numpy.ma (15-35 ms)
    if "numpy.ma" in sys.modules and np.ma.isMaskedArray(x):
        if np.ma.getmaskarray(x).any():
            raise ValueError(f"{name} is a masked array with masked entries; fill them first "
                             f"(e.g. {name}.filled(0))")
        x = np.ma.getdata(x)
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nested sequences
        raise ValueError(f"{name} must be a rectangular array of numbers; could not convert "
                         f"it: {exc}") from exc
    except Exception as exc:
        raise TypeError(f"{name} must be an array or a tensor, got {type(x).__name__}") from exc
    if arr.dtype == object or arr.dtype.kind not in "biufc":
        raise TypeError(f"{name} must hold numbers (bool, int, float or complex), got dtype "
                        f"{arr.dtype} from {type(x).__name__}")
    return arr


def numeric_array(x: Any, name: str) -> np.ndarray:
    """``x`` (not a tensor) as a NumPy array of numbers, with :func:`as_tensor`'s errors naming
    ``name`` (ragged nested lists, strings, objects); no copy where NumPy makes none.

    >>> numeric_array([[1, 2], [3, 4]], "image").shape
    (2, 2)
    """
    return _numpy_input(x, name)


def input_shape(x: Any, name: str) -> tuple[int, ...]:
    """The shape of an input before it is converted: a tensor's or an array's own, else that
    of the NumPy array it converts to (with :func:`as_tensor`'s errors naming ``name``).

    >>> input_shape([[1.0, 2.0, 3.0]], "x")
    (1, 3)
    """
    shape = getattr(x, "shape", None)
    if shape is not None and not isinstance(x, (str, bytes)):
        return tuple(shape)
    return _numpy_input(x, name).shape


def native_array(x: Any, name: str) -> np.ndarray:
    """``x`` as a NumPy array of numbers that :func:`torch.from_numpy` can view: native byte
    order, C order, writeable (a bool array is viewed as uint8).

    For callers that convert a large input lazily, a batch at a time, instead of all at once
    through :func:`as_tensor`. The data keep their dtype; a copy is made only when the input
    is big-endian, strided or read-only, and the input is never modified. Errors are those
    of :func:`as_tensor` for objects that are not arrays of numbers.

    >>> a = native_array(np.arange(3, dtype=">i4"), "x")
    >>> a.dtype.isnative, torch.from_numpy(a).tolist()
    (True, [0, 1, 2])
    """
    arr = _numpy_input(x, name)
    if not (arr.dtype.isnative and arr.flags.c_contiguous and arr.flags.writeable):
        arr = np.array(arr, dtype=arr.dtype.newbyteorder("="), order="C", copy=True)
    if arr.dtype == np.bool_:
        arr = arr.view(np.uint8)
    return arr


def as_tensor(
    x: Any,
    name: str,
    *,
    min_ndim: int = 1,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
    allow_complex: bool = False,
    check_finite: bool = True,
) -> tuple[torch.Tensor, ArrayKind]:
    """Convert user input to a tensor in the working dtype, never modifying the input.

    Parameters
    ----------
    x : array_like or torch.Tensor
        The user's data: a NumPy array (any byte order, layout or writability), nested lists,
        or a torch tensor (kept on its device; autograd flows through the conversion).
    name : str
        The parameter name used in error messages.
    min_ndim : int
        Fewest dimensions accepted.
    dtype : torch.dtype, optional
        Force this working dtype (float32 or float64) instead of the policy's choice.
    device : str or torch.device, optional
        Move to this device (default: stay where the input is; NumPy goes to the CPU).
    allow_complex : bool
        Accept complex input (the result is then complex at the working precision).
    check_finite : bool
        Refuse NaN and infinity.

    Returns
    -------
    tensor : torch.Tensor
        A C-contiguous tensor in the working dtype. It does not share memory with ``x`` when a
        conversion happened; when none is needed it may be ``x`` itself (or share its memory),
        which callers must not modify.
    kind : ArrayKind
        Whether ``x`` was NumPy (or a list) and which device it was on.

    Raises
    ------
    ValueError
        For too few dimensions, complex input where it is not allowed, NaN or infinity
        (also values too large for the working dtype), ragged nested lists, masked arrays with
        masked entries, tensors on a device that holds no data ('meta').
    TypeError
        For objects that are not arrays of numbers (``None``, strings, object arrays), sparse
        tensors, or a ``dtype`` that is not float32 or float64.

    Examples
    --------
    >>> t, kind = as_tensor(np.arange(4, dtype=">i4"), "x")
    >>> t.dtype, kind.numpy
    (torch.float32, True)
    """
    if dtype is not None:
        dtype = real_dtype(dtype)
    is_numpy = not isinstance(x, torch.Tensor)
    if is_numpy:
        arr = _numpy_input(x, name)
        if arr.ndim < min_ndim:
            raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape "
                             f"{arr.shape}")
        if arr.dtype.kind == "c" and not allow_complex:
            raise ValueError(f"{name} must be real, got complex dtype {arr.dtype}")
        work = dtype if dtype is not None else policy_dtype(arr.dtype, name=name)
        if arr.dtype.kind == "c":
            work = complex_dtype(work)
        if not (arr.dtype.isnative and arr.flags.c_contiguous and arr.flags.writeable):
            # one copy: native byte order, C order, working dtype; the input stays untouched
            # (np.ascontiguousarray would make 0-d input 1-d)
            with np.errstate(over="ignore"):  # overflow is reported below, by name
                arr = np.array(arr, dtype=_NP_OF[work], order="C", copy=True)
        in_device = torch.device("cpu")
        dev = resolve_device(device, in_device)
        # zero-copy view of the user's array; torch casts (in parallel) into new memory
        t = torch.from_numpy(arr).to(device=dev, dtype=work)
        source = x
    elif (dtype is None and device is None and x.dtype in _WORKING and x.ndim >= min_ndim
          and x.layout == torch.strided and x.is_contiguous() and not x.is_neg()
          and x.device.type in ("cpu", "cuda")):
        # already in working form (the usual tensor input): no conversion to look for
        t, in_device, source = x, x.device, x
    else:
        in_device, source = x.device, x
        t = _converted_tensor(x, name, dtype, device, min_ndim, allow_complex)
    if check_finite:
        require_finite(t, name, source)
    return t, ArrayKind(numpy=is_numpy, device=in_device)


def _converted_tensor(t: torch.Tensor, name: str, dtype: Any, device: Any, min_ndim: int,
                      allow_complex: bool) -> torch.Tensor:
    """A tensor input that needs a conversion (dtype, device, layout or memory order), checked
    and converted into new memory (:func:`as_tensor`'s tensor branch)."""
    if t.layout != torch.strided:
        raise TypeError(f"{name} must be a dense tensor, got layout {t.layout}; "
                        f"call .to_dense() first")
    if t.device.type not in ("cpu", "cuda"):
        raise ValueError(f"{name} is on the {t.device.type!r} device; fastmoments computes "
                         f"on 'cpu' or 'cuda' tensors (move it with .to('cpu'))")
    if t.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions, got shape {tuple(t.shape)}")
    if t.is_complex() and not allow_complex:
        raise ValueError(f"{name} must be real, got complex dtype {t.dtype}")
    work = dtype if dtype is not None else policy_dtype(t.dtype, name=name)
    if t.is_complex():
        work = complex_dtype(work)
    dev = resolve_device(device, t.device)
    _check_copy_fits(t, work, dev, name)
    return t.resolve_conj().resolve_neg().to(device=dev, dtype=work).contiguous()


def _check_copy_fits(t: torch.Tensor, work: torch.dtype, device: torch.device,
                     name: str) -> None:
    """Refuse, before allocating, a contiguous copy of a view far larger than the memory it
    views (``torch.zeros(1).expand(10**9)``, say) when the copy cannot fit in free memory:
    a :class:`MemoryError` that says what it needs, instead of one from the allocator."""
    need = t.numel() * (torch.empty((), dtype=work).element_size())
    if need < (1 << 26) or need <= 4 * t.untyped_storage().nbytes():
        return  # small, or a copy of about the memory already held: nothing to check
    from ._memory import format_bytes, free_memory

    free = free_memory(device)
    if need > free:
        held = format_bytes(t.untyped_storage().nbytes())
        raise MemoryError(
            f"{name} is a view of shape {tuple(t.shape)} over {held}; fastmoments works on "
            f"a contiguous copy, which needs {format_bytes(need)}, more "
            f"than the {format_bytes(free)} free on {device}: pass a smaller slice")


def require_finite(t: torch.Tensor, name: str, source: Any = None) -> None:
    """The check of :func:`as_tensor` (``check_finite``) on its result ``t``, for callers
    that check later: raise :class:`ValueError` naming ``name`` when ``t`` holds NaN or
    infinity (``source``: what the caller passed, for the message)."""
    if t.numel() and not _all_finite(t):
        raise ValueError(_nonfinite_message(name, t if source is None else source, t))


#: Dtypes a tensor may already have to be used as it is by :func:`as_tensor`.
_WORKING = (torch.float32, torch.float64)


def _nonfinite_message(name: str, source: Any, t: torch.Tensor) -> str:
    """Say whether the data held NaN/inf or only overflowed the working dtype."""
    try:
        if isinstance(source, torch.Tensor):
            src = source.detach()
            finite = bool(torch.isfinite(src).all()) if (src.is_floating_point()
                                                         or src.is_complex()) else True
            big = float(src.abs().max()) if finite else None
        else:
            src = np.asarray(source)
            finite = bool(np.isfinite(src).all())
            big = float(np.abs(src).max()) if finite else None
    except Exception:  # pragma: no cover - the plain message is still right
        finite, big = False, None
    if finite:
        return (f"{name} has values too large for {t.dtype} (largest magnitude {big:.3g}); "
                f"rescale it or compute in float64")
    return f"{name} contains NaN or infinity"


def same_device(a: torch.device, b: torch.device) -> bool:
    """Whether two devices are one (``cuda`` with no index means the current CUDA device).

    >>> same_device(torch.device("cpu"), torch.device("cpu"))
    True
    """
    if a.type != b.type:
        return False
    if a.type != "cuda":
        return True
    current = torch.cuda.current_device()
    return (current if a.index is None else a.index) == (current if b.index is None else b.index)


def finite_flag(t: torch.Tensor) -> torch.Tensor:
    """0-d bool tensor on ``t``'s device: whether every entry is finite, without waiting for it.

    One read pass: NaN and infinity propagate into the minimum or maximum (on CUDA into the
    largest magnitude: two launches instead of five, which matters for the host time of a
    small call). Callers on a GPU can queue their work first and read the flag afterwards
    (one synchronisation, overlapped). On the CPU the pass takes one torch thread per
    :data:`~fastmoments._threads.GRAIN` values: a call that chose two threads for its main
    work would otherwise open a parallel region for a pass of a few microseconds, which
    costs milliseconds while another process holds one of the cores.
    """
    if t.numel() == 0:
        return torch.ones((), dtype=torch.bool, device=t.device)
    r = torch.view_as_real(t) if t.is_complex() else t
    if r.requires_grad:
        r = r.detach()
    if not r.is_floating_point():
        return torch.ones((), dtype=torch.bool, device=t.device)
    if r.is_cuda:  # max |x| (NaN propagates) and one comparison: two launches, not five
        return torch.linalg.vector_norm(r, ord=math.inf) < math.inf
    with cpu_threads(threads_for(r.numel())):  # one pass: parallel only when it is long
        lo, hi = torch.aminmax(r)
    return torch.isfinite(torch.stack((lo, hi))).all()


def clear_unless_finite(flag: torch.Tensor, t: torch.Tensor) -> None:
    """Clear the device flag byte ``flag`` (``uint8``, 1 = finite so far) when ``t`` holds NaN
    or infinity, with one :func:`finite_flag` pass and nothing waiting for it: how the
    signal engines fold an input block into a flag that their fused kernels would otherwise
    clear while reading (:func:`fastmoments.signal.triton_sft.fused_apply`)."""
    flag.mul_(finite_flag(t))


def _all_finite(t: torch.Tensor) -> bool:
    """Whether every entry of ``t`` is finite (one pass and one host read; NaN and infinity
    propagate into the minimum or maximum)."""
    return bool(finite_flag(t))


def to_output(t: torch.Tensor, kind: ArrayKind) -> Any:
    """Return ``t`` as the caller's kind: a NumPy array or a tensor (kept on its device)."""
    if kind.numpy:
        return t.detach().cpu().numpy()
    return t


@dataclass(frozen=True)
class ChannelMove:
    """Where the channel axis of an input was: axis ``axis`` of ``ndim`` axes, whose last
    ``core`` non-channel axes are the image (volume) axes. Made by :func:`move_channels`."""

    axis: int
    ndim: int
    core: int

    @property
    def batch_before(self) -> int:
        """Batch axes (not channel, not image) in front of the channel axis."""
        return min(self.axis, self.ndim - 1 - self.core)

    @property
    def core_before(self) -> int:
        """Image axes in front of the channel axis (``core`` for channels last)."""
        return max(0, self.axis - (self.ndim - 1 - self.core))


def move_channels(x: Any, axis: int | None, core: int) -> tuple[Any, ChannelMove | None]:
    """Move the channel axis ``axis`` (already checked, non-negative) of ``x`` to just before
    its ``core`` image axes, so that the channels become the last batch axis: ``(H, W, C)``
    -> ``(C, H, W)``, ``(B, H, W, C)`` -> ``(B, C, H, W)``. A view (no copy); ``x``
    unchanged when ``axis`` is None.

    >>> y, mv = move_channels(np.zeros((5, 7, 3)), 2, 2)
    >>> y.shape, mv.core_before
    ((3, 5, 7), 2)
    """
    if axis is None:
        return x, None
    if isinstance(x, torch.Tensor):
        return x.movedim(axis, -core - 1), ChannelMove(axis, x.ndim, core)
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    return np.moveaxis(x, axis, -core - 1), ChannelMove(axis, x.ndim, core)


def restore_channels(y: Any, move: ChannelMove | None, n_core_out: int | None = None,
                     core_kept_before: int | None = None) -> Any:
    """Put the channel axis of an image-shaped result back where it was in the input.

    ``y`` is ``batch + (C,) + core_out`` (the layout :func:`move_channels` made, with
    ``n_core_out`` image axes, default ``move.core``); ``core_kept_before`` counts the image
    axes of ``y`` that came before the channel axis in the input (default: all of them,
    ``move.core_before``; less when a region dropped some).

    >>> y, mv = move_channels(np.zeros((5, 7, 3)), 2, 2)
    >>> restore_channels(y, mv).shape
    (5, 7, 3)
    """
    if move is None:
        return y
    n_out = move.core if n_core_out is None else n_core_out
    kept = move.core_before if core_kept_before is None else core_kept_before
    src = y.ndim - n_out - 1
    dst = move.batch_before + kept
    if isinstance(y, torch.Tensor):
        return y.movedim(src, dst)
    return np.moveaxis(y, src, dst)
