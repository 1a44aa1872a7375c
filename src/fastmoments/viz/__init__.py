"""Figures (matplotlib) for reconstructions, tables and benchmarks."""

from .figures import reconstruction_grid, save_figure

__all__ = ["reconstruction_grid", "save_figure"]
