"""Associative recall: key–value pairs, then a query for one key; the target is its value.

The single-query form of multi-query associative recall (MQAR; Arora et al. 2023, "Zoology: Measuring and
Improving Recall in Efficient Language Models"): keys and values come from disjoint vocabularies,
the sequence opens with ``P`` key–value pairs ``k_1 v_1 k_2 v_2 ... k_P v_P``, and the query is one of those keys;
the target is the value that followed it.  As in MQAR the number of pairs is fixed (``P = 8`` here, MQAR's
``num_kv_pairs``) and does not grow with the length: the rest of the sequence, between the last pair and the
query, is a pad token, so a longer sequence puts the pairs farther from the query without making the lookup
harder.  MQAR asks several queries in one sequence; here one query ends it, the last token that the head reads.

Keys are distinct within a sequence (each appears once before the query) and so are values (drawn without
replacement from their ``V = 16``), so a reader that sees which values are present but not which key precedes
which scores ``1 / P`` at best (:func:`bag_reader_score`, the task's exact reader).  One attention head cannot do
better: the score of a value token does not depend on the key beside it, so matching the query against a key
and reading the value one position later takes two layers (an induction head).  The task reads how far a head
keeps to that ``1 / P`` as the pairs move away.

Token ids (``V + K + 1 = 33`` at ``V = K = 16``):

=============  ================  ============================
token          id                example (``V = K = 16``)
=============  ================  ============================
value ``v``    ``v``             ``3``
key ``k``      ``V + k``         ``21`` (key 5)
pad            ``V + K``         ``32``
=============  ================  ============================

The target is the value's id, ``0..V-1``; the query is a key id.
"""

from __future__ import annotations

import numpy as np

from ..errors import PosKernelsError, check_budget, check_positive_int
from .validate import MAX_CUE_TOKENS

__all__ = ["N_KEYS", "N_PAIRS", "N_VALUES", "bag_reader_score", "describe", "recall_batch", "recall_vocab"]

#: Pairs per sequence, and the sizes of the key and value vocabularies.
N_PAIRS = 8
N_KEYS = 16
N_VALUES = 16


def recall_vocab(n_keys: int = N_KEYS, n_values: int = N_VALUES) -> int:
    """Number of token ids, ``V + K + 1`` (values, keys, the pad).

    Parameters
    ----------
    n_keys : int, optional
        ``K``, the keys (default 16).
    n_values : int, optional
        ``V``, the values (default 16).

    Returns
    -------
    int
        ``V + K + 1``.

    Raises
    ------
    PosKernelsError
        If either count is not a positive integer.

    Examples
    --------
    >>> recall_vocab()
    33
    """
    return check_positive_int("n_values", n_values) + check_positive_int("n_keys", n_keys) + 1


