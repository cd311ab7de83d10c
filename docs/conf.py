"""Sphinx configuration of the poskernels documentation (MyST Markdown pages, numpydoc, the PyData theme).

Built by ``make docs`` (``sphinx-build -W --keep-going -n``: every warning, unresolved references included, is an
error) with no network: no intersphinx inventory is fetched, the theme's assets are in its package, and the
tutorial notebook is executed by myst-nb in a local kernel on every build, with nothing cached between builds.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import poskernels  # noqa: E402

project = "poskernels"
author = "The poskernels maintainers"
copyright = "the poskernels maintainers, MIT License"  # noqa: A001
release = version = poskernels.__version__

extensions = [
    "myst_nb",  # MyST Markdown pages and the jupytext notebook, executed at build time
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
]

# The API reference's stubs are regenerated on every build, never kept from an earlier one.
shutil.rmtree(HERE / "api" / "generated", ignore_errors=True)

# The article's figures, drawn on every build from the payload the package ships (the laboratory's data, a full
# `poskernels reproduce` with seeds 0-9) and Llama 3.1's census, into docs/_generated/ (ignored by git).
FIGURES = HERE / "_generated"


def _draw_figures() -> None:
    import json

    from poskernels.census import census, plot_census
    from poskernels.lab import PAYLOAD_PATH
    from poskernels.lab.figures import draw_figures
    from poskernels.census.config import load_config

    shutil.rmtree(FIGURES, ignore_errors=True)
    _, skipped = draw_figures(json.loads(PAYLOAD_PATH.read_text(encoding="utf-8")), FIGURES)
    if skipped:
        raise RuntimeError(f"the shipped payload lacks figures: {skipped}")
    plot_census(census(load_config("llama-3.1-8b"), 131072), FIGURES / "census_llama31.png")


_draw_figures()
autosummary_generate = True
templates_path = ["_templates"]  # a module page: its docstring, its members, its submodules
autosummary_imported_members = False
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types, as written in the docstrings
# Each module documents the names it defines (its own constants included, which docstrings refer to); a
# package's re-exports are documented once, where they are defined.
autodoc_default_options = {"members": True, "undoc-members": True, "ignore-module-all": True}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

# Markdown (MyST) pages, and the notebook in jupytext's percent format (docs/tutorial.py links to
# notebooks/positional_encodings.py, so the docs show the notebook the tests run).
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".py": "myst-nb"}
nb_custom_formats = {".py": ["jupytext.reads", {"fmt": "py:percent"}]}
exclude_patterns = ["_build", "_templates", "_generated", "conf.py", "**/.ipynb_checkpoints"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# Executed once per build in a fresh kernel; a cell that raises fails the build.  The notebook writes its
# figures and cache under POSKERNELS_NOTEBOOK_OUT (docs/_build/tutorial, emptied first, unless set) and, unless
# POSKERNELS_NOTEBOOK_TRAINED=1, trains nothing of the article (its own head still trains): the article's trained
# tables and figures on the tutorial page are the shipped results of a full `poskernels reproduce`, seeds 0-9.
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
os.environ.setdefault("POSKERNELS_NOTEBOOK_TRAINED", "0")
if "POSKERNELS_NOTEBOOK_OUT" not in os.environ:  # a fresh folder each build, beside the build (ignored by git)
    shutil.rmtree(HERE / "_build" / "tutorial", ignore_errors=True)
    os.environ["POSKERNELS_NOTEBOOK_OUT"] = str(HERE / "_build" / "tutorial")
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent / "src"), os.environ.get("PYTHONPATH")]))

nitpicky = True
# Outside the modules' own names: the standard library, the optional dependencies and numpydoc's type words
# (no intersphinx inventory can be fetched offline).  Every reference to a poskernels name must resolve.
_EXTERNAL = r"(os|sys|io|json|re|math|fractions|numbers|tomllib|sqlite3|signal|socket|http|pathlib|collections|typing|concurrent|subprocess|argparse|dataclasses|enum|abc|functools|itertools|tempfile)"
# Names of other libraries (no intersphinx inventory offline) and numpydoc's type vocabulary.
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|torch|transformers|scipy|mpmath|matplotlib|dask|distributed|pyarrow|jupytext)(\..*)?"),
    (r"py:.*", _EXTERNAL + r"(\..*)?"),
    (r"py:.*", r"(array_like|array-like|ndarray|optional|callable|default|shape|of|or|int|float|str|bool|dict)"),
]

html_theme = "pydata_sphinx_theme"
html_title = "poskernels"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path: list[str] = []
html_show_sourcelink = False


def _lookup(dotted: str):
    """The object a dotted name denotes (a module, then attributes), or None."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return None
            obj = getattr(obj, attr)
        return obj
    return None


def _resolve_short_names(app, env, node, contnode):
    """Resolve a docstring's reference that Sphinx's own lookup missed, or leave it a warning.

    Two cases: a short name written inside another module (``:func:`query_forward``` in ``model.stream``) links to
    the one documented poskernels object whose dotted name ends with it; a name that exists in the package but has
    no entry of its own (an undocumented constant, a private helper, a package's re-export) links to the page of
    the module it is found in.  A name that exists nowhere stays a warning, and so fails the build.
    """
    if node.get("refdomain") != "py":
        return None
    from sphinx.util.nodes import make_refnode

    target = node["reftarget"].lstrip("~.")
    domain = env.get_domain("py")
    found = [name for name in domain.objects if name == target or name.endswith("." + target)]
    if not found and "." in target:  # a package's re-export: poskernels.encodings.SCHEMES is in encodings.registry
        package, last = target.rsplit(".", 1)
        found = [n for n in domain.objects if n.startswith(package + ".") and n.endswith("." + last)]
    if len(found) == 1:
        obj = domain.objects[found[0]]
        return make_refnode(app.builder, node["refdoc"], obj.docname, obj.node_id, contnode, found[0])
    module = node.get("py:module") or ""
    for dotted in (target, f"{module}.{target}", f"{module}.{target.split('.')[0]}"):
        if dotted.startswith("poskernels") and _lookup(dotted) is not None:
            home = dotted.rsplit(".", 1)[0] if dotted != module else dotted
            while home and home not in domain.modules:
                home = home.rpartition(".")[0]
            if home:
                entry = domain.modules[home]
                return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, dotted)
    return None


def setup(app):
    app.connect("missing-reference", _resolve_short_names)
