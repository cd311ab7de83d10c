"""The cases of :mod:`poskernels.census.hf_families.cases`, counted and printed: the summary and the README's block.

A class agrees when every case of its default config agrees; refusals are grouped by their reason (the message
without its values).  :func:`write_readme_block` rewrites the README's generated block with :func:`render`.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from ...atomic import write_text_atomic
from ...errors import PosKernelsError
from .cases import Case

__all__ = ["README_BLOCK", "render", "summarize", "write_readme_block"]


def summarize(cases: list[Case]) -> dict:
    """Counts per class (a class agrees when every case of it agrees), and one reason per refused class.

    Parameters
    ----------
    cases : list of Case
        What :func:`~poskernels.census.hf_families.cases.enumerate_families` read.

    Returns
    -------
    dict
        ``transformers`` (its version), ``classes`` (how many), ``agree`` (the classes whose default-config cases
        all agree), ``refused`` (class to the refusal's message), ``wrong`` (``"class (rope type)"``), ``cases``
        (a count per status) and ``types`` (agreeing cases per rope type).

    Examples
    --------
    >>> cases = [Case("LlamaRotaryEmbedding", "llama", t, None, "agrees", "3e-07") for t in ("default", "yarn")]
    >>> cases.append(Case("FooRotaryEmbedding", "foo", "default", None, "refused", "config key 'bar' = 3 is unknown"))
    >>> s = summarize(cases)
    >>> s["classes"], s["agree"], dict(s["cases"]), dict(s["types"])
    (2, ['LlamaRotaryEmbedding'], {'agrees': 2, 'refused': 1}, {'default': 1, 'yarn': 1})
    """
    by_class: dict[str, list[Case]] = {}
    for c in cases:
        by_class.setdefault(c.rotary, []).append(c)
    defaults = {k: [c for c in v if c.rope_type == "default"] for k, v in by_class.items()}
    agree = sorted(k for k, v in defaults.items() if v and all(c.status == "agrees" for c in v))
    refused = {k: v[0].detail for k, v in defaults.items() if v and v[0].status == "refused"}
    wrong = sorted({c.rotary + f" ({c.rope_type})" for c in cases if c.status == "wrong"})
    import transformers

    return {
        "transformers": transformers.__version__,
        "classes": len(by_class),
        "agree": agree,
        "refused": refused,
        "wrong": wrong,
        "cases": Counter(c.status for c in cases),
        "types": Counter(c.rope_type for c in cases if c.status == "agrees"),
    }


def _reason(message: str) -> str:
    """A refusal's message without its values, so that refusals for one cause group together."""
    text = message.split("; got")[0]
    text = re.sub(r" = [^ ;:]+", "", text)  # 'hidden_size' = 4096 -> 'hidden_size'
    text = re.sub(r"config keys? ", "", text)
    return text.split("; ")[0]


def render(summary: dict, markdown: bool = False) -> str:
    """The summary as lines: counts, then each refused class with its reason (grouped by reason).

    Parameters
    ----------
    summary : dict
        What :func:`summarize` returns.
    markdown : bool, optional
        Bullets as Markdown list items (``"- "``, for the README); default False (two spaces).

    Returns
    -------
    str
        The lines, joined by newlines.

    Examples
    --------
    >>> cases = [Case("LlamaRotaryEmbedding", "llama", t, None, "agrees", "3e-07") for t in ("default", "yarn")]
    >>> cases.append(Case("FooRotaryEmbedding", "foo", "default", None, "refused", "config key 'bar' = 3 is unknown"))
    >>> s = summarize(cases)
    >>> s["transformers"] = "4.0"  # the installed version, here fixed for the example
    >>> print(render(s, markdown=True))  # doctest: +NORMALIZE_WHITESPACE
    transformers 4.0: 2 rotary-embedding classes built from a model config; with their default configs the census
    agrees with 1, refuses 1, reads 0 wrong.
    Over every rope type each class accepts (default 1, yarn 1 agreeing cases): 2 agree, 1 refused, 0 wrong.
    Refused (default config), by reason:
    - 'bar' is unknown: Foo
    """
    reasons: dict[str, list[str]] = {}
    for cls, why in summary["refused"].items():
        reasons.setdefault(_reason(why), []).append(cls.replace("RotaryEmbedding", ""))
    n, a, r = summary["classes"], len(summary["agree"]), len(summary["refused"])
    cases = summary["cases"]
    types = ", ".join(f"{k} {v}" for k, v in sorted(summary["types"].items()))
    bullet = "- " if markdown else "  "
    lines = [
        f"transformers {summary['transformers']}: {n} rotary-embedding classes built from a model config; "
        f"with their default configs the census agrees with {a}, refuses {r}, reads {len(summary['wrong'])} wrong.",
        f"Over every rope type each class accepts ({types} "
        f"agreeing cases): {cases.get('agrees', 0)} agree, {cases.get('refused', 0)} refused, "
        f"{cases.get('wrong', 0)} wrong.",
    ]
    if reasons:
        lines.append("Refused (default config), by reason:")
        for why, classes in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"{bullet}{why}: {', '.join(sorted(classes))}")
    for w in summary["wrong"]:
        lines.append(f"{bullet}WRONG: {w}")
    return "\n".join(lines)


README_BLOCK = re.compile(r"(<!-- hf-families:start -->\n).*?(<!-- hf-families:end -->)", re.S)


def write_readme_block(path, text: str) -> None:
    r"""Replace the README's block between ``<!-- hf-families:start -->`` and ``<!-- hf-families:end -->``.

    Parameters
    ----------
    path : str or pathlib.Path
        The README.
    text : str
        The block's new content (:func:`render`'s Markdown).

    Returns
    -------
    None

    Raises
    ------
    PosKernelsError
        If the file has no such block.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "README.md"
    >>> _ = p.write_text("a\n<!-- hf-families:start -->\nold\n<!-- hf-families:end -->\nb\n")
    >>> write_readme_block(p, "new")
    >>> p.read_text().splitlines()
    ['a', '<!-- hf-families:start -->', 'new', '<!-- hf-families:end -->', 'b']
    >>> _ = p.write_text("no block")
    >>> write_readme_block(p, "new")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: '...README.md' has no <!-- hf-families:start --> ... <!-- hf-families:end -->...
    """
    readme = Path(path).read_text()
    if not README_BLOCK.search(readme):
        raise PosKernelsError(f"{str(path)!r} has no <!-- hf-families:start --> ... <!-- hf-families:end --> block")
    write_text_atomic(path, README_BLOCK.sub(lambda m: m.group(1) + text.strip() + "\n" + m.group(2), readme))
