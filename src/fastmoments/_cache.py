"""The one factory of plan caches.

One-call functions (``zernike_moments``, ``gaussian_filter`` ...) reuse plans built for the same
plain key: sizes, orders, names, dtypes and devices, never tensors or arrays (a cache keyed on
an array hashes it by identity, never hits and keeps the array alive). Every such cache is
made here, so that it checks its keys, is safe to share between threads, and can be emptied
in one call (:func:`clear_plan_caches`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import torch

__all__ = ["clear_plan_caches", "plan_cache"]

F = TypeVar("F", bound=Callable[..., Any])

_CACHES: list[Any] = []
_LOCK = threading.Lock()


#: Types a key may hold that need no look inside (checked by type, not isinstance: one set
#: lookup per value, so that a key of 64 scales costs microseconds).
_PLAIN = frozenset({int, float, str, bool, type(None), complex, bytes, torch.dtype,
                    torch.device})


def _check_plain(value: Any) -> None:
    kind = type(value)
    if kind in _PLAIN:
        return
    if kind is tuple or kind is frozenset:
        for item in value:
            if type(item) not in _PLAIN:
                _check_plain(item)
        return
    if isinstance(value, torch.Tensor | np.ndarray):
        raise TypeError(
            "a plan cache key must hold plain values (sizes, orders, names), "
            f"got a {type(value).__name__}")
    if isinstance(value, tuple | frozenset):
        for item in value:
            _check_plain(item)


def plan_cache(maxsize: int = 16) -> Callable[[F], F]:
    """Decorate a plan factory so that equal plain arguments give the same plan.

    Parameters
    ----------
    maxsize : int
        How many plans the cache keeps (least recently used first out).

    Returns
    -------
    callable
        A decorator. The decorated factory raises :class:`TypeError` when an argument is a
        tensor or an array, and exposes ``cache_clear()`` and ``cache_info()`` as
        :func:`functools.lru_cache` does.
    """
    def decorate(factory: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(factory)

        @functools.wraps(factory)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for value in (*args, *kwargs.values()):
                _check_plain(value)
            return cached(*args, **kwargs)

        wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
        with _LOCK:
            _CACHES.append(cached)
        return wrapper  # type: ignore[return-value]

    return decorate


def clear_plan_caches() -> None:
    """Empty every plan cache of the library (tables are rebuilt on the next call)."""
    with _LOCK:
        caches = list(_CACHES)
    for cache in caches:
        cache.cache_clear()
