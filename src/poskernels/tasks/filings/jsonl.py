"""Filings as JSON Lines: the generated corpus written out, or a user's own annotated documents read in.

One filing per line::

    {"doc_id": "lab-0001", "kind": "mdna", "text": "Marrow Freight reported ...",
     "entities": [{"start": 0, "end": 14, "company": "Marrow Freight"}, ...]}

``start`` and ``end`` are character offsets into ``text`` (end exclusive, Python's slicing); ``company`` is the
canonical name (it may differ from the surface text, e.g. "Marrow" for "Marrow Freight"; it defaults to the surface
text).  ``kind`` is optional (default ``"user"``).  Blank lines are skipped.

Reading is all or nothing: every line is checked before anything is returned, and the first problem raises
:class:`~poskernels.errors.PosKernelsError` naming the file, the line number and what is wrong.

Examples
--------
>>> import tempfile, pathlib
>>> from poskernels.tasks.filings.corpus import synthetic_corpus
>>> docs = synthetic_corpus(seed=0, n_train=2, n_test=1).test
>>> path = pathlib.Path(tempfile.mkdtemp()) / "filings.jsonl"
>>> write_filings(path, docs)
>>> read_filings(path) == docs
True
"""

from __future__ import annotations

import json
from pathlib import Path

from ...atomic import replacing
from ...errors import PosKernelsError, parse_json, read_bytes
from .corpus import MAX_COMPANIES, Filing, Mention

__all__ = ["filing_from_json", "filing_to_json", "read_filings", "write_filings"]

#: Largest filings file read (bytes): a corpus of some hundred thousand filings; past it, an error, not a slow read.
READ_LIMIT = 2**30

_FIELDS = ("doc_id", "kind", "text", "entities")
_ENTITY_FIELDS = ("start", "end", "company")


def filing_to_json(filing: Filing) -> dict:
    """The JSON object of one filing (the inverse of :func:`filing_from_json`).

    Parameters
    ----------
    filing : Filing
        The filing.

    Returns
    -------
    dict
        ``doc_id``, ``kind``, ``text`` and ``entities`` (``start``, ``end``, ``company`` of each mention).

    Examples
    --------
    >>> f = filing_from_json({"doc_id": "a", "text": "Marrow Freight grew.", "entities": [{"start": 0, "end": 14}]})
    >>> filing_to_json(f)["entities"]
    [{'start': 0, 'end': 14, 'company': 'Marrow Freight'}]
    >>> filing_from_json(filing_to_json(f)) == f
    True
    """
    return {
        "doc_id": filing.doc_id,
        "kind": filing.kind,
        "text": filing.text,
        "entities": [{"start": m.start, "end": m.end, "company": m.company} for m in filing.mentions],
    }


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def filing_from_json(obj) -> Filing:
    """Check one decoded JSON value and build its :class:`Filing`.

    Raises
    ------
    PosKernelsError
        Saying what is wrong (the caller adds where).

    Parameters
    ----------
    obj : object
        One decoded JSON value: an object with ``doc_id``, ``text`` and ``entities`` (each ``start`` and ``end``;
        ``company`` optional, read from the text), ``kind`` optional.

    Returns
    -------
    Filing
        The filing.

    Examples
    --------
    >>> filing_from_json({"doc_id": "a", "text": "Marrow Freight grew.", "entities": [{"start": 0, "end": 14}]})
    Filing(doc_id='a', kind='user', text='Marrow Freight grew.', mentions=(Mention(start=0, end=14, company='Marrow \
Freight'),))
    >>> filing_from_json({"doc_id": "a", "text": "Marrow Freights grew.", "entities": [{"start": 0, "end": 14}]})
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: entity 0 [0, 14) cuts a word: 'Marrow Freight' is followed by 's'
    """
    if not isinstance(obj, dict):
        raise PosKernelsError(f"expected a JSON object with fields {', '.join(_FIELDS)}; got {type(obj).__name__}")
    unknown = sorted(set(obj) - set(_FIELDS))
    if unknown:
        raise PosKernelsError(f"unknown field(s) {unknown}; accepted: {', '.join(_FIELDS)}")
    for key in ("doc_id", "text", "entities"):
        if key not in obj:
            raise PosKernelsError(f"missing field {key!r}")
    doc_id, text, entities, kind = obj["doc_id"], obj["text"], obj["entities"], obj.get("kind", "user")
    for key, value in (("doc_id", doc_id), ("text", text), ("kind", kind)):
        if not isinstance(value, str) or (key != "text" and not value):
            raise PosKernelsError(f"field {key!r} must be a non-empty string; got {value!r}")
    if not isinstance(entities, list):
        raise PosKernelsError(f"field 'entities' must be a list of spans; got {entities!r}")
    mentions, end_before = [], 0
    for i, ent in enumerate(entities):
        if not isinstance(ent, dict) or "start" not in ent or "end" not in ent:
            raise PosKernelsError(f"entity {i} must be an object with 'start' and 'end'; got {ent!r}")
        extra = sorted(set(ent) - set(_ENTITY_FIELDS))
        if extra:
            raise PosKernelsError(f"entity {i} has unknown field(s) {extra}; accepted: {', '.join(_ENTITY_FIELDS)}")
        start, end = ent["start"], ent["end"]
        if not (_is_int(start) and _is_int(end) and 0 <= start < end <= len(text)):
            raise PosKernelsError(
                f"entity {i} span [{start!r}, {end!r}) must be integers with 0 <= start < end <= {len(text)} "
                "(the text's length)"
            )
        if start < end_before:
            raise PosKernelsError(
                f"entity {i} [{start}, {end}) starts before the previous entity ends ({end_before}); spans must be "
                "sorted and must not overlap"
            )
        surface = text[start:end]
        if start > 0 and text[start - 1].isalnum() and surface[0].isalnum():
            raise PosKernelsError(
                f"entity {i} [{start}, {end}) cuts a word: {surface!r} is preceded by {text[start - 1]!r}"
            )
        if end < len(text) and text[end].isalnum() and surface[-1].isalnum():
            raise PosKernelsError(f"entity {i} [{start}, {end}) cuts a word: {surface!r} is followed by {text[end]!r}")
        company = ent.get("company", surface)
        if not isinstance(company, str) or not company.strip():
            raise PosKernelsError(f"entity {i} 'company' must be a non-empty string; got {company!r}")
        mentions.append(Mention(start, end, company))
        end_before = end
    n_companies = len({m.company for m in mentions})
    if n_companies > MAX_COMPANIES:
        raise PosKernelsError(
            f"names {n_companies} companies; at most {MAX_COMPANIES} fit the cue task's symbols "
            "(first-appearance labels)"
        )
    return Filing(doc_id=doc_id, kind=kind, text=text, mentions=tuple(mentions))


