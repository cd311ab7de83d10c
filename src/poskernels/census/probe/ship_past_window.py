"""``make probe``'s past-window step: the shipped reading of the maps on a real model
(``poskernels/census/data/probe/past-window/NAME.json``, a real run, its provenance inside; a folder of its own, since
the lab's "Real models" view reads every ``data/probe/*.json`` as a probe of heads), its figure
(``docs/guide/figures/NAME-past-window.png``) and the block of ``docs/guide/probe.md`` rendered from it (between the
``probe-past-window:`` markers), beside the article's re-reading table.

``python -m poskernels.census.probe.ship_past_window [--docs-only | --cached-only]``: the readings are cached per map
(``.cache/poskernels/probe/``), so a killed run resumes; with ``--docs-only`` nothing runs, with ``--cached-only``
the readings a run finished are shipped and the others marked not read.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

from ...atomic import write_text_atomic
from .past_window import READINGS, TITLES

__all__ = ["ARTICLE_AT_2X", "LENGTHS", "comparison", "docs_block", "shipped", "update_docs"]

#: Each shipped model and its length: twice SmolLM2's training window of 8,192 tokens (maps at factor 2).
LENGTHS = {"smollm2-135m": 16384}

DOCS = Path(__file__).resolve().parents[4] / "docs" / "guide" / "probe.md"
FIGURES = DOCS.parent / "figures"
BEGIN = "<!-- probe-past-window:begin (make probe writes this block) -->"
END = "<!-- probe-past-window:end -->"

#: The article's re-reading table at twice the training length (trained at 32, read at 64: factor 2), accuracy by
#: reading; dynamic NTK is not in the article's table.
ARTICLE_AT_2X = {"plain": "rope", "linear": "rope_pi", "ntk": "rope_ntk", "yarn": "rope_yarn"}


def _file(name: str) -> str:
    return f"past-window/{name}.json"


def shipped() -> dict[str, dict]:
    """The shipped past-window results, by model name.

    Returns
    -------
    dict of str to dict
        Each shipped ``data/probe/past-window/NAME.json`` of :data:`LENGTHS`, read.

    Examples
    --------
    >>> result = shipped()["smollm2-135m"]
    >>> result["window"], result["length"], list(result["readings"])
    (8192, 16384, ['plain', 'linear', 'ntk', 'yarn', 'dynamic'])
    """
    folder = resources.files("poskernels.census") / "data" / "probe"
    return {name: json.loads((folder / _file(name)).read_text()) for name in LENGTHS
            if (folder / _file(name)).is_file()}  # fmt: skip


def comparison(result: dict) -> list[str]:
    """A markdown table: the article's accuracies at factor 2 beside this model's losses inside and past the window,
    and each reading's rank past the window (1: best, ties share one; the article's by accuracy, the model's by
    loss).

    Parameters
    ----------
    result : dict
        A past-window result (:func:`shipped`).

    Returns
    -------
    list of str
        The table's rows.

    Examples
    --------
    >>> rows = comparison(shipped()["smollm2-135m"])
    >>> rows[0]
    '| reading | nothing | PI | NTK-aware | YaRN | dynamic NTK |'
    >>> rows[-1]  # past the window, by loss
    '| its rank (1: best) | 5 | 4 | 2 | 1 | 3 |'
    """
    from ...page.window import ARTICLE_RESCALED

    read = [n for n in READINGS if "bins" in result["readings"][n]]
    art = {n: ARTICLE_RESCALED[ARTICLE_AT_2X[n]]["64"] for n in read if n in ARTICLE_AT_2X}
    loss = {n: result["readings"][n]["mean_past"] for n in read}

    def ranks(values: dict, best_high: bool) -> dict:  # ties share a rank
        sign = -1 if best_high else 1
        return {n: 1 + sum(sign * v < sign * values[n] for v in values.values()) for n in values}

    ra, rl = ranks(art, True), ranks(loss, False)
    dash = "-"
    name, L, T = result["model"], result["window"], result["length"]
    rows = [
        "| reading | " + " | ".join(TITLES[n] for n in read) + " |",
        "|---" * (len(read) + 1) + "|",
        "| the article: a trained RoPE head on the synthetic stream, accuracy at 64 (trained at 32) | "
        + " | ".join(f"{art[n]:.3f}" if n in art else dash for n in read)
        + " |",
        "| its rank (1: best) | " + " | ".join(str(ra[n]) if n in ra else dash for n in read) + " |",
        f"| `{name}`, loss inside the window (positions < {L}), nats/token | "
        + " | ".join(f"{result['readings'][n]['mean_inside']:.3f}" for n in read)
        + " |",
        f"| `{name}`, loss past the window ({L}..{T - 2}), nats/token | "
        + " | ".join(f"{loss[n]:.3f}" for n in read)
        + " |",
        "| its rank (1: best) | " + " | ".join(str(rl[n]) for n in read) + " |",
    ]
    return rows


def docs_block(results: dict[str, dict]) -> str:
    """The docs page's block: each shipped result's comparison with the article, its figure and its text table.

    Parameters
    ----------
    results : dict of str to dict
        Past-window results by name (:func:`shipped`).

    Returns
    -------
    str
        The block, its markers included.

    Examples
    --------
    >>> docs_block(shipped()).splitlines()[1]
    '### `smollm2-135m` past its window'
    """
    from .past_window_report import render

    parts = [BEGIN]
    for name, result in results.items():
        parts += [f"### `{name}` past its window", "", *comparison(result), "",
                  f"![{name}: the loss against position, one curve per reading](figures/{name}-past-window.png)", "",
                  "```text", render(result), "```", ""]  # fmt: skip
    return "\n".join(parts + [END])


def update_docs(results: dict[str, dict], page: Path = DOCS) -> None:
    """Rewrite the block between the ``probe-past-window:`` markers of ``page`` with :func:`docs_block`.

    Parameters
    ----------
    results : dict of str to dict
        Past-window results by name (:func:`shipped`).
    page : Path
        The Markdown page holding the markers; ``docs/guide/probe.md`` by default.

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "probe.md"
    >>> _ = page.write_text(f"{BEGIN}\\nold\\n{END}\\n")
    >>> update_docs(shipped(), page)
    >>> text = page.read_text()
    >>> "old" in text, "### `smollm2-135m` past its window" in text
    (False, True)
    """
    text = page.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    write_text_atomic(page, head + docs_block(results) + tail)


def main(argv=None) -> int:
    """Run every model of :data:`LENGTHS` past its window, write its JSON and figures, and rewrite the page.

    Parameters
    ----------
    argv : list of str, optional
        ``--docs-only`` (draw and rewrite from the shipped results without running) and ``--cached-only``
        (no forward pass: a reading not in the cache is marked not read); ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        ``0``.  It runs models and always rewrites the documentation, so it has no example here.
    """
    from .past_window import past_window
    from .past_window_report import draw

    argv = list(sys.argv[1:] if argv is None else argv)
    out = Path(__file__).resolve().parents[1] / "data" / "probe"
    if "--docs-only" not in argv:
        for name, length in LENGTHS.items():
            result = past_window(name, length, log=lambda m: print(m, file=sys.stderr), quiet=False,
                                 cached_only="--cached-only" in argv)  # fmt: skip
            write_text_atomic(out / _file(name), json.dumps(result, separators=(",", ":")) + "\n")  # compact
            print(f"wrote {out / _file(name)}", file=sys.stderr)
    for result in shipped().values():
        for path in draw(result, FIGURES):
            print(f"wrote {path}", file=sys.stderr)
    update_docs(shipped())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
