"""The one exception of the command line for a user's mistake."""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(Exception):
    """A mistake in the command line or in a file it names: a file that cannot be read as what
    the command expects, an output path that cannot be written, an option that does not fit the
    input. :func:`fastmoments.cli.main.main` prints its message on one line as
    ``fastmoments CMD: error: MESSAGE`` and exits with status 2, without a traceback.

    The message names the file or the option (``--out 'results': ...``, ``VOLUME 'a.npz': ...``)
    and says what was expected.
    """
