r"""scikit-learn transformers: moment features of images as a step of a ``Pipeline``.

:class:`ZernikeFeatures`, :class:`PseudoZernikeFeatures` and :class:`MomentFeatures` (any disk
family, the polar harmonic ones included) turn a set of square images into a feature matrix
with :func:`fastmoments.features`, following scikit-learn's transformer API:

* ``X`` is ``(n_samples, H, W)`` square images, or ``(n_samples, H * W)`` flattened square
  images (what a ``Pipeline``, ``train_test_split`` or a pandas DataFrame hands over); the side
  ``H = W`` is inferred from the number of columns, and a count that is not a perfect square is
  a :class:`ValueError` naming ``X``. Flattening is row-major (``images.reshape(n, -1)``).
* ``fit`` validates the parameters and ``X`` and records ``n_features_in_`` (the number of
  pixels per image, ``H * W``, for either layout), ``image_shape_`` and, for a DataFrame,
  ``feature_names_in_``. The transform learns nothing from the data: fitting only fixes the
  image size.
* ``transform`` returns ``(n_samples, n_features_out)`` float64 (``dtype="float32"`` gives
  float32), always NumPy, whatever device computed it.
* ``get_feature_names_out`` returns the column labels of :class:`fastmoments.FeatureSet`
  (``"|A[2,0]|"``, ``"Re A[3,1]"``, ...), in the column order of ``features()`` (order ``n``,
  then repetition ``m``), which is also the order of ``DiskMoments.invariants()`` and its
  ``names()``, so ``set_output(transform="pandas")`` names the DataFrame columns and the
  columns of all three match by name.
* Parameters are stored as given (no work in ``__init__``), so ``clone``, ``get_params`` /
  ``set_params`` and ``GridSearchCV`` over ``orders`` work.
* The defaults are those of :func:`fastmoments.features` and of the ``fastmoments features``
  command (:mod:`fastmoments._defaults`): Zernike moments of every order ``0..9``, as
  magnitudes (invariant to rotations); every transformer names its orders ``orders`` (an int
  ``T`` for ``0..T``, or the orders themselves).

The estimator tags say that the input may be 2-D or 3-D (``two_d_array`` and
``three_d_array``): scikit-learn's generic checks feed 2-D data of arbitrary widths, which these
transformers accept whenever the width is a square number of pixels.

:class:`Zernike3DFeatures` does the same for volumes ``(n_samples, D, H, W)`` (or flattened
cubes ``(n_samples, N**3)``) with the 3-D Zernike moments of :mod:`fastmoments.ball`.

Requires scikit-learn >= 1.6 (the ``__sklearn_tags__`` and ``validate_data`` API).

Examples
--------
>>> import numpy as np
>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.preprocessing import StandardScaler
>>> rng = np.random.default_rng(0)
>>> X = rng.random((6, 16, 16))
>>> zf = ZernikeFeatures(orders=3).fit(X)
>>> zf.transform(X).shape, zf.image_shape_, zf.n_features_in_
((6, 6), (16, 16), 256)
>>> list(zf.get_feature_names_out()[:3])
['|A[0,0]|', '|A[1,1]|', '|A[2,0]|']
>>> make_pipeline(ZernikeFeatures(orders=3), StandardScaler()).fit_transform(
...     X.reshape(6, -1)).shape
(6, 6)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

try:
    import sklearn
except ImportError as _exc:  # pragma: no cover - depends on the install
    raise ModuleNotFoundError(
        "fastmoments.sklearn needs scikit-learn >= 1.6, which is not installed: "
        "pip install \"fastmoments[sklearn]\" (or pip install scikit-learn)",
        name="sklearn") from _exc
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import (
    _check_feature_names_in,
    check_array,
    check_is_fitted,
    validate_data,
)

from ._defaults import FAMILY, KIND, KIND_3D, ORDERS
from ._validate import check_choice, check_int, check_int_list
from .recognition.extract import features

__all__ = ["MomentFeatures", "PseudoZernikeFeatures", "Zernike3DFeatures", "ZernikeFeatures"]

_MIN_SKLEARN = (1, 6)


def _version(text: str) -> tuple[int, int]:
    parts = text.split(".")
    return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)


if _version(sklearn.__version__) < _MIN_SKLEARN:  # pragma: no cover - depends on the install
    raise ImportError(f"fastmoments.sklearn needs scikit-learn >= 1.6 (estimator tags API), "
                      f"found {sklearn.__version__}; pip install \"fastmoments[sklearn]\"")

_DTYPES = ("float64", "float32")



def _real_input(X: Any) -> Any:
    """``X`` as an array (lists and other array-likes converted; a DataFrame kept), refusing
    complex and string data with a one-line message naming ``X`` instead of a dump of it."""
    if not hasattr(X, "shape"):
        try:
            X = np.asarray(X)
        except ValueError as exc:  # ragged nested lists
            raise ValueError(f"X must be a rectangular array of numbers; could not convert "
                             f"it: {exc}") from exc
    kind = getattr(getattr(X, "dtype", None), "kind", None)
    if kind == "c":
        raise ValueError(f"Complex data not supported: X must hold real numbers, got dtype "
                         f"{X.dtype} (pass X.real, X.imag or abs(X))")
    if kind in ("U", "S"):
        raise TypeError(f"X must hold numbers, got strings (dtype {X.dtype})")
    return X

class _MomentTransformer(TransformerMixin, BaseEstimator):
    """What the moment transformers share: their output names (``_names_out``, set by
    ``fit``) and their scikit-learn tags (2-D ``X`` accepted, the working dtype kept)."""

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Column labels of :meth:`transform` (:attr:`fastmoments.FeatureSet.names` for the
        disk transformers; ``"F[n,l]"``, ``"|Om[n,l,m]|"`` or ``"Re Om[n,l,m]"``/``"Im
        Om[n,l,m]"`` for the 3-D one).

        Parameters
        ----------
        input_features : array_like of str, optional
            Checked against ``feature_names_in_`` as scikit-learn does; the output names do
            not depend on them (every output column mixes every pixel or voxel).

        Returns
        -------
        numpy.ndarray of str (object dtype)
        """
        check_is_fitted(self)
        _check_feature_names_in(self, input_features, generate_names=False)
        return self._names_out.copy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = True
        tags.transformer_tags.preserves_dtype = [self.dtype] if self.dtype in _DTYPES else []
        return tags


