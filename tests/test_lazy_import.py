"""``import fastmoments`` is lazy (issue 15): it imports neither torch, scipy nor numba, and every
documented name still comes from ``from fastmoments import X``, attribute access and ``dir``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import fastmoments


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter (the test process has imported everything)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    return out.stdout.strip()


def test_import_pulls_in_no_heavy_module():
    code = ("import sys, fastmoments; "
            "print(sorted(m for m in ('torch', 'scipy', 'numba', 'sklearn', 'pandas', 'dask') "
            "if m in sys.modules))")
    assert _fresh(code) == "[]"


def test_zernike_first_call_never_imports_numba_or_scipy():
    code = ("import sys, numpy as np, fastmoments as fm; "
            "A = fm.zernike_moments(np.ones((16, 16)), 4); "
            "print('numba' in sys.modules, 'scipy' in sys.modules, A.order)")
    assert _fresh(code) == "False False 4"


@pytest.mark.parametrize("name", fastmoments.__all__)
def test_every_documented_name_resolves(name):
    value = getattr(fastmoments, name)
    assert value is not None
    assert name in dir(fastmoments)
    ns: dict = {}
    exec(f"from fastmoments import {name}", ns)
    assert ns[name] is value


def test_features_stays_the_function_after_the_subpackage_is_imported():
    code = ("import fastmoments as fm; import fastmoments.features.objects; "
            "import fastmoments.sklearn; print(callable(fm.features), fm.features.__name__)")
    assert _fresh(code) == "True features"


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        fastmoments.not_a_name  # noqa: B018
    assert not hasattr(fastmoments, "zernike_moment")


def test_subpackages_are_attributes():
    code = "import fastmoments as fm; print(fm.disk.__name__, fm.box.__name__, fm.data.__name__)"
    assert _fresh(code) == "fastmoments.disk fastmoments.box fastmoments.data"
