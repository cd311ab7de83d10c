"""The article's head: one causal attention head, as the article writes it, each backward beside its forward.

A head reads token ids ``x_0..x_{n-1}`` at positions ``m`` and answers at the last one, ``t``:

* ``h_m = T[x_m] + p(m)`` (:func:`embed`): ``T`` the embedding of every token id (the article's
  ``E[symbol] + m [marked]``, :mod:`poskernels.model.embedding`), ``p`` the scheme's added code, if any;
* ``q = h_t W_Q``, ``k_j = h_j W_K``, ``v_j = h_j W_V``;
* the score (:func:`~poskernels.model.score.score`)
  ``s(t, j) = <phi_t(q), phi_j(k_j)> * lambda / tau + b(t - j)``, ``tau = sqrt(d)``:
  ``phi`` the scheme's query/key transform (:func:`phi`: a rotation by ``theta``, Definition 4, or by a reading's
  frequencies, Definition 5, or a rotation with decay), ``lambda`` its logit scale (a number, or ``s log n`` of
  the ``n`` keys the query sees: the scaled softmax), ``b`` its bias over offsets (Definition 3);
* ``a = softmax_j s(t, j)`` over the causal prefix ``j <= t``, ``o = sum_j a_j v_j``, logits ``o W_O``.

"Past the training window" reads in it line by line: a learned code refuses a position it has no row for (its
``p``), a rotation turns by the reading's frequencies and scales the logits by its ``lambda`` (Definition 5), ALiBi's
``b(r) = -s r`` makes the far past weigh ``e^{-s r}`` (Theorem 3), and every score is one call of
:func:`~poskernels.model.score.score`.

Every scheme enters only through its hooks (:class:`poskernels.encodings.Scheme`): ``code`` / ``code_backward``,
``transform``, ``logit_scale``, ``bias`` / ``bias_backward``.  :func:`forward` and :func:`backward` are the
definition, and this module imports nothing that computes them faster; the engine (:mod:`poskernels.model.engine`:
a stack of heads trained at once, the score factored into tables, the streaming reader, the certified cut) computes
the same numbers fast, and ``tests/test_engine.py`` checks it against them for every registered scheme.  One head
by the engine (:func:`~poskernels.model.engine.one_head.query_forward`, ``loss_and_grad``, ``accuracy``, ...) is
:mod:`poskernels.model.engine.one_head`; the score's reader forms (pairs, a head without a bias) are
:mod:`poskernels.model.engine.scores`.

Parameters are a dict of arrays: the embedding's (``E (S+1, d)`` and ``m (d,)``, or ``E (V, d)``),
``W_Q, W_K, W_V (d, d)``, ``W_O (d, C)``, and the scheme's own (``P`` for the learned table, ``beta`` for T5,
``A`` for Shaw); a stack adds a leading ``M`` to each.

Examples
--------
>>> from poskernels.model.engine.one_head import query_forward
>>> from poskernels.tasks.cue import cue_batch
>>> cfg = HeadConfig(scheme="rope")
>>> p = init_params(cfg, np.random.default_rng(0))
>>> x, y = cue_batch(np.random.default_rng(1), 4, 12)
>>> logits, cache = forward(p, cfg, x)
>>> bool(np.allclose(logits, query_forward(p, cfg, x)[0]))  # the engine computes the same
True
"""

from __future__ import annotations

import numpy as np

from ..encodings import SCHEMES, rotate
from .config import HeadConfig
from .embedding import init_embedding, token_table, token_table_backward
from .reading import PLAIN, Reading, check_tokens, frequencies, read_positions

__all__ = [
    "backward",
    "embed",
    "forward",
    "init_params",
    "phi",
    "phi_backward",
]