class _DiskFeatures(_MomentTransformer):
    """Shared machinery: validation of ``X``, fit, transform and names (subclasses say which
    family and orders through :meth:`_spec`)."""

    # set by each subclass's __init__ (scikit-learn reads parameters from its signature)
    kind: str
    k: int
    quadrature: str
    rule: str
    dtype: str
    device: Any
    batch_size: int | None
    normalize: str | None

    def _spec(self) -> tuple[str, int | Iterable[int]]:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- input -----------------------------------------------------------------------------
    def _images(self, X: Any, *, reset: bool) -> np.ndarray:
        """``X`` validated and reshaped to ``(n_samples, N, N)``; records or checks the
        input attributes."""
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {_DTYPES}, got {self.dtype!r}")
        dt = np.dtype(self.dtype)
        X = _real_input(X)
        ndim = len(X.shape)
        if ndim == 3:
            arr = check_array(X, allow_nd=True, dtype=dt, input_name="X")
            n_pix = arr.shape[1] * arr.shape[2]
            if arr.shape[1] != arr.shape[2]:
                raise ValueError(f"X must hold square images (n_samples, N, N) to map onto "
                                 f"the unit disk, got shape {arr.shape}; crop or pad them")
            if reset:
                self.n_features_in_ = n_pix
                if hasattr(self, "feature_names_in_"):
                    del self.feature_names_in_
            else:
                self._check_pixels(n_pix, arr.shape)
            side = arr.shape[1]
        elif ndim > 3:
            raise ValueError(f"X must be (n_samples, N, N) images or (n_samples, N*N) "
                             f"flattened images, got {ndim} dimensions "
                             f"(shape {np.shape(X)})")
        else:
            # 2-D (or a DataFrame, a list of rows, ...): scikit-learn's own validation, which
            # records n_features_in_ and feature_names_in_ and raises its usual messages
            # for 1-D input, NaN, complex or empty data
            if not reset:
                check_is_fitted(self)
            arr = validate_data(self, X, reset=reset, dtype=dt)
            n_pix = arr.shape[1]
            side = math.isqrt(n_pix)
            if side * side != n_pix:
                raise ValueError(
                    f"X must hold square images, flattened row-major as (n_samples, N*N), or "
                    f"(n_samples, N, N); got {n_pix} columns, which is not a square number "
                    f"(shape {arr.shape})")
            if not reset:
                self._check_pixels(n_pix, arr.shape)
            arr = arr.reshape(arr.shape[0], side, side)
        if reset:
            self.image_shape_ = (side, side)
        if not arr.flags.writeable:
            # features() hands NumPy data to torch.from_numpy, which warns on read-only
            # arrays (memory maps opened read-only, broadcast views); a copy is never written
            arr = arr.copy()
        return arr

    def _check_pixels(self, n_pix: int, shape: tuple[int, ...]) -> None:
        check_is_fitted(self)
        if n_pix != self.n_features_in_:
            side = self.image_shape_[0]
            raise ValueError(
                f"X has {n_pix} pixels per sample (shape {shape}), but "
                f"{type(self).__name__} is expecting {self.n_features_in_} features "
                f"({side}x{side} images) as input")

    def _run(self, images: np.ndarray):
        family, orders = self._spec()
        return features(images, family=family, orders=orders, kind=self.kind, k=self.k,
                        quadrature=self.quadrature, rule=self.rule, device=self.device,
                        dtype=self.dtype, batch_size=self.batch_size, progress=False,
                        normalize=self.normalize)

    # -- estimator API ---------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> _DiskFeatures:
        """Validate the parameters and ``X``, and record the image size.

        Parameters
        ----------
        X : array_like
            ``(n_samples, N, N)`` or ``(n_samples, N*N)`` square images.
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``X`` not square images (the message names ``X``), NaN or infinity, bad
            parameter values.
        TypeError
            Parameters of the wrong type (e.g. a float order).
        """
        images = self._images(X, reset=True)
        # one image of ones runs the real code path (ones: A_00 != 0 for normalize="z00"):
        # every parameter is checked by the function that uses it, and the (cached) plan is
        # ready for transform
        try:
            fs = self._run(np.ones((1, *images.shape[1:]), dtype=images.dtype))
        except ValueError as exc:
            if "size=" not in str(exc):
                raise
            side = images.shape[1]
            raise ValueError(f"X holds {side}x{side} images, too small for this sampling of "
                             f"the disk: {exc}") from exc
        self.moment_pairs_ = list(fs.pairs)
        self._names_out = np.asarray(fs.names, dtype=object)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """The moment features of the images.

        Parameters
        ----------
        X : array_like
            ``(n_samples, N, N)`` or ``(n_samples, N*N)`` images of the size seen in ``fit``.

        Returns
        -------
        numpy.ndarray
            ``(n_samples, n_features_out)`` float64 (float32 with ``dtype="float32"``):
            ``fastmoments.features(images, ...).matrix``.
        """
        check_is_fitted(self)
        images = self._images(X, reset=False)
        m = self._run(images).matrix
        if not isinstance(m, np.ndarray):
            m = m.detach().cpu().numpy()
        return m

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags


