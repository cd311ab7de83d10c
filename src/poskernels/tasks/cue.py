"""The cue task of the tournament: which marked token came last?

Each sequence holds ``n - 1`` content tokens, each carrying one of ``S = 8`` symbols drawn
uniformly and, with probability ``0.1``, a mark; if no content token is marked, one uniformly
random content token is marked.  A query token ends the sequence, and the target is the symbol
on the most recent marked token (the DESIGN convention, under which the article's bag-reader
figures are exact).

Token ids (``2 S + 1 = 17`` of them at ``S = 8``):

=============  ==============  ==============
token          id              example (S = 8)
=============  ==============  ==============
symbol ``s``   ``s``           ``3``
marked ``s``   ``S + s``       ``11`` (3, marked)
query          ``2 S``         ``16``
=============  ==============  ==============
"""

from __future__ import annotations

import numpy as np

from ..errors import PosKernelsError, check_positive_int
from .validate import check_cue_sizes

__all__ = [
    "MARK_PROB",
    "N_SYMBOLS",
    "bag_reader_score",
    "cue_batch",
    "cue_vocab",
    "describe",
    "query_token",
    "token_id",
]

#: Symbols per content token, and the chance that a content token is marked.
N_SYMBOLS = 8
MARK_PROB = 0.1


def cue_vocab(n_symbols: int = N_SYMBOLS) -> int:
    """Number of token ids, ``2 S + 1``.

    Parameters
    ----------
    n_symbols : int
        Symbols ``S`` a content token can carry.

    Returns
    -------
    int
        ``2 S + 1``: ``S`` plain symbols, ``S`` marked ones and the query.

    Raises
    ------
    PosKernelsError
        If ``n_symbols`` is not a positive integer.

    Examples
    --------
    >>> cue_vocab(), cue_vocab(4)
    (17, 9)
    """
    return 2 * check_positive_int("n_symbols", n_symbols) + 1


def token_id(symbol, marked, n_symbols: int = N_SYMBOLS) -> np.ndarray:
    """Token id of a content token: ``symbol`` if unmarked, ``S + symbol`` if marked.

    Parameters
    ----------
    symbol : array_like of int
        Symbols, in ``0..S-1``.
    marked : array_like of bool
        Whether each token carries the mark (broadcast against ``symbol``).
    n_symbols : int
        ``S``.

    Returns
    -------
    ndarray of int64
        The ids, of the broadcast shape.

    Examples
    --------
    >>> token_id([3, 3], [False, True]).tolist()
    [3, 11]
    """
    return np.asarray(symbol, dtype=np.int64) + n_symbols * np.asarray(marked, dtype=np.int64)


def query_token(n_symbols: int = N_SYMBOLS) -> int:
    """Id of the query token, ``2 S``.

    Parameters
    ----------
    n_symbols : int
        ``S``.

    Returns
    -------
    int
        ``2 S``, the largest id.

    Raises
    ------
    PosKernelsError
        If ``n_symbols`` is not a positive integer.

    Examples
    --------
    >>> query_token(), query_token(4)
    (16, 8)
    """
    return 2 * check_positive_int("n_symbols", n_symbols)


