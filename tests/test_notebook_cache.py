"""Which cache of the article's trained heads the notebook reads, without training anything.

The notebook's cell that sets ``ARTICLE_CACHE`` (and builds the page context its trained tables read from) is run
as the notebook holds it, in a folder laid out as a checkout would be: ``$POSKERNELS_CACHE`` first; else the
``.cache/poskernels`` that ``make reproduce`` fills, in the current folder or the one above it (Jupyter runs a
notebook of ``notebooks/`` there); else the notebook's own folder.  Nothing is trained: the cell only defines names.
"""

from __future__ import annotations

import os
from pathlib import Path

import jupytext
import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "positional_encodings.py"


def _cache_cell() -> str:
    cells = [c.source for c in jupytext.read(NOTEBOOK).cells if c.cell_type == "code"]
    found = [s for s in cells if "ARTICLE_CACHE =" in s]
    assert len(found) == 1, "the notebook sets ARTICLE_CACHE in one cell"
    return found[0]


def _chosen(root: Path, cwd: Path, monkeypatch, named: str | None) -> tuple[Path, Path, Path]:
    """Run the notebook's cache cell from `cwd`; return its ARTICLE_CACHE, its context's cache and its own CACHE."""
    monkeypatch.chdir(cwd)
    if named is None:
        monkeypatch.delenv("POSKERNELS_CACHE", raising=False)
    else:
        monkeypatch.setenv("POSKERNELS_CACHE", named)
    monkeypatch.setenv("POSKERNELS_NOTEBOOK_TRAINED", "0")
    space = {"OUT": root / "out", "os": os, "Path": Path}  # what the cells above it define and it reads
    exec(compile(_cache_cell(), str(NOTEBOOK), "exec"), space)
    return Path(space["ARTICLE_CACHE"]), Path(space["ctx"].cache_dir), Path(space["CACHE"])


def _fill(folder: Path) -> Path:
    """A `.cache/poskernels` as `make reproduce` leaves it: one prepared entry in it."""
    cache = folder / ".cache" / "poskernels"
    (cache / "heads").mkdir(parents=True)
    (cache / "heads" / "prepared.npz").write_bytes(b"a prepared entry")
    return cache


@pytest.fixture
def checkout(tmp_path):
    (tmp_path / "notebooks").mkdir()
    return tmp_path


def test_the_named_cache_comes_first(checkout, monkeypatch):
    _fill(checkout)
    named = checkout / "elsewhere"
    chosen, read, _ = _chosen(checkout, checkout, monkeypatch, str(named))
    assert chosen == read == named


def test_an_empty_name_is_no_name(checkout, monkeypatch):
    filled = _fill(checkout)
    chosen, read, _ = _chosen(checkout, checkout, monkeypatch, "")
    assert chosen.resolve() == read.resolve() == filled.resolve()


@pytest.mark.parametrize("run_from", [".", "notebooks"])
def test_the_cache_make_reproduce_filled_is_read_from_the_root_or_from_notebooks(checkout, monkeypatch, run_from):
    filled = _fill(checkout)
    chosen, read, own = _chosen(checkout, checkout / run_from, monkeypatch, None)
    assert chosen.resolve() == read.resolve() == filled.resolve()
    assert (chosen / "heads" / "prepared.npz").read_bytes() == b"a prepared entry"
    assert own != chosen


def test_the_current_folder_comes_before_the_one_above(checkout, monkeypatch):
    _fill(checkout)
    inner = _fill(checkout / "notebooks")
    chosen, _, _ = _chosen(checkout, checkout / "notebooks", monkeypatch, None)
    assert chosen.resolve() == inner.resolve()


def test_without_a_filled_cache_the_notebook_uses_its_own_folder(checkout, monkeypatch):
    (checkout / ".cache").mkdir()  # a .cache without poskernels in it is not a filled cache
    chosen, read, own = _chosen(checkout, checkout / "notebooks", monkeypatch, None)
    assert chosen == read == own == checkout / "out" / "cache"