def init_params(cfg: HeadConfig, rng: np.random.Generator) -> dict:
    """Draw a head: the embedding ``~ N(0, embed_scale^2)``, each map ``~ N(0, map_scale^2 / d)``, the scheme's own.

    Parameters
    ----------
    cfg : HeadConfig
        The head's configuration.
    rng : numpy.random.Generator
        The draws' only source.

    Returns
    -------
    dict of str to ndarray
        The head's arrays by name: the embedding ``E``, the read-out ``m``, the maps ``W_Q``, ``W_K``, ``W_V``,
        ``W_O``, and the scheme's own (a learned table ``P``, ALiBi's slope, ...).

    Examples
    --------
    >>> p = init_params(HeadConfig(scheme="learned"), np.random.default_rng(0))
    >>> {k: v.shape for k, v in p.items()}
    {'E': (9, 16), 'm': (16,), 'W_Q': (16, 16), 'W_K': (16, 16), 'W_V': (16, 16), 'W_O': (16, 8), 'P': (32, 16)}
    """
    d, s = cfg.d, cfg.map_scale / np.sqrt(cfg.d)
    params = init_embedding(cfg, rng)
    params.update(
        W_Q=rng.normal(0.0, s, size=(d, d)),  # (d, d)
        W_K=rng.normal(0.0, s, size=(d, d)),  # (d, d)
        W_V=rng.normal(0.0, s, size=(d, d)),  # (d, d)
        W_O=rng.normal(0.0, s, size=(d, cfg.n_classes)),  # (d, C)
    )
    params.update(SCHEMES[cfg.scheme].init(cfg, rng))
    return params


# -- h = T[x] + p(m) ---------------------------------------------------------------------------------------------


def embed(params: dict, cfg: HeadConfig, tokens, positions) -> np.ndarray:
    """``h_m = T[x_m] + p(m)``: tokens ``(..., n)`` at positions ``(n,)`` to vectors ``(..., n, d)``.

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters (:func:`init_params`).
    cfg : HeadConfig
        The head.
    tokens : ndarray of int, shape (..., n)
        Token ids.
    positions : array_like, shape (n,)
        Their positions (the scheme's code reads them; a scheme without one ignores them).

    Returns
    -------
    ndarray, shape (..., n, d)
        The token rows, plus the code where the scheme adds one.

    Examples
    --------
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> embed(p, cfg, np.array([3, 1, 4, 1, 5]), np.arange(5.0)).shape
    (5, 16)
    """
    h = token_table(params, cfg)[tokens]  # (..., n, d)
    code = SCHEMES[cfg.scheme].code(params, cfg, np.asarray(positions, dtype=float))  # (n, d) or None
    return h if code is None else h + code


def _embed_backward(dh: np.ndarray, params: dict, cfg: HeadConfig, tokens: np.ndarray, pos: np.ndarray) -> dict:
    """The embedding's and the code's gradients from ``dL/dh``, ``dh`` of shape ``(B, n, d)``."""
    dT = np.zeros((cfg.vocab, cfg.d))  # (V, d): each token's rows summed
    np.add.at(dT, tokens, dh)
    grads = token_table_backward(dT, params, cfg)
    grads.update(_unstack(SCHEMES[cfg.scheme].code_backward(dh.sum(axis=0)[None], _stack(params), cfg, pos)))
    return grads


# -- phi: the query/key transform --------------------------------------------------------------------------------


def phi(x: np.ndarray, positions, theta: np.ndarray, query: bool = False) -> np.ndarray:
    """``phi_m(x)``: plane ``p`` of each vector turned by ``m theta_p`` (Definition 4), ``x`` of shape ``(..., n, d)``.

    Complex frequencies ``theta = w - i g`` are a rotation with decay: a key is scaled by ``e^{g m}``, a query by
    ``e^{-g m}`` (``query=True``), so the score of a key ``r = t - j`` back carries ``e^{-g r}`` (xPos's form).
    With real ``theta`` queries and keys turn alike.

    Parameters
    ----------
    x : ndarray, shape (..., n, d)
        Queries or keys, planes as consecutive pairs.
    positions : array_like, shape (n,)
        Their positions ``m``.
    theta : ndarray, shape (P,)
        Per-plane frequencies (complex: with decay).
    query : bool
        Turn as a query (the conjugate rate).

    Returns
    -------
    ndarray, shape (..., n, d)
        ``phi_m(x)``.

    Examples
    --------
    A quarter turn of plane 0 at position 1:

    >>> phi(np.array([[1.0, 0.0]]), [1.0], np.array([np.pi / 2])).round(12).tolist()
    [[0.0, 1.0]]
    """
    rate = np.conj(theta) if query else theta  # (P,)
    return rotate(x, np.asarray(positions, dtype=float)[:, None] * rate)  # angles (n, P)


