"""The defaults of moment features, defined once: :func:`fastmoments.features`, the
``fastmoments features`` command, the scikit-learn transformers (:mod:`fastmoments.sklearn`),
:func:`fastmoments.dask.features`, :func:`fastmoments.object_features` and
:func:`fastmoments.recognition.select_by_variance` read them from here.

The convention
--------------
- **Family**: Zernike (:data:`FAMILY`), the best known of the disk moments.
- **Orders**: every order ``0..9`` (:data:`ORDERS`), CellProfiler's degree: 30 Zernike
  moments ``(n, m >= 0)``. The parameter is ``orders`` everywhere a feature is computed (an
  int ``T`` for every order ``0..T``, or an iterable naming the orders; ``--orders`` on the
  command line); the transforms and one-call moment functions, which compute every moment up
  to one highest order, take ``order``.
- **Representation**: magnitudes ``|A_nm|`` (:data:`KIND`), invariant to rotations of the
  image; the 3-D transformer's counterpart is the rotation-invariant descriptor
  (:data:`KIND_3D`).
- **Device**: a library call computes where its input is (``device=None``); a command runs
  on ``--device auto`` (:data:`CLI_DEVICE`): CUDA where a GPU is visible, else the CPU.

The vocabularies that the command line checks before it imports torch live here too:
:data:`KINDS` (the only definition) and :data:`DISK_FAMILIES` (the names the disk registry,
:data:`fastmoments.disk.FAMILIES`, holds once loaded; a test keeps the two equal). This
module imports nothing.
"""

from __future__ import annotations

__all__ = ["CLI_DEVICE", "DISK_FAMILIES", "FAMILY", "KIND", "KINDS", "KIND_3D", "ORDERS"]

#: The ways a complex moment becomes real feature columns: ``"complex"`` (a real and an
#: imaginary column), ``"real"`` (the real part), ``"magnitude"`` (the modulus).
KINDS = ("complex", "real", "magnitude")
#: The disk families (:data:`fastmoments.disk.FAMILIES` once the polar harmonic ones have
#: registered).
DISK_FAMILIES = ("zernike", "pseudo-zernike", "pcet", "pct", "pst")

#: The disk family of moment features.
FAMILY = "zernike"
#: The highest order of moment features: every order ``0..ORDERS``.
ORDERS = 9
#: How a complex moment becomes a feature: its magnitude (rotation invariant).
KIND = "magnitude"
#: The 3-D counterpart of :data:`KIND` (:class:`fastmoments.sklearn.Zernike3DFeatures`): the
#: norms over ``m``, invariant to rotations of the volume.
KIND_3D = "invariants"
#: ``--device`` of every command: CUDA where a GPU is visible, else the CPU.
CLI_DEVICE = "auto"
