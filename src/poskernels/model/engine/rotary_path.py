"""The rotary path: a head that turns, with no position term, forward beside backward.

RoPE and its family (xPos, p-RoPE, partial rotary, with SSMax or randomized positions): the content entry depends
on the key's position too (:class:`~poskernels.model.engine.tables.RotaryTable`), so each key's weight is one gather
from the table's exponential, and the mass on a token sums them.  The backward needs no per-key softmax either:
``dz_j = e_j R[b, x_j]`` with ``R = (g - s) / Z``.
"""

from __future__ import annotations

import numpy as np

from .reductions import per_model_max
from .tables import flat_offsets

__all__ = ["RotaryPath"]


class RotaryPath:
    """One gather per key from the turned table; no ``a`` kept."""

    name = "rotary"

    @staticmethod
    def takes(terms) -> bool:
        """A turn, and nothing added to the score (no bias, no score shift), not the exact pass."""
        return terms.rotary and not (terms.exact or terms.coded or terms.shifted or terms.positional)

    @staticmethod
    def mass(c: dict, table: np.ndarray, ptable, score_shift) -> np.ndarray:
        """``(M, B, V)`` unnormalized attention mass on each token."""
        tokens = c["tokens"]
        M, B, _ = tokens.shape
        V = table.shape[-1]
        flat = tokens + flat_offsets(M, B, V, False)  # (M, B, n) index into a (M, B, V) table
        ec = np.exp(table - per_model_max(table))  # (M, U n, V) exp of the content table, each model's max 1
        index = c["table"].key_index(c)  # (M, B, n) into the stack's (M U n, V) table
        e = np.take(ec, index)  # (M, B, n) each key's content weight
        c.update(flat=flat, ec=ec, index=index, table_size=table.size)
        return np.bincount(flat.ravel(), weights=e.ravel(), minlength=M * B * V).reshape(M, B, V)

    @staticmethod
    def read_out(c: dict, Z: np.ndarray, logits: np.ndarray, W_O: np.ndarray) -> None:
        """Nothing past the mass: the values are read from ``C`` alone."""

    @staticmethod
    def backward(c: dict, dlogits: np.ndarray, s: np.ndarray, dEO: np.ndarray):
        """``(dtable, None, None)``: ``e^{table} * sum over the keys of R[b, x_j]`` at each key's entry."""
        gs = dlogits @ np.swapaxes(c["EO"], 1, 2)  # (M, B, V) g = dL/dC
        gs -= s  # g - s, in place
        gs /= c["Z"]  # (M, B, V) R = (g - s) / Z: dz_j = e_j R[b, x_j]
        dtable = c["ec"].ravel() * np.bincount(
            c["index"].ravel(), weights=np.take(gs, c["flat"].ravel()), minlength=c["table_size"]
        )
        return dtable, None, None

    @staticmethod
    def attention(c: dict) -> np.ndarray:
        """``a (M, B, n)``: each key's gathered weight over ``Z``."""
        return c["ec"].ravel()[c["index"]] / c["Z"]
