"""scikit-learn transformer of volumes (fastmoments.sklearn.Zernike3DFeatures): the estimator
API, equality with zernike3d_moments, rotations, pipelines, check_estimator."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import parametrize_with_checks

from fastmoments.ball import zernike3d_moments
from fastmoments.sklearn import Zernike3DFeatures

#: Generic checks whose synthetic data are 2-D with a number of columns that is not a cube
#: (2, 3, 4, 5 or 10 columns). The transformer reads a 2-D row as a flattened N x N x N volume,
#: so such data are invalid input: it raises the documented ValueError naming X, and the checks
#: fail on that error alone (test_noncube_checks_fail_only_on_width proves it for each). The
#: same contracts are tested on cubes below.
NONCUBE_CHECKS = (
    "check_fit_score_takes_y", "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters", "check_estimators_fit_returns_self",
    "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_dtype_object",
    "check_pipeline_consistency", "check_estimators_nan_inf", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_transformer_data_not_an_array",
    "check_transformer_general", "check_transformer_preserve_dtypes",
    "check_methods_sample_order_invariance", "check_methods_subset_invariance",
    "check_fit2d_1sample", "check_dict_unchanged", "check_fit_idempotent",
    "check_fit_check_is_fitted", "check_n_features_in", "check_fit2d_predict1d",
)
_REASON = ("feeds 2-D X whose number of columns is not a cube number of voxels; the same "
           "contract is tested on cubes in tests/ball/test_sklearn.py")


def _vol(rng, n=3, side=10):
    return rng.random((n, side, side, side))


@parametrize_with_checks([Zernike3DFeatures(orders=2)],
                         expected_failed_checks=lambda est: dict.fromkeys(NONCUBE_CHECKS,
                                                                          _REASON))
def test_check_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name", NONCUBE_CHECKS)
def test_noncube_checks_fail_only_on_width(name):
    est = Zernike3DFeatures(orders=2)
    check = getattr(estimator_checks, name)
    with pytest.raises((ValueError, AssertionError)) as info:
        check(type(est).__name__, est)
    text = f"{info.value} {info.value.__cause__}"
    assert "not a cube number" in text, text


@pytest.mark.parametrize("kind", ["invariants", "magnitude", "complex"])
def test_transform_equals_zernike3d_moments(rng, kind):
    X = _vol(rng)
    X0 = X.copy()
    est = Zernike3DFeatures(orders=5, kind=kind, k=2)
    out = est.fit_transform(X)
    assert np.array_equal(X, X0)  # the input is not modified
    om = zernike3d_moments(X, 5, k=2, dtype="float64")
    v = om.values()
    ref = {"invariants": om.invariants(), "magnitude": np.abs(v),
           "complex": np.stack([v.real, v.imag], -1).reshape(3, -1)}[kind]
    assert out.dtype == np.float64 and out.shape == ref.shape
    assert np.abs(out - ref).max() <= 1e-14 * np.abs(ref).max()
    names = est.get_feature_names_out()
    assert len(names) == out.shape[1] == len(est.moment_index_) * (2 if kind == "complex"
                                                                   else 1)
    first = {"invariants": "F[0,0]", "magnitude": "|Om[0,0,0]|", "complex": "Re Om[0,0,0]"}
    assert names[0] == first[kind]
    # the flattened layout gives the same features
    assert np.array_equal(est.transform(X.reshape(3, -1)), out)


def test_layouts_dtypes_and_attributes(rng):
    X = _vol(rng, 2, 8)
    est = Zernike3DFeatures(orders=3).fit(X.reshape(2, -1))
    assert est.volume_shape_ == (8, 8, 8) and est.n_features_in_ == 512
    f32 = Zernike3DFeatures(orders=3, dtype="float32").fit_transform(X.astype(np.float32))
    assert f32.dtype == np.float32
    assert np.allclose(f32, est.transform(X), rtol=1e-5, atol=1e-6)
    ro = X.copy()
    ro.flags.writeable = False
    assert np.array_equal(est.transform(ro), est.transform(X))
    nc = Zernike3DFeatures(orders=2).fit(rng.random((2, 6, 7, 8)))  # not a cube: inscribed ball
    assert nc.volume_shape_ == (6, 7, 8) and nc.transform(rng.random((1, 6, 7, 8))).shape == (1, 4)
    est2 = pickle.loads(pickle.dumps(est))
    assert np.array_equal(est2.transform(X), est.transform(X))
    c = clone(Zernike3DFeatures(orders=4, kind="magnitude"))
    assert c.get_params()["orders"] == 4 and c.get_params()["kind"] == "magnitude"


def test_quarter_turns_and_device_list(rng):
    X = _vol(rng, 2, 9)
    est = Zernike3DFeatures(orders=6).fit(X)
    turned = np.rot90(X, k=1, axes=(1, 3))
    assert np.allclose(est.transform(turned), est.transform(X), rtol=1e-12, atol=0)
    par = Zernike3DFeatures(orders=6, device=["cpu", "cpu"]).fit(X)
    assert np.allclose(par.transform(X), est.transform(X), rtol=1e-13, atol=0)


def test_errors(rng):
    X = _vol(rng, 2, 6)
    with pytest.raises(NotFittedError):
        Zernike3DFeatures().transform(X)
    with pytest.raises(ValueError, match="kind"):
        Zernike3DFeatures(kind="moments").fit(X)
    with pytest.raises(ValueError, match="dtype"):
        Zernike3DFeatures(dtype="float16").fit(X)
    with pytest.raises(ValueError, match=r"^orders must"):
        Zernike3DFeatures(orders=-1).fit(X)
    with pytest.raises(TypeError, match="order"):
        Zernike3DFeatures(orders=2.5).fit(X)
    with pytest.raises(ValueError, match=r"^k must"):
        Zernike3DFeatures(k=0).fit(X)
    with pytest.raises(ValueError, match="cube number"):
        Zernike3DFeatures().fit(rng.random((2, 30)))
    with pytest.raises(ValueError, match="X must be"):
        Zernike3DFeatures().fit(rng.random((2, 6, 6)))
    est = Zernike3DFeatures(orders=2).fit(X)
    with pytest.raises(ValueError, match="expecting 216 features"):
        est.transform(_vol(rng, 1, 7))
    bad = X.copy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.transform(bad)


def test_pipeline_and_grid_search(rng):
    """Two shapes (a rod and a slab) at random quarter-turn orientations, classified."""
    base = np.zeros((2, 12, 12, 12))
    base[0, 2:10, 5:7, 5:7] = 1
    base[1, 5:7, 2:10, 2:10] = 1
    X, y = [], []
    for i in range(16):
        cls = i % 2
        axes = [(1, 2), (0, 2), (0, 1)][int(rng.integers(3))]
        X.append(np.rot90(base[cls], k=int(rng.integers(4)), axes=axes))
        y.append(cls)
    X, y = np.asarray(X) + 0.01 * rng.random((16, 12, 12, 12)), np.asarray(y)
    pipe = make_pipeline(Zernike3DFeatures(orders=4), StandardScaler(),
                         KNeighborsClassifier(n_neighbors=1))
    assert pipe.fit(X[:8], y[:8]).score(X[8:], y[8:]) == 1.0
    grid = GridSearchCV(pipe, {"zernike3dfeatures__orders": [2, 4]}, cv=2).fit(X, y)
    assert grid.best_params_["zernike3dfeatures__orders"] in (2, 4)


def test_placement_options_follow_each_volume(rng):
    X = np.zeros((2, 12, 12, 12))
    X[0, 2:6, 3:7, 1:5] = rng.random((4, 4, 4))
    X[1, 5:11, 6:9, 4:10] = rng.random((6, 3, 6))
    est = Zernike3DFeatures(orders=4, kind="magnitude", center="centroid", radius="enclosing")
    out = est.fit_transform(X)
    ref = np.abs(zernike3d_moments(X, 4, center="centroid", radius="enclosing",
                                   dtype="float64").values())
    assert np.abs(out - ref).max() <= 1e-14 * np.abs(ref).max()
    with pytest.raises(ValueError, match="center"):
        Zernike3DFeatures(center="middle").fit(X)


def test_orders_list_keeps_those_columns():
    """orders=[...] keeps the columns of those orders of the full set up to the highest."""
    X = np.random.default_rng(4).random((2, 10, 10, 10))
    for kind in ("invariants", "magnitude", "complex"):
        full = Zernike3DFeatures(orders=4, kind=kind).fit(X)
        some = Zernike3DFeatures(orders=[1, 4], kind=kind).fit(X)
        names = list(full.get_feature_names_out())
        keep = [names.index(n) for n in some.get_feature_names_out()]
        assert all(key[0] in (1, 4) for key in some.moment_index_)
        assert len(keep) == len(some.get_feature_names_out()) > 0
        np.testing.assert_array_equal(some.transform(X), full.transform(X)[:, keep])
