"""A pytest plugin that runs scipy.ndimage's own tests of its Gaussian filters on fastmoments'.

Loaded by ``tests/signal/test_scipy_suite.py`` into a pytest run of scipy's test file (a
separate process): before collection it puts :func:`fastmoments.gaussian_filter`,
``gaussian_filter1d``, ``gaussian_laplace`` and ``gaussian_gradient_magnitude`` in
``scipy.ndimage`` (where the tests call them, and where their parametrizations read them),
keeps the tests that call them and no other, and writes each one's outcome to the JSON file
named by ``FM_SCIPY_SUITE_REPORT``.
"""

from __future__ import annotations

import inspect
import json
import os

import pytest

NAMES = ("gaussian_filter", "gaussian_filter1d", "gaussian_laplace",
         "gaussian_gradient_magnitude")

_OUTCOMES: dict[str, dict] = {}
_SWAPPED: dict = {}


def pytest_configure(config: pytest.Config) -> None:
    import scipy.ndimage as ndimage
    from scipy._lib._array_api import xp_capabilities_table

    import fastmoments as fm

    for name in NAMES:
        theirs, ours = getattr(ndimage, name), getattr(fm, name)
        # scipy's test decorators look the function up in its capability table
        xp_capabilities_table[ours] = xp_capabilities_table[theirs]
        setattr(ndimage, name, ours)
        _SWAPPED[ours] = name


def _calls_gaussian(item: pytest.Item) -> bool:
    """Whether a scipy test exercises the swapped filters: one is a parameter of the case,
    or the test's body (decorators aside) calls one and no other filter is its parameter."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    funcs = [v for v in params.values() if callable(v) and getattr(v, "__name__", "")]
    if any(f in _SWAPPED for f in funcs):
        return True
    if any(getattr(f, "__module__", "").startswith("scipy.ndimage") for f in funcs):
        return False
    try:
        source = inspect.getsource(item.function)
    except (OSError, TypeError):
        return False
    body = source[source.index("def "):]
    return any(f"ndimage.{n}(" in body for n in NAMES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep = [it for it in items if _calls_gaussian(it)]
    config.hook.pytest_deselected(items=[it for it in items if it not in keep])
    items[:] = keep


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    name = report.nodeid.split("::", 1)[1]
    entry = _OUTCOMES.setdefault(name, {"outcome": "passed", "message": ""})
    if report.failed:
        entry["outcome"] = "failed"
        entry["message"] = str(report.longrepr)[-3000:]
    elif report.skipped and report.when in ("setup", "call"):
        entry["outcome"] = "skipped"


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("FM_SCIPY_SUITE_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(_OUTCOMES, f, indent=1, sort_keys=True)
