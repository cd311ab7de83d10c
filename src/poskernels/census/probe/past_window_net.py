"""The network a past-window reading runs: its rotary module found, an advised block set into it, and the loss at
each position of a text, binned (:mod:`~poskernels.census.probe.past_window` runs them).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np

from ...errors import PosKernelsError

__all__ = ["CHUNK", "apply_block", "bins", "position_losses", "rotary_module"]


def _text_config(config):
    return config.get_text_config() if hasattr(config, "get_text_config") else config


#: Positions projected through the LM head at a time.
CHUNK = 1024


def rotary_module(net):
    """The model's one rotary embedding module (its ``rotary_emb``), and its parent.

    Parameters
    ----------
    net : torch.nn.Module
        A transformers model.

    Returns
    -------
    parent : torch.nn.Module
        The module holding ``rotary_emb``.
    rotary : torch.nn.Module
        The rotary embedding (it has ``inv_freq``).

    Raises
    ------
    PosKernelsError
        If ``net`` has no rotary embedding.

    Examples
    --------
    >>> import torch
    >>> rotary_module(torch.nn.Linear(2, 2))
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: Linear has no rotary_emb module: --past-window reads rotary models only
    """
    for parent in net.modules():
        child = getattr(parent, "rotary_emb", None)
        if child is not None and hasattr(child, "inv_freq"):
            return parent, child
    raise PosKernelsError(f"{type(net).__name__} has no rotary_emb module: --past-window reads rotary models only")


def apply_block(net, raw: dict, block: dict | None, max_pos: int) -> None:
    """Give ``net`` the RoPE of ``block``: the config rebuilt by its class from ``advised_config(raw, block,
    max_pos)`` (what ``config.json`` would say) and the rotary embedding rebuilt from it; None: the config ``raw``.

    Parameters
    ----------
    net : torch.nn.Module
        A rotary transformers model; its rotary embedding is replaced in place.
    raw : dict
        Its config as ``to_dict`` gives it.
    block : dict or None
        A ``rope_parameters`` block (:func:`plan`'s), or None for the config's own RoPE.
    max_pos : int
        The ``max_position_embeddings`` the block is read with.

    Returns
    -------
    None

    Examples
    --------
    >>> from transformers import LlamaConfig, LlamaForCausalLM
    >>> config = LlamaConfig(hidden_size=16, num_attention_heads=2, num_hidden_layers=1, intermediate_size=32,
    ...                      vocab_size=32)
    >>> net = LlamaForCausalLM(config)
    >>> apply_block(net, config.to_dict(), {"rope_type": "linear", "factor": 2.0}, 4096)
    >>> [round(f, 6) for f in rotary_module(net)[1].inv_freq.tolist()]  # every frequency halved
    [0.5, 0.05, 0.005, 0.0005]
    """
    from ..advice import advised_config

    new = raw if block is None else advised_config(raw, block, max_pos)
    config = type(net.config).from_dict(json.loads(json.dumps(new)))
    config._attn_implementation = net.config._attn_implementation
    parent, old = rotary_module(net)
    parent.rotary_emb = type(old)(config=config).to(old.inv_freq.device)


def position_losses(net, ids, on_layer: Callable[[], None] = lambda: None) -> np.ndarray:
    """Cross-entropy (nats) of each next token, ``ids[0, t + 1]`` given ``ids[0, :t + 1]``, shape (T - 1,): one
    forward pass of the model's base, its last hidden states through the LM head :data:`CHUNK` positions at a
    time.  ``on_layer`` is called after each decoder layer (a progress bar).

    Parameters
    ----------
    net : torch.nn.Module
        A causal transformers model (a decoder and an ``lm_head``).
    ids : torch.Tensor, shape (1, T)
        Token ids.
    on_layer : callable
        Called with no argument after each decoder layer.

    Returns
    -------
    ndarray of float64, shape (T - 1,)
        The loss of each next token, in nats.

    Examples
    --------
    >>> import torch
    >>> from transformers import LlamaConfig, LlamaForCausalLM
    >>> config = LlamaConfig(hidden_size=16, num_attention_heads=2, num_hidden_layers=2, intermediate_size=32,
    ...                      vocab_size=32)
    >>> layers = []
    >>> loss = position_losses(LlamaForCausalLM(config).eval(), torch.arange(10)[None], lambda: layers.append(1))
    >>> loss.shape, len(layers)
    ((9,), 2)
    """
    import torch
    import torch.nn.functional as F

    base = net.get_decoder() if hasattr(net, "get_decoder") else net.model
    layers = [m for m in base.modules() if type(m).__name__.endswith("DecoderLayer")]
    hooks = [m.register_forward_hook(lambda *_: on_layer()) for m in layers]
    cap = getattr(_text_config(net.config), "final_logit_softcapping", None)
    try:
        with torch.no_grad():
            h = base(input_ids=ids).last_hidden_state[0]
            out = []
            for s in range(0, ids.shape[1] - 1, CHUNK):
                e = min(s + CHUNK, ids.shape[1] - 1)
                logits = net.lm_head(h[s:e]).float()
                if cap:
                    logits = torch.tanh(logits / cap) * cap
                out.append(F.cross_entropy(logits, ids[0, s + 1 : e + 1], reduction="none"))
    finally:
        for hk in hooks:
            hk.remove()
    return torch.cat(out).double().cpu().numpy()


def bins(loss: np.ndarray, width: int) -> list[float]:
    """The mean of ``loss`` over consecutive bins of ``width`` positions (the last may be shorter).

    Parameters
    ----------
    loss : ndarray, shape (n,)
        Per-position values.
    width : int
        Positions per bin.

    Returns
    -------
    list of float
        The bins' means, ``ceil(n / width)`` of them.

    Examples
    --------
    >>> bins(np.array([1.0, 3.0, 5.0]), 2)
    [2.0, 5.0]
    """
    return [float(loss[s : s + width].mean()) for s in range(0, len(loss), width)]
