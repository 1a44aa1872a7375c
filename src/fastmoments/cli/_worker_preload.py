"""Worker preload of ``fastmoments features --scheduler local``: Ctrl-C belongs to the command.

Ctrl-C sends SIGINT to every process of the terminal's process group, the LocalCluster's worker
processes included; each would stop with a traceback of its own, while the command is already
closing them. The command's workers ignore SIGINT instead (the command handles it, says how to
resume and closes the cluster, which ends them), and do not report the tasks the command
cancels as it stops (``distributed.worker.state_machine`` logs only errors).
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

__all__ = ["dask_setup"]


def dask_setup(worker: Any) -> None:
    """Dask's preload hook: SIGINT ignored in the worker's process, cancelled tasks not
    reported.

    Parameters
    ----------
    worker : distributed.Worker
        The starting worker (unused: the setting belongs to its process).
    """
    logging.getLogger("distributed.worker.state_machine").setLevel(logging.ERROR)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
