"""Tiny synthetic models the probe tests write themselves (safetensors folders and GGUF files), with planted heads."""

from __future__ import annotations

import numpy as np

WORDS = ("the a of to and in is it that for be as on with by this are or an not from at which if can return "
         "object value list string file name used set new default will method type data when".split())  # fmt: skip


def save_tokenizer(folder) -> None:
    """A word-level tokenizer (the words above, the rest unknown) saved as tokenizer.json in ``folder``."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(WORDS)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(folder)


def planted_llama(folder, seed: int = 0):
    """A 2-layer Llama whose token embeddings are all one row: at layer 0 every position has one hidden state, so
    its queries and keys before the turn are fixed vectors q~, k~ (a pure RoPE head with known ``h_p``)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=128,
                      rope_parameters={"rope_type": "default", "rope_theta": 10_000.0},
                      architectures=["LlamaForCausalLM"])  # fmt: skip
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():
        row = torch.as_tensor(np.random.default_rng(seed).standard_normal(32), dtype=torch.float32)
        model.model.embed_tokens.weight[:] = row
    model.save_pretrained(folder)
    save_tokenizer(folder)
    return model


def planted_bert(folder):
    """A 1-layer BERT whose position table is the sinusoidal code and whose W_Q W_K^T per head is diagonal, one
    value per plane (it commutes with the planes: P W_Q W_K^T P^T is a function of the offset)."""
    import torch
    from transformers import BertConfig, BertModel

    from poskernels.encodings import sinusoidal_code

    cfg = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                     max_position_embeddings=64, architectures=["BertModel"])  # fmt: skip
    model = BertModel(cfg)
    c = np.repeat(np.random.default_rng(3).uniform(0.5, 2.0, 16), 2)
    with torch.no_grad():
        model.embeddings.position_embeddings.weight[:] = torch.as_tensor(sinusoidal_code(np.arange(64), 32))
        model.encoder.layer[0].attention.self.query.weight[:] = torch.diag(torch.as_tensor(c, dtype=torch.float32))
        model.encoder.layer[0].attention.self.key.weight[:] = torch.eye(32)
    model.save_pretrained(folder)
    save_tokenizer(folder)
    return model


def tiny_gemma3(**extra):
    """A 2-layer Gemma 3 text model, one sliding-window layer (base 1e4) and one global (base 1e6)."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    cfg = Gemma3TextConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=128,
                           layer_types=["sliding_attention", "full_attention"], sliding_window=8,
                           rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
                                            "full_attention": {"rope_type": "default", "rope_theta": 1e6}},
                           **extra)  # fmt: skip
    torch.manual_seed(0)
    return Gemma3ForCausalLM(cfg).eval()


def planted_gemma3(folder, seed: int = 0):
    """The tiny Gemma 3 with every token embedding one row, saved with a tokenizer: every position of every layer
    has one hidden state (attention averages equal values), so each layer's queries and keys before the turn are
    fixed vectors, a pure RoPE head per layer type."""
    import torch

    model = tiny_gemma3()
    with torch.no_grad():
        row = torch.as_tensor(np.random.default_rng(seed).standard_normal(32), dtype=torch.float32)
        model.model.embed_tokens.weight[:] = row
    model.save_pretrained(folder)
    save_tokenizer(folder)
    return model


def fake_chunk_packages(root, name: str, version: str, chunks: list[bytes], sums: str | None) -> None:
    """Installed-looking distributions under ``root`` (a ``.dist-info`` folder each): ``name`` with ``sums`` as
    ``name_/data/SHA256SUMS`` (None: no such file), and ``name-partN`` holding chunk ``N - 1`` as
    ``name_partN/data/chunk``."""

    def dist(package, files):
        mod = package.replace("-", "_")
        info = root / f"{mod}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
        for rel, data in files.items():
            (root / mod / "data").mkdir(parents=True, exist_ok=True)
            (root / mod / "data" / rel).write_bytes(data)

    dist(name, {} if sums is None else {"SHA256SUMS": sums.encode()})
    for i, chunk in enumerate(chunks):
        dist(f"{name}-part{i + 1}", {"chunk": chunk})


def write_gguf(path, architecture: str) -> None:
    """A GGUF file of one small tensor whose ``general.architecture`` is ``architecture`` (gguf's own writer)."""
    import gguf

    w = gguf.GGUFWriter(str(path), architecture)
    w.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def tiny_llama(folder, window: int = 64, seed: int = 0):
    """A 2-layer random Llama with a training window of ``window`` positions (head dim 16, base 1e4), saved as
    safetensors and config.json with the word-level tokenizer; its weights drawn wide (``initializer_range`` 0.3)
    so that its attention is sharp and its loss depends on the positions' rotation."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=window,
                      rope_parameters={"rope_type": "default", "rope_theta": 10_000.0}, initializer_range=0.3,
                      architectures=["LlamaForCausalLM"])  # fmt: skip
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)
    model.save_pretrained(folder)
    save_tokenizer(folder)
    return model