class MomentFeatures(_DiskFeatures):
    r"""Moment features of square images, for any disk family.

    Parameters
    ----------
    family : str
        ``"zernike"`` (default), ``"pseudo-zernike"``, or a polar harmonic family
        (``"pcet"``, ``"pct"``, ``"pst"``): any name in :data:`fastmoments.disk.FAMILIES`.
    orders : int or iterable of int
        ``T`` means every order ``0..T`` (default 9); an iterable names the orders
        (:func:`fastmoments.recognition.moment_pairs`).
    kind : {"magnitude", "real", "complex"}
        ``|A_nm|`` (default; invariant to rotations), ``Re A_nm``, or ``(Re, Im)`` column
        pairs.
    k, quadrature, rule
        Sampling of the disk, as in :func:`fastmoments.features`.
    dtype : {"float64", "float32"}
        Working precision and output dtype.
    device : str, optional
        Where to compute (``"cuda"`` for the GPU); the output is NumPy on the host.
    batch_size : int, optional
        Images per batch (default: chosen from the memory budget).
    normalize : {None, "pixels", "z00"}
        ``"pixels"``: the re-layout paper's :math:`\lambda_N` normalization (divide by the
        number of pixels in the disk instead of :math:`\pi`); ``"z00"``: every moment
        divided by :math:`|A_{00}|` of its image (contrast invariant). As in
        :func:`fastmoments.features`.

    Attributes
    ----------
    n_features_in_ : int
        Pixels per image seen in ``fit`` (``N * N``, for 2-D and 3-D ``X`` alike).
    feature_names_in_ : ndarray of str
        Column names of a DataFrame ``X`` seen in ``fit`` (only then).
    image_shape_ : (int, int)
        ``(N, N)``.
    moment_pairs_ : list of (n, m)
        The moments behind the columns, in order.

    Notes
    -----
    The moments and their normalization are those of :func:`fastmoments.features`
    (thesis Eq. 2.10, 2.16 and 6.1-6.3); each transformer is a thin wrapper over that function
    and a cached plan per image size.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(1).random((4, 12, 12))
    >>> MomentFeatures(family="pct", orders=1).fit_transform(X).shape
    (4, 4)
    """

    def __init__(self, family: str = FAMILY, orders: int | Iterable[int] = ORDERS, *,
                 kind: str = KIND, k: int = 1, quadrature: str = "midpoint",
                 rule: str = "inscribed", dtype: str = "float64", device: Any = None,
                 batch_size: int | None = None, normalize: str | None = None) -> None:
        self.family = family
        self.orders = orders
        self.kind = kind
        self.k = k
        self.quadrature = quadrature
        self.rule = rule
        self.dtype = dtype
        self.device = device
        self.batch_size = batch_size
        self.normalize = normalize

    def _spec(self) -> tuple[str, int | Iterable[int]]:
        return self.family, self.orders


