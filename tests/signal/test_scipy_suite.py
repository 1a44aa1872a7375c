"""scipy.ndimage's own tests of its Gaussian filters, run on fastmoments' filters.

The tests of ``scipy/ndimage/tests/test_filters.py`` (shipped in the scipy wheel) that call
``gaussian_filter``, ``gaussian_filter1d``, ``gaussian_laplace`` or
``gaussian_gradient_magnitude`` run in one pytest process with fastmoments' functions in
``scipy.ndimage`` (``tests/signal/scipy_swap_plugin.py``). Every one must pass but the
exceptions below, each a tolerance tighter than fastmoments' stated error or a documented
departure from scipy (``docs/signal.md``, "scipy.ndimage's test suite"); each exception is
an xfail (strict: it fails the suite once it passes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastmoments as fm

pytest.importorskip("hypothesis")  # scipy's test module imports it

_DTYPE = ("dtype policy: integer input gives float32 (fastmoments' policy), scipy the input's "
          "integer dtype; the test compares integer results")
_EXACT = ("departure: fastmoments' default applies the untruncated kernel (this 3x3 input is "
          "shorter than the kernel: folded, exact to rounding); the expected values are "
          "scipy's truncated kernel's, {} from the exact convolution (the untruncated sampled "
          "Gaussian derivatives) where fastmoments is {} from it")
_ROUNDING = ("tolerance: compares values that are 0 in exact arithmetic (~1e-16) with a "
             "relative tolerance; they differ by {} (float64 rounding of a different sum order)")

#: scipy test id -> why it fails on fastmoments
EXCEPTIONS = {
    **{f"TestNdimageFilters::test_generic_laplace01[numpy-{t}]": _DTYPE
       for t in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")},
    "TestNdimageFilters::test_gaussian_laplace02[numpy-int32]": _DTYPE,
    "TestNdimageFilters::test_gaussian_gradient_magnitude01[numpy-int32]": _DTYPE,
    "test_gaussian_filter_float16[numpy]": (
        "dtype policy: float16 input is filtered in float32 (fastmoments' policy), where "
        "scipy raises RuntimeError"),
    "test_multiple_modes_gaussian_laplace[numpy]": _EXACT.format(
        "6.9e-5", "2.2e-7 (its zero-sum second derivative)"),
    "test_multiple_modes_gaussian_gradient_magnitude[numpy]": _EXACT.format(
        "7.9e-6", "1.7e-16"),
    "TestNdimageFilters::test_filter_axes_kwargs[numpy-axes9-gaussian_filter-0-1.0-kwargs0]":
        _ROUNDING.format("1.7e-14"),
    "TestNdimageFilters::test_filter_axes_kwargs[numpy-axes10-gaussian_filter-0-1.0-kwargs0]":
        _ROUNDING.format("1.7e-14"),
    "test_multiple_modes_sequentially[numpy]": (
        "tolerance: bit-for-bit equality of gaussian_filter1d twice and gaussian_filter; they "
        "differ by 1.7e-16 (two FFT implementations of the same folded kernel: NumPy's on the "
        "one-axis fast path, torch's on the general path)"),
}


def _scipy_tests() -> Path | None:
    try:
        import scipy.ndimage.tests as t
    except ImportError:
        return None
    path = Path(t.__file__).parent / "test_filters.py"
    return path if path.exists() else None


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    path = _scipy_tests()
    if path is None:
        pytest.skip("scipy's tests are not installed")
    out = tmp_path_factory.mktemp("scipy_suite") / "report.json"
    here = Path(__file__).parent
    src = Path(fm.__file__).parent.parent
    env = dict(os.environ, FM_SCIPY_SUITE_REPORT=str(out),
               PYTHONPATH=os.pathsep.join([str(src), str(here),
                                           os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "scipy.conftest",
         "-p", "scipy_swap_plugin", "--rootdir", str(path.parent), str(path)],
        cwd=str(out.parent), env=env, capture_output=True, text=True)
    if not out.exists():
        pytest.fail(f"scipy's suite did not run:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    return json.loads(out.read_text())


@pytest.mark.slow  # one pytest process of scipy's tests: ~12 s of CPU, imports included
def test_scipy_gaussian_tests_pass(report: dict) -> None:
    """Every selected scipy test passes, but the listed exceptions."""
    assert len(report) >= 100  # 103 with scipy 1.17.1
    failed = {k: v["message"][-600:] for k, v in report.items()
              if v["outcome"] == "failed" and k not in EXCEPTIONS}
    assert not failed, failed
    passed = sum(v["outcome"] == "passed" for v in report.values())
    assert passed >= len(report) - len(EXCEPTIONS)


@pytest.mark.slow
@pytest.mark.parametrize("test_id", [pytest.param(k, marks=pytest.mark.xfail(strict=True,
                                                                              reason=r))
                                     for k, r in EXCEPTIONS.items()])
def test_scipy_exception(report: dict, test_id: str) -> None:
    assert report.get(test_id, {}).get("outcome") == "passed", report.get(test_id)


@pytest.mark.parametrize("name", ["gaussian_laplace", "gaussian_gradient_magnitude"])
def test_departure_is_closer_to_exact(name: str) -> None:
    """The two 'departure' exceptions: on scipy's 3x3 input, fastmoments' default is the
    exact convolution (the untruncated kernel, to rounding) and scipy's expected values are
    its truncated kernel's."""
    from scipy import ndimage

    arr = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    modes = ["reflect", "wrap"]
    # the exact convolution: the kernel truncated at 20σ (its tail below 1e-80), applied
    # exactly with scipy's own samples
    exact = getattr(fm, name)(arr, 1.0, mode=modes, truncate=20.0, kernel="scipy")
    ours = getattr(fm, name)(arr, 1.0, mode=modes)
    theirs = getattr(ndimage, name)(arr, 1.0, mode=modes)
    err_ours = np.abs(ours - exact).max()
    err_theirs = np.abs(theirs - exact).max()
    # the Laplacian's zero-sum kernel differs from the sampled derivative by
    # (M2/S - σ²)/σ⁴ h0: 2.2e-7 at σ = 1 (Poisson summation); the gradient is exact
    assert err_ours < (3e-7 if name == "gaussian_laplace" else 1e-15)
    assert err_theirs > 100 * err_ours
