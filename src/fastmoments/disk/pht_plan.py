r"""The plan of the polar harmonic transforms: :class:`PolarHarmonicTransform`, with its
dense ("gemm") kernel; the methods are described in :mod:`fastmoments.disk.pht`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._array import ArrayKind, complex_dtype, input_shape, real_dtype
from .._memory import check_memory_budget, format_bytes, rows_per_chunk
from .._progress import check_progress
from .._route import Route
from .._threads import cpu_call, per_value
from .._validate import (
    check_choice,
    check_int,
    check_positive_float,
)
from . import routes
from .families import check_family_pairs
from .indexing import IndexSet
from .pht_family import KINDS, PolarHarmonicFamily, pht_family
from .pht_moments import PHTMoments
from .sampling import plan_points
from .transform import (
    DiskTransform,
    channels_first,
    estimate_disk_memory,
    plan_shape,
)

__all__ = ["METHODS", "PolarHarmonicTransform"]

#: ``"auto"`` picks one of the others per device, size and batch
#: (:func:`fastmoments.disk.routes.pht_method`).
METHODS = ("auto", "engine", "gemm", "nufft")


class PolarHarmonicTransform(DiskTransform):
    r"""Plan of a polar harmonic transform for ``N x N`` images, applied to batches.

    Parameters
    ----------
    kind : {"pcet", "pct", "pst"}
        Polar complex exponential, cosine or sine transform.
    size : int or (int, int)
        Image side ``N``, or the image shape ``(H, W)``.
    nmax, lmax : int
        Highest order ``|n|`` and repetition ``|l|``.
    nmin, lmin : int, optional
        Lowest order and repetition. Default: the full set, ``n`` from ``-nmax`` (PCET),
        ``0`` (PCT) or ``1`` (PST) and ``l`` from ``-lmax``. Give them to compute a
        rectangle of moments such as the paper's ``1 <= n, l <= 25``.
    pairs : sequence of (n, l), optional
        Compute exactly these moments instead (give either ``nmax``/``lmax`` or ``pairs``).
    s : float
        Exponent of the generic transforms (Hoang and Tabbone); ``2`` is the classical one.
    k, quadrature, rule :
        Sampling, as for the Zernike moments (:class:`~fastmoments.disk.DiskTransform`).
    method : {"auto", "engine", "gemm", "nufft"}
        How to compute (see the module notes); ``"auto"`` (default) picks by device and size
        (:func:`fastmoments.disk.routes.pht_method`).
    eps : float, optional
        Requested relative accuracy of the ``"nufft"`` method (default ``1e-6`` in float32,
        ``1e-12`` in float64).
    dtype, device, memory_budget :
        Working precision, device and scratch budget.
    center, radius : optional
        Centre ``(row, col)`` and radius of the disk in pixels, as for
        :class:`~fastmoments.disk.DiskTransform` (default: the disk inscribed in the image).

    Raises
    ------
    ValueError
        Unknown ``kind``/``method``/sampling options (the message lists the valid ones),
        invalid orders or pairs, ``s < 2`` with a sample point at the centre, bad images
        (at :meth:`forward`).
    MemoryError
        When the GEMM kernel or the smallest chunk does not fit the memory budget (the
        message says how much is needed).

    Notes
    -----
    ``M[n, l] = c_n * sum_p w_p f_p conj(R_n(r_p)) exp(-i l theta_p)`` (Yang et al. 2020,
    Eq. 4, 9, 15 discretized over the sample points).

    float32 accuracy (relative 2-norm error of the moment vector against float64): below
    ``1e-5`` on small images (tested for every method at ``N = 24``, ``|n|, l <= 6``); measured
    4e-7 to 7e-7 (folded GEMM) and 2e-6 to 4e-6 (plain GEMM, engine) on 512 x 512 patches
    with ``1 <= n, l <= 25`` (H100), and up to 1.3e-5 on
    2048 x 2048 images of integers 1..255 with ``11 <= n <= 16`` (the moments there are small
    against the image sum), see ``benchmarks/results/pht_gpu.json``.

    Examples
    --------
    >>> import numpy as np
    >>> plan = PolarHarmonicTransform("pcet", 32, 4, 4)
    >>> M = plan.forward(np.ones((32, 32)))
    >>> round(float(abs(M[0, 0])), 3)  # (1/pi) * area of the used pixels
    0.91
    >>> round(float(abs(M[2, 1])), 12)
    0.0
    """

    def __init__(self, kind: str, size: int | tuple[int, int], nmax: int | None = None,
                 lmax: int | None = None,
                 *, nmin: int | None = None, lmin: int | None = None,
                 pairs: Sequence[tuple[int, int]] | None = None, s: float = 2.0, k: int = 1,
                 quadrature: str = "midpoint", rule: str = "inscribed", method: str = "auto",
                 eps: float | None = None, dtype: torch.dtype | str = torch.float32,
                 device: Any = None, memory_budget: float | None = None, center: Any = None,
                 radius: Any = None) -> None:
        family = pht_family(check_choice("kind", kind, KINDS),
                            float(check_positive_float("s", s)))
        index = _index_set(family, nmax, lmax, nmin, lmin, pairs, size=size, k=k,
                           dtype=dtype, device=device, memory_budget=memory_budget)
        super().__init__(family, size, 0, k=k, quadrature=quadrature, rule=rule,
                         dtype=dtype, device=device, memory_budget=memory_budget, index=index,
                         center=center, radius=radius)
        self.kind = family.kind
        self.s = family.s
        self.requested_method = check_choice("method", method, METHODS)
        if eps is None:
            eps = 1e-6 if self.dtype == torch.float32 else 1e-12
        self.eps = check_positive_float("eps", eps)
        if self.s < 2.0:  # fail at build time, not at the first call
            family.radial(torch.as_tensor(self.sampling.radius[:1]), torch.zeros(1))
        self._kernel: dict[str, Any] | None = None
        # the 180-degree fold of the "gemm" method, for many moments (routes.PHT_FOLD_FROM),
        # about the centre of an N x N image (the default disk)
        self._fold = self.index.size >= routes.PHT_FOLD_FROM and self.placement is None
        self._nufft: Any = None

    def partial_plan(self, index: IndexSet, device: torch.device,
                     arguments: dict[str, Any]) -> PolarHarmonicTransform:
        """The plan of some of this plan's columns on ``device``, for a split over devices."""
        kw = {k: v for k, v in arguments.items()
              if k not in ("nmax", "lmax", "nmin", "lmin", "pairs", "kind", "size", "center",
                           "radius")}
        return PolarHarmonicTransform(self.kind, self.shape, pairs=index.pairs(),
                                      **{**kw, **self._placement_arguments(), "device": device})

    # ------------------------------------------------------------------ sizes
    def _kernel_base(self) -> np.ndarray:
        """Pixels a dense kernel may cover: all ``N*N`` on a GPU (slices, no gather pass over
        the batch), only the used ones on the CPU (fewer flops)."""
        if self.device.type == "cuda":
            return np.arange(self.sampling.n_pixels)
        return np.flatnonzero(self.mask)

    def _fold_pixels(self) -> tuple[np.ndarray, np.ndarray]:
        """Representatives ``p < N*N - 1 - p`` of the pixel pairs related by the rotation by
        180 degrees (flat index ``p -> N*N - 1 - p``), and the centre pixel (odd ``N``)."""
        base = self._kernel_base()
        partner = self.size * self.size - 1 - base
        return base[base < partner], base[base == partner]

    def kernel_pixels(self) -> int:
        """Columns of the dense kernel: about half the pixels with the 180-degree fold
        (counted once: the route of every call reads it)."""
        counted = self.__dict__.setdefault("_kernel_pixels", {})
        n = counted.get(self._fold)
        if n is None:
            if not self._fold:
                n = int(self._kernel_base().size)
            else:
                rep, centre = self._fold_pixels()
                n = int(rep.size + centre.size)
            counted[self._fold] = n
        return n

    def kernel_bytes(self) -> int:
        """Bytes of the dense kernel matrix of the ``"gemm"`` method."""
        item = 4 if self.dtype == torch.float32 else 8
        return self.kernel_pixels() * 2 * self.index.size * item

    def method_for(self, batch: int) -> str:
        """The method that :meth:`forward` uses for a batch of ``batch`` images."""
        return self._method(batch)[0]

    def _method(self, batch: int) -> tuple[str, str]:
        if self.requested_method != "auto":
            return self.requested_method, "method= given"
        from .nufft import have_finufft

        return routes.pht_method(self.device, self.index.size, batch, self.kernel_bytes(),
                                 self.engine.budget, have_finufft())

    @property
    def route(self) -> Route:
        """What :meth:`forward` runs for one image (:mod:`fastmoments.disk.routes`);
        :meth:`route_for` for a batch."""
        return self.route_for(1)

    def route_for(self, batch: int) -> Route:
        """The route a forward call of ``batch`` images takes (the same on every call)."""
        method, reason = self._method(batch)
        return routes.pht_route(method, reason, self.engine, batch, self._fold)

    def __repr__(self) -> str:
        dtype = str(self.dtype).replace("torch.", "")
        return (f"PolarHarmonicTransform({self.kind!r}, size={self._size_text()}, "
                f"moments={self.index.size}, s={self.s}, k={self.k}, dtype={dtype}, "
                f"device={self.device}, route={self.route})")

    # ------------------------------------------------------------------ forward
    @cpu_call(per_value(lambda self, *a, **k: self.k ** 2 * (self.order + 1), arg=1))
    def forward(self, image: Any, *, progress: bool | None = None,
                channel_axis: int | None = None) -> PHTMoments:
        """Moments of ``image`` shaped ``(..., N, N)``; returns :class:`PHTMoments`.

        A batch that is not yet a tensor on the plan's device and whose working copy would
        take more than a quarter of the memory budget is streamed: converted, moved and
        transformed in chunks (e.g. images in host memory and a plan on a GPU).

        ``channel_axis``: the colour channel axis of ``image``, as in
        :meth:`DiskTransform.forward` (the channels become the last batch axis).
        """
        progress = check_progress(progress)
        image, move = channels_first(image, channel_axis)
        out = self._forward_images(image, progress)
        out.channels = move
        return out

    __call__ = forward

    def _forward_images(self, image: Any, progress: bool | None) -> PHTMoments:
        streamed = self._stream(image)
        if streamed is not None:
            return streamed
        x, kind, batch = self._images(image)
        method = self.method_for(x.shape[0])
        if method == "engine":
            coef = self.engine.forward(x, progress)
        elif method == "gemm":
            coef = self._gemm_forward(x)
        else:
            from .nufft import nufft_forward

            coef = nufft_forward(self, x)
        coef = coef.reshape(*batch, self.index.n_cols, self.index.n_rows)
        return PHTMoments(coef, self, kind)

    def _stream(self, image: Any) -> PHTMoments | None:
        on_device = isinstance(image, torch.Tensor) and image.device == self.device
        shape = input_shape(image, "image")
        if on_device or len(shape) < 3 or tuple(shape[-2:]) != self.shape:
            return None  # nothing to stream (or a bad shape: forward() says why)
        item = 4 if self.dtype == torch.float32 else 8
        per_image = self.shape[0] * self.shape[1] * item
        count = int(np.prod(shape[:-2]))
        budget = self.engine.budget
        if count * per_image <= budget // 4:
            return None
        step = rows_per_chunk(per_image, budget // 4, count, what="streaming the images")
        flat = image.reshape(count, *self.shape)
        parts = [PolarHarmonicTransform.forward(self, flat[i:i + step]).data
                 for i in range(0, count, step)]
        coef = torch.cat(parts).reshape(*shape[:-2], self.index.n_cols, self.index.n_rows)
        kind = ArrayKind(numpy=not isinstance(image, torch.Tensor),
                         device=image.device if isinstance(image, torch.Tensor)
                         else torch.device("cpu"))
        return PHTMoments(coef, self, kind)

    # ------------------------------------------------------------------ dense kernel
    def kernel(self) -> dict[str, Any]:
        r"""The dense kernel of the ``"gemm"`` method, built once in float64 and cast.

        ``W[j, p] = c_{n_j} \sum_{s \in p} w_s R^*_{n_j}(r_s) e^{-i l_j \theta_s}`` over the
        stored moments ``j`` (in the order of the dense layout's valid slots) and pixels
        ``p``, stored transposed with real and imaginary parts stacked, ``(2K, pixels)``.

        With the 180-degree fold (used from 128 moments on) a pixel and its image under the
        rotation by :math:`\pi` are summed (even ``l``) or subtracted (odd ``l``) before the
        product, since :math:`e^{-il(\theta + \pi)} = (-1)^l e^{-il\theta}`: two products over half
        the pixels, half the flops and half the kernel.
        """
        if self._kernel is None:
            need = self.kernel_bytes()
            budget = self.engine.budget
            if need > budget // 2:
                raise MemoryError(
                    f"method='gemm' needs a {format_bytes(need)} kernel matrix for "
                    f"{self.index.size} moments of {self.shape[0]}x{self.shape[1]} images, "
                    f"over half the memory budget ({format_bytes(budget)}); use method='engine' or "
                    "'nufft', or raise memory_budget")
            dev = self.device
            if not self._fold:
                self._kernel = {"W": _build_kernel(self, self._kernel_base())}
                if self.device.type != "cuda":
                    self._kernel["pixels"] = torch.as_tensor(self._kernel_base(), device=dev)
                return self._kernel
            rep, centre = self._fold_pixels()
            W = _build_kernel(self, np.concatenate([rep, centre]))
            K = self.index.size
            ms = np.array([m for _n, m in self.index.pairs()])
            je, jo = np.flatnonzero(ms % 2 == 0), np.flatnonzero(ms % 2 == 1)
            contiguous = rep.size == 0 or (rep[0] == 0 and rep[-1] == rep.size - 1)
            self._kernel = {
                "We": W[np.concatenate([je, K + je])].contiguous(),
                "Wo": W[np.concatenate([jo, K + jo])].contiguous(),
                "je": torch.as_tensor(je, device=dev), "jo": torch.as_tensor(jo, device=dev),
                "h": int(rep.size), "contiguous": bool(contiguous),
                "rep": torch.as_tensor(rep, device=dev),
                "partner": torch.as_tensor(self.size**2 - 1 - rep, device=dev),
                "centre": torch.as_tensor(centre, device=dev),
            }
            del W
        return self._kernel

    def _gemm_forward(self, x: torch.Tensor) -> torch.Tensor:
        """The GEMM method on ``x`` (B, N*N), in chunks of images whose scratch (gathered or
        folded copies) fits in the memory budget."""
        kern = self.kernel()
        item = 4 if self.dtype == torch.float32 else 8
        scratch = 0
        if self._fold:
            scratch = 3 * kern["h"] * item
        elif "pixels" in kern:
            scratch = int(kern["pixels"].numel()) * item
        if scratch:
            budget = self.engine.budget
            step = rows_per_chunk(scratch, budget, x.shape[0], what="method='gemm'")
            if step < x.shape[0]:
                return torch.cat([self._gemm_chunk(x[i:i + step], kern)
                                  for i in range(0, x.shape[0], step)])
        return self._gemm_chunk(x, kern)

    def _gemm_chunk(self, x: torch.Tensor, kern: dict[str, Any]) -> torch.Tensor:
        K = self.index.size
        out = torch.zeros(x.shape[0], self.index.n_cols, self.index.n_rows,
                          dtype=complex_dtype(self.dtype), device=self.device)
        valid = torch.as_tensor(self.index.valid_mask(), device=self.device)
        if not self._fold:
            if "pixels" in kern:
                x = x[:, kern["pixels"]]
            prod = x @ kern["W"].T  # (B, 2K)
            out[:, valid] = torch.complex(prod[:, :K], prod[:, K:])
            return out
        h = kern["h"]
        if kern["contiguous"]:  # all pixels (GPU): slices and one flip, no gathers
            xr, xp = x[:, :h], x[:, x.shape[1] - h:].flip(-1)
        else:
            xr, xp = x[:, kern["rep"]], x[:, kern["partner"]]
        xc = x[:, kern["centre"]]
        vals = torch.zeros(x.shape[0], K, dtype=out.dtype, device=self.device)
        for sign, W, j in ((1, kern["We"], kern["je"]), (-1, kern["Wo"], kern["jo"])):
            if j.numel() == 0:
                continue
            folded = xr + xp if sign > 0 else xr - xp
            if xc.shape[1]:
                folded = torch.cat([folded, xc], dim=1)
            prod = folded @ W.T
            k = j.numel()
            vals[:, j] = torch.complex(prod[:, :k], prod[:, k:])
        out[:, valid] = vals
        return out


#: number of stored moments from which the "gemm" method folds the image (measured)


def _build_kernel(plan: PolarHarmonicTransform, pixels: np.ndarray) -> torch.Tensor:
    """The kernel ``(2K, len(pixels))`` over the given pixels (sample points elsewhere are
    left out)."""
    dev, dtype = plan.device, plan.dtype
    r, theta, w, pix = (torch.tensor(a, device=dev) for a in plan_points(plan))
    fam: PolarHarmonicFamily = plan.family  # type: ignore[assignment]
    idx = plan.index
    norm = fam.norm(idx)
    N2 = plan.sampling.n_pixels
    npx = int(pixels.size)
    pos = torch.full((N2,), -1, dtype=torch.long, device=dev)
    pos[torch.as_tensor(pixels, device=dev)] = torch.arange(npx, device=dev)
    target = pos[pix]
    keep = target >= 0
    r, theta, w, target = r[keep], theta[keep], w[keep], target[keep]
    order = torch.argsort(target)  # points in pixel order: contiguous writes below
    r, theta, w, target = r[order], theta[order], w[order], target[order]
    one_point = plan.k == 1  # each pixel holds exactly one sample point
    dense_rows = one_point and target.numel() == npx  # then target == arange(npx)
    K = idx.size
    P = r.shape[0]
    WT = torch.zeros(2 * K, npx, dtype=dtype, device=dev)
    orders = sorted({n for col in idx.ns for n in col})
    row_of = {n: i for i, n in enumerate(orders)}
    cnorm = {n: c for col, cs in zip(idx.ns, norm, strict=True)
             for n, c in zip(col, cs, strict=False)}

    def radial_normed(ns: Sequence[int]) -> torch.Tensor:  # c_n conj(R_n(r_p)), (b, P)
        R = fam.radial(r, torch.tensor(ns, device=dev)).conj()
        return R * torch.tensor([cnorm[n] for n in ns], dtype=torch.float64, device=dev)[:, None]

    Rall = radial_normed(orders) if len(orders) * P * 16 <= 2**28 else None  # <= 256 MiB
    step = max(1, 2**23 // max(P, 1))  # rows per block: about 128 MiB of complex128
    buf = torch.empty(step, P, dtype=torch.complex128, device=dev)  # reused (no page faults)
    j = 0
    for c, m in enumerate(idx.ms):
        E = torch.polar(w, -float(m) * theta)  # w_p exp(-i m theta_p)
        col = idx.ns[c]
        for i0 in range(0, len(col), step):
            ns = col[i0:i0 + step]
            b = len(ns)
            if Rall is not None:
                R = Rall[torch.tensor([row_of[n] for n in ns], device=dev)]
            else:
                R = radial_normed(ns)
            vals = torch.mul(R, E[None, :], out=buf[:b])  # (b, P) complex128
            if dense_rows:
                WT[j:j + b].copy_(vals.real)
                WT[K + j:K + j + b].copy_(vals.imag)
            elif one_point:
                WT[j:j + b, target] = vals.real.to(dtype)
                WT[K + j:K + j + b, target] = vals.imag.to(dtype)
            else:
                acc = torch.zeros(2, b, npx, dtype=torch.float64, device=dev)
                acc[0].index_add_(1, target, vals.real)
                acc[1].index_add_(1, target, vals.imag)
                WT[j:j + b] = acc[0].to(dtype)
                WT[K + j:K + j + b] = acc[1].to(dtype)
            j += b
    return WT


def check_orders(family: PolarHarmonicFamily, nmax: Any, lmax: Any, nmin: Any, lmin: Any,
                  pairs: Any, *, size: int | tuple[int, int], k: int, dtype: Any, device: Any,
                  memory_budget: float | None
                  ) -> tuple[tuple[tuple[int, int], ...] | None, tuple[int, int, int, int]]:
    """Check the orders and repetitions (or pairs) and the memory they need; returns the
    pairs, or ``(nmin, nmax, lmin, lmax)`` of the rectangle."""
    if pairs is not None:
        if nmin is not None or lmin is not None:
            raise ValueError("give nmin/lmin only with nmax/lmax, not with pairs")
        if nmax is not None or lmax is not None:
            raise ValueError("give either nmax/lmax or pairs, not both")
        prs = check_family_pairs(family, "pairs", pairs, labels=("n", "l"))
        estimate_disk_memory(family, size, None, pairs=prs, k=k, dtype=_work(dtype),
                             device=device, memory_budget=memory_budget)
        return prs, (0, 0, 0, 0)
    if nmax is None or lmax is None:
        raise ValueError("give nmax and lmax (or pairs)")
    nmax = check_int("nmax", nmax, minimum=0 if family.kind != "pst" else 1)
    lmax = check_int("lmax", lmax, minimum=0)
    if nmin is None:
        nmin = family.orders(nmax)[0]
    nmin = check_int("nmin", nmin, minimum=family.nlow)
    lmin = -lmax if lmin is None else check_int("lmin", lmin, minimum=None)
    if nmin > nmax:
        raise ValueError(f"nmin must be <= nmax={nmax}, got {nmin}")
    if lmin > lmax:
        raise ValueError(f"lmin must be <= lmax={lmax}, got {lmin}")
    if lmin < -lmax:
        raise ValueError(f"lmin must be >= -lmax={-lmax}, got {lmin}")
    # stored moments: at most every (n, l) of the rectangle, in lmax + 1 columns of at most
    # 2 nmax + 1 orders
    K = (nmax - nmin + 1) * (lmax - lmin + 1)
    slots = (lmax + 1) * (nmax - min(nmin, -nmax if family.nlow is None else nmin) + 1)
    estimate_disk_memory(family, size, nmax, n_moments=K, slots=slots, k=k,
                         dtype=_work(dtype), device=device, memory_budget=memory_budget)
    return None, (nmin, nmax, lmin, lmax)


def _work(dtype: Any) -> torch.dtype:
    return real_dtype(dtype)


def _index_set(family: PolarHarmonicFamily, nmax: Any, lmax: Any, nmin: Any, lmin: Any,
               pairs: Any, *, size: Any, k: int, dtype: Any, device: Any,
               memory_budget: float | None) -> IndexSet:
    prs, (nmin, nmax, lmin, lmax) = check_orders(
        family, nmax, lmax, nmin, lmin, pairs, size=plan_shape(size),
        k=check_int("k", k, minimum=1), dtype=dtype, device=device,
        memory_budget=check_memory_budget(memory_budget))
    if prs is not None:
        return family.selection(prs)
    return family.selection([(n, m) for n in range(nmin, nmax + 1)
                             for m in range(lmin, lmax + 1)])
