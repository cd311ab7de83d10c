"""How a token id becomes a vector: the article's factored embedding, or a free table (a registry).

The article's tokens *carry* one of ``S`` symbols and, maybe, a mark; the query is a token of its
own.  Token ids keep the cue task's layout (:mod:`poskernels.tasks.cue`, and the filings' tokens):
``id = s`` for symbol ``s``, ``id = S + s`` for ``s`` marked, ``id = 2 S`` for the query, so
``V = 2 S + 1``.

* ``"factored"`` (the article's head): ``h = E[s] + m [marked]``: ``E`` holds one row per symbol
  and one for the query, ``(S + 1, d)``, and one mark vector ``m`` of shape ``(d,)`` is shared by
  every marked token.
* ``"table"``: one free row per token id, ``E`` of shape ``(V, d)`` (a head that may give a
  marked symbol a vector unrelated to its unmarked one).

:func:`token_table` builds the effective ``(V, d)`` table of either, and
:func:`token_table_backward`, right after it, takes a gradient on that table back to the
parameters.  Both accept a leading model axis (a stack of heads, :mod:`poskernels.model.train`):
every array may carry extra leading dimensions.
"""

from __future__ import annotations

import numpy as np

__all__ = ["EMBEDDINGS", "init_embedding", "n_symbols", "token_table", "token_table_backward"]


def n_symbols(cfg) -> int:
    """Symbols ``S`` of a head whose vocabulary is ``2 S + 1`` (symbols, marked symbols, the query).

    Parameters
    ----------
    cfg : HeadConfig
        The head (its ``vocab``).

    Returns
    -------
    int
        ``(vocab - 1) // 2``.

    Examples
    --------
    >>> from poskernels.model.config import HeadConfig
    >>> n_symbols(HeadConfig())
    8
    """
    return (cfg.vocab - 1) // 2


def _factored_init(cfg, rng: np.random.Generator) -> dict:
    S, d = n_symbols(cfg), cfg.d
    E = rng.normal(0.0, cfg.embed_scale, size=(S + 1, d))  # (S+1, d): the symbols, then the query
    return {"E": E, "m": rng.normal(0.0, cfg.embed_scale, size=d)}  # m (d,): the mark


def _factored_table(params: dict, cfg) -> np.ndarray:
    S = n_symbols(cfg)
    E, m = params["E"], params["m"]  # (..., S+1, d), (..., d)
    symbols = E[..., :S, :]  # (..., S, d)
    # h = E[s] + m [marked]: rows 0..S-1 unmarked, S..2S-1 marked, 2S the query
    return np.concatenate([symbols, symbols + m[..., None, :], E[..., S:, :]], axis=-2)  # (..., V, d)


def _factored_backward(dT: np.ndarray, params: dict, cfg) -> dict:
    S = n_symbols(cfg)
    marked = dT[..., S : 2 * S, :]  # (..., S, d)
    dE = np.concatenate([dT[..., :S, :] + marked, dT[..., 2 * S :, :]], axis=-2)  # (..., S+1, d)
    return {"E": dE, "m": marked.sum(axis=-2)}  # m collects every marked row


def _table_init(cfg, rng: np.random.Generator) -> dict:
    return {"E": rng.normal(0.0, cfg.embed_scale, size=(cfg.vocab, cfg.d))}  # (V, d)


def _table_table(params: dict, cfg) -> np.ndarray:
    return params["E"]  # (..., V, d)


def _table_backward(dT: np.ndarray, params: dict, cfg) -> dict:
    return {"E": dT}


#: Embeddings by name: ``(init(cfg, rng) -> params, table(params, cfg) -> (V, d), backward(dT, params, cfg))``.
EMBEDDINGS = {
    "factored": (_factored_init, _factored_table, _factored_backward),
    "table": (_table_init, _table_table, _table_backward),
}


def init_embedding(cfg, rng: np.random.Generator) -> dict:
    """Draw the embedding's parameters from ``N(0, embed_scale**2)``.

    Parameters
    ----------
    cfg : HeadConfig
        The head (its ``embedding``, ``vocab``, ``d`` and ``embed_scale``).
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    dict of ndarray
        The embedding's parameters (``E``, and ``m`` for the factored embedding).

    Examples
    --------
    >>> from poskernels.model.config import HeadConfig
    >>> p = init_embedding(HeadConfig(), np.random.default_rng(0))
    >>> {k: v.shape for k, v in p.items()}
    {'E': (9, 16), 'm': (16,)}
    """
    return EMBEDDINGS[cfg.embedding][0](cfg, rng)


def token_table(params: dict, cfg) -> np.ndarray:
    """The effective embedding of every token id, ``(..., V, d)``: row ``x`` is ``h`` of token ``x``.

    Parameters
    ----------
    params : dict of ndarray
        The head's parameters (``E``, and ``m`` for the factored embedding), optionally with a
        leading model axis.
    cfg : HeadConfig

    Returns
    -------
    ndarray, shape (..., V, d)

    Notes
    -----
    Factored: ``T[s] = E[s]``, ``T[S + s] = E[s] + m``, ``T[2 S] = E[S]`` (the query's own row).

    Examples
    --------
    >>> from poskernels.model.config import HeadConfig
    >>> cfg = HeadConfig()
    >>> p = init_embedding(cfg, np.random.default_rng(0))
    >>> T = token_table(p, cfg)
    >>> T.shape, bool(np.allclose(T[11], p["E"][3] + p["m"])), bool(np.allclose(T[16], p["E"][8]))
    ((17, 16), True, True)
    """
    return EMBEDDINGS[cfg.embedding][1](params, cfg)


def token_table_backward(dT: np.ndarray, params: dict, cfg) -> dict:
    """Gradients of the embedding's parameters from ``dL/dT``, ``dT`` shaped like :func:`token_table`.

    Parameters
    ----------
    dT : ndarray, shape (..., V, d)
        The gradient with respect to the token table.
    params : dict of ndarray
        The embedding's parameters.
    cfg : HeadConfig
        The head.

    Returns
    -------
    dict of ndarray
        One gradient per embedding parameter, shaped like it.

    Examples
    --------
    >>> from poskernels.model.config import HeadConfig
    >>> cfg = HeadConfig()
    >>> p = init_embedding(cfg, np.random.default_rng(0))
    >>> g = token_table_backward(np.ones((17, 16)), p, cfg)
    >>> g["E"][:, 0].tolist(), float(g["m"][0])
    ([2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0], 8.0)
    """
    return EMBEDDINGS[cfg.embedding][2](dT, params, cfg)
