"""``import fastmoments`` is lazy: it imports neither torch, scipy nor numba, and every
documented name still comes from ``from fastmoments import X``, attribute access and ``dir``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import fastmoments


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter (the test process has imported everything)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
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


def test_cold_cwt_fits_never_import_scipy(tmp_path):
    # the Morlet fits of a first call on an empty cache (scipy.linalg's import alone took
    # ~0.5 s of it): NumPy's Cholesky and solver
    code = (f"import os; os.environ['FASTMOMENTS_CACHE_DIR'] = {str(tmp_path)!r}; "
            "import sys, numpy as np; from fastmoments.signal import cwt; "
            "c, f = cwt(np.ones(256), np.geomspace(2.0, 40.0, 5)); "
            "print('scipy' in sys.modules, c.shape)")
    assert _fresh(code) == "False (5, 256)"


@pytest.mark.parametrize("name", fastmoments.__all__)
def test_every_documented_name_resolves(name):
    value = getattr(fastmoments, name)
    assert value is not None
    assert name in dir(fastmoments)
    ns: dict = {}
    exec(f"from fastmoments import {name}", ns)
    assert ns[name] is value


def test_features_is_the_function_and_recognition_the_subpackage():
    code = ("import fastmoments as fm; import fastmoments.recognition.objects; "
            "import fastmoments.sklearn; print(callable(fm.features), fm.features.__name__, "
            "fm.recognition.__name__, fm.features is fm.recognition.features)")
    assert _fresh(code) == "True features fastmoments.recognition True"


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        fastmoments.not_a_name  # noqa: B018
    assert not hasattr(fastmoments, "zernike_moment")


def test_subpackages_are_attributes():
    code = ("import fastmoments as fm; print(fm.disk.__name__, fm.box.__name__, fm.data.__name__, "
            "fm.recognition.__name__)")
    assert _fresh(code) == ("fastmoments.disk fastmoments.box fastmoments.data "
                            "fastmoments.recognition")


def test_streamed_recurrence_keeps_gradients():
    """A plan whose radial table does not fit its budget streams the recurrence, whose steps
    reuse their buffers: autograd must not see them overwritten (found while timing first
    calls; the forward and the reconstruction both stream here)."""
    import numpy as np
    import torch

    from fastmoments.disk import ZernikeTransform

    plan = ZernikeTransform(40, 30, k=2, dtype=torch.float64, memory_budget=2_000_000)
    assert plan.engine.table() is None  # streamed
    rng = np.random.default_rng(0)
    base = torch.as_tensor(rng.random((40, 40)))
    dirs = torch.as_tensor(rng.random((3, 40, 40)))

    w1 = torch.as_tensor(rng.random(torch.view_as_real(plan.forward(base).data).shape))
    w2 = torch.as_tensor(rng.random((40, 40)))

    def fn(p):  # two scalar projections: two backward passes
        img = base + (p[:, None, None] * dirs).sum(0)
        A = plan.forward(img)
        return ((torch.view_as_real(A.data) * w1).sum(),
                (A.reconstruct(orders=(2, 6)) * w2).sum())

    p = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(fn, (p,))
