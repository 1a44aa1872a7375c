"""3-D Zernike moments of volumes on the unit ball.

Functions (:mod:`.functions`) -> geometry (:mod:`.sampling`) -> engine (:mod:`.engine`, route
table in :mod:`.routes`) -> plan and one-call function (:mod:`.transform`) -> moments object
(:mod:`.moments`); the objects of a label volume, each in its own ball, in
:mod:`.labels`; quality measures for volumes in :mod:`.quality`; atomic structures as
density volumes in :mod:`.density`, and the protein structures installed by system packages in
:mod:`.proteins`; the work split over a list of devices in :mod:`.split`.
"""

from .density import atoms_to_density, read_pdb_atoms
from .functions import radial, spherical_harmonics, zernike3d
from .labels import ObjectMoments3D, object_moments3d
from .moments import Zernike3DMoments
from .quality import nmse, psnr
from .sampling import BallSampling, ball_sampling
from .transform import Zernike3DTransform, zernike3d_moments

__all__ = [
    "BallSampling",
    "ObjectMoments3D",
    "Zernike3DMoments",
    "Zernike3DTransform",
    "atoms_to_density",
    "ball_sampling",
    "nmse",
    "object_moments3d",
    "psnr",
    "radial",
    "read_pdb_atoms",
    "spherical_harmonics",
    "zernike3d",
    "zernike3d_moments",
]
