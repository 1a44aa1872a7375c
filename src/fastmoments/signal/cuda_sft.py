"""Batches of one-channel SFT filters as one CUDA C++ kernel (CuPy ``RawModule``), optional.

The Triton kernels of :mod:`.triton_sft` form the filter from tensor-core products over tiles
of chunks. On an H100 they reach about a fifth of the card's copy bandwidth on a batch of
1000 × 102400 samples, limited on chip (operand layout changes through shared memory, the
products' latency, 12.5 % occupancy: measured with Nsight Compute on an H100). A batch
needs no tensor cores: per sample, a bank of ``R`` complex rows costs about ``7 R``
multiply-adds as a first-order recursion. Triton cannot express a sequential loop over the
samples a thread holds (only whole-tensor operations and scans), so this one kernel is CUDA
C++, compiled by NVRTC through CuPy, behind the dispatch of
:func:`fastmoments.signal._apply._chunked` (``benchmarks/signal_batch_cuda.py`` measures both).

The recursion, for the window sums ``S_r[n] = Σ_{s<L} x̃[n + off + s] q_r^s`` of
:mod:`.chunked` (``x_A[n] = x̃[n + off]``, ``x_B[n] = x̃[n + off + L]``), runs backwards:

    S[n] = q S[n + 1] + x_A[n] - q^L x_B[n].

One thread block filters one signal, tile by tile from its end (tiles of ``T = 2048`` samples,
128 threads of 16 samples):

1. The tile's two reads are staged in shared memory (coalesced). Where a read leaves the
   signal, the boundary modes of :mod:`.boundary` give the index: by comparisons in 32-bit
   arithmetic when the tile's reads lie within one reflection, in ``(-n, 2n)`` (the edge
   tiles, and the virtual ones below when the signal is longer than the window), by a
   64-bit remainder otherwise (short signals).
2. The tile's anchor ``P = S[(t+1) T]``. When the window is shorter than a tile
   (``L < T``) it is the sum over the last ``L`` samples of the second read: exact, nothing
   carried. Tails of up to 512 samples lie in the last warp's segments; its lanes sum them
   strided (lane ``i`` takes every 32nd sample from ``i``) and add their parts through
   shared memory, on every tile. Longer tails are summed by the threads that hold them, on
   every ``EVERY_LONG``-th tile and the last one; the tiles between carry the anchor from
   the tile after them. Otherwise
   the anchor is the previous tile's start, and the first anchor is the window sum over the
   boundary extension: the same loop over virtual tiles, with no second read and no output,
   whose recursion is ``S = q S + x_A`` alone. About half of that window lies beyond the
   signal's end; for windows of three tiles or more it is folded back
   (:func:`virtual_tiles`): the virtual tiles run over the signal's last ``≈ L/2`` samples
   only, and one thread forms the anchor from their states in float64 (the reflected half
   by conjugation, a constant extension by a geometric sum). At σ = 8192 on 102400 samples
   (``L`` = 69495) that is 17 virtual tiles instead of 34, and the kernel 12 % faster.
3. Each thread runs the recursion over its 16 samples from zero, keeping the partial output
   ``y_loc[s] = Σ_r a_r Re S_loc + b_r Im S_loc`` and the segment total at its start.
4. A reverse scan over the 128 segment totals (warp shuffles, then the four warps) gives every
   thread the true ``E = S`` at its segment's end from ``P``.
5. ``y[s] = y_loc[s] + Σ_r Re((a_r - i b_r) q_r^{16 - s} E_r)``, stored coalesced (for a
   complex comb, complex output such as the Morlet transform's, the same with the real and
   the imaginary parts of ``a`` and ``b``, written as complex64).

Every factor has modulus ≤ 1 (``α ≥ 0``). A carried anchor (``L ≥ T``) accumulates the
tiles' rounding errors (a random walk), so :func:`takes` limits that case to signals of at
most ``MAX_TILES`` tiles; with exact anchors the float32 error matches the Triton kernels'.

The kernel is launched through CuPy's launcher (``RawModule`` function call) on torch's
current stream of the input's device, its one argument the packed ``struct Args`` (a NumPy
void scalar, which CuPy passes by value).

The bank's constants are compiled into its module (one NVRTC compile per bank and layout,
about 0.5 s, cached on the bank and by CuPy on disk): the recursion is straight-line code
whose constants are operands of the multiply-adds, terms that round to zero dropped. The
kernel also clears a flag byte when the signal holds NaN or infinity: every sample enters
the first row's recursion (or the exact anchor) with weight 1, so a non-finite sample leaves
that state non-finite (as would a finite signal whose window sums overflow float32).
"""

from __future__ import annotations

import struct
import warnings
from typing import NamedTuple

