"""The shared argument checks of fastmoments._validate and the shared memory-budget and dtype
checks (one implementation each, used by disk/, features/ and parallel/)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments._array import DtypeError, real_dtype
from fastmoments._memory import check_memory_budget
from fastmoments._validate import check_int_list, check_int_pairs


def test_int_list_takes_1d_arrays_and_refuses_more_dimensions():
    assert check_int_list("orders", np.array([3, 1])) == (3, 1)
    assert check_int_list("orders", torch.tensor([2, 0])) == (2, 0)
    with pytest.raises(ValueError, match=r"orders must be a 1-D sequence of integers, got "
                                         r"shape \(2, 2\)"):
        check_int_list("orders", np.ones((2, 2), dtype=int))
    with pytest.raises(TypeError, match=r"orders\[1\] must be an integer, got 2.5"):
        check_int_list("orders", [1, 2.5])
    assert check_int_list("repetitions", [], minimum=None, allow_empty=True) == ()
    assert check_int_list("repetitions", [-2], minimum=None) == (-2,)


def test_int_pairs_name_their_members():
    assert check_int_pairs("pairs", np.array([[2, 0], [3, 1]])) == ((2, 0), (3, 1))
    with pytest.raises(TypeError, match=r"pairs\[0\]\[1\] \(l\) must be an integer, got 1.5"):
        check_int_pairs("pairs", [(2, 1.5)], labels=("n", "l"))
    with pytest.raises(ValueError, match=r"pairs\[1\] must be a pair \(n, m\), got \(1, 2, 3\) "
                                         r"of length 3"):
        check_int_pairs("pairs", [(1, 1), (1, 2, 3)])
    with pytest.raises(TypeError, match=r"pairs\[0\] must be a sequence of two integers"):
        check_int_pairs("pairs", [2])


@pytest.mark.parametrize("bad", [True, "1e9", 1j, [1]])
def test_memory_budget_types(bad):
    with pytest.raises(TypeError, match="memory_budget must be a real number"):
        check_memory_budget(bad)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 0, -5])
def test_memory_budget_values(bad):
    with pytest.raises(ValueError, match="memory_budget must be a finite number > 0"):
        check_memory_budget(bad)


@pytest.mark.parametrize("bad", [torch.int32, np.int64, torch.float16, torch.complex64,
                                 np.dtype("c16")])
def test_a_dtype_that_is_not_a_working_dtype(bad):
    """Both a TypeError (the box API's tests) and a ValueError (the disk API's)."""
    with pytest.raises(DtypeError, match="dtype must be float32 or float64"):
        real_dtype(bad)
    assert issubclass(DtypeError, TypeError) and issubclass(DtypeError, ValueError)


@pytest.mark.parametrize("bad", [3, np.float64(2.0), object()])
def test_an_object_that_is_no_dtype_is_a_type_error(bad):
    with pytest.raises(TypeError, match="dtype must be float32 or float64") as info:
        real_dtype(bad)
    assert not isinstance(info.value, ValueError)


def test_disk_pht_and_features_use_the_shared_checks():
    img = np.random.default_rng(0).random((8, 8))
    for call in (lambda: fm.zernike_moments(img, 2, dtype=torch.int32),
                 lambda: fm.pcet(img, 1, 1, dtype=torch.int32),
                 lambda: fm.features(img, orders=2, dtype=torch.int32)):
        with pytest.raises(DtypeError):
            call()
    with pytest.raises(ValueError, match="memory_budget must be a finite number > 0"):
        fm.features(img, orders=2, memory_budget=float("inf"))
    with pytest.raises(TypeError, match=r"pairs\[0\]\[1\] \(l\) must be an integer"):
        fm.pct(img, pairs=[(1, 1.0)])
