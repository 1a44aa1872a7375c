"""Property-based bad-input suite over every public function and plan.

Each public entry point has a valid small call in :data:`TARGETS`. Hypothesis perturbs its
array argument: dtype (ints, uint8, bool, float16, float32, float64, complex, big-endian; torch
bfloat16), ndim (0 to 5), empty and zero-size axes, NaN/inf at random places, non-contiguous,
Fortran-ordered, negative-stride, read-only and requires-grad inputs, Python lists, str, None.

The oracle is the same call on the same data as a native float64 (complex128 for complex
input) C-contiguous NumPy array, cast first as the dtype policy says (integers, bool and half
precision to float32; complex64 to float32 precision). Every case must then be

* a result equal to the oracle's (to 1e-9 of the largest magnitude of the oracle's result and
  of the data when the working dtype is float64, 2e-3 otherwise), in the caller's kind (NumPy
  or torch), when the oracle succeeds;
* a ValueError or TypeError whose message names the parameter, when the oracle raises one
  (whose message must name it too), and always for NaN/inf, ``str`` and ``None``;

and the input must be unchanged afterwards.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastmoments as fm
from fastmoments import data as fmdata

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---------------------------------------------------------------------------------------------
# The table: one valid small call per public function / plan method
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    name: str
    param: str  # the parameter the array is passed as
    shape: tuple[int, ...]  # a valid shape
    call: Callable[[Any], Any]
    complex_base: bool = False  # the valid input is complex (moments)
    same_kind: bool = True  # NumPy in gives NumPy out, torch in gives torch out


@functools.cache
def _plan(kind: str) -> Any:
    if kind == "zernike":
        return fm.ZernikeTransform(12, 4)
    if kind == "pseudo":
        return fm.PseudoZernikeTransform(12, 4)
    if kind == "disk":
        return fm.DiskTransform("zernike", 12, 4, dtype="float64")
    if kind == "pht":
        return fm.PolarHarmonicTransform("pcet", 12, 2, 2)
    if kind == "jacobi":
        return fm.JacobiTransform((10, 10), 4, alpha=0.2, beta=0.3)
    if kind == "jacobi3":
        return fm.JacobiTransform((6, 6, 6), 3)
    if kind == "gauss":
        return fm.GaussianFilter(2.0)
    if kind == "morlet":
        return fm.MorletTransform(3.0)
    if kind == "cwt":
        return fm.CWT([4.0, 2.0])
    raise KeyError(kind)


def _pairs(result: Any) -> np.ndarray:
    s = result
    return np.array([s.mean, *[d for _, _, d in s.closest]])


IMG = (12, 12)
TARGETS = [
    Target("zernike_moments", "image", IMG, lambda x: fm.zernike_moments(x, 4)),
    Target("pseudo_zernike_moments", "image", IMG, lambda x: fm.pseudo_zernike_moments(x, 4)),
    Target("pcet", "image", IMG, lambda x: fm.pcet(x, 2, 2)),
    Target("pct", "image", IMG, lambda x: fm.pct(x, 2, 2)),
    Target("pst", "image", IMG, lambda x: fm.pst(x, 2, 2)),
    Target("ZernikeTransform.forward", "image", IMG, lambda x: _plan("zernike").forward(x)),
    Target("PseudoZernikeTransform.forward", "image", IMG,
           lambda x: _plan("pseudo").forward(x)),
    Target("DiskTransform.forward", "image", IMG, lambda x: _plan("disk").forward(x)),
    Target("PolarHarmonicTransform.forward", "image", IMG, lambda x: _plan("pht").forward(x)),
    Target("ZernikeTransform.adjoint", "moments", (5, 3),
           lambda x: _plan("zernike").adjoint(x), complex_base=True),
    Target("PolarHarmonicTransform.adjoint", "moments", (3, 5),
           lambda x: _plan("pht").adjoint(x), complex_base=True),
    Target("DiskMoments.reconstruct", "image", IMG,
           lambda x: fm.zernike_moments(x, 4).reconstruct()),
    Target("PHTMoments.reconstruct", "image", IMG, lambda x: fm.pct(x, 2, 2).reconstruct()),
    Target("legendre_moments", "x", (10, 10), lambda x: fm.legendre_moments(x, 4)),
    Target("legendre_moments 3-D", "x", (6, 6, 6), lambda x: fm.legendre_moments(x, 3, ndim=3)),
    Target("gegenbauer_moments", "x", (10, 10), lambda x: fm.gegenbauer_moments(x, 4, lam=0.7)),
    Target("jacobi_moments", "x", (10, 10),
           lambda x: fm.jacobi_moments(x, 4, alpha=0.2, beta=0.3)),
    Target("JacobiTransform.forward", "x", (10, 10), lambda x: _plan("jacobi").forward(x)),
    Target("JacobiTransform.forward 3-D", "x", (6, 6, 6), lambda x: _plan("jacobi3").forward(x)),
    Target("JacobiTransform.inverse", "coeffs", (5, 5), lambda x: _plan("jacobi").inverse(x)),
    Target("JacobiTransform.adjoint", "y", (5, 5), lambda x: _plan("jacobi").adjoint(x)),
    Target("BoxMoments.reconstruct", "x", (10, 10),
           lambda x: fm.legendre_moments(x, 4).reconstruct()),
    Target("gaussian_filter", "x", (24,), lambda x: fm.gaussian_filter(x, 2.0)),
    Target("GaussianFilter", "x", (24,), lambda x: _plan("gauss")(x)),
    Target("morlet_transform", "x", (24,), lambda x: fm.morlet_transform(x, 3.0)),
    Target("MorletTransform", "x", (24,), lambda x: _plan("morlet")(x)),
    Target("cwt", "x", (24,), lambda x: fm.cwt(x, [4.0, 2.0])[0]),
    Target("CWT", "x", (24,), lambda x: _plan("cwt")(x)),
    Target("features", "images", (2, 12, 12), lambda x: fm.features(x, orders=3)),
    Target("feature_distances", "a", (4, 6), lambda x: fm.feature_distances(x)),
    Target("pair_statistics", "feats", (5, 6), lambda x: _pairs(fm.pair_statistics(x)),
           same_kind=False),
    Target("psnr reference", "reference", IMG,
           lambda x: fm.psnr(x, np.full(IMG, 0.5), data_range=255.0)),
    Target("psnr estimate", "estimate", IMG,
           lambda x: fm.psnr(np.full(IMG, 0.5), x, data_range=255.0)),
]
IDS = [t.name for t in TARGETS]

# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------

NP_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "bool", "float16", "float32",
             "float64", "complex64", "complex128", ">f8", ">f4", ">i4", ">i2", ">c16", ">u2"]
TORCH_DTYPES = {"int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
                "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool,
                "float16": torch.float16, "bfloat16": torch.bfloat16,
                "float32": torch.float32, "float64": torch.float64,
                "complex64": torch.complex64, "complex128": torch.complex128}


@dataclass
class Case:
    container: str  # numpy, torch, list, str, none
    dtype: str
    shape: tuple[int, ...]
    layout: str
    nonfinite: str | None
    data: np.ndarray | None  # the logical data, native dtype (bfloat16 kept as float32)


def _policy_np(dtype: str) -> np.dtype:
    """The dtype the policy computes data of ``dtype`` in (as NumPy; complex keeps complex)."""
    if dtype == "bfloat16":
        return np.dtype(np.float32)
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return np.dtype(np.complex128 if dt.itemsize == 16 else np.complex64)
    return np.dtype(np.float64 if dt == np.float64 else np.float32)


@st.composite
def cases(draw: Any, target: Target) -> Case:
    container = draw(st.sampled_from(["numpy"] * 6 + ["torch"] * 3 + ["list", "str", "none"]))
    if container in ("str", "none"):
        return Case(container, "", (), "c", None, None)
    if container == "torch":
        dtype = draw(st.sampled_from(list(TORCH_DTYPES)))
    else:
        dtype = draw(st.sampled_from(NP_DTYPES))
    if container == "list" and dtype.startswith(">"):
        dtype = dtype[1:].replace("f8", "float64").replace("f4", "float32")
        dtype = {"i4": "int32", "i2": "int16", "c16": "complex128", "u2": "uint16"}.get(dtype,
                                                                                       dtype)
    shape = list(target.shape)
    mode = draw(st.sampled_from(["base"] * 5 + ["batch", "drop", "zero", "extra"]))
    if mode == "batch":
        shape = [draw(st.integers(1, 2)) for _ in range(draw(st.integers(1, 2)))] + shape
    elif mode == "drop":
        shape = shape[draw(st.integers(1, len(shape))):]
    elif mode == "zero" and shape:
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    elif mode == "extra":
        shape = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 5)))]
    shape = tuple(shape)
    layouts = ["c", "c", "strided", "fortran", "negative", "readonly"]
    if container == "torch":
        layouts = ["c", "c", "strided", "transposed", "grad"]
    layout = draw(st.sampled_from(layouts)) if container != "list" else "c"
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(shape) * 3 + (0 if target.complex_base else 1)
    if target.complex_base:
        base = base + 1j * rng.standard_normal(shape)
    kind = "f" if dtype == "bfloat16" else np.dtype(dtype).kind
    if kind == "b":
        data = rng.random(shape) > 0.5
    elif kind in "iu":
        lo = 0 if kind == "u" else -5
        data = rng.integers(lo, 10, shape).astype(np.dtype(dtype).newbyteorder("="))
    elif kind == "c":
        data = (base if np.iscomplexobj(base) else base + 0.5j).astype(
            np.dtype(dtype).newbyteorder("="))
    else:
        nat = np.float32 if dtype == "bfloat16" else np.dtype(dtype).newbyteorder("=")
        data = base.real.astype(nat)
        if dtype == "bfloat16":
            data = torch.from_numpy(data).to(torch.bfloat16).float().numpy()
    data = np.asarray(data)
    nonfinite = None
    if kind in "fc" and data.size and draw(st.integers(0, 5)) == 0:
        nonfinite = draw(st.sampled_from(["nan", "inf", "-inf"]))
        pos = tuple(draw(st.integers(0, n - 1)) for n in shape)
        data = data.copy()
        data[pos] = float(nonfinite)
    return Case(container, dtype, shape, layout, nonfinite, data)


def _make_input(case: Case) -> Any:
    if case.container == "str":
        return "image.png"
    if case.container == "none":
        return None
    d = case.data
    if case.container == "list":
        return d.tolist()
    if case.container == "torch":
        t = torch.from_numpy(d.copy()).to(TORCH_DTYPES[case.dtype])
        if case.layout == "strided" and t.ndim:
            big = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype)
            big[..., ::2] = t
            t = big[..., ::2]
        elif case.layout == "transposed" and t.ndim >= 2:
            t = t.mT.contiguous().mT
        elif case.layout == "grad" and (t.is_floating_point() or t.is_complex()):
            t = t.requires_grad_()
        return t
    x = d.astype(np.dtype(case.dtype)) if case.dtype.startswith(">") else d.copy()
    if case.layout == "strided" and x.ndim:
        big = np.zeros((*x.shape[:-1], 2 * x.shape[-1]), dtype=x.dtype)
        big[..., ::2] = x
        x = big[..., ::2]
    elif case.layout == "fortran":
        x = np.asfortranarray(x)
    elif case.layout == "negative":
        x = np.flip(np.flip(x).copy())
    elif case.layout == "readonly":
        x.flags.writeable = False
    return x


def _oracle_input(case: Case) -> np.ndarray:
    pol = _policy_np(case.dtype)
    wide = np.complex128 if pol.kind == "c" else np.float64
    return np.array(case.data.astype(pol), dtype=wide, order="C")  # (0-d stays 0-d)


def _as_array(out: Any) -> np.ndarray:
    if isinstance(out, fm.Moments):
        out = out.data
    elif isinstance(out, fm.FeatureSet):
        out = out.tensor
    if isinstance(out, torch.Tensor):
        return out.detach().cpu().resolve_conj().numpy()
    return np.asarray(out)


def _snapshot(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    return copy.deepcopy(x)


def _unchanged(x: Any, before: Any) -> bool:
    if isinstance(x, torch.Tensor):
        a, b = x.detach(), before
        return a.dtype == b.dtype and a.shape == b.shape and bool(
            ((a == b) | (torch.isnan(a) & torch.isnan(b)) if (a.is_floating_point()
                                                             or a.is_complex()) else a == b
             ).all())
    if isinstance(x, np.ndarray):
        return (x.dtype == before.dtype and x.shape == before.shape
                and np.array_equal(x, before, equal_nan=x.dtype.kind in "fc"))
    return repr(x) == repr(before)


def _names(param: str, exc: BaseException) -> bool:
    return re.search(rf"\b{re.escape(param)}\b", str(exc)) is not None


def _describe(target: Target, case: Case) -> str:
    return (f"{target.name}({target.param}=<{case.container} {case.dtype} {case.shape} "
            f"layout={case.layout} nonfinite={case.nonfinite}>)")


def _run(fn: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    try:
        return fn(), None
    except Exception as exc:  # the suite classifies every exception
        return None, exc


def check_case(target: Target, case: Case) -> None:
    x = _make_input(case)
    before = _snapshot(x)
    got, err = _run(lambda: target.call(x))
    what = _describe(target, case)
    assert _unchanged(x, before), f"{what}: the input was modified"
    if case.container in ("str", "none") or case.nonfinite:
        assert err is not None, f"{what}: accepted (got {type(got).__name__}), expected an error"
        assert isinstance(err, (TypeError, ValueError)) and _names(target.param, err), (
            f"{what}: {type(err).__name__}: {err}")
        return
    ref, ref_err = _run(lambda: target.call(_oracle_input(case)))
    if ref_err is not None:
        assert isinstance(ref_err, (TypeError, ValueError)) and _names(target.param, ref_err), (
            f"{what}: the float64 oracle raised an unclear {type(ref_err).__name__}: {ref_err}")
        assert err is not None, (f"{what}: accepted, but the same data as float64 raises "
                                 f"{type(ref_err).__name__}: {ref_err}")
        assert isinstance(err, (TypeError, ValueError)) and _names(target.param, err), (
            f"{what}: {type(err).__name__}: {err}")
        return
    assert err is None, (f"{what}: raised {type(err).__name__}: {err} but the same data as a "
                         f"native float64 array works")
    if target.same_kind and isinstance(got, (np.ndarray, torch.Tensor)):
        want_kind = torch.Tensor if case.container == "torch" else np.ndarray
        assert isinstance(got, want_kind), f"{what}: returned {type(got).__name__}"
    a, b = _as_array(got), _as_array(ref)
    assert a.shape == b.shape, f"{what}: shape {a.shape}, float64 oracle {b.shape}"
    if a.size == 0:
        return
    tol = 1e-9 if _policy_np(case.dtype) in (np.float64, np.complex128) else 2e-3
    # float32 rounding is relative to the data's magnitude as much as to the result's
    scale = max(float(np.max(np.abs(b))) if np.isfinite(b).all() else 1.0,
                float(np.max(np.abs(case.data), initial=0.0)))
    diff = np.abs(a.astype(np.complex128) - b.astype(np.complex128))
    worst = float(np.nanmax(diff)) if diff.size else 0.0
    same_nonfinite = np.array_equal(np.isfinite(a), np.isfinite(b))
    assert same_nonfinite and worst <= tol * max(scale, 1e-300) + 1e-300, (
        f"{what}: differs from the float64 oracle by {worst:.3g} (scale {scale:.3g}, "
        f"tolerance {tol})")


@pytest.mark.parametrize("target", TARGETS, ids=IDS)
def test_array_argument(target: Target) -> None:
    @SETTINGS
    @given(st.data())
    def inner(data: Any) -> None:
        check_case(target, data.draw(cases(target)))

    inner()


# ---------------------------------------------------------------------------------------------
# Integer and number arguments: bools are not integers, floats are not integers, strings are
# not numbers; what was not computed cannot be asked for
# ---------------------------------------------------------------------------------------------

_BAD_INTS = [2.5, 2.0, True, False, "2", None, [2], -1, 1j, float("nan")]


def _img() -> np.ndarray:
    return np.random.default_rng(1).random(IMG)


INT_TARGETS = [
    ("zernike_moments order", "order", lambda v: fm.zernike_moments(_img(), v)),
    ("pcet nmax", "nmax", lambda v: fm.pcet(_img(), v, 2)),
    ("legendre_moments order", "order", lambda v: fm.legendre_moments(_img(), v)),
    ("JacobiTransform order", "order", lambda v: fm.JacobiTransform((8, 8), v)),
    ("order_pairs n", "n", lambda v: fm.order_pairs("zernike", v)),
    ("features orders", "orders", lambda v: fm.features(_img()[None], orders=v)),
    ("pair_statistics closest", "closest",
     lambda v: fm.pair_statistics(np.random.default_rng(2).random((5, 3)), closest=v)),
    ("gaussian_filter order", "order", lambda v: fm.gaussian_filter(np.ones(16), 2.0, order=v)),
    ("sample_image size", "size", lambda v: fmdata.sample_image("camera", v)),
    ("DiskMoments.reconstruct orders", "orders",
     lambda v: fm.zernike_moments(_img(), 4).reconstruct(orders=[v])),
    ("run_features orders", "orders", lambda v: _run_features(orders=v)),
    ("run_features batch", "batch", lambda v: _run_features(batch=v)),
    ("run_features k", "k", lambda v: _run_features(k=v)),
    ("open_images size", "size", lambda v: _collection_files("folder", size=v)),
    ("load_image size", "size", lambda v: fmdata.load_image(_collection_files("png"), v)),
]

_COLLECTION: dict[str, Any] = {}


def _collection_files(kind: str, size: Any = None) -> Any:
    """A small image folder and ``.npy`` stack in a temporary folder made once; ``kind``
    ``"folder"`` opens the folder with ``size``."""
    import tempfile
    from pathlib import Path

    from PIL import Image

    if not _COLLECTION:
        _COLLECTION["dir"] = tempfile.TemporaryDirectory()
        base = Path(_COLLECTION["dir"].name)
        (base / "imgs").mkdir()
        for i in range(3):
            Image.fromarray(np.full((12, 12), 40 * i, np.uint8)).save(base / "imgs" / f"{i}.png")
        np.save(base / "s.npy", np.random.default_rng(0).random((3, 12, 12)))
    base = Path(_COLLECTION["dir"].name)
    if kind == "png":
        return base / "imgs" / "0.png"
    from fastmoments.collections import open_images

    if kind == "folder":
        return open_images(base / "imgs", size=size)
    return open_images(base / "s.npy")


def _run_features(**kwargs: Any) -> Any:
    """run_features on the small stack into a new output (the collection surface)."""
    import tempfile
    from pathlib import Path

    from fastmoments.collections import run_features

    opts = {"orders": 2, "progress": False, **kwargs}
    with tempfile.TemporaryDirectory() as out:
        return run_features(_collection_files("npy"), Path(out) / "f.zarr", **opts)


# values that are valid for that parameter (a sequence of orders, None for a default)
VALID = {("sample_image size", "None"), ("features orders", "[2]"),
         ("run_features orders", "[2]"), ("run_features batch", "None"),
         ("open_images size", "None"), ("load_image size", "None"),
         ("gaussian_filter order", "[2]"), ("psnr data_range", "None"),
         ("zernike_moments memory_budget", "None")}


@pytest.mark.parametrize(("label", "param", "call"), INT_TARGETS, ids=[t[0] for t in INT_TARGETS])
@pytest.mark.parametrize("bad", _BAD_INTS, ids=[repr(b) for b in _BAD_INTS])
def test_integer_arguments(label: str, param: str, call: Callable[[Any], Any], bad: Any) -> None:
    _valid_or_named_error(label, param, call, bad)


def _valid_or_named_error(label: str, param: str, call: Callable[[Any], Any], bad: Any) -> None:
    """``call(bad)`` works where ``bad`` is valid (VALID), else is an error naming ``param``."""
    if (label, repr(bad)) in VALID:
        call(bad)
        return
    with pytest.raises((TypeError, ValueError)) as info:
        call(bad)
    assert _names(param, info.value), f"{label}={bad!r}: {info.value}"


_BAD_REALS = [float("nan"), float("inf"), True, "0.3", 1j, None, -5.0]

REAL_TARGETS = [
    ("psnr data_range", "data_range",
     lambda v: fm.psnr(_img(), _img() * 0.5, data_range=v)),
    ("gaussian_filter sigma", "sigma", lambda v: fm.gaussian_filter(np.ones(16), v)),
    ("morlet_transform sigma", "sigma", lambda v: fm.morlet_transform(np.ones(16), v)),
    ("gegenbauer_moments lam", "lam", lambda v: fm.gegenbauer_moments(_img(), 3, lam=v)),
    ("jacobi_moments alpha", "alpha",
     lambda v: fm.jacobi_moments(_img(), 3, alpha=v, beta=0.0)),
    ("zernike_moments memory_budget", "memory_budget",
     lambda v: fm.zernike_moments(_img(), 4, memory_budget=v)),
]


@pytest.mark.parametrize(("label", "param", "call"), REAL_TARGETS,
                         ids=[t[0] for t in REAL_TARGETS])
@pytest.mark.parametrize("bad", _BAD_REALS, ids=[repr(b) for b in _BAD_REALS])
def test_real_arguments(label: str, param: str, call: Callable[[Any], Any], bad: Any) -> None:
    _valid_or_named_error(label, param, call, bad)


@pytest.mark.parametrize("bad", [torch.int32, np.int64, "int32", torch.float16, True])
@pytest.mark.parametrize("label", ["zernike_moments", "ZernikeTransform", "JacobiTransform",
                                   "pcet", "features"])
def test_explicit_dtype_must_be_a_working_dtype(label: str, bad: Any) -> None:
    img = _img()
    call = {"zernike_moments": lambda: fm.zernike_moments(img, 4, dtype=bad),
            "ZernikeTransform": lambda: fm.ZernikeTransform(12, 4, dtype=bad),
            "JacobiTransform": lambda: fm.JacobiTransform((8, 8), 3, dtype=bad),
            "pcet": lambda: fm.pcet(img, 2, 2, dtype=bad),
            "features": lambda: fm.features(img[None], orders=3, dtype=bad)}[label]
    with pytest.raises((TypeError, ValueError), match="dtype"):
        call()


# ---------------------------------------------------------------------------------------------
# data: names, sizes and files
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cameraman", "", None, 3, "CAMERA"])
def test_sample_image_names(name: Any) -> None:
    with pytest.raises(ValueError, match="name must be one of"):
        fmdata.sample_image(name, 16)


def test_sample_image_is_float64_square() -> None:
    img = fmdata.sample_image("coins", 16)
    assert img.shape == (16, 16) and img.dtype == np.float64
    assert 0 <= img.min() and img.max() <= 255


def test_load_image_bad_files(tmp_path: Any) -> None:
    from PIL import Image

    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    text = tmp_path / "text.png"
    text.write_text("not an image")
    good = tmp_path / "good.png"
    Image.fromarray((np.arange(30 * 20) % 256).astype(np.uint8).reshape(20, 30)).save(good)
    truncated = tmp_path / "trunc.png"
    truncated.write_bytes(good.read_bytes()[:60])
    for path in (empty, text, truncated):
        with pytest.raises(ValueError, match=re.escape(str(path))):
            fmdata.load_image(path)
    with pytest.raises(FileNotFoundError):
        fmdata.load_image(tmp_path / "missing.png")
    for bad in (None, 3, True, ["a.png"]):
        with pytest.raises(TypeError, match="path must be"):
            fmdata.load_image(bad)
    for bad in (2.5, True, "8"):
        with pytest.raises(TypeError, match="size must be an integer"):
            fmdata.load_image(good, bad)
    with pytest.raises(ValueError, match="size must be >= 1"):
        fmdata.load_image(good, 0)
    img = fmdata.load_image(good)
    assert img.shape == (20, 20)
    want = (np.arange(30 * 20) % 256).reshape(20, 30)[:, 5:25]
    np.testing.assert_array_equal(img, want)
    assert fmdata.load_image(str(good), 8).shape == (8, 8)


def test_a_nan_in_a_list_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="x contains NaN"):
        fm.gaussian_filter([1.0, math.nan, 2.0], 1.0)


@pytest.mark.parametrize("bad", ["yes", 1, 0.0])
def test_progress_option_must_be_a_bool_or_none(bad: Any) -> None:
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        fm.features(_img()[None], orders=2, progress=bad)
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        fm.pair_statistics(np.random.default_rng(3).random((5, 3)), progress=bad)


@pytest.mark.parametrize("call", [
    lambda x: fm.zernike_moments(x, 2),
    lambda x: fm.pcet(x, 2, 2),
    lambda x: fm.ZernikeTransform(8, 2).forward(x),
    lambda x: fm.gaussian_filter1d(x, 2.0),
    lambda x: fm.gaussian_filter(x, 2.0),
    lambda x: fm.cwt(x, [2.0]),
])
def test_ragged_nested_lists_are_refused_by_name(call):
    """Ragged nested lists get the library's error naming the input, not NumPy's
    "inhomogeneous shape"."""
    with pytest.raises(ValueError, match=r"(image|x) must be a rectangular array of numbers"):
        call([[1.0, 2.0], [3.0]])