def phi_backward(dy: np.ndarray, positions, theta: np.ndarray, query: bool = False) -> np.ndarray:
    """The transpose of :func:`phi`: the inverse turn (a rotation's transpose), the same scaling.

    Parameters
    ----------
    dy : ndarray, shape (..., n, d)
        The gradient with respect to ``phi``'s output.
    positions, theta, query
        As for :func:`phi`.

    Returns
    -------
    ndarray, shape (..., n, d)
        The gradient with respect to ``phi``'s input.

    Examples
    --------
    >>> from poskernels.encodings import omega
    >>> x, pos = np.random.default_rng(0).standard_normal((5, 16)), np.arange(5.0)
    >>> bool(np.allclose(phi_backward(phi(x, pos, omega(16)), pos, omega(16)), x))  # a rotation: its own inverse
    True
    """
    rate = np.conj(theta) if query else theta
    return rotate(dy, -np.asarray(positions, dtype=float)[:, None] * np.conj(rate))


# -- the head at its last position: forward, then backward -------------------------------------------------------


def forward(params: dict, cfg: HeadConfig, tokens, positions=None, reading: Reading = PLAIN):
    """Logits ``(B, C)`` of the head at the last position of each sequence ``tokens (B, n)``, and its cache.

    Written from the definition, one sequence's keys at a time in NumPy's batch: ``h``, ``q, k, v``, the score
    of every key, its softmax, the read-out.  The engine's :func:`~poskernels.model.engine.one_head.query_forward`
    computes the same, fast.

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters (:func:`init_params`).
    cfg : HeadConfig
        The head.
    tokens : array_like of int, shape (B, n)
        Sequences; the query is the last token of each.
    positions : array_like, shape (n,), optional
        Their positions; ``0..n-1`` by default.
    reading : Reading
        How the head is read; :data:`~poskernels.model.reading.PLAIN` by default.

    Returns
    -------
    logits : ndarray, shape (B, C)
        The head's logits.
    cache : dict
        What :func:`backward` reads.

    Raises
    ------
    PosKernelsError
        If the tokens or positions are refused (:func:`~poskernels.model.reading.check_tokens`).

    Examples
    --------
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> tokens = np.random.default_rng(1).integers(0, cfg.vocab, size=(2, 6))
    >>> logits, cache = forward(p, cfg, tokens)
    >>> logits.shape
    (2, 8)
    """
    tokens = check_tokens(cfg, tokens)
    B, n = tokens.shape
    pos = read_positions(positions, n)  # (n,) positions m; the query is at t = pos[-1]
    scheme = SCHEMES[cfg.scheme]
    theta, lam = frequencies(cfg, reading), _logit_scale(params, cfg, reading, n)
    h = embed(params, cfg, tokens, pos)  # (B, n, d)
    q = h[:, -1] @ params["W_Q"]  # (B, d)
    k, v = h @ params["W_K"], h @ params["W_V"]  # (B, n, d) each
    fq = q if theta is None else phi(q[:, None], pos[-1:], theta, query=True)[:, 0]  # (B, d) phi_t(q)
    fk = k if theta is None else phi(k, pos, theta)  # (B, n, d) phi_j(k_j)
    r = pos[-1] - pos  # (n,) offsets t - j
    dots = np.einsum("bd,bnd->bn", fq, fk)  # (B, n) <phi_t(q), phi_j(k_j)>
    s = dots * (lam / cfg.tau)  # (B, n)
    b = scheme.bias_at(_stack(params), cfg, q[None], r, pos[-1])  # (1, B, n), (1, n), (n,) or None: a stack of one
    if b is not None:
        s = s + np.broadcast_to(b, (1, B, n))[0]
    a = np.exp(s - s.max(axis=-1, keepdims=True))  # (B, n) softmax over the causal prefix j <= t
    a /= a.sum(axis=-1, keepdims=True)
    o = np.einsum("bn,bnd->bd", a, v)  # (B, d)
    cache = dict(tokens=tokens, pos=pos, r=r, theta=theta, lam=lam, h=h, q=q, fq=fq, fk=fk, v=v, a=a, o=o, b=b)
    cache.update(dots=dots, reading=reading)
    return o @ params["W_O"], cache  # (B, C)


