"""Input conversion and the dtype policy (fastmoments._array): every kind of array a user may
pass is either converted to the working dtype without touching the input, or refused with an
error naming the parameter."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments._array import (
    as_tensor,
    policy_dtype,
    real_dtype,
    resolve_device,
    to_output,
    working_dtype,
)

RNG = np.random.default_rng(13)
BASE = RNG.standard_normal((3, 5))


@pytest.mark.parametrize("dt", ["<f8", ">f8", "<f4", ">f4", ">i2", ">i4", ">i8", ">u2", ">c16",
                                ">c8", ">f2"])
def test_big_endian_is_accepted_and_equals_native(dt):
    arr = BASE.astype(dt) if np.dtype(dt).kind in "fc" else (BASE * 10).astype(dt)
    before = arr.copy()
    t, kind = as_tensor(arr, "x", allow_complex=True)
    native = arr.astype(arr.dtype.newbyteorder("="))
    ref, _ = as_tensor(native, "x", allow_complex=True)
    assert kind.numpy
    assert t.dtype == ref.dtype
    assert torch.equal(t, ref)  # bit-exactness of a byte swap is the property
    np.testing.assert_array_equal(arr, before)
    assert arr.dtype == np.dtype(dt)


@pytest.mark.parametrize(("dt", "work"), [
    (np.bool_, torch.float32), (np.uint8, torch.float32), (np.int8, torch.float32),
    (np.int16, torch.float32), (np.int32, torch.float32), (np.int64, torch.float32),
    (np.uint16, torch.float32), (np.uint32, torch.float32), (np.uint64, torch.float32),
    (np.float16, torch.float32), (np.float32, torch.float32), (np.float64, torch.float64)])
def test_numpy_dtype_policy(dt, work):
    arr = (np.abs(BASE) * 3).astype(dt)
    t, _ = as_tensor(arr, "x")
    assert t.dtype == work
    np.testing.assert_array_equal(t.numpy(), arr.astype(t.numpy().dtype))


@pytest.mark.parametrize(("dt", "work"), [
    (torch.bool, torch.float32), (torch.uint8, torch.float32), (torch.int64, torch.float32),
    (torch.float16, torch.float32), (torch.bfloat16, torch.float32),
    (torch.float32, torch.float32), (torch.float64, torch.float64)])
def test_torch_dtype_policy(dt, work):
    src = torch.from_numpy(np.abs(BASE) * 3).to(dt)
    t, kind = as_tensor(src, "x")
    assert not kind.numpy and t.dtype == work
    assert torch.equal(t, src.to(work))


def test_views_read_only_and_negative_strides():
    big = RNG.standard_normal((6, 8))
    for view in (big[::2, ::-1], big.T, big[:, 1:5], np.flip(big)):
        ro = view.view()
        ro.flags.writeable = False
        for v in (view, ro):
            t, _ = as_tensor(v, "x")
            assert t.is_contiguous()
            np.testing.assert_array_equal(t.numpy(), v)
    tv = torch.from_numpy(big).T
    t, _ = as_tensor(tv, "x")
    assert t.is_contiguous() and torch.equal(t, tv)


def test_input_is_never_modified_and_conversions_do_not_share_memory():
    arr = BASE.astype(np.float32)
    t, _ = as_tensor(arr, "x", dtype=torch.float64)
    t += 1
    np.testing.assert_array_equal(arr, BASE.astype(np.float32))


def test_lists_zero_d_and_ragged():
    t, kind = as_tensor([[1, 2], [3, 4]], "x")
    assert kind.numpy and t.dtype == torch.float32
    t, _ = as_tensor([[1.5, 2.0]], "x")
    assert t.dtype == torch.float64
    with pytest.raises(ValueError, match="x must have at least 1 dimensions"):
        as_tensor(3.0, "x")
    with pytest.raises(ValueError, match="image must have at least 2"):
        as_tensor(np.zeros(3), "image", min_ndim=2)
    with pytest.raises(ValueError, match="x must be a rectangular array"):
        as_tensor([[1, 2], [3]], "x")


@pytest.mark.parametrize("bad", ["abc", None, b"12", {"a": 1}, np.array(["1", "2"]),
                                 np.array([1, "a"], dtype=object),
                                 np.array([1.0, 2.0], dtype=object), [[1, None]],
                                 np.array(["2020-01-01"], dtype="datetime64[D]")])
def test_non_numbers_are_a_type_error_naming_the_parameter(bad):
    with pytest.raises(TypeError, match=r"^signal must"):
        as_tensor(bad, "signal")


def test_complex_is_refused_where_real_is_required():
    with pytest.raises(ValueError, match="x must be real, got complex"):
        as_tensor(BASE + 1j, "x")
    with pytest.raises(ValueError, match="x must be real, got complex"):
        as_tensor(torch.ones(2, dtype=torch.complex64), "x")
    t, _ = as_tensor((BASE + 1j).astype(np.complex64), "x", allow_complex=True)
    assert t.dtype == torch.complex64
    t, _ = as_tensor(BASE + 1j, "x", allow_complex=True, dtype=torch.float32)
    assert t.dtype == torch.complex64


@pytest.mark.parametrize("val", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_name_the_parameter(val):
    a = BASE.copy()
    a[1, 2] = val
    with pytest.raises(ValueError, match="image contains NaN or infinity"):
        as_tensor(a, "image")
    with pytest.raises(ValueError, match="image contains NaN or infinity"):
        as_tensor(torch.from_numpy(a), "image")
    t, _ = as_tensor(a, "image", check_finite=False)
    assert t.shape == a.shape


def test_overflow_of_the_working_dtype_is_said_as_such():
    with pytest.raises(ValueError, match=r"x has values too large for torch\.float32"):
        as_tensor(np.array([1e300, 1.0]), "x", dtype=torch.float32)
    with pytest.raises(ValueError, match=r"x has values too large for torch\.float32"):
        as_tensor(torch.tensor([1e300], dtype=torch.float64), "x", dtype=torch.float32)


def test_masked_arrays():
    m = np.ma.masked_array(BASE, mask=np.zeros_like(BASE, dtype=bool))
    t, _ = as_tensor(m, "x")
    np.testing.assert_array_equal(t.numpy(), BASE)
    m[0, 0] = np.ma.masked
    with pytest.raises(ValueError, match="x is a masked array with masked entries"):
        as_tensor(m, "x")


def test_autograd_flows_through_the_conversion():
    g = torch.from_numpy(BASE.copy()).requires_grad_()
    t, kind = as_tensor(g, "x", dtype=torch.float32)
    assert t.requires_grad
    (2 * t).sum().backward()
    assert torch.equal(g.grad, torch.full_like(g, 2.0))
    out = to_output(t, kind)
    assert isinstance(out, torch.Tensor) and out.requires_grad


def test_meta_and_sparse_tensors_are_refused_by_name():
    with pytest.raises(ValueError, match="x is on the 'meta' device"):
        as_tensor(torch.ones(3, device="meta"), "x")
    with pytest.raises(TypeError, match="x must be a dense tensor"):
        as_tensor(torch.eye(3).to_sparse(), "x")


@pytest.mark.parametrize("dt", [torch.float32, torch.float64, np.float32, np.float64,
                                np.dtype("float32"), np.dtype(">f8"), float, "float32",
                                "float64", "single", "double"])
def test_real_dtype_accepts_only_working_dtypes(dt):
    got = real_dtype(dt)
    assert got in (torch.float32, torch.float64)
    assert (got == torch.float64) == (dt in (torch.float64, np.float64, float, "float64",
                                             "double") or np.dtype(">f8") == dt)


@pytest.mark.parametrize("dt", [torch.int32, torch.float16, torch.bfloat16, torch.complex128,
                                torch.bool, np.int64, np.dtype("uint8"), np.complex64, int, bool,
                                True, 3, object])
def test_real_dtype_refuses_other_dtypes_by_name(dt):
    with pytest.raises(TypeError, match=r"^dtype must be float32 or float64"):
        real_dtype(dt)


@pytest.mark.parametrize("dt", ["int32", "float", "half", "Float32", ""])
def test_real_dtype_unknown_names(dt):
    with pytest.raises(ValueError, match=r"^dtype must be one of"):
        real_dtype(dt)


def test_explicit_dtype_of_as_tensor_is_checked():
    with pytest.raises(TypeError, match="dtype must be float32 or float64"):
        as_tensor(BASE, "x", dtype=torch.int32)


def test_policy_and_working_dtype():
    assert policy_dtype(np.dtype(">f8")) == torch.float64
    assert policy_dtype(torch.uint8) == torch.float32
    assert policy_dtype(np.dtype("c16")) == torch.float64
    with pytest.raises(TypeError, match="image must hold numbers"):
        policy_dtype(np.dtype("<U3"), name="image")
    assert working_dtype(None, np.dtype("int16"), name="image") == torch.float32
    assert working_dtype(np.float64, np.dtype("int16"), name="image") == torch.float64
    with pytest.raises(TypeError, match="dtype must be float32 or float64"):
        working_dtype(torch.int32, np.dtype("float64"), name="image")


def test_resolve_device():
    assert resolve_device(None) == torch.device("cpu")
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("gpu")
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("meta")
    with pytest.raises(TypeError, match="device must be"):
        resolve_device(True)
    with pytest.raises(TypeError, match="device must be"):
        resolve_device(1.5)


def test_resolve_device_names_the_input_on_a_meta_device():
    with pytest.raises(ValueError, match="image is on the 'meta' device"):
        resolve_device(None, torch.device("meta"), name="image")
    with pytest.raises(ValueError, match="the input is on the 'meta' device"):
        resolve_device(None, torch.device("meta"))
    assert resolve_device("cpu", torch.device("meta")) == torch.device("cpu")
