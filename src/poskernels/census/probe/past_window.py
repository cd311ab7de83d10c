"""``poskernels probe MODEL --past-window``: the loss by position on a text longer than the model's training window,
read plain and through PI, NTK-aware, YaRN and dynamic NTK at the factor that covers it, with no fine-tuning (the
article's re-reading table, on a released language model), the census's verdict beside each reading.

Each map is applied as transformers reads it: the ``rope_parameters`` block that ``poskernels advise`` writes
(:func:`poskernels.census.advice.advise`; NTK-aware, which transformers has no ``rope_type`` for, is the default RoPE at
the base the census's ``ntk`` map implies) is set into the config with :func:`~poskernels.census.advice.advised_config`,
the config is rebuilt by its own class (as ``from_pretrained`` reads ``config.json``), and the model's rotary
embedding is rebuilt from it.  The forward pass uses SDPA (no T x T weights) and the hidden states are projected
through the LM head in chunks (never the full-vocabulary logits of every position at once).

Each reading (model hash, text hash, length, map, block, versions) is one JSON file in ``CACHE/probe/``: a killed
run resumes at the next map, a corrupt file is read again, never trusted.
"""


from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...atomic import write_text_atomic
from ...errors import PosKernelsError
from .past_window_net import CHUNK, _text_config, apply_block, bins, position_losses

__all__ = ["READINGS", "TITLES", "needed_memory", "past_window", "plan"]


#: The readings, in the order of the article's re-reading table.
READINGS = ("plain", "linear", "ntk", "yarn", "dynamic")


#: Their column titles.
TITLES = {"plain": "nothing", "linear": "PI", "ntk": "NTK-aware", "yarn": "YaRN", "dynamic": "dynamic NTK"}


def needed_memory(config, T: int) -> int:
    """Bytes one SDPA forward at length ``T`` holds: the weights, one layer's activations (SDPA's causal kernel
    keeps no T x T weights; its key and value blocks are counted, the grouped heads repeated) and one chunk of
    logits (:data:`CHUNK` positions, their log-softmax and the gradient-free copies).

    Parameters
    ----------
    config : transformers config or namespace
        Read for ``hidden_size``, ``num_attention_heads``, ``num_hidden_layers`` (and ``head_dim``,
        ``intermediate_size``, ``vocab_size`` where it has them).
    T : int
        Tokens of the forward pass.

    Returns
    -------
    int
        Bytes; :func:`past_window` refuses a length whose need exceeds the memory available.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> smollm2 = SimpleNamespace(hidden_size=576, num_attention_heads=9, num_hidden_layers=30,
    ...                           intermediate_size=1536, vocab_size=49152)
    >>> round(needed_memory(smollm2, 16384) / 2**30, 2)  # GiB
    1.94
    """
    text = _text_config(config)
    D, H, n = text.hidden_size, text.num_attention_heads, text.num_hidden_layers
    d = getattr(text, "head_dim", None) or D // H
    inter = getattr(text, "intermediate_size", 4 * D)
    V = getattr(text, "vocab_size", 0)
    params = 4 * (n * (4 * D * H * d + 3 * D * inter) + 2 * V * D)
    layer = 4 * T * (6 * D + 4 * H * d + 3 * inter)  # residual, norms, q/k/v (repeated), output, MLP's three
    rotary = 4 * T * d * 4  # cos, sin and their broadcast copies
    logits = 4 * min(CHUNK, T) * V * 3
    return params + layer + rotary + logits + 4 * T * D * 2  # the last hidden states, kept for the LM head


