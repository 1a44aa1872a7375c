"""The one exception of the command line for a user's mistake, and the check of the optional
packages a command needs."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["EXTRAS", "UsageError", "missing", "require"]


class UsageError(Exception):
    """A mistake in the command line or in a file it names: a file that cannot be read as what
    the command expects, an output path that cannot be written, an option that does not fit the
    input, an optional package that is not installed. :func:`fastmoments.cli.main.main` prints
    its message on one line as ``fastmoments CMD: error: MESSAGE`` and exits with status 2,
    without a traceback.

    The message names the file or the option (``--out 'results': ...``, ``VOLUME 'a.npz': ...``)
    and says what was expected.
    """


#: The extra of ``pyproject.toml`` that brings each optional package a command may need.
EXTRAS = {"dask": "dask", "distributed": "dask", "zarr": "dask", "pandas": "dask",
          "pyarrow": "dask", "sklearn": "sklearn", "nibabel": "volume", "finufft": "nufft"}


def missing(modules: Sequence[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported, found without importing them (a
    module set to ``None`` in :data:`sys.modules`, as a test does to hide one, is missing).

    >>> missing(["os", "no_such_module_here"])
    ['no_such_module_here']
    """
    from importlib.util import find_spec

    out = []
    for name in modules:
        if name in sys.modules:
            if sys.modules[name] is None:
                out.append(name)
            continue
        try:
            found = find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(name)
    return out


def require(modules: Sequence[str], purpose: str) -> None:
    """Raise a :class:`UsageError` if a module of ``modules`` is not installed, saying what
    needs it and the ``pip install`` line of its extra (:data:`EXTRAS`).

    >>> require(["os"], "anything")
    >>> try:
    ...     require(["no_such_module_here"], "--frobnicate")
    ... except UsageError as exc:
    ...     print(exc)
    --frobnicate needs no_such_module_here, which is not installed: pip install no_such_module_here
    """
    absent = missing(modules)
    if not absent:
        return
    extras = sorted({EXTRAS[m] for m in absent if m in EXTRAS})
    loose = [m for m in absent if m not in EXTRAS]
    how = []
    if extras:
        how.append(f'pip install "fastmoments[{",".join(extras)}]"')
    if loose:
        how.append(f"pip install {' '.join(loose)}")
    verb = "is" if len(absent) == 1 else "are"
    raise UsageError(f"{purpose} needs {', '.join(absent)}, which {verb} not installed: "
                     f"{' and '.join(how)}")
