"""Sphinx configuration of the fastmoments documentation.

Build: ``python3 -m sphinx -W --keep-going -b html docs docs/_build/html`` from the repository
root (``pip install -e ".[docs]"`` first). The build regenerates, from committed files only:

* ``docs/benchmarks.md`` from ``benchmarks/results/*.json`` (``benchmarks/report_docs.py``);
* ``docs/_generated/api_list.rst``: the autosummary lists of the API reference, made from the
  modules that import here (optional modules written elsewhere are skipped when missing);
* ``docs/auto_examples/``: the sphinx-gallery tutorials, run from ``examples/plot_*.py``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import runpy
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT / "src"))  # the checkout wins over an installed copy
os.environ.setdefault("MPLBACKEND", "Agg")
# a bar would clutter the gallery's captured output
os.environ.setdefault("TQDM_DISABLE", "1")

import fastmoments  # noqa: E402

project = "fastmoments"
author = "fastmoments developers"
copyright = "fastmoments developers"  # noqa: A001
release = version = fastmoments.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "**.ipynb_checkpoints", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]

# --- API reference ------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # the numpydoc sections carry the types
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()
numpydoc_xref_param_type = False

# subpackages and modules whose public objects get a page; the last four are optional (they
# come from other branches): a module that does not import here is left out with a note
API_MODULES = [
    ("fastmoments.disk", "Disk transforms: Zernike, pseudo-Zernike, polar harmonic"),
    ("fastmoments.box", "Box moments: Legendre, Gegenbauer, Jacobi (2-D and 3-D)"),
    ("fastmoments.box.phantom", "Test volumes"),
    ("fastmoments.box.io", "Reading volumes"),
    ("fastmoments.signal", "Signal transforms: Gaussian smoothing, Morlet wavelets"),
    ("fastmoments.features", "Moment features for recognition"),
    ("fastmoments.data", "Sample data"),
    ("fastmoments.parallel", "Several devices"),
    ("fastmoments.dask", "Dask arrays"),
    ("fastmoments.sklearn", "scikit-learn transformers"),
    ("fastmoments.collections", "Image collections"),
]


def _public(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items()
                 if not n.startswith("_") and getattr(v, "__module__", "").startswith(
                     module.__name__)]
    out = []
    for n in names:
        obj = getattr(module, n, None)
        if inspect.isclass(obj) or inspect.isfunction(obj) or callable(obj):
            if not inspect.ismodule(obj):
                out.append(n)
    return out


def _api_list() -> str:
    top = [n for n in _public(fastmoments) if n != "__version__"]
    seen = {id(getattr(fastmoments, n)) for n in top}
    lines = ["Top level", "---------", "",
             "Everything here is also importable from its subpackage.", "",
             ".. currentmodule:: fastmoments", "",
             ".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
    lines += [f"   {n}" for n in sorted(top, key=str.lower)] + [""]
    missing = []
    for name, title in API_MODULES:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                importlib.import_module(name)
        except ImportError:
            missing.append(name)
            continue
        module = sys.modules[name]
        own = [n for n in _public(module) if id(getattr(module, n)) not in seen]
        lines += [f"``{name}``: {title}", "-" * (len(name) + len(title) + 6), ""]
        doc = inspect.getdoc(module) or ""
        first = doc.split("\n\n")[0].replace("\n", " ").strip()
        if first:
            lines += [first, ""]
        if own:
            lines += [f".. currentmodule:: {name}", "", ".. autosummary::",
                      "   :toctree: generated", "   :nosignatures:", ""]
            lines += [f"   {n}" for n in sorted(own, key=str.lower)] + [""]
        else:
            lines += ["Its public functions are listed under *Top level*.", ""]
    if missing:
        lines += [".. The modules not importable in this build: " + ", ".join(missing), ""]
    return "\n".join(lines)


(DOCS / "_generated").mkdir(exist_ok=True)
_api = _api_list()
_api_file = DOCS / "_generated" / "api_list.rst"
if not _api_file.exists() or _api_file.read_text() != _api:
    _api_file.write_text(_api)

# --- scaling-out pages written in other branches: listed when present --------------------
_SCALING = [("multigpu", "Several GPUs"), ("dask", "Dask"), ("collections", "Image collections")]
_present = [name for name, _ in _SCALING if (DOCS / f"{name}.md").exists()]
_toc = ["", ".. toctree::", "   :maxdepth: 1", ""] + [f"   {n}" for n in _present] if _present \
    else ["", "(The pages on several GPUs, Dask and image collections are not in this build.)"]
_toc_file = DOCS / "_generated" / "scaling_toc.rst"
if not _toc_file.exists() or _toc_file.read_text() != "\n".join(_toc) + "\n":
    _toc_file.write_text("\n".join(_toc) + "\n")

# --- the benchmark page, generated from the committed results ------------------------------
runpy.run_path(str(ROOT / "benchmarks" / "report_docs.py"))["main"]()

# --- gallery ------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",  # every plot_*.py runs (including ones added later)
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "plot_gallery": "True",
    "min_reported_time": 1,
    "reset_modules": ("matplotlib",),
    "matplotlib_animations": False,
}

# --- HTML ---------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"fastmoments {release}"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_static_path: list[str] = []
html_show_sourcelink = False
