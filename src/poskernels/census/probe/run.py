"""One probe: resolve and load the model, refuse a length the machine cannot hold (before any work), run its own
forward pass once on the corpus with the capture on, and gather the numbers with their provenance."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np

from ...errors import PosKernelsError
from .corpus import CORPORA, corpus_text, text_sha256
from .measure import PREVIOUS, SINK, LayerReducer, absolute_table, offset_grid
from .models import load, resolve

__all__ = ["available_memory", "layer_frequencies", "needed_memory", "probe", "rope_census"]


def available_memory() -> int:
    """Bytes the machine can still give (``MemAvailable``), else its physical memory.

    Returns
    -------
    int
        Bytes.

    Examples
    --------
    >>> available_memory() > 2**20
    True
    """
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def needed_memory(config, T: int, sample: int) -> int:
    """Bytes one layer's eager attention and the probe's reductions hold at length ``T``, plus the weights.

    Parameters
    ----------
    config : transformers config or namespace
        Read for ``num_attention_heads``, ``hidden_size``, ``num_hidden_layers`` (and ``head_dim``,
        ``vocab_size`` where it has them).
    T : int
        Tokens of the forward pass.
    sample : int
        Query positions scored against all their keys.

    Returns
    -------
    int
        Bytes; :func:`probe` refuses a length whose need exceeds :func:`available_memory`.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> smollm2 = SimpleNamespace(num_attention_heads=9, hidden_size=576, num_hidden_layers=30, vocab_size=49152)
    >>> round(needed_memory(smollm2, 2048, 128) / 2**30, 2)  # GiB
    1.62
    """
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    H = text.num_attention_heads
    d = getattr(text, "head_dim", None) or text.hidden_size // H
    S = min(sample, T)
    attention = 4 * T * T * (3 * H + 1)  # scores, weights and their softmax copy per head, the mask
    reductions = 8 * (d // 2) * S * T * 3 + 8 * H * S * T * 4
    params = 4 * 12 * text.num_hidden_layers * text.hidden_size**2 + 4 * getattr(text, "vocab_size", 0) * (
        text.hidden_size + T)
    return attention + reductions + params


def rope_census(config) -> dict:
    """The census of the model's config per layer type (what it predicts from the config alone).

    Parameters
    ----------
    config : transformers config
        The model's config (its ``to_dict()`` is read as ``config.json``).

    Returns
    -------
    dict of str to dict
        By layer type (``"None"`` for one RoPE): ``theta``, ``base``, ``training_length``, ``critical_dimension``,
        ``first_zero`` (the kernel's first negative offset) and ``never_full_turn`` (planes that never complete a
        turn within the training length).

    Examples
    --------
    >>> from transformers import LlamaConfig
    >>> config = LlamaConfig(hidden_size=16, num_attention_heads=2, num_hidden_layers=2, intermediate_size=32,
    ...                      vocab_size=32, max_position_embeddings=64)
    >>> c = rope_census(config)["None"]
    >>> c["theta"], c["critical_dimension"], c["first_zero"], c["never_full_turn"]
    ([1.0, 0.1, 0.01, 0.001], 4, 91, [2, 3])
    """
    from ..compute import census
    from ..config.load import load_layer_configs

    out = {}
    for layer_type, cfg in load_layer_configs(config.to_dict()).items():
        data = census(cfg, scan_base=False)
        ctx = data["context"]
        out[str(layer_type)] = {
            "theta": [float(x) for x in cfg.theta], "base": cfg.base, "training_length": cfg.training_length,
            "critical_dimension": ctx.get("critical_dimension"),
            "first_zero": (ctx.get("first_negative_offset") or {}).get("native"),
            "never_full_turn": [p["plane"] for p in data["planes"] if not p["full_turn"]],
        }  # fmt: skip
    return out


def _versions() -> dict:
    import torch
    import transformers

    from ... import __version__

    return {"python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
            "transformers": transformers.__version__, "poskernels": __version__}  # fmt: skip


def layer_frequencies(config, census: dict | None = None) -> dict[int, tuple[np.ndarray, int]]:
    """Each RoPE layer's frequencies and training length by the census of the model's config, as the probe reads each
    head's polynomial and its rebound with them (:class:`~poskernels.census.probe.measure.LayerReducer`'s ``rope``).

    Parameters
    ----------
    config : transformers.PretrainedConfig
        The loaded model's config (a multimodal config's text part is read).
    census : dict, optional
        Its :func:`rope_census`, when the caller has it already (default: computed here).

    Returns
    -------
    dict of int to (ndarray, int)
        Layer index to ``(theta, L)``: the layer type's frequencies and training length; a layer without RoPE is
        absent.

    Examples
    --------
    >>> from transformers import LlamaConfig
    >>> cfg = LlamaConfig(hidden_size=64, num_attention_heads=4, num_hidden_layers=2, max_position_embeddings=128)
    >>> rope = layer_frequencies(cfg)
    >>> sorted(rope), rope[0][0].shape, rope[0][1]
    ([0, 1], (8,), 128)
    """
    census = rope_census(config) if census is None else census
    return {i: (np.asarray(census[str(t)]["theta"]), census[str(t)]["training_length"])
            for i, t in enumerate(_layer_types(config)) if str(t) in census}  # fmt: skip


def _layer_types(config) -> list:
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    return list(getattr(text, "layer_types", None) or [None] * text.num_hidden_layers)


def _loss_chunked(net, ids, text_cfg, chunk: int = 256) -> tuple[float, object]:
    """The model's own forward pass (its decoder, then its ``lm_head`` a chunk of positions at a time, so a large
    vocabulary's logits are never held whole; Gemma's final soft-capping as its forward applies it), and the mean
    next-token loss in nats."""
    import torch

    hidden = net.model(input_ids=ids).last_hidden_state
    cap = getattr(text_cfg, "final_logit_softcapping", None)
    total = 0.0
    for a in range(0, ids.shape[1] - 1, chunk):
        logits = net.lm_head(hidden[:, a:a + chunk]).float()
        if cap is not None:
            logits = torch.tanh(logits / cap) * cap
        target = ids[:, a + 1:a + 1 + chunk]
        logits = logits[:, :target.shape[1]]
        total += float(torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1),
                                                         reduction="sum"))  # fmt: skip
    return total / (ids.shape[1] - 1), hidden


def probe(model: str, length: int | None = None, sample: int = 128, seed: int = 0, cache: Path | None = None,
          log=lambda msg: None, corpus: str = "stdlib") -> dict:  # fmt: skip
    """Every statistic of ``poskernels probe MODEL`` as a JSON-ready dict (see :mod:`poskernels.census.probe`).

    Loads the model (:func:`~poskernels.census.probe.models.load`) and runs its own forward pass once on the corpus: a
    registered model takes minutes on two cores at 2,048 tokens (``make probe`` ships the results).

    Parameters
    ----------
    model : str
        What :func:`~poskernels.census.probe.models.resolve` accepts.
    length : int, optional
        Tokens of text; 2,048 (or the learned table's positions, if fewer) by default.
    sample : int
        Query positions scored against all their keys.
    seed : int
        Seed of the query sample.
    cache : Path, optional
        Cache folder; ``.cache/poskernels`` by default.
    log : callable
        ``log(message)`` for the progress lines.
    corpus : str
        A key of :data:`~poskernels.census.probe.corpus.CORPORA`.

    Returns
    -------
    dict
        ``model``, ``name``, ``class``, ``provenance``, ``config``, ``loss``, ``offsets``, ``summary``, ``layers`` and
        ``census`` (a rotary model) or ``absolute`` (a learned table); :mod:`poskernels.census.probe.report` prints it.

    Raises
    ------
    PosKernelsError
        Before any forward pass, if the corpus or model is refused, the length is out of range or the machine
        lacks the memory; after it, if no attention call reached the probe.

    Examples
    --------
    >>> probe("smollm2-135m", corpus="novels")
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --corpus 'novels': accepted stdlib, filings
    """
    import torch

    from .capture import capturing

    if corpus not in CORPORA:
        corpus_text(corpus)  # the one line that names the accepted corpora, before any work
    cache = Path(cache or Path(".cache") / "poskernels")
    res = resolve(model, cache)
    log(f"probe: {res.hashed} (SHA-256 {res.sha256[:16]}...), loading with transformers")
    net, tok = load(res)
    config = net.config
    text_cfg = config.get_text_config() if hasattr(config, "get_text_config") else config
    if not any("Attention" in type(m).__name__ for m in net.modules()):
        raise PosKernelsError(f"model {model!r} ({type(net).__name__}) has no attention layer: nothing to probe")
    table = getattr(getattr(net, "embeddings", None), "position_embeddings", None)
    limit = text_cfg.max_position_embeddings
    T = length or (min(2048, limit))
    if T < 2 or (table is not None and T > limit):
        raise PosKernelsError(f"--length {T}: accepted 2..{limit} for {model!r} (its learned table's positions)"
                              if table is not None else f"--length {T}: accepted 2 or more")  # fmt: skip
    need, have = needed_memory(config, T, sample), available_memory()
    if need > have:
        raise PosKernelsError(f"--length {T}: the probe of {model!r} would need {need / 2**30:.1f} GiB, the machine "
                              f"has {have / 2**30:.1f} GiB available; choose a shorter --length")  # fmt: skip
    text = corpus_text(corpus)
    ids = tok(text, return_tensors="pt").input_ids[:, :T]
    if ids.shape[1] < T:
        raise PosKernelsError(f"--length {T}: the corpus has only {ids.shape[1]} tokens for this tokenizer")
    rotary = table is None
    types = _layer_types(config)
    census = rope_census(config) if rotary else {}
    rope = layer_frequencies(config, census) if rotary else {}  # the census read once
    reducer = LayerReducer(T, sample, np.random.default_rng(seed), rotary=rotary, rope=rope)
    log(f"probe: one forward pass at {T} tokens")
    loss = None
    with torch.no_grad(), capturing(reducer):
        if hasattr(net, "lm_head") and hasattr(net, "model"):
            loss, _ = _loss_chunked(net, ids, text_cfg)
        else:
            out = net(input_ids=ids, labels=ids) if hasattr(net, "lm_head") else net(input_ids=ids)
            loss = float(out.loss) if getattr(out, "loss", None) is not None else None
    if not reducer.layers:
        raise PosKernelsError(f"model {model!r}: no attention call reached the probe ({type(net).__name__})")
    for layer in reducer.layers:
        layer["type"] = str(types[layer["layer"]]) if layer["layer"] < len(types) else "None"
    heads = [h for layer in reducer.layers for h in layer["heads"]]
    result = {
        "model": model, "name": res.name, "class": type(net).__name__,
        "provenance": {"file": res.hashed.name, "sha256": res.sha256, "source": res.source,
                       "text": CORPORA[corpus], "corpus": corpus,
                       "text_sha256": text_sha256(text), "tokens": T, "sample": len(reducer.query_pos), "seed": seed,
                       "versions": _versions(), "machine": f"{platform.machine()} {platform.system()}, "
                       f"{os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}, device cpu",
                       "command": " ".join(["poskernels probe", model, f"--length {T}", f"--sample {sample}"]
                                           + ([f"--corpus {corpus}"] if corpus != "stdlib" else []))},
        "config": {"layers": text_cfg.num_hidden_layers, "heads": text_cfg.num_attention_heads,
                   "kv_heads": getattr(text_cfg, "num_key_value_heads", text_cfg.num_attention_heads),
                   "max_position_embeddings": limit, "positions": "learned table" if table is not None else "RoPE",
                   "sliding_window": getattr(text_cfg, "sliding_window", None) if "sliding_attention" in map(str, types)
                   else None},
        "loss": loss,
        "offsets": offset_grid(T, dense=True), "plane_offsets": offset_grid(T),
        "summary": {"heads": len(heads), "sink_threshold": SINK, "previous_threshold": PREVIOUS,
                    "sink_share": float(np.mean([h["first_token"] > SINK for h in heads])),
                    "previous_token_share": float(np.mean([h["previous_token"] > PREVIOUS for h in heads])),
                    "max_plane_sum_error": float(max(h["plane_sum_error"] for h in heads)),
                    "mean_kernel_error": float(np.mean([h["kernel_error"] for h in heads]))},
        "layers": reducer.layers,
    }  # fmt: skip
    if rotary:
        result["census"] = census
    else:
        att = net.encoder.layer[0].attention.self
        P = table.weight.detach().numpy().astype(float)
        result["absolute"] = absolute_table(P, att.query.weight.detach().numpy().T.astype(float),
                                            att.key.weight.detach().numpy().T.astype(float),
                                            text_cfg.num_attention_heads, np.random.default_rng(seed))  # fmt: skip
    return result
