"""Shared fixtures: fixed seeds, TF32 off, a ``device`` fixture that runs on CPU and CUDA."""

from __future__ import annotations

import numpy as np
import pytest
import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

_DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(params=_DEVICES)
def device(request) -> str:
    """Each test taking ``device`` runs on the CPU, and on CUDA when one is present."""
    return request.param


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
