"""load_volume: the .npz key, complex and empty files are refused by name, files are closed."""

from __future__ import annotations

import numpy as np
import pytest

from fastmoments.box.io import load_volume


def test_npz_with_one_array_needs_no_key(tmp_path):
    vol = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    np.savez(tmp_path / "v.npz", vol=vol)
    # bit-exact: a lossless round trip through the file
    np.testing.assert_array_equal(load_volume(tmp_path / "v.npz"), vol)


def test_npz_with_several_arrays_needs_a_key(tmp_path):
    a = np.zeros((2, 3, 4))
    b = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.savez(tmp_path / "v.npz", a=a, b=b)
    with pytest.raises(ValueError, match=r"holds 2 arrays.*key="):
        load_volume(tmp_path / "v.npz")
    np.testing.assert_array_equal(load_volume(tmp_path / "v.npz", key="b"), b)
    with pytest.raises(ValueError, match="key='c' is not in"):
        load_volume(tmp_path / "v.npz", key="c")


def test_empty_npz_and_key_for_npy_are_errors(tmp_path):
    np.savez(tmp_path / "empty.npz")
    with pytest.raises(ValueError, match="holds no array"):
        load_volume(tmp_path / "empty.npz")
    np.save(tmp_path / "v.npy", np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match=r"key applies to \.npz files only"):
        load_volume(tmp_path / "v.npy", key="x")


def test_complex_volume_is_refused(tmp_path):
    np.save(tmp_path / "c.npy", np.zeros((2, 2, 2), dtype=np.complex64))
    with pytest.raises(ValueError, match="real numbers"):
        load_volume(tmp_path / "c.npy")


def test_damaged_npz_raises_without_leaking_the_file(tmp_path):
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 not really a zip")
    # filterwarnings=error turns an unclosed file (ResourceWarning) into a failure
    with pytest.raises(Exception):  # noqa: B017 - numpy's own error for a damaged zip
        load_volume(tmp_path / "bad.npz")