def recall_batch(
    rng: np.random.Generator,
    batch: int,
    n: int,
    n_pairs: int = N_PAIRS,
    n_keys: int = N_KEYS,
    n_values: int = N_VALUES,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``batch`` recall sequences of length ``n``: ``P`` pairs, pads, and the query key last.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    batch : int
        Number of sequences.
    n : int
        Sequence length including the query, ``>= 2 P + 1``.
    n_pairs : int
        Pairs ``P``, at most ``min(K, V)`` (keys and values are distinct within a sequence).
    n_keys, n_values : int
        Sizes ``K`` and ``V`` of the key and value vocabularies.

    Returns
    -------
    tokens : ndarray of int64, shape (batch, n)
        Token ids (see the module docstring); the last column is the queried key.
    targets : ndarray of int64, shape (batch,)
        The value paired with the queried key, in ``0..V-1``.

    Examples
    --------
    Two pairs in a sequence of 8: token 27 (key 11) holds value 4, token 19 (key 3) holds 5; the pads 32 follow
    and the query asks for key 3, so the answer is 5.

    >>> tokens, targets = recall_batch(np.random.default_rng(0), 1, 8, n_pairs=2)
    >>> tokens[0].tolist(), int(targets[0])
    ([27, 4, 19, 5, 32, 32, 32, 19], 5)
    >>> print(describe(tokens[0]))
    k11 4 k3 5 _ _ _ k3?
    """
    if not isinstance(rng, np.random.Generator):
        raise PosKernelsError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)); got {rng!r}")
    batch, n, P = (check_positive_int(k, v) for k, v in (("batch", batch), ("n", n), ("n_pairs", n_pairs)))
    K, V = check_positive_int("n_keys", n_keys), check_positive_int("n_values", n_values)
    if P > min(K, V):
        raise PosKernelsError(f"n_pairs must be at most min(n_keys, n_values) = {min(K, V)} (distinct keys and "
                              f"values); got {P}")  # fmt: skip
    if n < 2 * P + 1:
        raise PosKernelsError(f"n must be >= 2 n_pairs + 1 = {2 * P + 1} (the pairs and the query); got {n}")
    check_budget(f"a recall batch of {batch} x {n} tokens", batch * n, MAX_CUE_TOKENS)
    keys = np.argsort(rng.random((batch, K)), axis=1)[:, :P]  # (batch, P) distinct keys, a uniform draw
    values = np.argsort(rng.random((batch, V)), axis=1)[:, :P]  # (batch, P) distinct values
    asked = rng.integers(0, P, size=batch)  # (batch,) which pair the query asks for
    rows = np.arange(batch)
    tokens = np.full((batch, n), V + K, dtype=np.int64)  # (batch, n) the pad everywhere first
    tokens[:, 0 : 2 * P : 2] = V + keys
    tokens[:, 1 : 2 * P : 2] = values
    tokens[:, n - 1] = V + keys[rows, asked]
    return tokens, values[rows, asked].astype(np.int64)


def describe(tokens, n_keys: int = N_KEYS, n_values: int = N_VALUES) -> str:
    """Readable form of one sequence: ``k<i>`` a key, a value as its number, ``_`` the pad, ``?`` on the query.

    Parameters
    ----------
    tokens : array_like of int, shape (n,)
        One sequence's token ids.
    n_keys : int, optional
        ``K`` (default 16).
    n_values : int, optional
        ``V`` (default 16).

    Returns
    -------
    str
        The tokens, space-separated.

    Raises
    ------
    PosKernelsError
        If a token id lies outside ``[0, V + K]``.

    Examples
    --------
    >>> describe([20, 6, 32, 20])
    'k4 6 _ k4?'
    """
    out = []
    for t in np.asarray(tokens).tolist():
        if 0 <= t < n_values:
            out.append(str(t))
        elif n_values <= t < n_values + n_keys:
            out.append(f"k{t - n_values}")
        elif t == n_values + n_keys:
            out.append("_")
        else:
            raise PosKernelsError(f"token id must lie in [0, {n_values + n_keys}]; got {t}")
    out[-1] += "?"
    return " ".join(out)


def bag_reader_score(tokens, targets, n_keys: int = N_KEYS, n_values: int = N_VALUES) -> np.ndarray:
    """Expected score of the best bag reader on given sequences, sequence by sequence.

    The reader sees the multiset of tokens, not their order: every pairing of the keys with the values present is
    as likely, so the queried key's value is a value present, in proportion to its count.  It guesses the most
    frequent value, breaking ties uniformly, and scores ``[target among the most frequent] / (number of them)``:
    ``1 / P`` on this task's sequences, whose ``P`` values are distinct.

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
    >>> bag_reader_score(*recall_batch(np.random.default_rng(0), 3, 20)).tolist()
    [0.125, 0.125, 0.125]
    """
    tokens, targets = np.asarray(tokens), np.asarray(targets)
    B = tokens.shape[0]
    is_value = tokens[:, :-1] < n_values  # (B, n-1) the query is a key, never a value
    rows = np.repeat(np.arange(B), tokens.shape[1] - 1)[is_value.ravel()]
    counts = np.bincount(rows * n_values + tokens[:, :-1][is_value], minlength=B * n_values).reshape(B, n_values)
    best = counts == counts.max(axis=1, keepdims=True)  # (B, V)
    return best[np.arange(B), targets] / best.sum(axis=1)
