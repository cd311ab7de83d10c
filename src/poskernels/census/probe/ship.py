"""``make probe``: the shipped probe results (``census/data/probe/NAME.json``, a real run each, its provenance
inside) and the tables of ``docs/guide/probe.md`` rendered from them (between the ``probe:`` markers).

``python -m poskernels.census.probe.ship [--docs-only] [NAME ...]``; with ``--docs-only`` nothing runs, the page is
regenerated from the shipped files.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

from ...atomic import write_text_atomic

__all__ = ["LENGTHS", "RUNS", "docs_block", "shipped", "update_docs"]

#: Each shipped result and its length: SmolLM2 at 2,048 tokens (every head, a quarter of its training length, what
#: two CPU cores hold in minutes), MiniLM at its table's 512 positions, Gemma 3 270M at 2,048 (four sliding windows),
#: and SmolLM2 again on the filings corpus.
LENGTHS = {"smollm2-135m": 2048, "minilm-l6": 512, "gemma-3-270m": 2048, "smollm2-135m-filings": 2048}

#: A shipped result read on another corpus than stdlib: its name -> (model, corpus).
RUNS = {"smollm2-135m-filings": ("smollm2-135m", "filings")}

DOCS = Path(__file__).resolve().parents[4] / "docs" / "guide" / "probe.md"
BEGIN, END = "<!-- probe:begin (make probe writes this block) -->", "<!-- probe:end -->"


def shipped() -> dict[str, dict]:
    """The shipped results, by model name.

    Returns
    -------
    dict of str to dict
        Each shipped ``data/probe/NAME.json`` of :data:`LENGTHS`, read.

    Examples
    --------
    >>> results = shipped()
    >>> list(results)
    ['smollm2-135m', 'minilm-l6', 'gemma-3-270m', 'smollm2-135m-filings']
    >>> results["smollm2-135m"]["class"]
    'LlamaForCausalLM'
    """
    folder = resources.files("poskernels.census") / "data" / "probe"
    return {name: json.loads((folder / f"{name}.json").read_text()) for name in LENGTHS
            if (folder / f"{name}.json").is_file()}  # fmt: skip


def docs_block(results: dict[str, dict]) -> str:
    """The docs page's block: each shipped result's text table, as ``poskernels probe`` prints it.

    Parameters
    ----------
    results : dict of str to dict
        Probe results by name (:func:`shipped`).

    Returns
    -------
    str
        The block, its markers included.

    Examples
    --------
    >>> block = docs_block({"smollm2-135m": shipped()["smollm2-135m"]})
    >>> block.splitlines()[:2]
    ['<!-- probe:begin (make probe writes this block) -->', '### `smollm2-135m`']
    """
    from .report import render

    parts = [BEGIN]
    for result in results.values():
        corpus = result["provenance"].get("corpus", "stdlib")
        title = f"`{result['model']}`" + ("" if corpus == "stdlib" else f", the `{corpus}` corpus")
        parts += [f"### {title}", "", "```text", render(result), "```", ""]
    return "\n".join(parts + [END])


def update_docs(results: dict[str, dict], page: Path = DOCS) -> None:
    """Rewrite the block between the ``probe:`` markers of ``page`` with :func:`docs_block`.

    Parameters
    ----------
    results : dict of str to dict
        Probe results by name (:func:`shipped`).
    page : Path
        The Markdown page holding the markers; ``docs/guide/probe.md`` by default.

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "probe.md"
    >>> _ = page.write_text(f"# Probe\\n{BEGIN}\\nold\\n{END}\\nend\\n")
    >>> update_docs({"minilm-l6": shipped()["minilm-l6"]}, page)
    >>> text = page.read_text()
    >>> "old" in text, "### `minilm-l6`" in text, text.endswith(f"{END}\\nend\\n")
    (False, True, True)
    """
    text = page.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    write_text_atomic(page, head + docs_block(results) + tail)


def main(argv=None) -> int:
    """Probe the shipped models again, write ``data/probe/NAME.json`` and rewrite the probe page's results.

    Parameters
    ----------
    argv : list of str, optional
        Model names of :data:`LENGTHS` (all of them when none is given), and ``--docs-only`` to rewrite the page
        from the shipped results without probing; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        ``0``.  It downloads and runs models and always rewrites the documentation, so it has no example here.
    """
    from .run import probe

    argv = list(sys.argv[1:] if argv is None else argv)
    docs_only = "--docs-only" in argv
    names = [a for a in argv if not a.startswith("--")] or list(LENGTHS)
    out = Path(__file__).resolve().parents[1] / "data" / "probe"
    if not docs_only:
        for name in names:
            model, corpus = RUNS.get(name, (name, "stdlib"))
            result = probe(model, LENGTHS[name], log=lambda m: print(m, file=sys.stderr), corpus=corpus)
            write_text_atomic(out / f"{name}.json", json.dumps(result, separators=(",", ":")) + "\n")  # compact
            print(f"wrote {out / f'{name}.json'}", file=sys.stderr)
    update_docs(shipped())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
