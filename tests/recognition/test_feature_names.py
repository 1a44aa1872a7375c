"""One column order, with names, everywhere: ``DiskMoments.invariants()``,
``features()`` and the scikit-learn transformers list the moments by order ``n``, then
repetition ``m``, under the same names, so columns match by name; ``np.asarray`` gives the
feature matrix and the moments; moments objects have ``shape`` and an informative repr."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

import fastmoments as fm
from fastmoments.recognition import features
from fastmoments.sklearn import MomentFeatures, PseudoZernikeFeatures, ZernikeFeatures

IMGS = np.random.default_rng(21).random((5, 20, 20))

CASES = [
    ("zernike", lambda x: fm.zernike_moments(x, 6, dtype="float64"), ZernikeFeatures(orders=6)),
    ("pseudo-zernike", lambda x: fm.pseudo_zernike_moments(x, 5, dtype="float64"),
     PseudoZernikeFeatures(orders=5)),
    ("pcet", lambda x: fm.pcet(x, 3, 3, dtype="float64"), MomentFeatures("pcet", 3)),
    ("pct", lambda x: fm.pct(x, 3, 3, dtype="float64"), MomentFeatures("pct", 3)),
]


@pytest.mark.parametrize("family, moments, transformer", CASES, ids=[c[0] for c in CASES])
def test_columns_match_by_name(family, moments, transformer):
    A = moments(IMGS)
    fs = features(IMGS, family=family, orders=A.order, kind="magnitude", dtype="float64")
    zf = transformer.set_output(transform="pandas").fit(IMGS)
    df = zf.transform(IMGS)
    assert isinstance(df, pd.DataFrame)
    names = A.names()
    assert names == fs.names == list(zf.get_feature_names_out()) == list(df.columns)
    assert A.pairs == fs.pairs == sorted(A.pairs)  # ordered by n, then m
    np.testing.assert_allclose(A.invariants(), fs.matrix, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(df.to_numpy(), fs.matrix, rtol=1e-12, atol=1e-15)
    # the same column under the same name, picked by name
    pick = names[len(names) // 2]
    np.testing.assert_allclose(df[pick].to_numpy(), A.invariants()[:, names.index(pick)],
                               rtol=1e-12)
    n, m = A.pairs[names.index(pick)]
    np.testing.assert_allclose(np.abs(A[n, m]), df[pick].to_numpy(), rtol=1e-12)


def test_zernike_order_is_n_then_m():
    A = fm.zernike_moments(IMGS[0], 4)
    assert A.pairs == [(0, 0), (1, 1), (2, 0), (2, 2), (3, 1), (3, 3), (4, 0), (4, 2), (4, 4)]
    assert A.names()[:3] == ["|A[0,0]|", "|A[1,1]|", "|A[2,0]|"]
    assert A.names("value")[1] == "A[1,1]"
    assert A.names("complex")[:2] == ["Re A[0,0]", "Im A[0,0]"]
    v = A.values()
    for j, (n, m) in enumerate(A.pairs):
        assert v[j] == pytest.approx(A[n, m], rel=1e-6)
    fs = features(IMGS[0], family="zernike", orders=4, kind="complex")
    assert A.names("complex") == fs.names
    with pytest.raises(ValueError, match="kind must be one of"):
        A.names("abs")


def test_array_protocol_of_feature_sets_and_moments():
    fs = features(IMGS, orders=3, kind="real")
    arr = np.asarray(fs)
    assert isinstance(arr, np.ndarray) and arr.shape == (5, fs.n_features)
    np.testing.assert_array_equal(arr, fs.matrix)
    assert np.asarray(fs, dtype=np.float64).dtype == np.float64
    assert fs.feature_names == fs.names
    A = fm.zernike_moments(IMGS.astype(np.float32), 3)
    a = np.asarray(A)
    assert a.shape == A.shape == (5, 6) and a.dtype == np.complex64
    np.testing.assert_array_equal(a, A.values())
    t = fm.zernike_moments(torch.as_tensor(IMGS), 3)
    np.testing.assert_allclose(np.asarray(t), t.values().numpy())
    M = fm.pcet(IMGS[0], 2, 2)
    assert M.shape == (len(M.pairs),) and np.asarray(M).shape == M.shape
    J = fm.legendre_moments(IMGS, 4, ndim=2)
    assert J.shape == (5, 5, 5)
    np.testing.assert_array_equal(np.asarray(J), J.numpy())
    of = fm.object_features((IMGS[0] > 0.5).astype(int), orders=2)
    assert np.asarray(of).shape == (1, 4)


def test_reprs_show_family_orders_batch_dtype_device():
    A = fm.zernike_moments(IMGS.astype(np.float32), 3)
    r = repr(A)
    for part in ("zernike", "order=3", "(6 moments)", "batch_shape=(5,)", "complex64", "cpu"):
        assert part in r, (part, r)
    M = fm.pst(IMGS[:2], 2, 1)
    r = repr(M)
    for part in ("PHTMoments", "pst", "|n|<=2", "|l|<=1", "batch_shape=(2,)", "cpu"):
        assert part in r, (part, r)
    J = fm.legendre_moments(IMGS[0].astype(np.float32), 4)
    r = repr(J)
    for part in ("BoxMoments", "legendre", "order=4", "batch_shape=()", "shape=(5, 5)",
                 "float32", "cpu"):
        assert part in r, (part, r)
