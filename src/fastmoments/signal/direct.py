"""Truncated convolution (``method="direct"``): the reference the :ref:`ASFT paper
<bib-asft-paper>` compares against.

The exact kernel is sampled on ``[-W, W]`` with ``W = ceil(truncate * σ)`` and convolved
directly, so the cost per sample grows linearly with σ (the paper's GCT3/MCT3 use
``truncate = 3``; scipy.ndimage uses 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

__all__ = ["DirectBank"]


@dataclass(eq=False)
class DirectBank:
    """Explicit kernels ``h_ch[j]`` on ``[-W, W]``, applied by ``torch.nn.functional.conv1d``.

    Parameters
    ----------
    taps : numpy.ndarray
        ``(n_channels, 2W + 1)`` float64 or complex128 kernel values for ``j = -W .. W``.
    complex_output : bool
        Whether the output is complex.
    """

    taps: np.ndarray
    complex_output: bool
    _tables: dict = field(default_factory=dict, repr=False)

    @property
    def pad(self) -> int:
        return (self.taps.shape[1] - 1) // 2

    @property
    def n_channels(self) -> int:
        return self.taps.shape[0]

    def kernel(self, j: np.ndarray) -> np.ndarray:
        """Effective impulse responses at integer offsets ``j`` (zero outside ``[-W, W]``)."""
        j = np.asarray(j, dtype=np.int64)
        w = self.pad
        inside = np.abs(j) <= w
        out = np.zeros((self.n_channels, len(j)), dtype=self.taps.dtype)
        out[:, inside] = self.taps[:, j[inside] + w]
        return out

    def apply(self, xp: torch.Tensor, n: int, engine: str | None = None) -> torch.Tensor:
        """``y_ch[n] = Σ_j h_ch[j] x[n - j]`` for extended signals ``xp``, ``(B, n + 2W)``."""
        key = (xp.dtype, str(xp.device))
        if key not in self._tables:
            flipped = self.taps[:, ::-1]  # conv1d correlates: weight[t] = h[W - t]
            parts = [flipped.real, flipped.imag] if self.complex_output else [flipped.real]
            w = np.stack(parts, axis=1).reshape(-1, 1, flipped.shape[1])
            self._tables[key] = torch.as_tensor(np.ascontiguousarray(w), dtype=xp.dtype,
                                                device=xp.device)
        weight = self._tables[key]
        y = torch.nn.functional.conv1d(xp[:, None, :], weight)[..., :n]
        if self.complex_output:
            y = y.reshape(xp.shape[0], self.n_channels, 2, n)
            return torch.complex(y[:, :, 0], y[:, :, 1])
        return y
