"""Reconstruction selections and moment indexing never return a silent wrong answer:
asking for moments that were not computed is an error naming the parameter, an
empty selection is an error (not an all-zero image), indices never wrap around and never
index the batch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.moments import MomentIndexError

RNG = np.random.default_rng(3)
IMG = RNG.random((2, 16, 16))


@pytest.fixture(scope="module", params=["zernike", "pseudo-zernike"])
def zm(request):
    f = fm.zernike_moments if request.param == "zernike" else fm.pseudo_zernike_moments
    return f(IMG, 10, dtype="float64")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"orders": [100]}, r"orders lists \[100\], which were not computed \(computed orders: "
                        r"0\.\.10\)"),
    ({"orders": 100}, "orders=100 asks for orders up to 100, but these moments were computed "
                      "up to order 10"),
    ({"orders": (3, 30)}, r"orders=\(3, 30\) asks for orders outside the computed ones"),
    ({"orders": (-3, 2)}, r"orders=\(-3, 2\) asks for orders outside"),
    ({"repetitions": [99]}, r"repetitions lists \[99\], which were not computed"),
    ({"repetitions": [-11, 0]}, r"repetitions lists \[-11\]"),
    ({"orders": [0], "repetitions": "positive"}, "select none of the computed moments"),
])
def test_asking_for_what_was_not_computed_is_an_error(zm, kwargs, match):
    with pytest.raises(ValueError, match=match):
        zm.reconstruct(**kwargs)


def test_selection_errors_on_partial_plans():
    reps = fm.zernike_moments(IMG[0], 10, repetitions=[3], dtype="float64")
    with pytest.raises(ValueError, match=r"repetitions lists \[2\]"):
        reps.reconstruct(repetitions=[2])
    with pytest.raises(ValueError, match=r"orders lists \[4\]"):  # order 4 has no m = 3
        reps.reconstruct(orders=[3, 4])
    with pytest.raises(ValueError, match="select none"):
        reps.reconstruct(repetitions="zero")
    sel = fm.zernike_moments(IMG[0], pairs=[(4, 2)], dtype="float64")
    with pytest.raises(ValueError, match="orders=5 asks for orders up to 5, but these moments"
                                         " were computed up to order 4"):
        sel.reconstruct(orders=5)
    with pytest.raises(ValueError, match="select none"):
        sel.reconstruct(orders=3)


def test_repetitions_none_means_all(zm):
    np.testing.assert_array_equal(zm.reconstruct(repetitions=None), zm.reconstruct())
    with pytest.raises(TypeError, match="repetitions must be one of"):
        zm.reconstruct(repetitions=[1.5])
    with pytest.raises(ValueError, match="repetitions must be one of"):
        zm.reconstruct(repetitions="odd")


def test_pht_caps_beyond_the_computed_moments_are_errors():
    M = fm.pcet(IMG[0], 3, 3, dtype="float64")
    with pytest.raises(ValueError, match=r"nmax=5 asks for orders up to 5, but these moments "
                                         r"were computed up to \|n\| = 3"):
        M.reconstruct(nmax=5)
    with pytest.raises(ValueError, match="lmax=4 asks for repetitions up to 4"):
        M.reconstruct(lmax=4)
    with pytest.raises(ValueError, match=r"orders=\[3\], nmax=1 select none"):
        M.reconstruct(nmax=1, orders=[3])
    with pytest.raises(ValueError, match=r"repetitions lists \[7\]"):
        M.reconstruct(repetitions=[7])
    P = fm.pct(IMG[0], 3, 2, dtype="float64")  # n >= 0 only: nmax keeps the computed ones
    np.testing.assert_allclose(P.reconstruct(nmax=3), P.reconstruct(), atol=1e-14)
    np.testing.assert_allclose(P.reconstruct(nmax=1), P.reconstruct(orders=(0, 1)),
                               atol=1e-14)


# ----------------------------------------------------------------------------- indexing
def test_indices_never_wrap_and_name_the_index(zm):
    with pytest.raises(MomentIndexError, match=r"A\[-1, 0\] is not a .*zernike moment "
                                               r"\(index n=-1, m=0\)"):
        zm[-1, 0]
    with pytest.raises(IndexError, match=r"A\[11, 1\] was not computed .* index n=11, m=1"):
        zm[11, 1]
    with pytest.raises(KeyError):  # also a KeyError, as before
        zm[12, 0]
    with pytest.raises(IndexError, match="m=-11"):
        zm[10, -11]
    for key in [(2.0, 0), (True, 0), (2, np.float64(0)), ("2", 0), (slice(None), 0)]:
        with pytest.raises(TypeError, match="must be an integer"):
            zm[key]
    # integer kinds are fine: the same stored value, bit for bit
    np.testing.assert_array_equal(zm[np.int64(2), torch.tensor(0)], zm[2, 0])


def test_batch_indexing_rule(zm):
    """``A[n, m]`` is one moment for the whole batch; an extra index is an error, never the
    batch."""
    v = zm[4, 2]
    assert v.shape == (2,)
    one = fm.zernike_moments(IMG[1], 10, dtype="float64") if zm.family == "zernike" else \
        fm.pseudo_zernike_moments(IMG[1], 10, dtype="float64")
    assert np.ndim(one[4, 2]) == 0
    np.testing.assert_allclose(v[1], one[4, 2], rtol=1e-13, atol=1e-15)
    for key in [(0, 1, 2), (4,), 4, (1, 4, 2), ()]:
        with pytest.raises(TypeError, match=r"exactly 2 integers .* got \d indices"):
            zm[key]


def test_pcet_negative_orders_are_moments():
    M = fm.pcet(IMG[0], 3, 3, dtype="float64")
    np.testing.assert_allclose(M[-1, -2], np.conj(M[1, 2]))
    with pytest.raises(IndexError, match="n=-4"):
        M[-4, 0]
    S = fm.pst(IMG[0], 3, 3, dtype="float64")
    with pytest.raises(MomentIndexError, match=r"A\[0, 1\] is not a pst moment"):
        S[0, 1]
