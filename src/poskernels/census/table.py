"""The census across released models: one generated Markdown table (a block of ``docs/guide/census.md``).

Rows: the bundled configs (:func:`~poskernels.census.config.bundled_configs`) and the hub-style files of
``data/hub_configs`` (as the hub holds them: what differs from the class defaults), one row per layer type where a
model has several.  Columns: declared context ``max_position_embeddings``, training length ``L``, base, rotary
width ``d``, critical dimension (Liu et al. 2023), the first negative offset of the native kernel
``sum_j cos(Delta theta_j)`` up to the declared context (Men et al. 2024), whether the declared context is past
it, and the logit multiplier (:func:`~poskernels.census.context.logit_multiplier`) at the declared context.
The page's second generated block is the table of the extension maps beyond the article, read from the map
records (:func:`poskernels.extension.map_registry.guide_table`).  ``python -m poskernels.census.table
docs/guide/census.md`` rewrites both blocks; a test holds the shipped blocks equal to them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..atomic import write_text_atomic
from ..errors import PosKernelsError
from ..extension.maps import guide_table
from ..theory.context import MAX_SCAN, critical_dimension, first_negative_offset
from .compute import logit_multiplier
from .config import bundled_configs, config_extension, hub_configs, load_layer_configs

__all__ = ["BLOCK", "MAP_BLOCK", "guide_table", "hub_configs", "render", "rows", "write_block"]


def rows() -> list[dict]:
    """One row per model (and layer type), computed from its config.

    Returns
    -------
    list of dict
        ``model``, ``declared``, ``L``, ``base``, ``d``, ``critical_dimension``, ``first_negative``, ``past`` and
        ``logit_multiplier`` of each bundled config and hub file.

    Examples
    --------
    >>> row = rows()[0]
    >>> row["model"], row["L"], row["d"], row["critical_dimension"], row["first_negative"]
    ('llama-2-7b', 4096, 128, 92, 1707)
    """
    specs = [(n, n) for n in bundled_configs()] + [(f"{n} (hub file)", str(p)) for n, p in hub_configs().items()]
    out = []
    for label, spec in specs:
        for lt, cfg in load_layer_configs(spec).items():
            N = cfg.max_position_embeddings
            first = first_negative_offset(cfg.theta, min(N - 1, MAX_SCAN))
            ext, _, _ = config_extension(cfg, N)
            out.append(
                {
                    "model": label + (f", {lt}" if lt else ""),
                    "declared": N,
                    "L": cfg.training_length,
                    "base": cfg.base,
                    "d": cfg.rotary_dim,
                    "critical_dimension": critical_dimension(cfg.training_length, cfg.rotary_dim, cfg.base),
                    "first_negative": first,
                    "past": first is not None,
                    "logit_multiplier": logit_multiplier(cfg, ext.attention_factor, N)["total"],
                }
            )
    return out


BLOCK = re.compile(r"(<!-- census-table:start -->\n).*?(<!-- census-table:end -->)", re.S)
#: The block of the extension maps beyond the article, one row per map record.
MAP_BLOCK = re.compile(r"(<!-- map-table:start -->\n).*?(<!-- map-table:end -->)", re.S)


def render(table: list[dict]) -> str:
    """The generated block: the table and what its columns mean.

    Parameters
    ----------
    table : list of dict
        :func:`rows`.

    Returns
    -------
    str
        The Markdown table, one line per row.

    Examples
    --------
    >>> print(render(rows()[:1]))
    | model | declared context | L | base | d | d_extra | first zero | past it | logit multiplier |
    |---|---:|---:|---:|---:|---:|---:|---|---:|
    | llama-2-7b | 4096 | 4096 | 10000 | 128 | 92 | 1707 | yes | 1 |
    <BLANKLINE>
    """
    lines = [
        "| model | declared context | L | base | d | d_extra | first zero | past it | logit multiplier |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in table:
        first = "none" if r["first_negative"] is None else str(r["first_negative"])
        lines.append(
            f"| {r['model']} | {r['declared']} | {r['L']} | {r['base']:g} | {r['d']} | {r['critical_dimension']} | "
            f"{first} | {'yes' if r['past'] else 'no'} | {r['logit_multiplier']:.4g} |"
        )
    return "\n".join(lines) + "\n"


def write_block(path) -> None:
    """Rewrite the page's blocks between ``<!-- census-table:start -->`` and ``<!-- census-table:end -->`` and
    between ``<!-- map-table:start -->`` and ``<!-- map-table:end -->``.

    Parameters
    ----------
    path : str or PathLike
        The page (``docs/guide/census.md``), rewritten through :mod:`poskernels.atomic`.

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        If the page lacks either block.

    Examples
    --------
    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "census.md"
    >>> _ = page.write_text("<!-- census-table:start -->\\nold\\n<!-- census-table:end -->\\n"
    ...                     "<!-- map-table:start -->\\nold\\n<!-- map-table:end -->\\n", encoding="utf-8")
    >>> write_block(page)
    >>> text = page.read_text(encoding="utf-8")
    >>> "old" in text, "| llama-2-7b | 4096 |" in text
    (False, True)
    >>> _ = page.write_text("no blocks", encoding="utf-8")
    >>> write_block(page)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: '...census.md' has no <!-- census-table:start --> ... block
    """
    text = Path(path).read_text(encoding="utf-8")
    for block, name in ((BLOCK, "census-table"), (MAP_BLOCK, "map-table")):
        if not block.search(text):
            raise PosKernelsError(f"{str(path)!r} has no <!-- {name}:start --> ... <!-- {name}:end --> block")
    text = BLOCK.sub(lambda m: m.group(1) + render(rows()) + m.group(2), text)
    write_text_atomic(path, MAP_BLOCK.sub(lambda m: m.group(1) + guide_table() + m.group(2), text))


def main(argv=None) -> int:
    """``python -m poskernels.census.table [PAGE]``: rewrite the page's block (no page: print the table).

    Parameters
    ----------
    argv : list of str, optional
        ``[PAGE]``, or ``[]`` / ``["-"]`` to print the table; ``sys.argv[1:]`` when None.

    Returns
    -------
    int
        0.

    Raises
    ------
    PosKernelsError
        If the page lacks a block (:func:`write_block`).

    Examples
    --------
    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "census.md"
    >>> _ = page.write_text("<!-- census-table:start -->\\nold\\n<!-- census-table:end -->\\n"
    ...                     "<!-- map-table:start -->\\nold\\n<!-- map-table:end -->\\n", encoding="utf-8")
    >>> main([str(page)]), "old" in page.read_text(encoding="utf-8")
    (0, False)
    """
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] == "-":
        sys.stdout.write(render(rows()))
    else:
        write_block(argv[0])
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