class _OrderFeatures(_DiskFeatures):
    """The features of one family (scikit-learn reads the parameters from this ``__init__``'s
    signature)."""

    def __init__(self, orders: int | Iterable[int] = ORDERS, *, kind: str = KIND, k: int = 1,
                 quadrature: str = "midpoint", rule: str = "inscribed", dtype: str = "float64",
                 device: Any = None, batch_size: int | None = None,
                 normalize: str | None = None) -> None:
        self.orders = orders
        self.kind = kind
        self.k = k
        self.quadrature = quadrature
        self.rule = rule
        self.dtype = dtype
        self.device = device
        self.batch_size = batch_size
        self.normalize = normalize


class ZernikeFeatures(_OrderFeatures):
    r"""Zernike moment features of square images: :class:`MomentFeatures` with
    ``family="zernike"``.

    Parameters
    ----------
    orders : int or iterable of int
        ``T`` (default 9): every moment ``(n, m >= 0)``, ``n <= T``, ``n - m`` even, ordered
        by ``(n, m)``; an iterable names the orders.
    kind, k, quadrature, rule, dtype, device, batch_size, normalize
        As in :class:`MomentFeatures`.

    Attributes
    ----------
    n_features_in_, feature_names_in_, image_shape_, moment_pairs_
        As in :class:`MomentFeatures`.

    Examples
    --------
    >>> import numpy as np
    >>> img = np.zeros((1, 20, 20)); img[0, 4:9, 6:15] = 1
    >>> zf = ZernikeFeatures(orders=4).fit(img)
    >>> bool(np.allclose(zf.transform(img), zf.transform(np.rot90(img, axes=(1, 2)))))
    True
    """

    def _spec(self) -> tuple[str, int | Iterable[int]]:
        return "zernike", self.orders


class PseudoZernikeFeatures(_OrderFeatures):
    r"""Pseudo-Zernike moment features of square images: :class:`MomentFeatures` with
    ``family="pseudo-zernike"``.

    Parameters
    ----------
    orders : int or iterable of int
        ``T`` (default 9): every moment ``(n, 0 <= m <= n)``, ``n <= T``; an iterable names
        the orders.
    kind, k, quadrature, rule, dtype, device, batch_size, normalize
        As in :class:`MomentFeatures`.

    Attributes
    ----------
    n_features_in_, feature_names_in_, image_shape_, moment_pairs_
        As in :class:`MomentFeatures`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(2).random((3, 64))  # three flattened 8x8 images
    >>> PseudoZernikeFeatures(orders=2).fit_transform(X).shape
    (3, 6)
    """

    def _spec(self) -> tuple[str, int | Iterable[int]]:
        return "pseudo-zernike", self.orders


# -- volumes ------------------------------------------------------------------------------------

_KINDS_3D = ("invariants", "magnitude", "complex")


