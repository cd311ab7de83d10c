"""Filings as token streams of the cue task, the queries "which company was named last?", and training windows.

Vocabulary (the cue task's 17 tokens, so a head trained on the synthetic stream reads filings unchanged):

==========  ==========================  =============================================================
token id    meaning                     in a filing
==========  ==========================  =============================================================
0 .. 7      unmarked symbol ``0 .. 7``  every ordinary word: ``blake2b(word.lower()) mod 8``
8 .. 15     marked symbol ``0 .. 7``    a company mention: its order of first appearance in the filing
16          the query                   appended after position ``t`` to ask at ``t``
==========  ==========================  =============================================================

so ``id = symbol + 8 * marked``.  Each entity mention is one token whatever its number of words; every other word
(and punctuation mark, per :data:`~poskernels.tasks.filings.corpus.WORD_RE`) is one token.  The word symbol uses
BLAKE2b of the lowercased UTF-8 word, so it is the same on every run and machine (Python's ``hash`` of a string is
salted per process).  Eight word symbols is few, on purpose: ordinary words are noise the head must learn to ignore,
and sharing the cue task's symbols keeps the tournament's heads readable on filings.

The question at position ``t`` (every ``t`` at or after the first mention) is the symbol of the last company
mention at or before ``t``; the answer lies ``back = t - j`` tokens back, where ``j`` is that mention's position.
A query is *far* when ``back > 32``, past every offset a 32-token training window holds.

Examples
--------
One encoded sentence (``S`` = mention of a company, by first appearance):

>>> from poskernels.tasks.filings.corpus import Filing, Mention
>>> text = "Marrow Freight acquired Siskin Apparel; the company paid cash. Marrow Freight grew."
>>> f = Filing("ex", "mdna", text, (Mention(0, 14, "Marrow Freight"), Mention(24, 38, "Siskin Apparel"),
...            Mention(63, 77, "Marrow Freight")))
>>> tok = encode_filing(f)
>>> list(tok.words)
['Marrow Freight', 'acquired', 'Siskin Apparel', ';', 'the', 'company', 'paid', 'cash', '.', 'Marrow Freight',
 'grew', '.']
>>> tok.symbols.tolist(), tok.marked.astype(int).tolist(), tok.companies
([0, 2, 1, 3, 6, 6, 3, 6, 0, 0, 4, 0], [1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0], ('Marrow Freight', 'Siskin Apparel'))
>>> tok.ids.tolist()
[8, 2, 9, 3, 6, 6, 3, 6, 0, 8, 4, 0]
>>> q = filing_queries(tok)
>>> q.positions.tolist(), q.answers.tolist(), q.back.tolist()
([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0], [0, 1, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2])
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ...errors import PosKernelsError, check_budget, check_positive_int
from .corpus import MAX_COMPANIES, WORD_RE, Filing

__all__ = [
    "FAR",
    "N_SYMBOLS",
    "QUERY",
    "VOCAB",
    "FilingTokens",
    "FilingWindows",
    "Queries",
    "encode_filing",
    "filing_queries",
    "word_symbol",
]

#: Symbols of the cue task: company labels and word hashes share them.
N_SYMBOLS = 8
#: The query token's id.
QUERY = 2 * N_SYMBOLS
#: Vocabulary size: 8 unmarked, 8 marked, the query.
VOCAB = 2 * N_SYMBOLS + 1
#: A query is far when its answer is more than this many tokens back (the training window's length).
FAR = 32


def word_symbol(word: str) -> int:
    """The hashed symbol of an ordinary word: BLAKE2b of the lowercased word, mod :data:`N_SYMBOLS`.

    Parameters
    ----------
    word : str
        An ordinary word (not a company mention).

    Returns
    -------
    int
        Its symbol, in ``0..N_SYMBOLS - 1``.

    Examples
    --------
    >>> word_symbol("company"), word_symbol("Company"), word_symbol("liquidity")
    (6, 6, 7)
    """
    digest = hashlib.blake2b(word.lower().encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") % N_SYMBOLS


@dataclass(frozen=True)
class FilingTokens:
    """A filing as tokens.

    Attributes
    ----------
    doc_id : str
    words : tuple of str
        Surface form of each token (a mention's is the company name as written).
    symbols : ndarray of int, shape (n,)
        Company label (order of first appearance) for a mention, hashed symbol for a word.
    marked : ndarray of bool, shape (n,)
        True at company mentions.
    companies : tuple of str
        Companies by label: ``companies[s]`` is the one with symbol ``s``.
    """

    doc_id: str
    words: tuple[str, ...]
    symbols: np.ndarray
    marked: np.ndarray
    companies: tuple[str, ...]

    @property
    def ids(self) -> np.ndarray:
        """Token ids in the cue task's vocabulary, ``symbol + 8 * marked``, shape (n,)."""
        return self.symbols + N_SYMBOLS * self.marked.astype(np.int64)

    def __len__(self) -> int:
        return len(self.words)


def encode_filing(filing: Filing) -> FilingTokens:
    """Tokenize a filing: one token per mention, one per word or punctuation mark elsewhere.

    Parameters
    ----------
    filing : Filing
        The filing.

    Returns
    -------
    FilingTokens
        The tokens' surface forms, symbols (a mention's company label, a word's hashed symbol), marks and companies.

    Raises
    ------
    PosKernelsError
        If the filing names more than :data:`~poskernels.tasks.filings.corpus.MAX_COMPANIES` companies (their
        labels would not fit the 8 symbols).

    Examples
    --------
    >>> from poskernels.tasks.filings.jsonl import filing_from_json
    >>> text = "Marrow Freight grew. Fenwick Logistics fell; Marrow Freight rose."
    >>> spans = [{"start": 0, "end": 14}, {"start": 21, "end": 38}, {"start": 45, "end": 59}]
    >>> t = encode_filing(filing_from_json({"doc_id": "a", "text": text, "entities": spans}))
    >>> t.words[:4], t.symbols.tolist(), t.companies
    (('Marrow Freight', 'grew', '.', 'Fenwick Logistics'), [0, 4, 0, 1, 2, 3, 0, 1, 0], ('Marrow Freight', 'Fenwick
    Logistics'))
    """
    words: list[str] = []
    symbols: list[int] = []
    marked: list[bool] = []
    label: dict[str, int] = {}
    pos = 0
    for m in (*filing.mentions, None):
        stop = len(filing.text) if m is None else m.start
        for w in WORD_RE.findall(filing.text[pos:stop]):
            words.append(w)
            symbols.append(word_symbol(w))
            marked.append(False)
        if m is None:
            break
        if m.company not in label:
            if len(label) == MAX_COMPANIES:
                raise PosKernelsError(
                    f"filing {filing.doc_id!r} names more than {MAX_COMPANIES} companies ({m.company!r} is the "
                    f"{MAX_COMPANIES + 1}th); the labels must fit the {N_SYMBOLS} symbols of the cue task"
                )
            label[m.company] = len(label)
        words.append(filing.text[m.start : m.end])
        symbols.append(label[m.company])
        marked.append(True)
        pos = m.end
    return FilingTokens(
        doc_id=filing.doc_id,
        words=tuple(words),
        symbols=np.array(symbols, dtype=np.int64),  # (n,)
        marked=np.array(marked, dtype=bool),  # (n,)
        companies=tuple(label),
    )


@dataclass(frozen=True)
class Queries:
    """The questions of one filing: at ``positions[i]``, the answer ``answers[i]`` lies ``back[i]`` tokens back."""

    positions: np.ndarray
    answers: np.ndarray
    back: np.ndarray

    @property
    def far(self) -> np.ndarray:
        """Mask of the queries whose answer is more than :data:`FAR` tokens back, shape (q,)."""
        return self.back > FAR


def filing_queries(tokens: FilingTokens) -> Queries:
    """Every position at or after the first mention, with the last-named company and how far back it is.

    Parameters
    ----------
    tokens : FilingTokens
        A tokenized filing (:func:`encode_filing`).

    Returns
    -------
    Queries
        Arrays of shape (q,) with ``q = n - first_mention``; empty if the filing names no company.

    Examples
    --------
    >>> from poskernels.tasks.filings.jsonl import filing_from_json
    >>> text = "Marrow Freight grew. Fenwick Logistics fell; Marrow Freight rose."
    >>> spans = [{"start": 0, "end": 14}, {"start": 21, "end": 38}, {"start": 45, "end": 59}]
    >>> t = encode_filing(filing_from_json({"doc_id": "a", "text": text, "entities": spans}))
    >>> q = filing_queries(t)
    >>> q.answers.tolist(), q.back.tolist()
    ([0, 0, 0, 1, 1, 1, 0, 0, 0], [0, 1, 2, 0, 1, 2, 0, 1, 2])
    """
    n = len(tokens)
    last = np.where(tokens.marked, np.arange(n), -1)  # (n,) position of a mention, -1 elsewhere
    last = np.maximum.accumulate(last) if n else last  # (n,) last mention at or before t
    positions = np.flatnonzero(last >= 0)  # (q,)
    j = last[positions]  # (q,)
    return Queries(positions=positions, answers=tokens.symbols[j], back=positions - j)


@dataclass(frozen=True)
class FilingWindows:
    """Every training window of a set of filings: ``length - 1`` consecutive tokens holding a mention, then the query.

    A window is the cue task's sequence cut from a filing: its target is the label of the last mention in it.
    Build once with :meth:`from_docs`, then :meth:`sample` draws windows uniformly from all of them.

    Attributes
    ----------
    length : int
        Sequence length including the query (32 in the article).
    flat_ids : ndarray of int, shape (N_tokens,)
        The filings' token ids, concatenated.
    flat_last : ndarray of int, shape (N_tokens,)
        For each token, the flat index of the last mention at or before it in its filing (-1 if none).
    starts : ndarray of int, shape (N_windows,)
        Flat index of each window's first token.

    Examples
    --------
    >>> from poskernels.tasks.filings.corpus import synthetic_corpus
    >>> docs = [encode_filing(f) for f in synthetic_corpus(0, 5, 1).train]
    >>> ids, y = FilingWindows.from_docs(docs, length=32).sample(4, np.random.default_rng(0))
    >>> ids.shape, y.shape, bool((ids[:, -1] == QUERY).all()), bool((ids[:, :-1] >= 8).any(axis=1).all())
    ((4, 32), (4,), True, True)
    """

    length: int
    flat_ids: np.ndarray
    flat_last: np.ndarray
    starts: np.ndarray

    @classmethod
    def from_docs(cls, docs: list[FilingTokens], length: int = FAR) -> FilingWindows:
        """Index every window of ``length - 1`` tokens that holds a mention."""
        check_positive_int("length", length)
        w, offset = length - 1, 0
        ids, last, starts = [], [], []
        for doc in docs:
            n = len(doc)
            pos = np.where(doc.marked, np.arange(n), -1)  # (n,)
            lst = np.maximum.accumulate(pos) if n else pos  # (n,) last mention at or before t, -1 if none
            ids.append(doc.ids)
            last.append(np.where(lst >= 0, lst + offset, -1))
            if n >= w:
                s = np.arange(n - w + 1)  # (n - w + 1,) window starts
                starts.append(s[lst[s + w - 1] >= s] + offset)  # the window's last mention lies inside it
            offset += n
        starts = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)
        if len(starts) == 0:
            raise PosKernelsError(f"no window of {w} tokens with a company mention in {len(docs)} filing(s)")
        return cls(length, np.concatenate(ids), np.concatenate(last), starts)

    def sample(self, batch: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``batch`` windows uniformly (with replacement).

        Returns
        -------
        ids : ndarray of int, shape (batch, length)
            The last column is :data:`QUERY`.
        targets : ndarray of int, shape (batch,)
            Label of the last mention in each window.
        """
        check_budget(f"{check_positive_int('batch', batch)} windows of {self.length} tokens", batch * self.length)
        w = self.length - 1
        s = self.starts[rng.integers(len(self.starts), size=batch)]  # (batch,)
        ids = np.full((batch, self.length), QUERY, dtype=np.int64)  # (batch, length)
        ids[:, :w] = self.flat_ids[s[:, None] + np.arange(w)]  # (batch, w)
        targets = self.flat_ids[self.flat_last[s + w - 1]] - N_SYMBOLS  # (batch,) marked id minus 8 = label
        return ids, targets