import numpy as np
import torch

from .._array import clear_unless_finite
from .boundary import MODES
from .chunked import group_tables
from .cuda_sft_source import (
    SEG,
    THREADS,
    _source,
    folds,
    strided_tail,
)
from .routes import CUDA_MIN_BYTES, CUDA_MIN_SIGNALS, cuda_batch

__all__ = ["MAX_TILES", "MIN_BYTES", "Launch", "apply", "available", "eligible_layout",
           "takes", "takes_shape"]

TILE = SEG * THREADS
#: Tiles per exact anchor when the window's tail is longer than the last warp sums strided
#: (512 < L < T: σ ≈ 60-240 for a Gaussian): the threads holding the tail then redo the
#: recursion over it, 25-40 % of the kernel's time when done on every tile. Between exact
#: anchors the anchor is carried, so its rounding error is that of at most 8 tiles (1.4-2×
#: the exact anchors' for order 0, and below the carried anchors' of longer windows, σ ≥ 256:
#: measured on an H100 with the kernel's former tuning overrides, runs kept in git history).
EVERY_LONG = 8

#: Longest signal, in tiles, that the kernel takes when it carries the anchor from tile to
#: tile (windows of a tile or longer): the rounding error grows like the square root of the
#: tiles (64 tiles of 2048: 131072 samples).
MAX_TILES = 64
#: The batches the kernel takes: at least this many signals, and more than this many bytes
#: of input and result (the route table's measured thresholds, :mod:`.routes`).
MIN_SIGNALS = CUDA_MIN_SIGNALS
MIN_BYTES = CUDA_MIN_BYTES

try:  # pragma: no cover - depends on the installation
    import cupy
except ImportError:  # pragma: no cover
    cupy = None


def available() -> bool:
    """Whether CuPy is importable."""
    return cupy is not None












class _Layout:
    """What a bank decides, computed once (cached on the bank): the row
    group, the layout, whether anchors are exact, whether the bank is eligible at all, and
    the compiled kernel (on first use)."""

    def __init__(self, bank) -> None:
        self.bank = bank
        self.seg = SEG
        self.threads = THREADS
        self.blocks = 1024 // self.threads
        self.tile = self.seg * self.threads
        self.eligible = (bank.n_channels == 1 and len(bank.groups) == 1
                         and bool(np.all(np.asarray(bank.alpha) >= 0)))
        self.g = group_tables(bank)[0] if self.eligible else None
        # exact anchors: windows shorter than a tile (the tail weights need tiles ≤ 4096)
        self.exact = self.eligible and self.g.L < self.tile <= 4096
        # the tail summed strided by the last warp (L ≤ 32 seg), else by the threads holding it
        self.strided = self.exact and strided_tail(int(self.g.L), self.seg)
        # exact anchors on every tile where the last warp sums them, else every EVERY_LONG-th
        self.every = 1 if self.strided else EVERY_LONG
        self._kernel = None
        self._virtual: dict[tuple[int, str], Virtual] = {}

    def virtual(self, n: int, mode: str) -> Virtual:
        """:func:`virtual_tiles` for signals of ``n`` samples (cached)."""
        v = self._virtual.get((n, mode))
        if v is None:
            v = self._virtual[(n, mode)] = virtual_tiles(self.g, n, self.tile, mode)
        return v

    @property
    def kernel(self):
        """The compiled kernel (compiled on first use; ``None`` if that failed)."""
        if self._kernel is None:
            src = _source(self.bank, self.seg, self.threads, self.blocks, self.exact,
                          self.every, self.strided)
            try:
                module = cupy.RawModule(code=src, options=("--std=c++17",))
                self._kernel = module.get_function("sft_rows")
            except Exception as exc:  # a CuPy built for another CUDA, no NVRTC, ...
                self.eligible = False
                warnings.warn(f"fastmoments: the CUDA C++ batch kernel did not compile "
                              f"({type(exc).__name__}: {str(exc)[:200]}); the Triton kernels "
                              f"run instead", RuntimeWarning, stacklevel=3)
        return self._kernel


def _layout(bank) -> _Layout:
    """The :class:`_Layout` of ``bank`` (cached on the bank)."""
    key = ("cuda-sft",)
    lay = bank._tables.get(key)
    if lay is None:
        lay = bank._tables[key] = _Layout(bank)
    return lay






#: Gaps ``A - lo`` of at most this many samples are taken off the state at ``lo`` directly
#: (one thread, float64) instead of taking virtual tiles of their own.
DIRECT_GAP = 64