def read_filings(path) -> tuple[Filing, ...]:
    r"""Read a JSONL file of filings, checking every line before returning any.

    Parameters
    ----------
    path : str or path-like
        The file, one JSON object a line (:func:`filing_from_json`'s form).

    Returns
    -------
    tuple of Filing
        The filings, in the file's order.

    Raises
    ------
    PosKernelsError
        ``"<path>, line <k>: <problem>"`` for the first bad line (not UTF-8, not JSON, a missing or unknown
        field, a span out of range, overlapping or cutting a word, a repeated ``doc_id``), or if the file holds no
        filing at all.  Nothing is returned in that case, so nothing is half-loaded.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "filings.jsonl"
    >>> _ = p.write_text('{"doc_id": "a", "text": "Marrow Freight grew.", "entities": [{"start": 0, "end": 14}]}\n')
    >>> [(f.doc_id, f.mentions[0].company) for f in read_filings(p)]
    [('a', 'Marrow Freight')]
    >>> _ = p.write_text('{"doc_id": "a", "text": "Marrow Freight grew."}\n')
    >>> read_filings(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: ...filings.jsonl, line 1: ...
    """
    path = Path(path)
    raw_lines = read_bytes(path, "filings file", READ_LIMIT).splitlines()  # a FIFO with no writer reads as empty
    filings, seen = [], {}
    for k, raw in enumerate(raw_lines, start=1):
        where = f"{path}, line {k}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise PosKernelsError(f"{where}: not UTF-8 ({err.reason} at byte {err.start})") from err
        if not line.strip():
            continue
        obj = parse_json(line, where)
        try:
            filing = filing_from_json(obj)
        except PosKernelsError as err:
            raise PosKernelsError(f"{where}: {err}") from None
        if filing.doc_id in seen:
            raise PosKernelsError(f"{where}: doc_id {filing.doc_id!r} repeats line {seen[filing.doc_id]}")
        seen[filing.doc_id] = k
        filings.append(filing)
    if not filings:
        raise PosKernelsError(f"{path}: holds no filing (expected one JSON object per line)")
    return tuple(filings)


def write_filings(path, filings) -> None:
    """Write filings as JSONL, through a temporary file and a rename (no reader sees half a file).

    Parameters
    ----------
    path : str or pathlib.Path
        Where to write (its folder must exist).
    filings : iterable of Filing
        The filings, one a line.

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile
    >>> f = filing_from_json({"doc_id": "a", "text": "Marrow Freight grew.", "entities": [{"start": 0, "end": 14}]})
    >>> p = Path(tempfile.mkdtemp()) / "filings.jsonl"
    >>> write_filings(p, [f])
    >>> read_filings(p) == (f,)
    True
    """
    with replacing(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for f in filings:
            fh.write(json.dumps(filing_to_json(f), ensure_ascii=False) + "\n")
