"""scipy.ndimage's ``output=`` and complex input for the one-call filters: the array or dtype
the result goes to, the precision the work then needs, and the result delivered into it
(cast as scipy casts); a complex signal filtered as its real and imaginary parts."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import torch

from .boundary import MODE_ALIASES, MODES
from .gaussian import _shape

__all__ = ["complex_parts", "deliver", "dtype_is_complex", "dtype_of", "is_complex",
           "join_complex", "output_spec", "widened", "writes_directly"]


def complex_parts(cval: Any) -> tuple[Any, Any]:
    """The boundary values of the real and imaginary parts (a real ``cval``: 0 for the
    imaginary part)."""
    if isinstance(cval, (complex, np.complexfloating)):
        return cval.real, cval.imag
    return cval, 0.0


def join_complex(re: Any, im: Any) -> Any:
    """``re + i im`` for two filtered parts (tensors or arrays)."""
    return torch.complex(re, im) if isinstance(re, torch.Tensor) else re + 1j * im


def is_complex(x: Any) -> bool:
    if isinstance(x, torch.Tensor):
        return x.is_complex()
    if isinstance(x, np.ndarray):
        return x.dtype.kind == "c"
    if not isinstance(x, (list, tuple)):
        return False
    try:
        return bool(np.iscomplexobj(np.asarray(x)))
    except ValueError:  # ragged: the input checks name the error
        return False


def output_spec(output: Any, x: Any) -> tuple[Any, Any]:
    """``(array, dtype)`` of ``output``: an array of ``x``'s kind to write into, or a dtype
    (NumPy's or torch's) for the result."""
    if output is None:
        return None, None
    if isinstance(output, (np.ndarray, torch.Tensor)):
        if isinstance(output, torch.Tensor) != isinstance(x, torch.Tensor):
            want = "torch.Tensor" if isinstance(x, torch.Tensor) else "numpy.ndarray"
            raise TypeError(f"output must be a {want} for input of that kind, got "
                            f"{type(output).__name__}")
        shape = tuple(_shape(x))
        if tuple(output.shape) != shape:
            raise ValueError(f"output must have the input's shape {shape}, got "
                             f"{tuple(output.shape)}")
        if isinstance(output, np.ndarray) and not output.flags.writeable:
            raise ValueError("output must be writeable")
        _check_dtype(dtype_of(output))
        return output, None
    if isinstance(output, torch.dtype):
        return None, _check_dtype(output)
    if isinstance(output, str) and (output in MODES or output in MODE_ALIASES):
        raise TypeError(f"output must be an array or a dtype, got the mode {output!r}: output "
                        f"comes before mode among the positional arguments (scipy.ndimage's "
                        f"order); pass mode={output!r} as a keyword")
    try:
        dt = np.dtype(output)
    except TypeError:
        raise TypeError(f"output must be an array or a dtype, got {output!r}") from None
    return None, _check_dtype(dt)


def dtype_of(a: Any) -> Any:
    return a.dtype


def dtype_is_complex(dt: Any) -> bool:
    return dt.is_complex if isinstance(dt, torch.dtype) else np.dtype(dt).kind == "c"


def _check_dtype(dt: Any) -> Any:
    ok = (dt.is_floating_point or dt.is_complex or dt in _TORCH_INTS if isinstance(
        dt, torch.dtype) else np.dtype(dt).kind in "fciu")
    if not ok:
        raise TypeError(f"output must have a numeric dtype (float, complex or integer), got "
                        f"{dt}")
    return dt


_TORCH_INTS = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)


def widened(x: Any, want: Any, cplx: bool) -> Any:
    """``x`` in float64 (complex128) where the result goes to a wider dtype than the
    package's working dtype: a float64 or integer ``output`` (as scipy.ndimage, which
    computes in float64)."""
    if want is None:
        return x
    narrow = ((torch.float16, torch.bfloat16, torch.float32, torch.complex64)
              if isinstance(want, torch.dtype) else ())
    if isinstance(want, torch.dtype):
        if want in narrow:
            return x
    elif np.dtype(want) in (np.float16, np.float32, np.complex64):
        return x
    if isinstance(x, torch.Tensor):
        target = torch.complex128 if cplx else torch.float64
        return x if x.dtype == target else x.to(target)
    a = np.asarray(x)
    target = np.complex128 if cplx else np.float64
    return a if a.dtype == target else a.astype(target)


def writes_directly(array: Any, x: Any) -> bool:
    """Whether the result can be written straight into the ``output`` array: the working
    dtype of ``x`` and no memory shared with it."""
    if isinstance(array, torch.Tensor):
        if not isinstance(x, torch.Tensor) or array.dtype != (
                torch.float64 if x.dtype == torch.float64 else torch.float32):
            return False
        return array.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    if not isinstance(x, np.ndarray):
        return False
    work = np.float64 if x.dtype == np.float64 else np.float32
    return array.dtype == work and not np.may_share_memory(array, x)


def deliver(y: Any, array: Any, dtype: Any) -> Any:
    """The result ``y`` written into ``array`` (cast as scipy.ndimage casts: integers
    truncated) or cast to ``dtype``."""
    if array is not None:
        if isinstance(array, torch.Tensor):
            with torch.no_grad() if not y.requires_grad else contextlib.nullcontext():
                array.copy_(y.to(array.device))
        else:
            if np.iscomplexobj(y) and array.dtype.kind != "c":
                raise TypeError(f"output must be complex for complex input, got {array.dtype}")
            array[...] = y
        return array
    if dtype is None:
        return y
    if isinstance(y, torch.Tensor):
        dt = dtype if isinstance(dtype, torch.dtype) else _torch_dtype(np.dtype(dtype))
        return y if y.dtype == dt else y.to(dt)
    dt = np.dtype(dtype) if not isinstance(dtype, torch.dtype) else _numpy_dtype(dtype)
    return y if y.dtype == dt else y.astype(dt)


def _torch_dtype(dt: np.dtype) -> torch.dtype:
    return torch.from_numpy(np.zeros(0, dtype=dt)).dtype


def _numpy_dtype(dt: torch.dtype) -> np.dtype:
    return torch.zeros(0, dtype=dt).numpy().dtype
