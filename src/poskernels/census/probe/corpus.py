"""The probe's texts (:data:`CORPORA`), each built deterministically at run time and its SHA-256 recorded with the
results: ``stdlib``, English that every machine has offline and that no one here wrote, the docstrings of the
Python standard library, in a fixed order (:data:`MODULES`, then each module's public names sorted; docstrings
change between Python versions, the hash says which text was read); ``filings``, the finance case study's
synthetic filings (:func:`poskernels.tasks.filings.case_corpus`, seed 0: its 300 training then 100 held-out
filings, one paragraph each)."""

from __future__ import annotations

import hashlib
import importlib
import inspect

from ...errors import PosKernelsError, did_you_mean

__all__ = ["CORPORA", "MODULES", "corpus_text", "filings_text", "stdlib_text", "text_sha256"]

#: The texts ``poskernels probe --corpus`` reads, and how the results name each.
CORPORA = {
    "stdlib": "docstrings of the Python standard library (poskernels.census.probe.corpus.MODULES)",
    "filings": "the synthetic filings of the finance case study (poskernels.tasks.filings, seed 0)",
}

#: The standard-library modules read, in this order.
MODULES = ("argparse", "collections", "contextlib", "csv", "dataclasses", "datetime", "decimal", "difflib",
           "fractions", "functools", "heapq", "inspect", "itertools", "json", "logging", "pathlib", "pickle",
           "random", "shutil", "statistics", "string", "subprocess", "tarfile", "textwrap", "threading", "enum",
           "unittest", "zipfile", "email.message", "urllib.parse", "http.client", "asyncio.locks",
           "collections.abc", "configparser", "ftplib", "imaplib", "mailbox", "smtplib", "xml.dom.minidom")  # fmt: skip


def stdlib_text() -> str:
    """The corpus: each module's docstring, then its public classes' and functions' (and their methods'),
    separated by blank lines.

    Returns
    -------
    str
        The text; the same on every run of one Python version.

    Examples
    --------
    >>> text = stdlib_text()
    >>> len(text) > 200_000, text == stdlib_text()
    (True, True)
    """
    parts: list[str] = []
    for name in MODULES:
        mod = importlib.import_module(name)
        parts.append(inspect.getdoc(mod) or "")
        for attr in sorted(n for n in vars(mod) if not n.startswith("_")):
            obj = vars(mod)[attr]
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or getattr(obj, "__module__", None) != name:
                continue
            parts.append(inspect.getdoc(obj) or "")
            if inspect.isclass(obj):
                for meth in sorted(n for n in vars(obj) if not n.startswith("_")):
                    if inspect.isfunction(vars(obj)[meth]):
                        parts.append(inspect.getdoc(vars(obj)[meth]) or "")
    return "\n\n".join(p for p in parts if p.strip())


def text_sha256(text: str) -> str:
    """SHA-256 of the text's UTF-8 bytes.

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    str
        The digest in hexadecimal.

    Examples
    --------
    >>> text_sha256("abc")
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    """
    return hashlib.sha256(text.encode()).hexdigest()


def filings_text(seed: int = 0) -> str:
    """The case study's synthetic filings as English text: the training filings, then the held-out ones, each a
    paragraph (its own text, drawn from ``seed`` by :func:`poskernels.tasks.filings.case_corpus`).

    Parameters
    ----------
    seed : int
        The case study's seed.

    Returns
    -------
    str
        The filings, separated by blank lines.

    Examples
    --------
    >>> text = filings_text()
    >>> text.startswith("Item 1.01"), text == filings_text()
    (True, True)
    """
    from ...tasks.filings import case_corpus

    corpus = case_corpus(seed)
    return "\n\n".join(f.text for f in corpus.train + corpus.test)


def corpus_text(name: str) -> str:
    """The text named ``name`` (one of :data:`CORPORA`); another name is bad input (one line).

    Parameters
    ----------
    name : str
        A key of :data:`CORPORA`.

    Returns
    -------
    str
        :func:`stdlib_text` or :func:`filings_text`.

    Raises
    ------
    PosKernelsError
        If ``name`` is not a key of :data:`CORPORA`.

    Examples
    --------
    >>> corpus_text("stdlib") == stdlib_text()
    True
    >>> corpus_text("stdlb")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --corpus 'stdlb': accepted stdlib, filings (did you mean 'stdlib'?)
    """
    if name == "stdlib":
        return stdlib_text()
    if name == "filings":
        return filings_text()
    raise PosKernelsError(f"--corpus {name!r}: accepted {', '.join(CORPORA)}{did_you_mean(name, list(CORPORA))}")
