"""The Morlet wavelet transform by the (attenuated) sliding Fourier transform (section 3 of the
:ref:`ASFT paper <bib-asft-paper>`)."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .._cache import plan_cache
from .._threads import cpu_call, per_value
from .._validate import check_choice, check_int, check_positive_float
from ..parallel.plans import batched, free_axis
from ._apply import BankPlan
from .coefficients import (
    default_morlet_terms,
    fit_gaussian,
    fit_morlet,
    morlet_constants,
    morlet_kernel,
)
from .direct import DirectBank
from .gaussian import check_sigma, max_shift
from .sliding import SFTBank
from .wavelets import Morlet


def is_complex_input(x: Any) -> bool:
    """Whether ``x`` holds complex numbers (a tensor, an array, a number or a nested list)."""
    import torch

    if isinstance(x, torch.Tensor):
        return x.is_complex()
    dtype = getattr(x, "dtype", None)
    if isinstance(dtype, np.dtype):
        return dtype.kind == "c"
    if isinstance(x, (list, tuple, complex, np.complexfloating)):
        try:
            return np.asarray(x).dtype.kind == "c"
        except (ValueError, TypeError):  # ragged: the conversion names the error
            return False
    return False


def complex_call(call: Any, x: Any, out: Any, **options: Any) -> Any:
    """``call`` (a real transform with complex output) on complex ``x``:
    ``W(a + ib) = W(a) + i W(b)``, the two parts transformed as real calls; ``out`` filled
    when given."""
    import torch

    from .._array import as_tensor, to_output
    from ._apply import output_target

    t, kind = as_tensor(x, "x", min_ndim=1, allow_complex=True, check_finite=False)
    re = call(t.real, **options)
    im = call(t.imag, **options)
    if not re.is_complex():  # real coefficients (a derivative of Gaussian)
        res = torch.complex(re, im)
    elif torch.is_grad_enabled() and t.requires_grad:
        res = re + 1j * im
    else:  # in place: (r + i s) + i (u + i v) = (r - v) + i (s + u)
        res = re
        res.real.sub_(im.imag)
        res.imag.add_(im.real)
    del im
    user_out, target = output_target(out, x, t, kind, tuple(res.shape), res.dtype)
    if target is not None:
        target.copy_(res)
        return user_out
    return to_output(res, kind)

__all__ = ["APPROXIMATIONS", "METHODS", "MorletTransform", "morlet_bank", "morlet_transform",
           "resolve_method"]

METHODS = ("auto", "sft", "asft", "direct")
APPROXIMATIONS = ("direct", "multiplication")
_TARGET = 1e-4


def resolve_method(method: str) -> str:
    """The method a Morlet plan runs for the requested one: ``"auto"`` is ``"sft"``.

    The SFT bank is the one route whose cost does not grow with σ, and its default engine
    already chooses per scale among the candidates of ``method="auto"``: the chunked engine
    applies short-window scales as Toeplitz products of the same fitted kernel where that is
    cheaper (measured, :func:`~fastmoments.signal.chunked._toeplitz_cheaper`), and below σ = 1
    (or where no series fits the few-sample wavelet) the truncated kernel is applied directly.

    >>> resolve_method("auto"), resolve_method("direct")
    ('sft', 'direct')
    """
    return "sft" if method == "auto" else method


def _default_shift(sigma: float) -> int:
    return max(1, round(sigma / 16.0))


def _direct_rows(sigma, xi, terms, shift):
    fit = fit_morlet(sigma, xi, terms, shift)
    p = np.arange(fit.first, fit.first + terms)
    rows = len(p)
    return dict(omega=fit.beta * p, alpha=np.full(rows, shift / sigma**2),
                half=np.full(rows, fit.K), shift=np.full(rows, shift),
                mu=fit.m.astype(np.complex128), nu=(-fit.l).astype(np.complex128))


def _multiplication_rows(sigma, xi, terms, shift):
    """Rows of Eq. 60 (SFT) / Eq. 61 (ASFT), derived for the target ``e^{-αk} ψ[k - n0]``."""
    fit = fit_gaussian(sigma, terms)
    c, kappa = morlet_constants(xi)
    gamma = 0.5 / sigma**2
    amp = c * math.pi ** -0.25 / math.sqrt(sigma) * sigma * math.sqrt(2 * math.pi)
    amp *= math.exp(-gamma * shift**2)
    phase = np.exp(-1j * xi * shift / sigma)
    omega0 = xi / sigma
    om, mu = [], []
    for p in range(terms + 1):
        if p == 0:
            om.append(omega0)
            mu.append(amp * phase * fit.a[0])
        else:
            for sign in (1, -1):
                om.append(omega0 + sign * fit.beta * p)
                mu.append(amp * phase * fit.a[p] / 2)
    mu = np.asarray(mu, dtype=np.complex128)
    nu = -1j * mu  # e^{iωk} = cos ωk + i sin ωk
    om = np.asarray(om)
    if kappa * amp > 1e-18:
        om = np.concatenate([om, fit.beta * np.arange(terms + 1)])
        mu = np.concatenate([mu, -kappa * amp * fit.a.astype(np.complex128)])
        nu = np.concatenate([nu, np.zeros(terms + 1, dtype=np.complex128)])
    rows = len(om)
    return dict(omega=om, alpha=np.full(rows, shift / sigma**2), half=np.full(rows, fit.K),
                shift=np.full(rows, shift), mu=mu, nu=nu)


def morlet_rows(sigma: float, xi: float, method: str, approximation: str, terms: int,
                shift: int) -> dict:
    """Float64 row tables (see :class:`~fastmoments.signal.sliding.SFTBank`) for one scale."""
    shift = shift if method == "asft" else 0
    if approximation == "direct":
        return _direct_rows(sigma, xi, terms, shift)
    return _multiplication_rows(sigma, xi, terms, shift)


@functools.lru_cache(maxsize=512)
def morlet_bank(sigma: float, xi: float, method: str, approximation: str, terms: int,
                shift: int, truncate: float):
    """A one-channel bank (or direct kernel) for the Morlet transform at scale σ (cached)."""
    if method == "direct":
        w = math.ceil(truncate * sigma)
        return DirectBank(morlet_kernel(np.arange(-w, w + 1), sigma, xi)[None, :],
                          complex_output=True)
    rows = morlet_rows(sigma, xi, method, approximation, terms, shift)
    n = len(rows["omega"])
    return SFTBank(**rows, channel=np.zeros(n, dtype=np.int64), n_channels=1,
                   complex_output=True)


def kernel_rmse(bank, sigma: float, xi: float) -> float:
    """Relative RMSE of Eq. 66 of the applied kernel (window ``[-5K, 5K]``)."""
    w = 5 * bank.pad
    j = np.arange(-w, w + 1)
    exact = morlet_kernel(j, sigma, xi)
    diff = bank.kernel(j)[0] - exact
    return float(np.sqrt(np.sum(np.abs(diff) ** 2) / np.sum(np.abs(exact) ** 2)))


def default_terms(xi: float, method: str, approximation: str) -> int:
    """``P_D`` (direct) or ``P_M`` (multiplication) reaching relative RMSE ≤ 1e-4 at σ = 32."""
    if approximation == "direct":
        return default_morlet_terms(float(xi), _TARGET)
    for terms in range(4, 16):
        bank = morlet_bank(32.0, float(xi), method, approximation, terms,
                           _default_shift(32.0), 4.0)
        if kernel_rmse(bank, 32.0, float(xi)) <= _TARGET:
            return terms
    return 15  # pragma: no cover


class MorletTransform(BankPlan):
    """Plan for the Morlet wavelet transform at one scale σ along one axis.

    ``x_M[n] = Σ_k ψ_{σ,ξ}[k] x[n - k]`` with the wavelet of Eq. 52, computed from sliding
    Fourier transform components at a cost independent of σ.

    Parameters
    ----------
    sigma : float
        Scale: standard deviation of the wavelet's envelope, in samples (> 0).
    xi : float
        ξ of Eq. 49 (> 0).
    method : {"auto", "sft", "asft", "direct"}
        Plain SFT, attenuated SFT (shift ``n0``) or truncated convolution; ``"auto"``
        (default) runs the SFT, whose engine picks Toeplitz products or the direct kernel per
        scale where those are faster (:func:`resolve_method`). :attr:`method` is the method
        run, :attr:`requested` the one given.
    approximation : {"direct", "multiplication"}
        Sec. 3.1: fit ψ by orders ``P_S .. P_S + P_D - 1`` with the best ``P_S`` for ξ (Eq. 53),
        or Sec. 3.2: the Gaussian's fit times ``e^{iξk/σ} - κ`` (Eqs. 56-61).
    terms : int, optional
        ``P_D`` or ``P_M``; default: relative RMSE (Eq. 66) ≤ 1e-4 (raised by up to 3 for
        this σ where needed).
    shift : int, optional
        ASFT shift ``n0`` (default ``max(1, round(σ/16))``), from 1 to
        :func:`~fastmoments.signal.gaussian.max_shift` ``= max(1, floor(σ/2))`` (measured:
        relative RMSE ≤ 7e-5 at ``n0 = σ/2``, 2e-4 at ``n0 = σ``, 6e-3 at ``2σ``, NaN at
        ``n0 = 1000`` for σ ≤ 64).
    truncate : float
        Kernel half-width in σ for ``method="direct"``.

    Attributes
    ----------
    rmse : float
        Relative RMSE (Eq. 66) of the kernel applied, against Eq. 52. Where no fit reaches
        1e-4 (σ of a few samples) and the truncated kernel is more accurate, that kernel is
        applied directly, whatever the method.

    Notes
    -----
    With the ASFT the coefficients are fitted to ``e^{-αk} ψ[k - n0]`` on ``[-K, K]`` (Eq. 40
    applied to the envelope: ``e^{-αk} ψ[k-n0] = e^{-γ n0²} C π^{-1/4} σ^{-1/2} e^{-γk²}
    (e^{iξ(k-n0)/σ} - κ)``), so that no approximation error is added by the attenuation.
    float32 results agree with float64 to a relative RMSE below 1e-5 (tested).

    Examples
    --------
    >>> import numpy as np
    >>> plan = MorletTransform(40.0, 6.0)
    >>> plan.rmse < 1e-4
    True
    >>> n = np.arange(2000)
    >>> y = plan(np.cos(6.0 / 40.0 * n))
    >>> y.dtype, bool(abs(abs(y[1000]) - abs(y[1100])) < 1e-3)
    (dtype('complex128'), True)
    """

    def __init__(self, sigma: float, xi: float = 6.0, *, method: str = "auto",
                 approximation: str = "direct", terms: int | None = None,
                 shift: int | None = None, truncate: float = 4.0) -> None:
        self.sigma = check_sigma(sigma)
        self.xi = Morlet(check_positive_float("xi", xi)).xi  # one check of ξ (≤ MAX_XI)
        self.requested = check_choice("method", method, METHODS)
        self.method = resolve_method(self.requested)
        self.approximation = check_choice("approximation", approximation, APPROXIMATIONS)
        self.truncate = check_positive_float("truncate", truncate)
        if self.method == "asft":
            self.shift = (_default_shift(self.sigma) if shift is None
                          else check_int("shift", shift, minimum=1))
            if self.shift > max_shift(self.sigma):
                raise ValueError(
                    f"shift must be in 1..{max_shift(self.sigma)} for sigma={self.sigma} (the "
                    f"ASFT fit of the wavelet is accurate and well conditioned up to "
                    f"max(1, floor(sigma / 2))), got {self.shift}")
        elif shift is not None:
            raise ValueError("shift is only used with method='asft'")
        else:
            self.shift = 0
        self.terms = (default_terms(self.xi, self.method, self.approximation) if terms is None
                      else check_int("terms", terms, minimum=1, maximum=64))
        # at σ of a sample or two the ASFT's attenuation e^{n0 k/σ²} overflows: the fit's
        # RMSE is then NaN or huge, and the direct kernel below replaces it
        # below σ = 1 no series fits (measured: the SFT is 30-50% off up to σ = 1.5): the
        # wavelet's few taps are applied directly without trying (σ² may even underflow)
        fit = self.method if self.sigma >= 1.0 else "direct"
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            tries = 4 if terms is None and fit != "direct" else 1
            for attempt in range(tries):
                self.bank = morlet_bank(self.sigma, self.xi, fit, self.approximation,
                                        self.terms, self.shift if fit == "asft" else 0,
                                        self.truncate)
                if fit != "direct" and self.approximation == "direct":
                    # the fit's own Eq. 66 RMSE of this very kernel (cached with the fit):
                    # equal to kernel_rmse's to 1e-11, without resampling the kernel
                    self.rmse = fit_morlet(self.sigma, self.xi, self.terms,
                                           self.shift if fit == "asft" else 0).rmse
                else:
                    self.rmse = kernel_rmse(self.bank, self.sigma, self.xi)
                if self.rmse <= _TARGET or attempt == tries - 1:
                    break  # (terms stays the count of the bank just built)
                self.terms += 1
        if self.method != "direct" and not self.rmse <= _TARGET:
            # small σ (ξ/σ near or past π): no short series fits the few-sample wavelet (the
            # SFT's error was 0.3-0.5, the ASFT's NaN below σ ≈ 1.5); its truncated kernel
            # is applied directly instead, when that is more accurate
            direct = morlet_bank(self.sigma, self.xi, "direct", self.approximation,
                                 self.terms, 0, self.truncate)
            err = kernel_rmse(direct, self.sigma, self.xi)
            if not self.rmse <= err:
                self.bank, self.rmse = direct, err
        self.K = int(self.bank.pad - (self.shift if isinstance(self.bank, SFTBank) else 0))

    @property
    def first(self) -> int | None:
        """``P_S`` of the direct approximation (``None`` otherwise)."""
        if self.method == "direct" or self.approximation != "direct":
            return None
        return fit_morlet(self.sigma, self.xi, self.terms, self.shift).first

    def __call__(self, x: Any, *, out: Any = None, **options: Any) -> Any:
        """As :meth:`~fastmoments.signal._apply.BankPlan.__call__`; complex ``x`` gives
        ``W(a + ib) = W(a) + i W(b)`` (the real and imaginary parts transformed as two real
        calls).

        >>> p = MorletTransform(4.0)
        >>> z = np.exp(1j * 2 * np.pi * np.arange(256) / 16)
        >>> w = p(z)
        >>> bool(np.allclose(w, p(z.real) + 1j * p(z.imag)))
        True
        """
        if is_complex_input(x):
            return complex_call(super().__call__, x, out, **options)
        return super().__call__(x, out=out, **options)

    def kernel(self, j: np.ndarray) -> np.ndarray:
        """The complex impulse response actually applied, at integer offsets ``j``."""
        return self.bank.kernel(np.asarray(j))[0]

    def __repr__(self) -> str:
        route = f", route={str(self.route)!r}" if self.route is not None else ""
        return (f"MorletTransform(sigma={self.sigma}, xi={self.xi}, method={self.method!r}, "
                f"approximation={self.approximation!r}, terms={self.terms}, K={self.K}, "
                f"rmse={self.rmse:.2e}{route})")


@plan_cache(maxsize=128)
def _cached_plan(sigma, xi, method, approximation, terms, shift, truncate) -> MorletTransform:
    return MorletTransform(sigma, xi, method=method, approximation=approximation, terms=terms,
                           shift=shift, truncate=truncate)


@batched(name="x", split_axis=free_axis(lambda a: a["axis"]))
@cpu_call(per_value(16))
def morlet_transform(x: Any, sigma: float, xi: float = 6.0, *, axis: int = -1,
                     mode: str = "reflect", cval: float = 0.0, method: str = "auto",
                     approximation: str = "direct", terms: int | None = None,
                     shift: int | None = None, engine: str = "auto", truncate: float = 4.0,
                     memory_budget: float | None = None, out: Any = None,
                     progress: bool | None = None) -> Any:
    """Morlet wavelet transform at scale σ (equations 49-55 and 60-61 of the
    :ref:`ASFT paper <bib-asft-paper>`).

    Parameters
    ----------
    x : array_like or torch.Tensor
        Real or complex signals (complex: ``W(a + ib) = W(a) + i W(b)``); the transform runs
        along ``axis``. Never modified.
    sigma : float
        Scale in samples (> 0).
    xi : float
        ξ of the wavelet (> 0).
    axis, mode, cval, method, approximation, terms, shift, engine, truncate, memory_budget
        As in :class:`MorletTransform` and :func:`~fastmoments.signal.gaussian_filter1d`
        (``method="auto"``, the default, runs the SFT: :func:`resolve_method`).
    out : numpy.ndarray or torch.Tensor, optional
        Preallocated output of ``x``'s shape and the result dtype, of the input's kind:
        written in place and returned (see :meth:`MorletTransform.__call__`).
    progress : bool, optional
        tqdm progress bar: ``True`` always, ``False`` never, ``None`` (default) for large
        jobs once they have run for a second.

    Returns
    -------
    numpy.ndarray or torch.Tensor
        Complex64 (float32 input) or complex128, same shape as ``x``:
        ``x_M[n] = Σ_k ψ_{σ,ξ}[k] x[n - k]`` (``out`` when given).

    Raises
    ------
    ValueError
        For σ ≤ 0 or ξ ≤ 0, a bad axis, an unknown option, NaN or infinity in ``x``, or a bad
        ``out`` (wrong shape or device, read-only, overlapping ``x``).
    TypeError
        For an ``out`` of the wrong kind or dtype, or a ``progress`` other than ``True``,
        ``False`` or ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> y = morlet_transform(np.random.default_rng(0).standard_normal(512), 8.0, 6.0)
    >>> y.shape, y.dtype
    ((512,), dtype('complex128'))
    """
    plan = _cached_plan(check_sigma(sigma), Morlet(check_positive_float("xi", xi)).xi,
                        resolve_method(check_choice("method", method, METHODS)),
                        check_choice("approximation", approximation, APPROXIMATIONS),
                        terms if terms is None else check_int("terms", terms, minimum=1,
                                                              maximum=64),
                        shift if shift is None else check_int("shift", shift, minimum=1),
                        check_positive_float("truncate", truncate))
    return plan(x, axis=axis, mode=mode, cval=cval, engine=engine, memory_budget=memory_budget,
                out=out, progress=progress)