def cue_batch(
    rng: np.random.Generator,
    batch: int,
    n: int,
    n_symbols: int = N_SYMBOLS,
    mark_prob: float = MARK_PROB,
    dtype=np.int64,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``batch`` cue sequences of length ``n`` (``n - 1`` content tokens and the query).

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    batch : int
        Number of sequences.
    n : int
        Sequence length including the query token, ``>= 2``.
    n_symbols : int
        Symbols ``S`` (8 in the article).
    mark_prob : float
        Probability that a content token is marked, in ``(0, 1]``.
    dtype : numpy integer type
        Of the tokens: ``int64`` by default; the training stream asks for ``uint8`` (a 17-token
        vocabulary), which moves eight times fewer bytes and draws the same ids.

    Returns
    -------
    tokens : ndarray of dtype, shape (batch, n)
        Token ids (see the module docstring); the last column is the query ``2 S``.
    targets : ndarray of int64, shape (batch,)
        Symbol on the most recent marked content token, in ``0..S-1``.

    Notes
    -----
    Each content token costs 16 random bits (:func:`_draw_tokens`): with ``S = 8`` the low 3 are its
    symbol and the other 13 decide the mark, with probability ``mark_prob`` exactly (a token on the
    threshold's edge, one in 8,192, takes one more draw).

    Examples
    --------
    One encoded sequence of length 12.  Marked tokens are ``S + s``: 8, 14 and 12 are symbols
    0, 6 and 4 marked, at positions 2, 4 and 7.  The query 16 ends it, and the answer is the
    symbol on the most recent mark, 4.

    >>> tokens, targets = cue_batch(np.random.default_rng(43), 1, 12)
    >>> tokens[0].tolist(), int(targets[0])
    ([3, 4, 8, 5, 14, 4, 7, 12, 7, 0, 4, 16], 4)
    >>> print(describe(tokens[0]))
    3 4 0* 5 6* 4 7 4* 7 0 4 ?
    """
    if not isinstance(rng, np.random.Generator):
        raise PosKernelsError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)); got {rng!r}")
    batch, n, mark_prob = check_cue_sizes(batch, n, mark_prob)  # n >= 2, within the size budget, mark_prob in (0, 1]
    n_symbols = check_positive_int("n_symbols", n_symbols)
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu" or np.iinfo(dtype).max < 2 * n_symbols:
        raise PosKernelsError(f"dtype must be an integer type that holds the ids 0..{2 * n_symbols}; got {dtype}")
    m = n - 1
    symbols, marked = _draw_tokens(rng, (batch, m), n_symbols, mark_prob)  # (batch, n-1) each
    last = m - 1 - np.argmax(marked[:, ::-1], axis=1)  # (batch,) index of the most recent mark
    rows = np.arange(batch)
    unmarked_rows = np.flatnonzero(~marked[rows, last])
    # the convention that makes the bag reader's figures exact: one uniform content token is marked
    pick = rng.integers(0, m, size=unmarked_rows.size)
    marked[unmarked_rows, pick] = True
    last[unmarked_rows] = pick
    targets = symbols[rows, last].astype(np.int64)
    tokens = np.empty((batch, n), dtype=dtype)
    if dtype == np.uint8 and n_symbols <= 127 and symbols.dtype == np.uint8:  # the training stream: bytes, in place
        shifted = np.multiply(marked.view(np.uint8), np.uint8(n_symbols), out=marked.view(np.uint8))  # S [m]
        np.add(symbols, shifted, out=tokens[:, :m])  # s + S [m]
    else:
        np.add(symbols, marked.view(np.uint8) * np.uint16(n_symbols), out=tokens[:, :m], casting="unsafe")
    tokens[:, m] = 2 * n_symbols
    return tokens, targets


def _draw_tokens(rng: np.random.Generator, shape, n_symbols: int, mark_prob: float):
    """Symbols and marks ``(bool)`` of ``shape`` content tokens, from 16 random bits per token.

    With ``S = 2^b <= 256`` symbols the low ``b`` bits of a token's 16 are its symbol and the other
    ``k = 16 - b`` bits an integer ``u`` uniform on ``0..2^k - 1``; with ``mark_prob 2^k = w + f``
    (``w`` whole, ``0 <= f < 1``) the token is marked when ``u < w``, and when ``u == w`` with
    probability ``f`` (one more draw for those few tokens), so ``P(marked) = (w + f) / 2^k`` is
    ``mark_prob`` exactly.  Any other ``S`` draws its symbols apart (``k = 16``).  The symbols are ``uint8``
    (``uint16`` for any other ``S``).  Few large temporaries: a freed block of this size goes back to the
    system, and each new one costs a page fault per 4 KiB, more than the arithmetic on it.
    """
    size = int(np.prod(shape))
    raw = rng.bit_generator.random_raw((size + 3) // 4).view(np.uint16)[:size].reshape(shape)  # 16 bits a token
    b = n_symbols.bit_length() - 1
    if n_symbols & (n_symbols - 1) == 0 and b <= 8:
        symbols = raw.astype(np.uint8)  # the low byte (b <= 8 bits of it)
        symbols &= np.uint8(n_symbols - 1)
    else:
        b = 0
        symbols = rng.integers(0, n_symbols, size=shape, dtype=np.uint16)
    scaled = mark_prob * 2.0 ** (16 - b)  # u = raw >> b is uniform on 0..2^(16-b) - 1
    whole = int(scaled)
    marked = raw < np.uint16(whole << b) if whole < 1 << (16 - b) else np.ones(shape, dtype=bool)  # u < whole
    frac = scaled - whole
    if frac > 0:
        tie = np.flatnonzero(np.right_shift(raw, np.uint16(b), out=raw).ravel() == whole)  # raw is not read again
        marked.ravel()[tie] = rng.random(tie.size) < frac
    return symbols, marked


def describe(tokens, n_symbols: int = N_SYMBOLS) -> str:
    """Readable form of one sequence: symbols, ``s*`` for a marked symbol, ``?`` for the query.

    Parameters
    ----------
    tokens : array_like of int
        One sequence's token ids.
    n_symbols : int
        ``S``.

    Returns
    -------
    str
        The tokens, space-separated.

    Raises
    ------
    PosKernelsError
        If an id lies outside ``0..2 S``.

    Examples
    --------
    >>> describe([3, 11, 16])
    '3 3* ?'
    >>> describe([3, 99])
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: token id must lie in [0, 16]; got 99
    """
    out = []
    for t in np.asarray(tokens).tolist():
        if t == 2 * n_symbols:
            out.append("?")
        elif n_symbols <= t < 2 * n_symbols:
            out.append(f"{t - n_symbols}*")
        elif 0 <= t < n_symbols:
            out.append(str(t))
        else:
            raise PosKernelsError(f"token id must lie in [0, {2 * n_symbols}]; got {t}")
    return " ".join(out)


def bag_reader_score(tokens, targets, n_symbols: int = N_SYMBOLS) -> np.ndarray:
    """Expected score of the best bag reader on given sequences (Proposition 1 (ii), sequence by sequence).

    The reader sees only the multiset of tokens and guesses the most frequent marked symbol, breaking
    ties uniformly; on a sequence it scores ``[target among the most frequent] / (number of them)``.
    Its mean over many sequences tends to the exact accuracy that
    :func:`poskernels.theory.bag_reader.bag_reader_accuracy` computes by counting.

    Parameters
    ----------
    tokens : array_like of int, shape (B, n)
    targets : array_like of int, shape (B,)

    Returns
    -------
    ndarray, shape (B,)
        Values in ``[0, 1]``.

    Examples
    --------
    >>> bag_reader_score([[8, 9, 9, 1, 16]], [1]).tolist()  # marked 0 once, marked 1 twice: guess 1
    [1.0]
    >>> bag_reader_score([[8, 9, 16]], [1]).tolist()  # a tie between 0 and 1
    [0.5]
    """
    tokens, targets = np.asarray(tokens), np.asarray(targets)
    B = tokens.shape[0]
    marked = (tokens >= n_symbols) & (tokens < 2 * n_symbols)  # (B, n)
    rows = np.repeat(np.arange(B), tokens.shape[1])[marked.ravel()]
    counts = np.bincount(rows * n_symbols + (tokens[marked] - n_symbols), minlength=B * n_symbols)
    counts = counts.reshape(B, n_symbols)  # (B, S) marked count per symbol
    best = counts == counts.max(axis=1, keepdims=True)  # (B, S)
    return best[np.arange(B), targets] / best.sum(axis=1)
