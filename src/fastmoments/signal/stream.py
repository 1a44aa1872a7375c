"""Gaussian smoothing of a stream, chunk by chunk, equal to the one-shot filter: what
:meth:`GaussianFilter.stream() <fastmoments.signal.GaussianFilter.stream>` returns.

:class:`GaussianStream` takes the samples of a long signal in order, in chunks of any size,
and returns each output sample as soon as the input samples it depends on have arrived: a
fixed delay of ``S`` samples, ``S`` the half-width of the kernel (:attr:`GaussianStream.delay`).
It carries the last ``2S`` samples (fewer while the stream starts) and nothing else, so its
memory does not grow with the stream. The outputs, concatenated, equal
``plan(x, mode=mode, cval=cval)`` of the whole signal to rounding. It applies the plan it is
given and imports no Gaussian.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .._array import as_tensor, to_output
from .._validate import check_choice

__all__ = ["STREAM_METHODS", "STREAM_MODES", "GaussianStream"]

#: Methods a stream applies: the truncated kernel (``"direct"``) or the SFT (``"sft"``, cost per
#: sample independent of σ). ``"auto"`` is not one (it picks per call, by length):
#: :meth:`~fastmoments.signal.GaussianFilter.stream` decides it once.
STREAM_METHODS = ("direct", "sft")

#: Boundary modes a stream can apply: each extends the start from the first samples only.
#: ``"wrap"`` needs the end of the signal before the first output and is refused.
STREAM_MODES = ("reflect", "mirror", "nearest", "constant")


class GaussianStream:
    """Gaussian smoothing (order 0, 1 or 2) of a signal that arrives in chunks.

    Made by :meth:`GaussianFilter.stream() <fastmoments.signal.GaussianFilter.stream>`,
    for that plan's σ, order and truncation.

    Parameters
    ----------
    plan : GaussianFilter
        The filter, of method ``"direct"`` or ``"sft"`` (:data:`STREAM_METHODS`).
    mode : {"reflect", "mirror", "nearest", "constant"}
        Extension before the first and after the last sample, as in
        :func:`~fastmoments.signal.gaussian_filter1d` (the start's extension uses the first
        samples, the end's is applied by :meth:`flush`).
    cval : float
        The value outside the signal for ``mode="constant"``.
    axis : int
        The time axis of the chunks (default the last); the other axes are a batch that must
        stay the same from chunk to chunk.

    Attributes
    ----------
    delay : int
        ``S``: the output of sample ``n`` is returned by the :meth:`push` that brings sample
        ``n + S``. ``W = ceil(truncate σ)`` for ``"direct"``, the SFT window's half-width
        for ``"sft"`` (:attr:`~fastmoments.signal.GaussianFilter.support`).
    sigma, order, truncate, method
        The plan's.

    Raises
    ------
    ValueError
        For a plan of another method, an unknown ``mode`` (``"wrap"`` included).
    TypeError
        For a ``cval`` or ``axis`` of the wrong type.

    Notes
    -----
    Output ``n`` depends on the inputs ``n - S .. n + S``. While the stream starts, the
    carried samples begin at sample 0 and each :meth:`push` filters them whole with the
    boundary ``mode`` (the same extension as the one-shot filter's: it reads the first ``S``
    samples, ``S + 1`` for ``"mirror"``); once ``S`` outputs are out, the stream keeps the
    last ``2S`` samples and computes the new outputs from them alone (the filter of the carried
    samples and the chunk, of which the outputs away from both ends are kept; for
    ``"direct"`` and chunks shorter than ``2S``, one valid correlation with the kernel).
    :meth:`flush` filters the carried samples with ``mode`` at the end. The result equals
    the one-shot filter to rounding: the same kernel, summed in another order (tested with
    random chunk sizes, chunks shorter than ``S`` included). Pushing chunks of at least
    ``2S`` samples keeps the overhead of each push (``2S`` samples filtered again) small.

    Examples
    --------
    >>> import numpy as np
    >>> from fastmoments.signal import GaussianFilter, gaussian_filter1d
    >>> x = np.random.default_rng(0).standard_normal(1000)
    >>> s = GaussianFilter(3.0, method="direct").stream()
    >>> s.delay
    12
    >>> parts = [s.push(x[i:i + 70]) for i in range(0, 1000, 70)] + [s.flush()]
    >>> y = np.concatenate(parts)
    >>> bool(np.allclose(y, gaussian_filter1d(x, 3.0, method="direct"), rtol=0, atol=1e-14))
    True
    """

    def __init__(self, plan: Any, *, mode: str = "reflect", cval: float = 0.0,
                 axis: int = -1) -> None:
        self.method = check_choice("method", plan.requested, STREAM_METHODS)
        self.sigma, self.order, self.truncate = plan.sigma, plan.order, plan.truncate
        self.mode = check_choice("mode", mode, STREAM_MODES)
        if isinstance(cval, bool) or not isinstance(cval, (int, float, np.integer, np.floating)):
            raise TypeError(f"cval must be a real number, got {cval!r}")
        self.cval = float(cval)
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"axis must be an integer, got {axis!r}")
        self.axis = int(axis)
        self._plan = plan
        self.delay = int(plan.support)
        self._taps: dict[tuple[torch.dtype, torch.device], torch.Tensor] = {}
        self.reset()

    def reset(self) -> None:
        """Forget the stream: the next :meth:`push` starts a new signal."""
        self._buf: torch.Tensor | None = None  # samples [start, received), time last
        self._start = 0
        self._emitted = 0
        self._kind: Any = None
        self._ndim: int | None = None

    @property
    def received(self) -> int:
        """Samples pushed since the start (or :meth:`reset`)."""
        return self._start + (0 if self._buf is None else self._buf.shape[-1])

    @property
    def carried(self) -> int:
        """Input samples held between pushes: at most ``2 delay`` (the stream's memory)."""
        return 0 if self._buf is None else int(self._buf.shape[-1])

    @property
    def emitted(self) -> int:
        """Output samples returned so far."""
        return self._emitted

    def _filter(self, t: torch.Tensor) -> torch.Tensor:
        if t.device.type == "cpu" and not t.requires_grad:  # NumPy input takes the compiled
            return torch.from_numpy(self._plan(t.numpy(), mode=self.mode, cval=self.cval))
        return self._plan(t, mode=self.mode, cval=self.cval)

    def _kernel(self, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        """The direct kernel ``h[-W..W]`` as the one-shot filter applies it: its response to a
        unit impulse (float64, then cast once per dtype and device)."""
        key = (dtype, device)
        if key not in self._taps:
            w = self.delay
            impulse = np.zeros(4 * w + 3)
            impulse[2 * w + 1] = 1.0
            h = self._plan(impulse, mode="constant")  # a "direct" plan
            taps = torch.from_numpy(np.ascontiguousarray(h[w + 1: 3 * w + 2][::-1]))
            self._taps[key] = taps.to(device=device, dtype=dtype).reshape(1, 1, -1)
        return self._taps[key]

    def _interior(self, seg: torch.Tensor) -> torch.Tensor:
        """The outputs of ``seg``'s samples ``S .. len - S - 1`` (they need no extension)."""
        s = self.delay
        if self.method == "sft" or seg.shape[-1] >= 4 * s:  # chunks of at least 2S samples:
            return self._filter(seg)[..., s: seg.shape[-1] - s]  # the library's own filter
        flat = seg.reshape(-1, 1, seg.shape[-1])
        y = torch.nn.functional.conv1d(flat, self._kernel(seg.dtype, seg.device))
        return y.reshape(*seg.shape[:-1], -1)

    def _as_chunk(self, chunk: Any) -> tuple[torch.Tensor, Any]:
        t, kind = as_tensor(chunk, "chunk")
        nd = t.ndim
        if not -nd <= self.axis < nd:
            raise ValueError(f"axis={self.axis} is out of range for a chunk with {nd} "
                             f"dimensions")
        t = t.movedim(self.axis, -1)
        if self._buf is not None:
            if t.shape[:-1] != self._buf.shape[:-1]:
                raise ValueError(f"chunk must keep the batch shape {tuple(self._buf.shape[:-1])}"
                                 f" (all but the time axis), got {tuple(t.shape[:-1])}")
            t = t.to(dtype=self._buf.dtype, device=self._buf.device)
        return t, kind

    def _out(self, y: torch.Tensor, kind: Any) -> Any:
        return to_output(y.movedim(-1, self.axis % max(y.ndim, 1)), kind)

    def push(self, chunk: Any) -> Any:
        """Take the next samples; return the outputs now complete (possibly none).

        Parameters
        ----------
        chunk : array_like or torch.Tensor
            The next samples along ``axis`` (any number, zero included); the other axes as in
            the first chunk. The first chunk fixes the dtype and device (later chunks are
            converted to them). Never modified.

        Returns
        -------
        numpy.ndarray or torch.Tensor
            The outputs of samples ``emitted .. received - delay - 1``, time along ``axis``;
            the kind of ``chunk``.

        Raises
        ------
        ValueError
            For NaN or infinity, a change of the batch shape, an ``axis`` out of range.
        """
        t, kind = self._as_chunk(chunk)
        self._kind = kind
        self._buf = t if self._buf is None else torch.cat((self._buf, t), dim=-1)
        s = self.delay
        end = self.received - s  # outputs [emitted, end) are complete
        if end <= self._emitted:
            return self._out(self._buf[..., :0], kind)
        if self._start == 0 and self._emitted < s:
            y = self._filter(self._buf)[..., self._emitted: end]
        else:
            y = self._interior(self._buf)
        self._emitted = end
        drop = max(0, end - s - self._start)  # keep samples [emitted - S, received)
        if drop:
            self._buf = self._buf[..., drop:].clone()
            self._start += drop
        return self._out(y, kind)

    def flush(self) -> Any:
        """The last ``delay`` outputs (all of them for a stream shorter than that), with the
        boundary ``mode`` after the last sample; then :meth:`reset`.

        Returns
        -------
        numpy.ndarray or torch.Tensor
            Outputs ``emitted .. received - 1``: the kind of the last chunk (NumPy float64
            and empty when nothing was pushed).
        """
        if self._buf is None:
            self.reset()
            return np.zeros(0)
        kind = self._kind
        if self._buf.shape[-1] == 0:
            y = self._buf
        else:
            y = self._filter(self._buf)[..., self._emitted - self._start:]
        self.reset()
        return self._out(y, kind)

    def __repr__(self) -> str:
        return (f"GaussianStream(sigma={self.sigma:g}, order={self.order}, mode={self.mode!r}, "
                f"method={self.method!r}, delay={self.delay}, received={self.received})")

