"""Queries and keys captured on transformers' own forward pass.

The probe registers one attention function with transformers (:data:`INTERFACE`): it calls the model's own
``eager_attention_forward`` (so the model computes what eager attention computes) and hands each layer's rotated
queries, keys, attention weights and mask to the function set by :func:`capturing`, which reduces them at once
(memory stays flat in the number of layers).  :func:`unrotated` hooks the projections (or the query and key norms,
where the model has them) for the queries and keys before the rotation.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["INTERFACE", "Capture", "capturing", "register", "unrotated"]

#: The name under which the probe's attention function is registered with transformers.
INTERFACE = "poskernels_probe"

_ON: list[Callable] = []


@dataclass
class Capture:
    """One attention layer's call: ``query`` (B, H, T, d) and ``key`` (B, KV, T, d) as the layer scores them
    (Hugging Face's half-split layout), ``weights`` (B, H, T, T), the additive ``mask`` or None, ``scaling``."""

    layer: int
    module: object
    query: object
    key: object
    weights: object
    mask: object
    scaling: float


def _attention(module, query, key, value, attention_mask, **kwargs):
    eager = sys.modules[type(module).__module__].eager_attention_forward
    out, weights = eager(module, query, key, value, attention_mask, **kwargs)
    if _ON:
        scaling = kwargs.get("scaling")
        if scaling is None:
            scaling = query.shape[-1] ** -0.5
        layer = getattr(module, "layer_idx", None)
        _ON[-1](Capture(layer, module, query.detach(), key.detach(), weights.detach(),
                        None if attention_mask is None else attention_mask.detach(), float(scaling)))  # fmt: skip
    return out, weights


def register() -> None:
    """Register the probe's attention function with transformers (idempotent).

    Returns
    -------
    None

    Examples
    --------
    >>> from transformers import AttentionInterface
    >>> register()
    >>> INTERFACE in AttentionInterface._global_mapping
    True
    """
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS

    AttentionInterface.register(INTERFACE, _attention)
    ALL_MASK_ATTENTION_FUNCTIONS.register(INTERFACE, ALL_MASK_ATTENTION_FUNCTIONS["eager"])


@contextmanager
def capturing(on_layer: Callable[[Capture], None]) -> Iterator[None]:
    """Within the block, every attention call of a model loaded with :data:`INTERFACE` goes to ``on_layer``.

    Parameters
    ----------
    on_layer : callable
        ``on_layer(capture)``, called with each layer's :class:`Capture` as the forward pass reaches it.

    Yields
    ------
    None

    Examples
    --------
    >>> import torch
    >>> from transformers import LlamaConfig, LlamaForCausalLM
    >>> config = LlamaConfig(hidden_size=16, num_attention_heads=2, num_hidden_layers=2, intermediate_size=32,
    ...                      vocab_size=32)
    >>> net = LlamaForCausalLM(config).eval()  # a tiny model of random weights
    >>> register()
    >>> net.set_attn_implementation(INTERFACE)
    >>> got = []
    >>> with torch.no_grad(), capturing(got.append):
    ...     _ = net(input_ids=torch.arange(10)[None])
    >>> [(c.layer, tuple(c.query.shape), tuple(c.weights.shape)) for c in got]  # (B, H, T, d), (B, H, T, T)
    [(0, (1, 2, 10, 8), (1, 2, 10, 10)), (1, (1, 2, 10, 8), (1, 2, 10, 10))]
    """
    _ON.append(on_layer)
    try:
        yield
    finally:
        _ON.pop()


@contextmanager
def unrotated(model) -> Iterator[dict]:
    """Collect each attention layer's queries and keys before the rotation: ``{layer: (q, k)}`` as (B, H, T, d).

    Parameters
    ----------
    model : torch.nn.Module
        A transformers model whose attention layers have ``q_proj`` and ``k_proj``.

    Yields
    ------
    dict
        ``{layer index: {"q": tensor, "k": tensor}}``, filled by the forward passes run inside the block.

    Examples
    --------
    >>> import torch
    >>> from transformers import LlamaConfig, LlamaForCausalLM
    >>> config = LlamaConfig(hidden_size=16, num_attention_heads=2, num_hidden_layers=2, intermediate_size=32,
    ...                      vocab_size=32)
    >>> net = LlamaForCausalLM(config).eval()  # a tiny model of random weights
    >>> with torch.no_grad(), unrotated(net) as qk:
    ...     _ = net(input_ids=torch.arange(10)[None])
    >>> {i: (tuple(v["q"].shape), tuple(v["k"].shape)) for i, v in qk.items()}
    {0: ((1, 2, 10, 8), (1, 2, 10, 8)), 1: ((1, 2, 10, 8), (1, 2, 10, 8))}
    """
    got: dict = {}
    hooks = []
    layers = [m for m in model.modules() if hasattr(m, "q_proj") and hasattr(m, "k_proj")]
    for i, att in enumerate(layers):
        for which in ("q", "k"):
            src = getattr(att, f"{which}_norm", None) or getattr(att, f"{which}_proj")

            heads = att.config.num_attention_heads if which == "q" else att.config.num_key_value_heads

            def hook(mod, inp, out, i=i, which=which, att=att, heads=heads):
                x = out.detach()
                if x.dim() == 3:  # a projection's output (B, T, H d)
                    x = x.view(*x.shape[:2], -1, att.head_dim)
                if x.shape[1] != heads or x.shape[2] == heads:  # (B, T, H, d); a norm after the transpose is not
                    x = x.transpose(1, 2)
                got.setdefault(i, {})[which] = x

            hooks.append(src.register_forward_hook(hook))
    try:
        yield got
    finally:
        for h in hooks:
            h.remove()