def backward(params: dict, cfg: HeadConfig, cache: dict, dlogits: np.ndarray) -> dict:
    """Gradients of every parameter from ``dL/dlogits (B, C)``: :func:`forward` read backwards, line by line.

    Parameters
    ----------
    params : dict of ndarray
        One head's parameters (:func:`init_params`).
    cfg : HeadConfig
        The head.
    cache : dict
        :func:`forward`'s cache.
    dlogits : ndarray, shape (B, C)
        The gradient with respect to the logits.

    Returns
    -------
    dict of ndarray
        One gradient per parameter, shaped like it.

    Examples
    --------
    The gradient of the first logit's sum, against central differences:

    >>> from poskernels.model.optim import central_difference
    >>> cfg = HeadConfig(scheme="rope")
    >>> p = init_params(cfg, np.random.default_rng(0))
    >>> tokens = np.random.default_rng(1).integers(0, cfg.vocab, size=(2, 6))
    >>> logits, cache = forward(p, cfg, tokens)
    >>> g = backward(p, cfg, cache, np.eye(cfg.n_classes)[[0, 0]])
    >>> num = central_difference(lambda: float(forward(p, cfg, tokens)[0][:, 0].sum()), p["W_Q"])
    >>> sorted(g) == sorted(p), bool(np.allclose(g["W_Q"], num, atol=1e-6))
    (True, True)
    """
    scheme = SCHEMES[cfg.scheme]
    a, v, fq, fk, q, h = cache["a"], cache["v"], cache["fq"], cache["fk"], cache["q"], cache["h"]
    theta, pos, c = cache["theta"], cache["pos"], cache["lam"] / cfg.tau
    grads = {"W_O": cache["o"].T @ dlogits}  # (d, C)
    do = dlogits @ params["W_O"].T  # (B, d)
    da = np.einsum("bd,bnd->bn", do, v)  # (B, n)
    dv = a[:, :, None] * do[:, None, :]  # (B, n, d)
    ds = a * (da - (a * da).sum(axis=-1, keepdims=True))  # (B, n) the softmax's backward
    dfq = np.einsum("bn,bnd->bd", ds, fk) * c  # (B, d)
    dfk = ds[:, :, None] * fq[:, None, :] * c  # (B, n, d)
    dq = dfq if theta is None else phi_backward(dfq[:, None], pos[-1:], theta, query=True)[:, 0]  # (B, d)
    dk = dfk if theta is None else phi_backward(dfk, pos, theta)  # (B, n, d)
    scheme_grads = {}
    if scheme.scale_grows:  # lambda = s log n: dL/dlambda = sum_j ds_j <phi_t(q), phi_j(k_j)> / tau
        dlam = np.array([np.sum(ds * cache["dots"]) / cfg.tau])  # (1,): a stack of one
        n = pos.size
        scheme_grads.update(_unstack(scheme.logit_scale_backward(dlam, _stack(params), cfg, cache["reading"], n)))
    if cache["b"] is not None:
        dq_b, bias_grads = scheme.bias_backward_at(ds[None], _stack(params), cfg, q[None], cache["r"], pos[-1])
        scheme_grads.update(_unstack(bias_grads))
        dq = dq if dq_b is None else dq + dq_b[0]
    grads["W_Q"] = h[:, -1].T @ dq  # (d, d)
    grads["W_K"] = np.einsum("bnd,bne->de", h, dk)  # (d, d)
    grads["W_V"] = np.einsum("bnd,bne->de", h, dv)  # (d, d)
    dh = dk @ params["W_K"].T + dv @ params["W_V"].T  # (B, n, d)
    dh[:, -1] += dq @ params["W_Q"].T
    grads.update(_embed_backward(dh, params, cfg, cache["tokens"], pos))
    grads.update(scheme_grads)
    return {k: grads[k] for k in params}


def _logit_scale(params: dict, cfg: HeadConfig, reading: Reading, n: int) -> float:
    """The logit scale ``lambda`` of one head's query over ``n`` keys (the scheme's
    :meth:`~poskernels.encodings.Scheme.logit_scale_at`)."""
    scheme = SCHEMES[cfg.scheme]
    if not scheme.scale_grows:
        return scheme.logit_scale(cfg, reading)
    return float(np.asarray(scheme.logit_scale_at(_stack(params), cfg, reading, n))[0])


def _stack(params: dict) -> dict:
    return {k: v[None] for k, v in params.items()}


def _unstack(grads: dict) -> dict:
    return {k: g[0] for k, g in grads.items()}