class Zernike3DFeatures(_MomentTransformer):
    r"""3-D Zernike features of volumes, for a ``Pipeline``.

    ``X`` is ``(n_samples, D, H, W)`` volumes, or ``(n_samples, N**3)`` flattened cubes
    (row-major, ``volumes.reshape(n, -1)``; the side is inferred, and a count that is not a
    cube number is a :class:`ValueError` naming ``X``). The features are those of
    :func:`fastmoments.ball.zernike3d_moments`; as for the image transformers, fitting only
    fixes the volume shape.

    Parameters
    ----------
    orders : int or iterable of int
        ``N`` (default 9): every moment of order ``0..N``; an iterable names the orders (the
        moments are computed up to the highest and the columns of the others kept), as for
        the image transformers.
    kind : {"invariants", "magnitude", "complex"}
        ``"invariants"`` (default): the 3-D Zernike descriptor :math:`\|\Omega_{nl}\|` (unchanged by
        rotations; columns ``"F[n,l]"`` by ``n`` then ``l``); ``"magnitude"``:
        :math:`|\Omega_{nl}^m|`, ``m >= 0``; ``"complex"``: ``(Re, Im)`` column pairs of
        :math:`\Omega_{nl}^m`, ``m >= 0`` (the moments in the order of
        :attr:`Zernike3DMoments.nlm`).
    k, quadrature, center, radius
        Sampling and placement of the ball, as in :func:`fastmoments.ball.zernike3d_moments`
        (``center="centroid"``, ``radius="enclosing"`` follow each volume).
    dtype : {"float64", "float32"}
        Working precision and output dtype.
    device : str or list, optional
        Where to compute (``"cuda"``, or a list of devices); the output is NumPy on the host.

    Attributes
    ----------
    n_features_in_ : int
        Voxels per volume seen in ``fit`` (``D * H * W``, for 2-D and 4-D ``X`` alike).
    feature_names_in_ : ndarray of str
        Column names of a DataFrame ``X`` seen in ``fit`` (only then).
    volume_shape_ : (int, int, int)
        ``(D, H, W)``.
    moment_index_ : list of tuple
        The ``(n, l)`` (invariants) or ``(n, l, m)`` behind the columns, in order.

    Examples
    --------
    >>> import numpy as np
    >>> vol = np.zeros((1, 16, 16, 16)); vol[0, 4:12, 6:10, 5:11] = 1
    >>> zf = Zernike3DFeatures(orders=6).fit(vol)
    >>> zf.transform(vol).shape, list(zf.get_feature_names_out()[:3])
    ((1, 16), ['F[0,0]', 'F[1,1]', 'F[2,0]'])
    >>> turned = np.rot90(vol, axes=(2, 3))  # a quarter turn maps the grid onto itself
    >>> bool(np.allclose(zf.transform(vol), zf.transform(turned), rtol=1e-12))
    True
    """

    def __init__(self, orders: int | Iterable[int] = ORDERS, *, kind: str = KIND_3D, k: int = 1,
                 quadrature: str = "midpoint", center: Any = None, radius: Any = None,
                 dtype: str = "float64", device: Any = None) -> None:
        self.orders = orders
        self.kind = kind
        self.k = k
        self.quadrature = quadrature
        self.center = center
        self.radius = radius
        self.dtype = dtype
        self.device = device

    def _volumes(self, X: Any, *, reset: bool) -> np.ndarray:
        """``X`` validated and reshaped to ``(n_samples, D, H, W)``."""
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {_DTYPES}, got {self.dtype!r}")
        dt = np.dtype(self.dtype)
        X = _real_input(X)
        ndim = len(X.shape)
        if ndim == 4:
            arr = check_array(X, allow_nd=True, dtype=dt, input_name="X")
            shape = tuple(int(s) for s in arr.shape[1:])
            if reset:
                self.n_features_in_ = math.prod(shape)
                if hasattr(self, "feature_names_in_"):
                    del self.feature_names_in_
            else:
                self._check_voxels(shape)
        elif ndim in (3,) or ndim > 4:
            raise ValueError(f"X must be (n_samples, D, H, W) volumes or (n_samples, N**3) "
                             f"flattened cubes, got {ndim} dimensions (shape {tuple(X.shape)})")
        else:
            if not reset:
                check_is_fitted(self)
            arr = validate_data(self, X, reset=reset, dtype=dt)
            n_vox = arr.shape[1]
            side = round(n_vox ** (1.0 / 3.0))
            if side ** 3 != n_vox:
                raise ValueError(
                    f"X must hold cubes, flattened row-major as (n_samples, N**3), or "
                    f"(n_samples, D, H, W) volumes; got {n_vox} columns, which is not a cube "
                    f"number (shape {arr.shape})")
            shape = (side, side, side)
            if not reset:
                self._check_voxels(shape)
            arr = arr.reshape(arr.shape[0], *shape)
        if reset:
            self.volume_shape_ = shape
        return arr

    def _check_voxels(self, shape: tuple[int, ...]) -> None:
        check_is_fitted(self)
        if tuple(shape) != tuple(self.volume_shape_):
            raise ValueError(f"X has volumes of shape {tuple(shape)} "
                             f"({math.prod(shape)} voxels), but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features (volumes of shape "
                             f"{self.volume_shape_}) as input")

    def _orders(self) -> tuple[int, set[int] | None]:
        """The highest order to compute and the orders kept (``None``: all of ``0..top``)."""
        if isinstance(self.orders, (int, np.integer)) and not isinstance(self.orders, bool):
            return check_int("orders", self.orders, minimum=0), None
        try:
            kept = set(check_int_list("orders", self.orders, minimum=0))
        except TypeError as exc:
            raise TypeError(f"orders must be an int or an iterable of ints, got "
                            f"{self.orders!r}") from exc
        if not kept:
            raise ValueError("orders must name at least one order")
        return max(kept), kept

    def _columns(self, om: Any) -> np.ndarray | None:
        """Which columns of the full matrix the orders keep (``None``: all)."""
        _, kept = self._orders()
        if kept is None:
            return None
        index = om.pairs if self.kind == "invariants" else [tuple(r) for r in om.nlm.tolist()]
        cols = np.asarray([i for i, key in enumerate(index) if key[0] in kept], dtype=np.intp)
        if self.kind == "complex":
            cols = np.stack([2 * cols, 2 * cols + 1], axis=-1).reshape(-1)
        return cols

    def _moments(self, volumes: np.ndarray):
        from .ball.transform import zernike3d_moments

        return zernike3d_moments(volumes, self._orders()[0],
                                 k=self.k, quadrature=self.quadrature, center=self.center,
                                 radius=self.radius, dtype=self.dtype, device=self.device,
                                 progress=False)

    def _matrix(self, om: Any, n: int) -> np.ndarray:
        if self.kind == "invariants":
            m = np.asarray(om.invariants())
        else:
            v = np.asarray(om.values())
            m = np.abs(v) if self.kind == "magnitude" else np.stack(
                [v.real, v.imag], axis=-1).reshape(n, -1)
        m = m.reshape(n, -1)
        cols = self._columns(om)
        if cols is not None:
            m = m[:, cols]
        return np.ascontiguousarray(m, dtype=np.dtype(self.dtype))

    def fit(self, X: Any, y: Any = None) -> Zernike3DFeatures:
        """Validate the parameters and ``X``, and record the volume shape.

        Parameters
        ----------
        X : array_like
            ``(n_samples, D, H, W)`` volumes or ``(n_samples, N**3)`` flattened cubes.
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``X`` not volumes (the message names ``X``), NaN or infinity, bad parameter
            values (each message names its parameter).
        TypeError
            Parameters of the wrong type (e.g. a float order).
        """
        check_choice("kind", self.kind, _KINDS_3D)
        vols = self._volumes(X, reset=True)
        # one volume of ones runs the real code path: every parameter is checked where used
        om = self._moments(np.ones((1, *vols.shape[1:]), dtype=vols.dtype))
        if self.kind == "invariants":
            index = list(om.pairs)
            names = om.names("invariant")
        else:
            index = [tuple(r) for r in om.nlm.tolist()]
            base = om.names("moment")
            names = ([f"|{b}|" for b in base] if self.kind == "magnitude"
                     else [f"{p} {b}" for b in base for p in ("Re", "Im")])
        _, kept = self._orders()
        if kept is not None:
            index = [key for key in index if key[0] in kept]
            names = [names[i] for i in self._columns(om)]
        self.moment_index_ = index
        self._names_out = np.asarray(names, dtype=object)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """The 3-D Zernike features of the volumes.

        Parameters
        ----------
        X : array_like
            Volumes of the shape seen in ``fit`` (4-D or flattened).

        Returns
        -------
        numpy.ndarray
            ``(n_samples, n_features_out)`` float64 (float32 with ``dtype="float32"``).
        """
        check_is_fitted(self)
        vols = self._volumes(X, reset=False)
        return self._matrix(self._moments(vols), vols.shape[0])

