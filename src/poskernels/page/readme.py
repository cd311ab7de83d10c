"""The tables of trained results in the README and the documentation, rendered from ``numbers.json``: no trained
figure is typed by hand.

Each table lives in a Markdown page (:data:`DOCUMENTS`: the README's headline table, the documentation's pages of
the article) between two marker lines, ``<!-- numbers:NAME begin -->`` and ``<!-- numbers:NAME end -->``;
:func:`rewrite` replaces what lies between them with :data:`REGIONS` ``[NAME]`` rendered from a ``numbers.json``.
The package ships the ``numbers.json`` the pages were made from (:data:`REFERENCE_NUMBERS`, a full
``poskernels reproduce`` with seeds 0-9); ``tests/test_readme.py`` checks that every page equals its rendering,
that every region is on some page, and that a fresh run agrees with the shipped numbers within the seeds' error.

Usage (from the repository's root; with no page named, every page of :data:`DOCUMENTS`)::

    python -m poskernels.page.readme results/numbers.json                  # rewrite the regions
    python -m poskernels.page.readme --check results/numbers.json README.md  # exit 1 if a region is stale

Examples
--------
>>> text = "a\\n<!-- numbers:x begin -->\\nold\\n<!-- numbers:x end -->\\nb\\n"
>>> print(rewrite(text, {"x": "| new |"}), end="")
a
<!-- numbers:x begin -->
| new |
<!-- numbers:x end -->
b
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from ..atomic import write_text_atomic
from ..errors import PosKernelsError
from .regions import REGIONS

__all__ = ["DOCUMENTS", "DOC_REGIONS", "REFERENCE_NUMBERS", "REGIONS", "main", "regions_in", "render", "rewrite"]

#: The ``numbers.json`` (trained sections and the rest) the README's tables were rendered from.
REFERENCE_NUMBERS = Path(__file__).parent / "reference_numbers.json"

_MARK = re.compile(r"<!-- numbers:([a-z0-9_-]+) (begin|end) -->")


#: The regions rendered into a documentation page rather than the README: page (from the repository root) -> names.
#: Every other region of :data:`REGIONS` is the README's.
DOC_REGIONS: dict[str, tuple[str, ...]] = {
    "docs/article/order.md": ("printed-order", "section-prop1"),
    "docs/article/clocks.md": ("printed-clocks", "section-thm1", "section-thm2"),
    "docs/article/relative.md": ("printed-relative", "section-def3", "section-thm3"),
    "docs/article/rotations.md": ("printed-rotations", "section-prop4", "section-thm5"),
    "docs/article/window.md": ("tournament", "rescaled", "rebound", "sinusoidal", "kernels", "differences"),
    "docs/article/filings.md": ("filings-accuracy", "filings-horizon", "filings-case"),
    "docs/article/long-context.md": ("long",),
    "docs/guide/beyond.md": ("beyond",),
    "docs/guide/claims.md": ("claims-unresolved", "claims-all"),
    # ``filings-gaps`` of this page is written by ``examples/filings_gaps.py``, not from ``numbers.json``
    "docs/guide/filings.md": ("filings-distance", "filings-beyond"),
}

#: Every page that holds generated regions, relative to the repository's root.
DOCUMENTS: tuple[str, ...] = ("README.md", *DOC_REGIONS)


def render(numbers: dict) -> dict[str, str]:
    """Every region's markdown from a ``numbers.json`` dict (its trained sections must be present).

    Parameters
    ----------
    numbers : dict
        A ``numbers.json`` dict.

    Returns
    -------
    dict of str to str
        ``{region name: markdown}``, one per renderer of :data:`REGIONS`.

    Raises
    ------
    PosKernelsError
        If a trained section is missing.

    Examples
    --------
    >>> import json
    >>> sorted(render(json.loads(REFERENCE_NUMBERS.read_text()))) == sorted(REGIONS)
    True
    >>> render({"tournament": {}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: numbers.json lacks the trained section(s) ['filings', 'long', ...
    """
    missing = sorted({"tournament", "rescaled", "rebound", "sinusoidal", "thm2", "filings", "long"} - set(numbers))
    if missing:
        raise PosKernelsError(f"numbers.json lacks the trained section(s) {missing}; got keys {sorted(numbers)}")
    return {name: fn(numbers) for name, fn in REGIONS.items()}


def regions_in(text: str) -> dict[str, str]:
    """The current content of every marked region of ``text`` (name -> text between its markers).

    Parameters
    ----------
    text : str
        A page.

    Returns
    -------
    dict of str to str

    Raises
    ------
    PosKernelsError
        If a region opens inside another, is not closed, or an end marker closes no open region.

    Examples
    --------
    >>> regions_in("a\\n<!-- numbers:x begin -->\\nold\\n<!-- numbers:x end -->\\nb")
    {'x': 'old'}
    >>> regions_in("<!-- numbers:x begin -->")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: region 'x' has no end marker
    """
    out, open_name, start = {}, None, 0
    for m in _MARK.finditer(text):
        name, which = m.groups()
        if which == "begin":
            if open_name is not None:
                raise PosKernelsError(f"region {open_name!r} is not closed before {name!r} begins")
            open_name, start = name, m.end()
        else:
            if name != open_name:
                raise PosKernelsError(f"end marker of {name!r} closes no open region; got open {open_name!r}")
            out[name] = text[start : m.start()].strip("\n")
            open_name = None
    if open_name is not None:
        raise PosKernelsError(f"region {open_name!r} has no end marker")
    return out


def rewrite(text: str, regions: dict[str, str], partial: bool = False) -> str:
    """``text`` with every marked region replaced by ``regions[name]``.

    A region not in ``regions`` is an error, unless ``partial``: then it is left as it is, for another writer.

    Parameters
    ----------
    text : str
        A page.
    regions : dict of str to str
        The new content of each region (:func:`render`).
    partial : bool
        Leave the regions ``regions`` lacks as they are.

    Returns
    -------
    str

    Raises
    ------
    PosKernelsError
        If a region has no new content and not ``partial``, or the markers are malformed (:func:`regions_in`).

    Examples
    --------
    >>> text = "a\\n<!-- numbers:x begin -->\\nold\\n<!-- numbers:x end -->\\nb"
    >>> regions_in(rewrite(text, {"x": "new"})), rewrite(text, {}, partial=True) == text
    ({'x': 'new'}, True)
    >>> rewrite(text, {})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: README regions ['x'] have no renderer; accepted:
    """
    unknown = sorted(set(regions_in(text)) - set(regions))
    if unknown and not partial:
        raise PosKernelsError(f"README regions {unknown} have no renderer; accepted: {', '.join(sorted(regions))}")

    def sub(m):
        if m.group(1) not in regions:
            return m.group(0)
        return f"<!-- numbers:{m.group(1)} begin -->\n{regions[m.group(1)]}\n<!-- numbers:{m.group(1)} end -->"

    return re.sub(r"<!-- numbers:([a-z0-9_-]+) begin -->.*?<!-- numbers:\1 end -->", sub, text, flags=re.S)


def main(argv=None) -> int:
    """Rewrite (or, with ``--check``, verify) the generated regions of the pages from a ``numbers.json``.

    Parameters
    ----------
    argv : list of str, optional
        ``[NUMBERS.json] [PAGE ...] [--check] [--partial]`` (default: ``sys.argv[1:]``; the shipped numbers and
        :data:`DOCUMENTS`).

    Returns
    -------
    int
        ``0``; ``1`` with ``--check`` when a region is stale; ``2`` for a file that cannot be read or a region
        without a renderer.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> page = pathlib.Path(tempfile.mkdtemp()) / "page.md"
    >>> _ = page.write_text("<!-- numbers:printed-order begin -->\\nold\\n<!-- numbers:printed-order end -->\\n")
    >>> main([str(REFERENCE_NUMBERS), str(page), "--check"])  # doctest: +ELLIPSIS
    readme: stale regions ['.../page.md:printed-order']
    1
    >>> main([str(REFERENCE_NUMBERS), str(page)])  # doctest: +ELLIPSIS
    readme: 1 regions in 1 pages rendered from .../reference_numbers.json
    0
    >>> main([str(REFERENCE_NUMBERS), str(page), "--check"])
    readme: up to date
    0
    """
    p = argparse.ArgumentParser(prog="python -m poskernels.page.readme", description=__doc__.split("\n")[0])
    p.add_argument(
        "numbers", type=Path, nargs="?", default=REFERENCE_NUMBERS, help="numbers.json (default: the shipped one)"
    )
    p.add_argument("pages", type=Path, nargs="*", help="Markdown pages (default: DOCUMENTS, from the current folder)")
    p.add_argument("--check", action="store_true", help="exit 1 if a region differs from its rendering")
    p.add_argument("--partial", action="store_true", help="leave regions without a renderer here as they are")
    args = p.parse_args(argv)
    pages = args.pages or [Path(d) for d in DOCUMENTS]
    try:
        rendered = render(json.loads(args.numbers.read_text(encoding="utf-8")))
        texts = {page: page.read_text(encoding="utf-8") for page in pages}
        new = {page: rewrite(text, rendered, partial=args.partial) for page, text in texts.items()}
    except (OSError, ValueError, PosKernelsError) as err:
        print(f"readme: error: {err}", file=sys.stderr)
        return 2
    if args.check:
        stale = [
            f"{page}:{k}"
            for page in pages
            for k, v in regions_in(new[page]).items()
            if regions_in(texts[page]).get(k) != v
        ]
        print(f"readme: stale regions {stale}" if stale else "readme: up to date")
        return 1 if stale else 0
    for page in pages:
        if new[page] != texts[page]:
            write_text_atomic(page, new[page])
    count = sum(len(regions_in(t)) for t in new.values())
    print(f"readme: {count} regions in {len(pages)} pages rendered from {args.numbers}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
