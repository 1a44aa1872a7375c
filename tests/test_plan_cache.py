"""The shared plan-cache factory and the route record."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from fastmoments._cache import clear_plan_caches, plan_cache
from fastmoments._route import Route


def test_equal_plain_keys_share_one_plan():
    built = []

    @plan_cache(maxsize=4)
    def make(size, order, name="z"):
        built.append((size, order, name))
        return object()

    assert make(8, 3) is make(8, 3)
    assert make(8, 3) is not make(8, 4)
    assert built == [(8, 3, "z"), (8, 4, "z")]


@pytest.mark.parametrize("bad", [np.zeros(3), torch.zeros(3), (1, np.zeros(2))])
def test_array_keys_are_refused(bad):
    @plan_cache()
    def make(key):
        return key

    with pytest.raises(TypeError, match="plain values"):
        make(bad)


def test_clear_plan_caches_empties_every_cache():
    @plan_cache()
    def make(n):
        return object()

    first = make(1)
    clear_plan_caches()
    assert make(1) is not first


def test_threads_share_a_cache():
    @plan_cache()
    def make(n):
        return [n]

    seen = []

    def work():
        for i in range(200):
            seen.append(make(i % 5)[0] == i % 5)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(seen) and len(seen) == 800


def test_route_names_itself():
    route = Route("sft", "numba", "sft_rows", reason="sigma >= 2.5")
    assert str(route) == "sft/numba:sft_rows"
    assert str(Route("fir", "torch")) == "fir/torch"
    with pytest.raises(AttributeError):
        route.method = "fir"  # frozen
