"""MorletTransform reports the number of terms of the bank it built (a requested count was
reported one higher when its fit missed the accuracy target)."""

from __future__ import annotations

import pytest

from fastmoments.signal import MorletTransform
from fastmoments.signal.sliding import SFTBank


@pytest.mark.parametrize("terms", [4, 5, 7, 12])
def test_requested_terms_are_reported(terms):
    p = MorletTransform(16.0, 6.0, terms=terms)
    assert p.terms == terms
    if isinstance(p.bank, SFTBank):  # (a series that misses the target may give way to the
        assert p.bank.n_rows == terms  # truncated kernel, applied directly)


@pytest.mark.parametrize("sigma", [2.0, 3.0, 16.0, 40.0])
def test_default_terms_match_the_bank(sigma):
    p = MorletTransform(sigma, 6.0)
    if isinstance(p.bank, SFTBank):
        assert p.bank.n_rows == p.terms
    assert p.rmse <= 1e-4