def plan(raw: dict, T: int, factor: float) -> dict:
    """The readings' blocks and the census's verdicts, from the model's config ``raw`` (as ``to_dict`` gives it).

    Parameters
    ----------
    raw : dict
        The model's config, with one RoPE for every layer.
    T : int
        Tokens of text.
    factor : float
        The maps' factor; the target length of the blocks and of the census is ``round(factor * window)``.

    Returns
    -------
    dict
        ``{"window", "target_length", "factor", "base", "readings": {name: {"rope_parameters",
        "max_position_embeddings", "census_map", "verdicts"}}}``; ``plain`` has no block, and a map ``advise``
        does not give is ``{"rope_parameters": None, "not_read": why}``.

    Raises
    ------
    PosKernelsError
        If the config sets one RoPE per layer type, or is refused by the census.

    Examples
    --------
    >>> raw = {"model_type": "llama", "hidden_size": 16, "num_attention_heads": 2, "max_position_embeddings": 64}
    >>> p = plan(raw, 128, 2.0)
    >>> p["window"], p["target_length"], list(p["readings"])
    (64, 128, ['plain', 'linear', 'ntk', 'yarn', 'dynamic'])
    >>> p["readings"]["yarn"]["rope_parameters"]
    {'rope_type': 'yarn', 'rope_theta': 10000.0, 'factor': 2.0, 'original_max_position_embeddings': 64}
    """
    from ..advice import advise
    from ..compute import census
    from ..config.load import load_layer_configs

    cfgs = load_layer_configs(raw)
    if list(cfgs) != [None]:
        raise PosKernelsError(f"--past-window reads a model with one RoPE for every layer; this config has one per "
                              f"layer type ({', '.join(map(str, cfgs))})")  # fmt: skip
    cfg = cfgs[None]
    L = cfg.training_length
    N = max(L + 1, round(factor * L))
    advice = advise(raw, N)
    nat = census(cfg, N, scan_base=False)
    ctx = nat["context"]

    def native(name: str) -> dict:
        return {
            "unseen_planes": ctx["unseen_planes"][name],
            "first_negative_offset": ctx["first_negative_offset"][name],
            "inv_freq": nat["maps"][name]["inv_freq"] if name != "native" else [float(x) for x in cfg.theta],
        }

    from ..rank import changed_planes

    trained = np.asarray(cfg.theta, dtype=float)
    turned = (L - 1) * trained >= 2 * math.pi
    ntk = native("ntk")
    d = cfg.rotary_dim
    readings = {
        "plain": {
            "rope_parameters": None,
            "max_position_embeddings": cfg.max_position_embeddings,
            "census_map": "native",
            "verdicts": native("native") | {"planes_changed": []},
        }
    }
    for name in READINGS[1:]:
        if name == "ntk":  # the default RoPE at the base b kappa^(d/(d-2)): the census's ntk frequencies
            block = {"rope_type": "default", "rope_theta": cfg.base * (N / L) ** (d / (d - 2))}
            row = {
                "rope_parameters": block,
                "max_position_embeddings": cfg.max_position_embeddings,
                "census_map": "ntk",
                "verdicts": ntk | {"planes_changed": changed_planes(trained, np.asarray(ntk["inv_freq"]), turned)},
            }
        elif name in advice["maps"]:
            a = advice["maps"][name]
            row = {"rope_parameters": a["rope_parameters"], "max_position_embeddings": a["max_position_embeddings"],
                   "census_map": f"advise {name}", "verdicts": {k: a["verdicts"][k] for k in
                   ("unseen_planes", "first_negative_offset", "inv_freq", "planes_changed")}}  # fmt: skip
        else:
            why = advice["not_advised"].get(name) or advice["refused_by_transformers"].get(name, "not advised")
            row = {"rope_parameters": None, "not_read": why}
        readings[name] = row
    return {"window": L, "target_length": N, "factor": N / L, "base": cfg.base, "readings": readings}


