"""The token path: every key's own weight, forward beside backward; and the exact pass, each score itself.

The general path: a head with an added code (the sinusoidal code, a learned table), a score shift (diagnostics
that replace one term of the score), or a rotary head with a bias.  Each key's weight ``e_j`` is its content
entry's exponential times its position term's; ``a = e / Z`` is kept, and the backward is the softmax's, key by
key.  :class:`ExactPath` is the same path with every score computed itself and shifted by its row's maximum: the
stack recomputes a model whose row sum underflowed with it (rare: huge weights).
"""

from __future__ import annotations

import numpy as np

from .position_term import position_weights
from .reductions import per_model_max
from .tables import flat_offsets

__all__ = ["ExactPath", "TokenPath"]


class TokenPath:
    """Each key's weight, ``a`` kept; the code's values read through it."""

    name = "token"

    @staticmethod
    def takes(terms) -> bool:
        """Any score (the path of last resort)."""
        return True

    @staticmethod
    def key_weights(c: dict, table: np.ndarray, ptable, index: np.ndarray, score_shift) -> np.ndarray:
        """``e (M, B, n)``: each key's content weight times its position weight (and the shift's), unnormalized."""
        M, B, n = c["tokens"].shape
        ec = np.exp(table - per_model_max(table))  # (M, U[ n], V) exp of the content table, each model's max 1
        _, wp = position_weights(ptable, c["rows"])
        e = np.take(ec, index)  # (M, B, n) each key's content weight
        if wp is not None:
            e *= wp
        if score_shift is not None:
            shift = np.broadcast_to(np.asarray(score_shift, dtype=float), (M, B, n))
            e *= np.exp(shift - per_model_max(shift))
        return e

    @classmethod
    def mass(cls, c: dict, table: np.ndarray, ptable, score_shift) -> np.ndarray:
        """``(M, B, V)`` unnormalized attention mass on each token, summed from each key's weight."""
        tokens = c["tokens"]
        M, B, _ = tokens.shape
        V = table.shape[-1]
        flat = tokens + flat_offsets(M, B, V, False)  # (M, B, n) index into a (M, B, V) table
        index = c["table"].key_index(c)  # (M, B, n) into the stack's content table
        e = cls.key_weights(c, table, ptable, index, score_shift)
        c.update(flat=flat, index=index, table_size=table.size, weights=e)
        return np.bincount(flat.ravel(), weights=e.ravel(), minlength=M * B * V).reshape(M, B, V)

    @staticmethod
    def read_out(c: dict, Z: np.ndarray, logits: np.ndarray, W_O: np.ndarray) -> None:
        """``a = e / Z`` kept; a head with an added code reads the code's values, ``logits += a P W_V W_O``, in
        place."""
        a = c.pop("weights") / Z  # (M, B, n) attention weights
        if c["code"] is not None:
            c["PO"] = c["PV"] @ W_O  # (M, n, C) each position's value, read out
            logits += a @ c["PO"]
        c["a"] = a

    @staticmethod
    def backward(c: dict, dlogits: np.ndarray, s: np.ndarray, dEO: np.ndarray):
        """``(dtable, dptable, dPO)``: the softmax's backward ``a (da - s)``, key by key, ``s = sum_j a_j da_j``."""
        a, rows, flat = c["a"], c["rows"], c["flat"]
        M, U, n = a.shape[0], c["U"], a.shape[-1]
        g = dlogits @ np.swapaxes(c["EO"], 1, 2)  # (M, B, V) dL/dC
        da = np.take(g, flat)  # (M, B, n)
        dPO = None
        if c["code"] is not None:
            dPO = np.swapaxes(a, 1, 2) @ dlogits  # (M, n, C)
            da += dlogits @ np.swapaxes(c["PO"], 1, 2)
        da -= s
        dz = np.multiply(da, a, out=da)  # (M, B, n) softmax backward a (da - sum_j a_j da_j), in place
        dtable = np.bincount(c["index"].ravel(), weights=dz.ravel(), minlength=c["table_size"])
        dptable = None
        if c["has_ptable"]:
            if rows is None:
                dptable = dz.sum(axis=1)[:, None]  # (M, 1, n)
            else:
                dptable = np.bincount(rows.ravel(), weights=dz.ravel(), minlength=M * U * n).reshape(M, U, n)
        return dtable, dptable, dPO

    @staticmethod
    def attention(c: dict) -> np.ndarray:
        """``a (M, B, n)``, a copy of the one kept."""
        return c["a"].copy()


class ExactPath(TokenPath):
    """The token path with every score itself, ``z_j - max_j z_j`` exponentiated: no row's sum underflows."""

    name = "exact"

    @staticmethod
    def takes(terms) -> bool:
        """The exact pass of a model whose rows underflowed."""
        return terms.exact

    @staticmethod
    def key_weights(c: dict, table: np.ndarray, ptable, index: np.ndarray, score_shift) -> np.ndarray:
        """``e (M, B, n)``: each key's score, content entry plus position term (plus the shift), shifted by its row's
        maximum."""
        rows = c["rows"]
        z = table.ravel()[index]
        if ptable is not None:
            z = z + (ptable if ptable.ndim == 1 else ptable.reshape(-1)[rows] if rows is not None else ptable)
        if score_shift is not None:
            z = z + np.broadcast_to(np.asarray(score_shift, dtype=float), z.shape)
        return np.exp(z - z.max(axis=-1, keepdims=True))