class Virtual(NamedTuple):
    """How the first carried anchor is formed (:func:`virtual_tiles`).

    ``fold``: 0, the window over the boundary extension run through as it is; 1, folded
    (``reflect`` and ``mirror`` with ``|q| = 1``): only the signal's samples ``[lo, n)`` are
    run through, and the reflected half is recovered by conjugation; 2, the signal's part
    ``[A, n)`` plus a geometric sum times the constant beyond the end (``nearest``,
    ``constant``). ``nv``: virtual tiles; ``a``: ``A``, the start of the half inside the
    signal; ``lo``: the start of the reflected half (``lo ≤ A``); ``base``: the start of the
    last virtual tile; ``kx``: the virtual tile (above the last) that starts at ``A``, or
    -1 when the state at ``A`` is formed from the one at ``lo`` (``A - lo ≤``
    :data:`DIRECT_GAP`)."""

    fold: int
    nv: int
    a: int
    lo: int
    base: int
    kx: int


def virtual_tiles(g, n: int, tile: int, mode: str) -> Virtual:
    """The virtual tiles of a signal of ``n`` samples whose window (``g.L`` ≥ ``tile``) is
    carried from tile to tile. The first anchor is the window sum at the signal's end,
    ``Σ_{p ∈ [A, A + L)} x̃[p] q^{p - A}`` with ``A = nt T + off``: about half its window
    lies beyond the signal. For a real signal and ``|q| = 1`` (the SFT), the reflected half
    is the conjugate of a sum over the signal's last samples, taken with the same ``q``:

    ``Σ_{j ∈ J} x[j] q^{c - j} = q^{L - 1} conj(Σ_{j ∈ J} x[j] q^{j - lo})``,
    ``J = [lo, n)`` (``reflect``: ``c = 2n - 1 - A``, ``lo = 2n - A - L``; ``mirror``:
    ``c = 2n - 2 - A``, ``lo = 2n - 1 - A - L`` and ``J`` without ``n - 1``).

    One recursion over ``[lo, n)`` then gives both halves (its states at ``A`` and at
    ``lo``), so the virtual tiles cover about ``L / 2`` samples instead of ``L``. For
    ``nearest`` and ``constant`` the part beyond the end is a constant times a geometric sum.
    Other cases (``wrap``, attenuated rows with a reflection, windows that leave one
    reflection, windows of fewer than :data:`FOLD_TILES` tiles) keep the unfolded virtual
    tiles."""
    big_l, off = int(g.L), int(g.off)
    nt = -(-n // tile)
    nv = -(-big_l // tile)
    a = nt * tile + off
    plain = Virtual(0, nv, 0, 0, 0, 0)
    if not folds(big_l, tile) or not 0 <= a < n:
        return plain
    if mode in ("reflect", "mirror") and bool(np.all(np.asarray(g.alpha) == 0)):
        end = 2 * n if mode == "reflect" else 2 * n - 1
        lo = end - a - big_l
        # (lo > A would need n > nt T: the reflected half never starts above the other)
        if n < 2 or lo < 0 or lo > a:
            return plain
        if a - lo <= DIRECT_GAP:
            return Virtual(1, -(-(n - lo) // tile), a, lo, lo, -1)
        kx = -(-(a - lo) // tile)
        return Virtual(1, -(-(n - a) // tile) + kx, a, lo, a - kx * tile, kx)
    if mode in ("nearest", "constant"):
        return Virtual(2, -(-(n - a) // tile), a, a, a, 0)
    return plain


_NO_VIRTUAL = Virtual(0, 0, 0, 0, 0, 0)


def eligible_layout(bank, rows: torch.Tensor, mode: str) -> _Layout | None:
    """The kernel's :class:`_Layout` for ``bank`` when the kernel takes ``rows``, else ``None``
    (the rules: :func:`takes`)."""
    if rows.device.type != "cuda" or rows.dtype != torch.float32 or rows.ndim != 2:
        return None
    if mode not in MODES or not takes_shape(bank, *rows.shape):
        return None
    lay = _layout(bank)
    # (compiled here on first use: a failure takes Triton)
    return lay if lay.kernel is not None else None


def takes_shape(bank, signals: int, n: int) -> bool:
    """Whether the kernel takes ``signals`` float32 CUDA signals of ``n`` samples filtered by
    ``bank`` (the rules of :func:`takes` that do not need the rows; nothing is compiled)."""
    if cupy is None or not cuda_batch(signals, n):  # (small batches, graph-captured calls)
        return False
    lay = _layout(bank)
    if not lay.eligible:
        return False
    nt = -(-n // lay.tile)
    return lay.exact or (nt <= MAX_TILES and -(-int(lay.g.L) // lay.tile) <= nt)


def takes(bank, rows: torch.Tensor, mode: str) -> bool:
    """Whether the kernel applies: CuPy available, float32 signals ``(B, N)`` on CUDA, a bank
    (real or complex output) of one row group and one channel with ``α ≥ 0``, a batch of at least
    ``MIN_SIGNALS`` signals, a known boundary mode, and, for windows of a tile or longer,
    signals of at most ``MAX_TILES`` tiles with no more virtual tiles than real ones, and a
    kernel that compiled (a failure warns once per bank). The input and the result together
    exceed :data:`MIN_BYTES`."""
    return eligible_layout(bank, rows, mode) is not None


_STREAMS: dict[tuple[int, int], object] = {}


def _stream(index: int):
    """CuPy's view of torch's current stream on device ``index`` (cached per stream)."""
    ptr = torch.cuda.current_stream(index).cuda_stream
    s = _STREAMS.get((index, ptr))
    if s is None:
        with warnings.catch_warnings():  # CuPy 14 deprecates it for Stream.from_external
            warnings.simplefilter("ignore", DeprecationWarning)
            s = _STREAMS[(index, ptr)] = cupy.cuda.ExternalStream(ptr, index)
    return s


def _checks_inside(g, n: int, tile: int) -> bool:
    """Whether the kernel's reads cover every sample of a signal of ``n`` samples, so that it
    forms the NaN/inf verdict itself (else one torch pass checks)."""
    return g.off <= 0 and -(-n // tile) * tile + g.off + g.L >= n


def _fields(lay: _Layout, n: int, mode: str, cval: float) -> tuple:
    """The fields of ``struct Args`` after the pointers and strides: the tiles, the first
    anchor's virtual tiles (:func:`virtual_tiles`), the mode and ``cval``."""
    vt = _NO_VIRTUAL if lay.exact else lay.virtual(n, mode)  # tiles of the first anchor
    return (-(-n // lay.tile), vt.nv, MODES.index(mode), cval, vt.fold, vt.kx, vt.a, vt.lo,
            vt.base)


def apply(bank, rows: torch.Tensor, mode: str, cval: float = 0.0, *,
          out: torch.Tensor | None = None, flag: torch.Tensor | None = None,
          layout: _Layout | None = None) -> torch.Tensor:
    """Apply ``bank`` (see :func:`takes`) to float32 signals ``rows`` ``(B, N)`` on CUDA.

    Returns ``(B, 1, N)`` float32 (complex64 for a complex bank), written into ``out`` when
    given (that shape and dtype, last axis contiguous). ``flag``: a one-byte ``uint8``
    tensor on the device, cleared when ``rows`` (or the constant ``cval`` that the boundary
    reads) holds NaN or infinity. ``layout``: what :func:`eligible_layout`
    returned for these rows (else looked up).
    """
    bsz, n = rows.shape
    rows = rows.contiguous()
    if out is None:
        out = torch.empty((bsz, 1, n), dtype=torch.complex64 if bank.complex_output
                          else torch.float32, device=rows.device)
    yv = torch.view_as_real(out) if bank.complex_output else out  # float32 view
    lay = layout if layout is not None else _layout(bank)
    index = rows.device.index
    stream = _stream(index)
    if flag is not None and not _checks_inside(lay.g, n, lay.tile):
        # the reads would miss samples: one torch pass checks
        clear_unless_finite(flag, rows)
        flag = None
    flag_ptr = 0 if flag is None else flag.data_ptr()
    values = (rows.data_ptr(), rows.stride(0), n, yv.data_ptr(), yv.stride(0), flag_ptr,
              *_fields(lay, n, mode, cval))
    with cupy.cuda.Device(index):
        lay.kernel.kernel((bsz, 1, 1), (lay.threads, 1, 1),
                          (np.frombuffer(_ARGS.pack(*values), dtype=_ARGS_DTYPE),),
                          stream=stream)
    return out


class Launch:
    """The kernel of one :class:`_Layout` as the batch launch of
    :func:`fastmoments.signal._apply._fused_engine`: ``launch(bank, rows, mode, cval, *,
    out=None, flag=None)`` is :func:`apply` with the layout."""

    __slots__ = ("layout",)

    def __init__(self, layout: _Layout) -> None:
        self.layout = layout

    def __call__(self, bank, rows: torch.Tensor, mode: str, cval: float = 0.0, *,
                 out: torch.Tensor | None = None,
                 flag: torch.Tensor | None = None) -> torch.Tensor:
        return apply(bank, rows, mode, cval, out=out, flag=flag, layout=self.layout)


#: The kernel's ``struct Args``, packed (CuPy passes a one-element void array by value): about
#: 7 µs less host time per launch than ten NumPy scalars (measured on an H100's host).
_ARGS = struct.Struct("<QqqQqQiiifiiqqq")
_ARGS_DTYPE = np.dtype((np.void, _ARGS.size))
