"""Test-session settings shared by the tests and the doctests (``src/fastmoments``).

Fitted filter coefficients are cached on disk (:mod:`fastmoments.signal.fit_cache`); the test
session uses a cache folder of its own, so that it neither reads a user's cache (a test must
not pass because an earlier run left a file) nor writes into it.
"""

from __future__ import annotations

import os
import tempfile

if "FASTMOMENTS_CACHE_DIR" not in os.environ:
    os.environ["FASTMOMENTS_CACHE_DIR"] = tempfile.mkdtemp(prefix="fastmoments-test-cache-")