def _key_path(folder: Path, key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    return folder / f"past-window-{key['map']}-{digest}.json"


def _cached(path: Path, key: dict, T: int, log) -> np.ndarray | None:
    """The cached losses at ``path`` if the file is whole and is this reading's; else None (a corrupt entry is
    read again)."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        loss = np.asarray(data["loss"], dtype=float)
        ok = data["key"] == key and loss.shape == (T - 1,) and bool(np.all(np.isfinite(loss)))
    except (ValueError, KeyError, TypeError, OSError):
        ok = False
    if not ok:
        log(f"past-window: {path.name} is corrupt or not this reading's: reading it again")
        return None
    return loss


def past_window(model: str, length: int | None = None, factor: float | None = None, width: int = 512,
                cache: Path | None = None, log=lambda msg: None, quiet: bool = True,
                forward: Callable | None = None, cached_only: bool = False) -> dict:  # fmt: skip
    """Every reading of ``poskernels probe MODEL --past-window`` as a JSON-ready dict (see the module).

    ``length``: tokens of text (default twice the window); ``factor``: the maps' (default ``length / window``);
    ``width``: the bins of the table; ``cached_only``: no forward pass, a reading not in the cache is marked not
    read (``make probe`` ships what a run finished).  Bad input is refused before any forward pass.

    Parameters
    ----------
    model : str
        What :func:`~poskernels.census.probe.models.resolve` accepts; a rotary model with one RoPE for every layer.
    length : int, optional
        Tokens of text, above the training window; twice the window by default.
    factor : float, optional
        The maps' factor, above 1; ``length / window`` by default.
    width : int
        Positions per row of the table.
    cache : Path, optional
        Cache folder (each reading one JSON file in ``CACHE/probe/``); ``.cache/poskernels`` by default.
    log : callable
        ``log(message)`` for the progress lines.
    quiet : bool
        No progress bar.
    forward : callable, optional
        ``forward(net, ids, on_layer) -> losses``; :func:`position_losses` by default.
    cached_only : bool
        Run no forward pass: a reading not in the cache is marked not read.

    Returns
    -------
    dict
        ``model``, ``name``, ``class``, ``window``, ``length``, ``factor``, ``base``, ``bin``, ``provenance`` and
        ``readings`` (per map: its block, verdicts, bins, curve and means inside and past the window);
        :func:`poskernels.census.probe.past_window_report.render` prints it.

    Raises
    ------
    PosKernelsError
        If the factor, model, length or memory is refused (before any forward pass).

    Examples
    --------
    >>> past_window("smollm2-135m", factor=0.5)
    Traceback (most recent call last):
    ...
    poskernels.errors.PosKernelsError: --factor 0.5: accepted a finite number above 1 (the maps' extension factor)
    """
    import torch
    from transformers import AutoConfig

    from ..compute import has_rope
    from .corpus import stdlib_text, text_sha256
    from .models import load, resolve
    from .run import _versions, available_memory

    if factor is not None and not (isinstance(factor, (int, float)) and math.isfinite(factor) and factor > 1):
        raise PosKernelsError(f"--factor {factor!r}: accepted a finite number above 1 (the maps' extension factor)")
    cache = Path(cache or Path(".cache") / "poskernels")
    res = resolve(model, cache)
    kw = {"gguf_file": res.gguf} if res.gguf else {}
    try:
        raw = AutoConfig.from_pretrained(res.folder, **kw).to_dict()
    except (ValueError, KeyError, OSError) as err:
        raise PosKernelsError(f"cannot read the config of {res.hashed}: {' '.join(str(err).split())[:300]}") from None
    if not has_rope(raw):
        kind = "a learned position table" if raw.get("position_embedding_type", "absolute") == "absolute" else "none"
        raise PosKernelsError(f"model {model!r} ({raw.get('model_type')}) has no RoPE (its positions: {kind}): "
                              "--past-window re-reads rotary models only")  # fmt: skip
    from ..config.load import load_layer_configs

    L = next(iter(load_layer_configs(raw).values())).training_length
    T = length or 2 * L
    if T <= L:
        raise PosKernelsError(f"--length {T}: --past-window reads past the training window of {model!r}, "
                              f"{L} tokens; accepted {L + 1} or more (default {2 * L})")  # fmt: skip
    factor = factor or T / L
    need, have = needed_memory(_cfg(raw), T), available_memory()
    if need > have:
        raise PosKernelsError(f"--length {T}: the past-window forward of {model!r} would need "
                              f"{need / 2**30:.1f} GiB, the machine has {have / 2**30:.1f} GiB available; choose a "
                              "shorter --length")  # fmt: skip
    p = plan(raw, T, factor)
    text = stdlib_text()
    log(f"probe --past-window: {res.hashed} (SHA-256 {res.sha256[:16]}...), loading with transformers")
    net, tok = load(res)
    net.set_attn_implementation("sdpa")
    ids = tok(text, return_tensors="pt").input_ids[:, :T]
    if ids.shape[1] < T:
        raise PosKernelsError(f"--length {T}: the corpus has only {ids.shape[1]} tokens for this tokenizer")
    device = "cuda" if torch.cuda.is_available() else "cpu"  # a GPU makes each reading seconds
    net, ids = net.to(device), ids.to(device)
    versions = _versions()
    folder = cache / "probe"
    forward = forward or position_losses
    todo = [n for n in READINGS if p["readings"][n].get("rope_parameters") or n == "plain"]
    n_layers = _text_config(net.config).num_hidden_layers
    from tqdm import tqdm

    readings = {}
    with tqdm(total=len(todo) * n_layers, desc="past-window", unit="layer", disable=True if quiet else None,
              leave=False, file=sys.stderr) as bar:  # fmt: skip
        for name in READINGS:
            row = dict(p["readings"][name])
            if name not in todo:
                readings[name] = row
                continue
            key = {"model_sha256": res.sha256, "text_sha256": text_sha256(text), "length": T, "map": name,
                   "factor": p["factor"], "rope_parameters": row["rope_parameters"],
                   "max_position_embeddings": row["max_position_embeddings"], "versions": versions}  # fmt: skip
            path = _key_path(folder, key)
            loss = _cached(path, key, T, log)
            if loss is None and cached_only:
                readings[name] = {**row, "not_read": "not in the cache: the run did not reach it"}
                bar.update(n_layers)
                continue
            if loss is None:
                apply_block(net, raw, row["rope_parameters"], row["max_position_embeddings"])
                t0 = time.perf_counter()
                loss = forward(net, ids, on_layer=bar.update)
                seconds = time.perf_counter() - t0
                write_text_atomic(path, json.dumps({"key": key, "loss": loss.tolist(), "seconds": seconds}) + "\n")
                log(f"past-window: {name} read in {seconds:.1f} s")
            else:
                seconds = json.loads(path.read_text()).get("seconds")
                bar.update(n_layers)
                log(f"past-window: {name} from the cache ({path.name})")
            row |= {"seconds": seconds, "bins": bins(loss, width), "curve": bins(loss, max(1, width // 4)),
                    "mean_inside": float(loss[:L].mean()), "mean_past": float(loss[L:].mean()),
                    "mean": float(loss.mean())}  # fmt: skip
            readings[name] = row
    import os
    import platform

    return {"model": model, "name": res.name, "class": type(net).__name__, "kind": "past-window",
            "window": L, "length": T, "factor": p["factor"], "base": p["base"], "bin": width,
            "curve_bin": max(1, width // 4),
            "provenance": {"file": res.hashed.name, "sha256": res.sha256, "source": res.source,
                           "text": "docstrings of the Python standard library (poskernels.census.probe.corpus.MODULES)",
                           "text_sha256": text_sha256(text), "tokens": T, "versions": versions,
                           "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs, torch "
                           f"threads {torch.get_num_threads()}, device {device}, attention sdpa",
                           "command": f"poskernels probe {model} --past-window --length {T} --factor {p['factor']:g}"},
            "readings": readings}  # fmt: skip


def _cfg(raw: dict):
    """An attribute view of a config dict (what :func:`needed_memory` reads)."""
    from types import SimpleNamespace

    return SimpleNamespace(**raw)
