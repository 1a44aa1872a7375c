r"""Moment feature vectors of image sets: :func:`features` and the :class:`FeatureSet` it returns.

A feature vector is a few moments :math:`A_{nm}` of an image on the unit disk, taken in one of
three ways (thesis Sec. 6.2, Eq. 6.1-6.3):

* ``kind="complex"``: each moment gives two real columns, :math:`\mathrm{Re} A_{nm}` and
  :math:`\mathrm{Im} A_{nm}`. The Euclidean distance between two such rows is exactly the
  thesis's distance of complex features (Eq. 6.4), since
  :math:`|a - b|^2 = (\mathrm{Re}\,a - \mathrm{Re}\,b)^2 + (\mathrm{Im}\,a - \mathrm{Im}\,b)^2`.
* ``kind="real"``: one column :math:`\mathrm{Re} A_{nm}` per moment (Eq. 6.2, 6.5).
* ``kind="magnitude"``: one column :math:`|A_{nm}|` per moment (Eq. 6.3, 6.5). These are
  invariant to rotations of the image (thesis Eq. 2.8-2.9); for turns by multiples of 90 degrees
  they are invariant on the pixel grid too, since the disk sampling is symmetric under them.

Moments are computed by the disk engine (:class:`fastmoments.disk.DiskTransform`), for any family
registered in :data:`fastmoments.disk.FAMILIES` (``"zernike"``, ``"pseudo-zernike"`` and the
polar harmonic families when they are installed), in batches so that any number of images runs
in bounded memory.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

from .._array import (
    ArrayKind,
    finite_flag,
    native_array,
    policy_dtype,
    real_dtype,
    resolve_device,
)
from .._cache import plan_cache
from .._defaults import FAMILY, KIND, ORDERS
from .._memory import check_memory_budget
from .._memory import memory_budget as _memory_budget
from .._progress import check_progress
from .._progress import progress as _progress
from .._validate import (
    check_channel_axis,
    check_choice,
    check_int,
    check_int_list,
    colour_hint,
)
from ..disk.families import FAMILIES, check_family_pairs, get_family
from ..disk.sampling import QUADRATURES, RULES
from ..disk.transform import (
    DiskTransform,
    channels_first,
    check_disk_pixels,
    estimate_disk_memory,
)
from ..moments import KINDS, column_labels, column_names
from ..parallel.plans import batched, leading_axis
from ..parallel.runner import gather_tensors
from .featureset import FeatureSet
from .variance import moment_variances, top_by_variance

__all__ = ["ALGORITHMS", "DENSE_LIMIT_BYTES", "KINDS", "NORMALIZATIONS", "FeatureSet",
           "check_normalize", "column_labels", "features", "moment_pairs", "pixel_factor"]

def moment_pairs(family: str, orders: int | Iterable[int]) -> list[tuple[int, int]]:
    """The stored moments ``(n, m >= 0)`` of a family for some orders, in order of ``(n, m)``.

    Parameters
    ----------
    family : str
        A registered disk family (``"zernike"``, ``"pseudo-zernike"``, ...).
    orders : int or iterable of int
        ``T`` means every order ``0..T``; an iterable names the orders (an order ``n`` stands
        for ``n`` and ``-n`` in families with negative orders, such as ``"pcet"``).

    Examples
    --------
    >>> moment_pairs("zernike", 3)
    [(0, 0), (1, 1), (2, 0), (2, 2), (3, 1), (3, 3)]
    >>> moment_pairs("pseudo-zernike", [2])
    [(2, 0), (2, 1), (2, 2)]
    """
    fam = get_family(family)
    wanted = _orders(orders)
    top = wanted.stop - 1 if isinstance(wanted, range) else max(abs(n) for n in wanted)
    # the family's full set up to ``top`` is built below: say what it needs first (at most
    # (2 top + 1)(top + 1) moments, PCET's count; the Zernike families have fewer)
    bound = (2 * top + 1) * (top + 1)
    try:
        estimate_disk_memory(fam, 1, top, n_moments=bound, slots=bound)
    except MemoryError as exc:
        raise MemoryError(f"orders={orders!r}: {exc}") from None
    # the family's own full set up to ``top`` (for the polar complex exponentials it holds
    # negative orders too); an order names both signs of n
    pairs = [p for p in fam.full(top).pairs() if abs(p[0]) in wanted]
    if not pairs:
        raise ValueError(f"orders={orders!r} gives no {family} moment")
    return sorted(pairs)


def _orders(orders: int | Iterable[int]) -> set[int] | range:
    if isinstance(orders, (int, np.integer)) and not isinstance(orders, bool):
        # a range, not a set: nothing of the order's size is built before the memory check
        return range(check_int("orders", orders, minimum=0) + 1)
    try:
        out = set(check_int_list("orders", orders, minimum=None, allow_empty=True))
    except TypeError as exc:
        raise TypeError(f"orders must be an int or an iterable of ints, got {orders!r}") from exc
    if not out:
        raise ValueError("orders must name at least one order")
    return out


@plan_cache(maxsize=16)
def _plan(family: str, size: int, stored: tuple[tuple[int, int], ...], k: int, quadrature: str,
          rule: str, dtype: torch.dtype, device: str,
          budget: float | None) -> DiskTransform:
    fam = get_family(family)
    return DiskTransform(fam, size, k=k, quadrature=quadrature, rule=rule, dtype=dtype,
                         device=device, memory_budget=budget, index=fam.selection(stored),
                         method=fam.selection_method)


#: ``features(normalize=...)`` choices (besides None).
NORMALIZATIONS = ("pixels", "z00")


def check_normalize(normalize: Any) -> str | None:
    """Check ``normalize``: None, ``"pixels"`` or ``"z00"``.

    >>> check_normalize("z00")
    'z00'
    """
    if normalize is None:
        return None
    return check_choice("normalize", normalize, NORMALIZATIONS)


def pixel_factor(plan: DiskTransform) -> float:
    r"""The factor that turns the normalization of the :ref:`Zernike thesis <bib-zernike-thesis>`
    into the :math:`\lambda_N` one of the :ref:`re-layout paper <bib-relayout-paper>`:
    :math:`\pi N^2 / (4 \lambda_N)`, with :math:`\lambda_N` the number of pixels the plan maps
    into the unit disk (each pixel's quadrature weights sum to its area :math:`(2/N)^2`, so
    the weighted sums divided by :math:`\lambda_N (2/N)^2` instead of :math:`\pi` are the
    paper's averages).

    >>> from fastmoments.disk import ZernikeTransform
    >>> plan = ZernikeTransform(4, 1, rule="centre")
    >>> int(plan.mask.sum()), round(pixel_factor(plan), 6)  # pi * 16 / (4 * 12)
    (12, 1.047198)
    """
    n_pix = int(plan.mask.sum())
    return math.pi * plan.size**2 / (4.0 * n_pix)


def _normalize(moments: torch.Tensor, pairs: Sequence[tuple[int, int]], normalize: str | None,
               plan: DiskTransform) -> torch.Tensor:
    """Apply ``normalize`` to ``(n_images, len(pairs))`` moments (``(0, 0)`` among
    ``pairs`` for ``"z00"``)."""
    if normalize == "pixels":
        return moments * pixel_factor(plan)
    if normalize == "z00":
        z00 = moments[:, list(pairs).index((0, 0))].abs()
        bad = torch.nonzero(z00 == 0).flatten()
        if bad.numel():
            rows = bad[:8].tolist()
            raise ValueError(f"normalize='z00' divides by |A[0,0]|, which is 0 for image(s) "
                             f"{rows}{'...' if bad.numel() > 8 else ''} (an image that sums "
                             f"to 0 over the disk); use normalize='pixels' or None")
        return moments / z00[:, None]
    return moments


#: ``features(algorithm=...)`` choices.
ALGORITHMS = ("auto", "dense", "engine")

#: Largest dense analysis matrix (pixels x moments, float64 real + imaginary parts) that
#: ``algorithm="auto"`` builds.
DENSE_LIMIT_BYTES = 64 * 2**20


#: The dense analysis matrix's columns are padded with zeros to a multiple of this: on the
#: 2-core AMD EPYC virtual machine (MKL, AVX2), ``(6763, 576) @ (576, n)`` in float64 took
#: 13-17 ms for n = 42 or 64 and 7-10 ms for n = 48 or 60 (float32: 4.1 against 3.6 ms for
#: 42 and 48).
_DENSE_COLUMNS = 12


@plan_cache(maxsize=16)
def _dense(family: str, size: int, pairs: tuple[tuple[int, int], ...], k: int, quadrature: str,
           rule: str, dtype: torch.dtype, device: str,
           budget: float | None) -> torch.Tensor:
    r"""The analysis matrix ``M`` (pixels x moments) with ``A = f @ M``, its real and
    imaginary parts interleaved (pixels x 2 moments, then zero columns up to a multiple of
    :data:`_DENSE_COLUMNS`, in ``dtype``) so that ``f @ M`` is the memory of the complex
    moments, from the float64 disk engine, so that it holds exactly the
    engine's sampling, weights and normalization.

    The columns come from the engine's adjoint (the transpose of the forward map for the real
    inner products, :meth:`DiskTransform.adjoint`): for a stored moment slot ``s``,
    :math:`\mathrm{Re} A_s = \langle f, F^T e_s\rangle` and
    :math:`\mathrm{Im} A_s = \langle f, F^T (i e_s)\rangle`. That is two syntheses per stored
    moment, instead of one forward transform per pixel (the unit images): 42 small
    syntheses instead of 4096 transforms at 64 x 64 pixels and 21 moments.
    """
    fam = get_family(family)
    stored = tuple(sorted({fam.stored(n, m)[:2] for n, m in pairs}))
    plan = _plan(family, size, stored, k, quadrature, rule, torch.float64, device, budget)
    cols, rows, conj = _gather(plan, pairs)
    npix = size * size
    K = len(pairs)
    idx = plan.index
    mat = torch.empty(npix, K, dtype=torch.complex128, device=plan.device)
    gamma = torch.ones(idx.n_cols, dtype=torch.float64, device=plan.device)
    # unit coefficients: 1 (real part) and i (imaginary part) at each pair's stored slot
    step = max(1, min(K, (32 * 2**20) // (16 * npix)))
    for s in range(0, K, step):
        b = min(step, K - s)
        unit = torch.zeros(2 * b, idx.n_cols, idx.n_rows, dtype=torch.complex128,
                           device=plan.device)
        j = torch.arange(b, device=plan.device)
        unit[j, cols[s: s + b], rows[s: s + b]] = 1.0
        unit[b + j, cols[s: s + b], rows[s: s + b]] = 1j
        cols_t = plan.engine.synthesize(unit, gamma=gamma, weighted=True, normalized=True)
        re, im = cols_t[:b], cols_t[b:]
        # A_{n,-m} = conj(A_{n,m}) for a partner: flip the imaginary part's sign
        im = torch.where(conj[s: s + b, None], -im, im)
        mat[:, s: s + b] = torch.complex(re, im).transpose(0, 1)
    # columns re_0, im_0, re_1, im_1, ...: f @ M is then the complex moments' memory; zero
    # columns up to a multiple of _DENSE_COLUMNS (the BLAS's favoured widths)
    width = -(-2 * K // _DENSE_COLUMNS) * _DENSE_COLUMNS
    out = torch.zeros(npix, width, dtype=dtype, device=plan.device)
    out[:, : 2 * K] = torch.view_as_real(mat).reshape(npix, 2 * K)
    return out


def _gather(plan: DiskTransform, pairs: Sequence[tuple[int, int]]):
    fam = plan.family
    cols, rows, conj = [], [], []
    for n, m in pairs:
        sn, sm, cj = fam.stored(n, m)
        c, r = plan.index.position(sn, sm)
        cols.append(c)
        rows.append(r)
        conj.append(cj)
    dev = plan.device
    return (torch.as_tensor(cols, device=dev), torch.as_tensor(rows, device=dev),
            torch.as_tensor(conj, device=dev))


def _gather_features(res: list[Any], ax: Any, dev0: torch.device, kind: ArrayKind,
                     count: int | None) -> FeatureSet:
    """Feature sets of the parts of a device list, concatenated (rows in input order), then
    the deferred selection by variance over every image."""
    fs = dataclasses.replace(res[0], moments=gather_tensors([r.moments for r in res], dev0),
                             kind_in=kind)
    if count is not None:
        count = check_int("select", count, minimum=1, maximum=len(fs.pairs))
        var = moment_variances(fs, kind=fs.kind)
        fs = fs.select(top_by_variance(fs.pairs, var, count))
    return fs


def _defer_selection(arguments: dict) -> int | None:
    """Defer ``select=int`` (variance over every image) to after the gather of the parts."""
    sel = arguments.get("select")
    if isinstance(sel, (int, np.integer)) and not isinstance(sel, bool):
        arguments["select"] = None
        return int(sel)
    return None


def _split_axis(shape: tuple[int, ...], arguments: dict) -> int | None:
    """The axis a device list splits: the outermost batch axis (rows are ordered by the
    batch axes, then the channel), or the channel axis of a single colour image."""
    ca = arguments.get("channel_axis")
    if ca is None:
        return leading_axis(2)(shape, arguments)
    try:
        ca = check_channel_axis(ca, len(shape), 2, "images")
    except (TypeError, ValueError):
        return None  # features() itself says what is wrong
    assert ca is not None
    return 0 if len(shape) > 3 and ca != 0 else (1 if len(shape) > 3 else ca)


@batched(name="images", split_axis=_split_axis, prepare=_defer_selection,
         gather=_gather_features)
def features(images: Any, *, family: str = FAMILY, orders: int | Iterable[int] = ORDERS,
             kind: str = KIND, select: int | Sequence[tuple[int, int]] | None = None,
             k: int = 1, quadrature: str = "midpoint", rule: str = "inscribed",
             batch_size: int | None = None, device: Any = None, dtype: Any = None,
             memory_budget: float | None = None, progress: bool | None = None,
             algorithm: str = "auto", normalize: str | None = None,
             channel_axis: int | None = None) -> FeatureSet:
    r"""Moment feature vectors of a set of images.

    Parameters
    ----------
    images : array_like or torch.Tensor
        ``(..., N, N)`` real images (NumPy or torch, CPU or CUDA); the leading dimensions are
        flattened into the rows of the result. A single ``(N, N)`` image gives one row.
    family : str
        Disk family: ``"zernike"`` (default), ``"pseudo-zernike"`` (thesis Chapter 6), or any
        other name in :data:`fastmoments.disk.FAMILIES` (the polar harmonic families register
        there).
    orders : int or iterable of int
        Candidate moments: ``T`` means every stored ``(n, m >= 0)`` with ``n <= T`` (default
        9), an iterable names the orders (see :func:`moment_pairs`). Ignored when ``select``
        lists moments.
    kind : {"magnitude", "complex", "real"}
        Magnitudes (default; invariant to rotations), ``(Re, Im)`` column pairs, or real
        parts (module notes, thesis Eq. 6.1-6.3). The defaults are those of every feature
        function and command (:mod:`fastmoments._defaults`).
    select : int or sequence of (n, m), optional
        ``None``: every candidate moment. An int ``c``: the ``c`` candidates whose ``kind``
        values vary most over these images (the thesis's criterion, Tables 6.1-6.3; see
        :func:`fastmoments.recognition.moment_variances`). A sequence: exactly these moments, in
        this order (negative ``m`` allowed).
    k, quadrature, rule
        Sampling of the disk (as in :func:`fastmoments.pseudo_zernike_moments`).
    batch_size : int, optional
        Images per batch (default: as many as fit in a sixteenth of the memory budget, at most
        4096).
    device : str or torch.device, optional
        Where to compute (default: where the images are).
    dtype : {"float32", "float64"}, optional
        Working precision (default from the images: float64 stays float64, else float32).
    memory_budget : float, optional
        Scratch memory in bytes (or a fraction of the free memory if <= 1).
    progress : bool, optional
        Show a progress bar (default: when there are more than 8 batches).
    algorithm : {"auto", "dense", "engine"}
        ``"engine"`` runs the two-stage disk engine on every batch; ``"dense"`` applies the
        analysis matrix (pixels x moments, built once per geometry by the float64 engine from
        the unit images and cached) as two real matrix products, far faster for the small
        images and few moments of feature work; ``"auto"`` takes ``"dense"`` while that matrix
        is at most :data:`DENSE_LIMIT_BYTES` in float64.
    normalize : {None, "pixels", "z00"}
        ``None``: the thesis's normalization (below). ``"pixels"``: the re-layout paper's
        :math:`\lambda_N` normalization, each sum divided by the number of pixels mapped into
        the disk instead of :math:`\pi` (so :math:`A_{00}` is the mean intensity over those
        pixels; Notes). ``"z00"``: every moment divided by :math:`|A_{00}|` of its image,
        as in the features :math:`|Z_{nm}|/|Z_{00}|` the paper cites: invariant to the
        image's contrast (a scale of the intensities), and the same whichever of the two
        normalizations the moments had. The ``(0, 0)`` column, when asked for, is then 1;
        :math:`A_{00}` is computed even when ``orders``/``select`` leave it out. An image
        with :math:`A_{00} = 0` is a ``ValueError``, as is ``"z00"`` for a family without
        ``(0, 0)`` (``"pst"``).
    channel_axis : int, optional
        The axis of ``images`` that holds colour channels (scikit-image's convention), e.g.
        ``-1`` for ``(B, H, W, 3)``. Each channel is an image: rows are ordered by image,
        then channel (``fs.matrix.reshape(B, -1)`` puts each image's channels side by side,
        channel by channel). Without it, non-square ``(..., H, W, 3)`` or ``(..., H, W, 4)``
        images are refused with a message about colour channels.

    Returns
    -------
    FeatureSet
        ``.matrix`` ``(n_images, n_features)`` real (NumPy in, NumPy out), ``.names``,
        ``.columns`` (which ``(n, m, part)`` each column is), ``.pairs``, ``.moments``.

    Raises
    ------
    ValueError
        Unknown family or kind (the message lists the valid ones), non-square images, NaN or
        infinity, invalid moments in ``select``, ``select`` larger than the candidates.
    TypeError
        Non-integer orders, counts, ``k`` or pairs (floats and bools are not integers), a bad
        ``memory_budget``, ``dtype`` or ``progress``; every option is checked before a cached
        plan is looked up.
    MemoryError
        When the candidate moments' index alone would not fit the memory budget.

    Notes
    -----
    Scratch memory is bounded by the batch size; the result holds ``n_images x len(pairs)``
    complex moments (with ``select=c``, every candidate's moments until the ``c`` are chosen).

    Moments use the thesis's normalization (Eq. 2.10, 2.16), so the numbers are comparable with
    Tables 6.1-6.8: :math:`A_{nm} = \frac{n+1}{\pi} \sum_p f_p V^*_{nm}(p)\,\Delta x
    \Delta y`, the factor :math:`1/\pi` being one over the area of the unit disk. The
    re-layout paper (Eq. 12-14) writes :math:`Z_{nm} = \frac{n+1}{\lambda_N} \sum f
    V^*_{nm}` over the pixels mapped into the unit disk, with :math:`\lambda_N` the number of
    those pixels, one sample per pixel: the area of the disk counted in pixels instead of
    the continuous :math:`\pi`. ``normalize="pixels"`` multiplies the moments by
    :math:`\pi N^2 / (4 \lambda_N)` (:func:`pixel_factor`; :math:`(2/N)^2` is a pixel's
    area in the unit square), which gives exactly the paper's :math:`Z_{nm}` for ``k=1``
    and, for ``k > 1``, the same with each pixel's value of :math:`V^*_{nm}` replaced by its
    average over the pixel's sample points. For the polar harmonic families the same factor
    replaces their :math:`1/\pi` (or :math:`2/\pi`) area normalization. ``rule="centre"``
    maps the pixels whose centre lies in the disk, as the paper's Fig. 3 does; the default
    ``"inscribed"`` keeps only the pixels entirely inside it, and :math:`\lambda_N` counts
    those. The paper's :math:`|Z_{nm}|/|Z_{00}|` (its reference [12]) is
    ``normalize="z00", kind="magnitude"``.

    float32 feature values agree with float64 to about ``1e-6`` relative to the largest
    feature (tested at ``2e-5``); distances between features carry the same absolute error.

    Examples
    --------
    >>> import numpy as np
    >>> imgs = np.zeros((3, 24, 24)); imgs[0, 5:15, 8:12] = 1; imgs[1, 8:12, 5:15] = 1
    >>> imgs[2, 6:18, 6:18] = 1
    >>> fs = features(imgs, orders=2)  # Zernike magnitudes
    >>> fs.matrix.shape, fs.names
    ((3, 4), ['|A[0,0]|', '|A[1,1]|', '|A[2,0]|', '|A[2,2]|'])
    >>> bool(np.allclose(fs.matrix[0], fs.matrix[1]))  # a 90-degree turn
    True
    >>> features(imgs, family="pseudo-zernike", orders=5, kind="real", select=2).pairs
    [(1, 0), (3, 0)]
    """
    fam = get_family(family) if isinstance(family, str) else None
    if fam is None:
        raise TypeError(f"family must be a name in {tuple(FAMILIES)}, got {family!r}")
    kind = check_choice("kind", kind, KINDS)
    # every option is checked and made a plain value before a plan cache sees it
    # (the plan cache takes True, 1 and 1.0 for one key)
    k = check_int("k", k, minimum=1)
    quadrature = check_choice("quadrature", quadrature, QUADRATURES)
    rule = check_choice("rule", rule, RULES)
    algorithm = check_choice("algorithm", algorithm, ALGORITHMS)
    memory_budget = check_memory_budget(memory_budget)
    if batch_size is not None:
        batch_size = check_int("batch_size", batch_size, minimum=1)
    progress = check_progress(progress)
    normalize = check_normalize(normalize)
    if normalize == "z00" and not fam.is_valid(0, 0):
        raise ValueError(f"normalize='z00' divides by |A[0,0]|, but the {fam.name} family has "
                         "no moment (0, 0); use normalize='pixels' or None")
    images, _move = channels_first(images, channel_axis, "images")
    x, kind_in = _image_tensor(images, device, None if dtype is None else real_dtype(dtype))
    n_img, size = x.shape[0], x.shape[-1]
    check_disk_pixels(size, rule, "images")

    candidates, count = _candidates(fam, orders, select)
    # normalize="z00" needs A_00 even when the candidates leave it out (an extra column,
    # dropped after the division)
    computed = list(candidates)
    if normalize == "z00" and (0, 0) not in computed:
        computed.append((0, 0))
    stored = tuple(sorted({fam.stored(n, m)[:2] for n, m in computed}))
    dt = x.dtype
    dev = x.device
    plan = _plan(fam.name, size, stored, k, quadrature, rule, dt, str(dev), memory_budget)
    cols, rows, conj = _gather(plan, computed)
    if algorithm == "auto":
        dense_bytes = size * size * len(computed) * 16
        algorithm = "dense" if dense_bytes <= DENSE_LIMIT_BYTES else "engine"
    mats = None
    if algorithm == "dense":
        mats = _dense(fam.name, size, tuple(computed), k, quadrature, rule, dt, str(dev),
                      memory_budget)

    if batch_size is None:
        batch_size = _default_batch(plan, size, dev, memory_budget, dense=mats is not None)
    out = torch.empty(n_img, len(computed), dtype=torch.complex128 if dt == torch.float64
                      else torch.complex64, device=dev)
    starts = range(0, n_img, batch_size)
    for s in _progress(starts, total=len(starts), desc=f"{fam.name} features", show=progress):
        xb = x[s: s + batch_size].to(device=dev, dtype=dt)
        flat = xb.reshape(xb.shape[0], -1)
        if mats is not None:
            # every pixel enters every moment (times 0 outside the disk), so NaN or infinity
            # anywhere shows in the small result: check that instead of the images
            # one product gives the real and imaginary parts interleaved, i.e. the complex
            # moments' own memory layout; one finite_flag pass checks them
            ri = (flat @ mats)[:, : 2 * len(computed)]
            if not bool(finite_flag(ri)):
                raise ValueError("images contains NaN or infinity (or values so large that "
                                 "the moments overflow)")
            out[s: s + batch_size] = torch.view_as_complex(ri.view(ri.shape[0], -1, 2))
        else:
            if not bool(finite_flag(xb)):  # one read pass (isfinite + all: ~10x slower on a CPU)
                raise ValueError("images contains NaN or infinity")
            vals = plan.engine.forward(flat)[:, cols, rows]
            out[s: s + batch_size] = torch.where(conj, vals.conj(), vals)

    out = _normalize(out, computed, normalize, plan)[:, : len(candidates)]
    fs = FeatureSet(fam.name, kind, list(candidates), column_names(candidates, kind), out,
                    kind_in, normalize)
    if count is not None:
        var = moment_variances(fs, kind=kind)
        fs = fs.select(top_by_variance(candidates, var, count))
    return fs


def _candidates(fam: Any, orders: Any, select: Any) -> tuple[list[tuple[int, int]], int | None]:
    """The candidate moments of :func:`features` and how many of them ``select`` keeps by
    variance (None: all, or exactly the pairs it names)."""
    if select is None or (isinstance(select, (int, np.integer)) and not isinstance(select, bool)):
        candidates = moment_pairs(fam.name, orders)
        if select is None:
            return candidates, None
        return candidates, check_int("select", select, minimum=1, maximum=len(candidates))
    if isinstance(select, bool):
        raise TypeError(f"select must be an int or a sequence of (n, m) pairs, got {select!r}")
    try:
        return list(check_family_pairs(fam, "select", select)), None
    except TypeError as exc:
        raise TypeError(f"select must be an int or a sequence of (n, m) pairs: {exc}") from exc


def _default_batch(plan: DiskTransform, size: int, dev: torch.device,
                   memory_budget: float | None, *, dense: bool) -> int:
    """Images per batch of :func:`features`: a sixteenth of the budget, at most 65536 with
    the dense matrices and 4096 with the engine."""
    per_image = size * size * 8 + plan.index.n_cols * plan.index.n_rows * 16
    budget = _memory_budget(dev, memory_budget)
    cap = 65536 if dense else 4096
    return int(max(1, min(cap, budget // 16 // max(per_image, 1))))


def _image_tensor(images: Any, device: Any, dtype: Any) -> tuple[torch.Tensor, ArrayKind]:
    """The images as ``(n, N, N)`` without copying NumPy data up front (batches are converted
    one at a time)."""
    if isinstance(images, torch.Tensor):
        if images.is_complex():
            raise ValueError(f"images must be real, got complex dtype {images.dtype}")
        in_dev = images.device
        in_dtype = images.dtype
        t = images
        kind_in = ArrayKind(numpy=False, device=in_dev)
    else:
        arr = native_array(images, "images")  # native byte order, C order, writeable
        if arr.dtype.kind == "c":
            raise ValueError(f"images must be real, got complex dtype {arr.dtype}")
        in_dev = torch.device("cpu")
        in_dtype = arr.dtype
        t = None
        kind_in = ArrayKind(numpy=True, device=in_dev)
    shape = tuple(images.shape) if t is not None else tuple(arr.shape)
    if len(shape) < 2:
        raise ValueError(f"images must be (N, N) or a batch (..., N, N), got shape {shape}")
    if shape[-1] != shape[-2]:
        raise ValueError(colour_hint(shape, "images") or
                         f"images must be square (..., N, N) to map onto the unit disk, got "
                         f"shape {shape}; crop or pad them first")
    dt = dtype if dtype is not None else policy_dtype(in_dtype, name="images")
    dev = resolve_device(device, in_dev)
    n = int(math.prod(shape[:-2]))
    if n == 0:
        raise ValueError(f"images must hold at least one image, got shape {shape}")
    if t is None:
        # NumPy: a zero-copy view where possible; batches are converted and moved one at a time
        t = torch.from_numpy(arr.reshape(n, *shape[-2:]))
    else:
        t = t.reshape(n, *shape[-2:])
    # the per-batch conversion in features() applies dtype and device; keep them here
    t_meta = _Lazy(t, dt, dev)
    return t_meta, kind_in  # type: ignore[return-value]


class _Lazy:
    """A batch view that converts slices to the working dtype and device on access."""

    def __init__(self, t: torch.Tensor, dtype: torch.dtype, device: torch.device) -> None:
        self._t = t
        self.dtype = dtype
        self.device = device
        self.shape = tuple(t.shape)

    def __getitem__(self, key: Any) -> torch.Tensor:
        return self._t[key].to(device=self.device, dtype=self.dtype)

