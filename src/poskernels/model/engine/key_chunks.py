"""One chunk of key columns, as the streaming reader (:mod:`poskernels.model.engine.stream`) reads it.

:class:`KeyChunk` holds the chunk's token ids and the index arrays the heads of one pass share;
:func:`token_rows` groups its keys by token into a sparse matrix, so one product sums every head's weights into
each ``(token, sequence)`` row with one nonzero per key, where a dense product of token indicators does ``V``
times the arithmetic.

Examples
--------
>>> x = np.array([[1, 0, 1], [2, 2, 0]])  # (B, c) = (2, 3), V = 3
>>> S = token_rows(KeyChunk(x, 0, 3, 3), {})  # (V B, V c)
>>> e = np.arange(9.0)[:, None]  # (V c, 1): weight e[v c + j] of token v at column j
>>> (S @ e).reshape(3, 2).T.tolist()  # (B, V): row 0 sums e[0 c + 1] and e[1 c + 0] + e[1 c + 2]
[[1.0, 8.0, 0.0], [2.0, 0.0, 13.0]]
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ...errors import PosKernelsError

__all__ = ["KeyChunk", "token_rows"]


class KeyChunk:
    """One chunk of key columns ``[a0, b)`` and the index arrays every head of the pass shares."""

    def __init__(self, tokens: np.ndarray, a0: int, b: int, V: int):
        self.a0 = a0
        x = tokens[:, a0:b].astype(np.int64)  # (B, c)
        if x.size and (x.min() < 0 or x.max() >= V):
            raise PosKernelsError(f"token ids must lie in [0, {V - 1}]; got {x.min()}..{x.max()}")
        self.x, self.V = x, V
        raw = tokens[:, a0:b]  # (B, c) as given: comparing uint8 ids is far cheaper than int64 ones
        self.small = raw if raw.dtype == np.uint8 or V > 256 else x.astype(np.uint8)

    @cached_property
    def flat(self) -> np.ndarray:
        """``(B, c)`` each key's index into a ``(B, V)`` table (made when a reader asks for it)."""
        return self.x + self.V * np.arange(self.x.shape[0])[:, None]

    @cached_property
    def idx(self) -> np.ndarray:
        """``(B, c)`` each key's index into a ``(c, V)`` table."""
        return self.x + self.V * np.arange(self.x.shape[1])


def token_rows(ch: KeyChunk, cache: dict):
    """The chunk's keys grouped by token: a CSR matrix ``S (V B, V c)`` with a one at ``(v B + b, v c + j)`` for
    each key ``x[b, j] = v``, so ``S @ e`` sums a ``(V c, K)`` table of weights ``e[v c + j]`` into each
    ``(token, sequence)`` row.  Rows read their keys in order of position; one nonzero per key.

    Parameters
    ----------
    ch : KeyChunk
        The chunk of keys.
    cache : dict
        Index arrays reused from chunk to chunk (by the chunk's shape).

    Returns
    -------
    scipy.sparse.csr_matrix, shape (V B, V c)
        The grouping; ``S @ e`` is each ``(token, sequence)`` row's sum of its keys' weights.

    Examples
    --------
    >>> S = token_rows(KeyChunk(np.array([[1, 0, 1], [2, 2, 0]]), 0, 3, 3), {})
    >>> S.shape, S.nnz  # one nonzero per key
    ((6, 9), 6)
    >>> S.toarray()[1 * 2 + 0].nonzero()[0].tolist()  # token 1 in sequence 0: columns 1 c + 0 and 1 c + 2
    [3, 5]
    """
    import scipy.sparse  # here: only the batched long reading needs it

    B, c = ch.x.shape
    V = ch.V
    flat = ch.small.ravel()  # (B c,) row-major
    order = np.argsort(flat, kind="stable")  # by token, then by (b, j): the CSR order of S's rows
    if ("rows", B, c) not in cache:
        cache["rows", B, c] = (np.repeat(np.arange(B, dtype=np.int64), c), np.ones(B * c))  # key's row b; values
    row_of, ones = cache["rows", B, c]
    indptr = np.zeros(V * B + 1, dtype=np.int64)
    np.cumsum(np.bincount(flat.astype(np.int64) * B + row_of, minlength=V * B), out=indptr[1:])
    cols = flat[order].astype(np.int64) * c + order % c  # (B c,) v c + j
    return scipy.sparse.csr_matrix((ones, cols, indptr), shape=(V * B, V * c))
