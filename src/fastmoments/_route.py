"""The route a plan takes: which method, backend and kernel run, and why.

Every family (disk, box, ball, signal) decides its route once, when a plan is built or first
meets a new (shape, dtype, device) key, from one table in its own ``routes`` module; the plan
caches the decision and shows it as ``plan.route`` and in ``repr(plan)``. A route never
depends on timing: the same key gives the same route on the first call of a process as on
its last.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Route"]


@dataclass(frozen=True)
class Route:
    """One decision of a family's route table.

    Parameters
    ----------
    method : str
        The algorithm (for example ``"sft"``, ``"fir"``, ``"jacobi"``, ``"gemm"``).
    backend : str
        Where it runs: ``"torch"`` (the plain reference, CPU or CUDA), ``"numba"`` (compiled
        CPU loops), ``"triton"`` (GPU kernels), ``"cuda"`` (a CUDA C++ kernel through CuPy) or
        ``"scipy"`` (scipy.fft's real transforms on the CPU).
    kernel : str
        The kernel or code path inside the backend, named as in the family's modules.
    reason : str
        What decided it: the option the caller gave, or the crossover or accuracy guard of the
        family's route table (named as in that table).
    """

    method: str
    backend: str
    kernel: str = ""
    reason: str = ""

    def __str__(self) -> str:
        kernel = f":{self.kernel}" if self.kernel else ""
        return f"{self.method}/{self.backend}{kernel}"
