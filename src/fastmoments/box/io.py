"""Reading volumes: NumPy files and NIfTI (through nibabel), and a real MRI shipped by nibabel."""

from __future__ import annotations

import os

import numpy as np

from .._validate import check_choice, check_int

__all__ = ["SAMPLE_VOLUMES", "load_volume", "sample_volume"]

#: Real MRI volumes shipped in nibabel's test data (no download needed):
#: ``example4d`` is an EPI (functional) series of 128 x 96 x 24 voxels (first frame used),
#: ``anatomical`` a small T1 anatomical scan of 33 x 41 x 25 voxels.
SAMPLE_VOLUMES = {"example4d": "example4d.nii.gz", "anatomical": "anatomical.nii"}


def _nibabel():
    try:
        import nibabel
    except ImportError as exc:  # pragma: no cover - nibabel is in the test extra
        raise ValueError("reading NIfTI files needs nibabel: pip install nibabel "
                         "(or the 'volume' extra of fastmoments)") from exc
    return nibabel


class NpzSelectionError(ValueError):
    """An ``.npz`` file holds no array, or several and the key chooses none of them."""


def read_npz(path: str | os.PathLike, key: str | None, *, option: str = "key=") -> np.ndarray:
    """The array ``key`` of an ``.npz`` file (a file of one array needs no key).

    ``option`` is how the caller spells the choice in messages (``"key="`` here, ``"--key "``
    on the command line).

    Raises
    ------
    NpzSelectionError
        No array, several arrays and no ``key``, or a ``key`` that is not in the file.
    """
    path = os.fspath(path)
    # given a path, np.load leaves the file open when the zip is damaged: open it here
    with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as z:
        names = list(z.files)
        listed = ", ".join(map(repr, names))
        if not names:
            raise NpzSelectionError(f"the .npz file {path!r} holds no array")
        if key is None and len(names) > 1:
            raise NpzSelectionError(f"the .npz file {path!r} holds {len(names)} arrays "
                                    f"({listed}); choose one with {option.strip()}")
        if key is not None and key not in names:
            raise NpzSelectionError(f"{option}{key!r} is not in {path!r}, which holds {listed}")
        return z[names[0] if key is None else key]


def load_volume(path: str | os.PathLike, *, frame: int = 0, key: str | None = None) -> np.ndarray:
    """Read a volume as a ``(D, H, W)`` float array.

    Parameters
    ----------
    path : str or path-like
        ``.npy``, ``.npz`` or NIfTI ``.nii`` / ``.nii.gz``.
    frame : int
        For 4-D NIfTI series, the frame to read.
    key : str, optional
        For ``.npz`` files, the name of the array to read; a file holding one array needs
        none, a file holding several must name one.

    Returns
    -------
    numpy.ndarray
        NumPy files are returned with their axes as stored (the last three taken as
        ``(D, H, W)``); NIfTI arrays, stored ``(x, y, z)``, are transposed to ``(z, y, x)``.
        Integers become float32; floats keep their precision.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        For an unknown suffix, an array that is not 3-D or not real, an ``.npz`` holding no
        array, or several without ``key``, and ``key`` given for another kind of file.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such volume file: {path}")
    name = path.lower()
    if key is not None and not name.endswith(".npz"):
        raise ValueError(f"key applies to .npz files only, not to {path!r}")
    if name.endswith(".npy"):
        arr = np.load(path, allow_pickle=False)
    elif name.endswith(".npz"):
        arr = read_npz(path, key)
    elif name.endswith((".nii", ".nii.gz")):
        img = _nibabel().load(path)
        arr = np.asanyarray(img.dataobj)
        if arr.ndim == 4:
            frame = check_int("frame", frame, minimum=0, maximum=arr.shape[3] - 1)
            arr = arr[..., frame]
        if arr.ndim == 3:
            arr = np.ascontiguousarray(arr.transpose(2, 1, 0))
    else:
        raise ValueError(f"path must end in .npy, .npz, .nii or .nii.gz, got {path!r}")
    arr = np.asarray(arr)
    if arr.ndim != 3:
        raise ValueError(f"the volume in {path!r} must be 3-D, got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"the volume in {path!r} must hold real numbers, got dtype {arr.dtype}")
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float32)
    return arr


def sample_volume(name: str = "example4d") -> np.ndarray:
    """A real MRI volume from nibabel's bundled test data, ``(D, H, W)`` float32.

    Examples
    --------
    >>> sample_volume("anatomical").shape
    (25, 41, 33)
    """
    check_choice("name", name, tuple(SAMPLE_VOLUMES))
    try:
        import nibabel
    except ImportError as exc:
        raise ModuleNotFoundError("the sample volumes are nibabel's test data: install the "
                                  "'volume' extra (pip install 'fastmoments[volume]') or "
                                  "nibabel") from exc

    path = os.path.join(os.path.dirname(nibabel.__file__), "tests", "data", SAMPLE_VOLUMES[name])
    return load_volume(path).astype(np.float32)
