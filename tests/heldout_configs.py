"""Ten kinds of hub ``config.json`` as the hub ships them (the keys the census reads), held out of the bundled set.

Each is written out from the model's published file: what it ships (its RoPE map and options, its windows, its
layers without RoPE), not what the class would default to.  ``SHIPPED[name]`` is the rope type the weights were
trained with (``default``: plain RoPE).
"""

from __future__ import annotations

_GPT_OSS_LAYERS = ["sliding_attention", "full_attention"] * 12

CONFIGS = {
    "deepseek-v3": "src/poskernels/census/data/hub_configs/deepseek-v3.json",
    "gpt-oss-20b": {
        "model_type": "gpt_oss",
        "head_dim": 64,
        "hidden_size": 2880,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "num_hidden_layers": 24,
        "layer_types": _GPT_OSS_LAYERS,
        "sliding_window": 128,
        "max_position_embeddings": 131072,
        "rope_theta": 150000,
        "rope_scaling": {
            "rope_type": "yarn",
            "factor": 32.0,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
            "original_max_position_embeddings": 4096,
        },
    },
    "qwen3-8b": {
        "model_type": "qwen3",
        "head_dim": 128,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_hidden_layers": 36,
        "max_position_embeddings": 40960,
        "max_window_layers": 36,
        "rope_scaling": None,
        "rope_theta": 1000000,
        "sliding_window": None,
        "use_sliding_window": False,
    },
    "llama-3.2-1b": {  # no head_dim: transformers derives hidden_size / num_attention_heads = 64
        "model_type": "llama",
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "num_hidden_layers": 16,
        "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 32.0,
            "high_freq_factor": 4.0,
            "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
    },
    "smollm3-3b": {
        "model_type": "smollm3",
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "num_hidden_layers": 36,
        "max_position_embeddings": 65536,
        "rope_theta": 5000000.0,
        "rope_scaling": None,
        "no_rope_layers": [0 if (i + 1) % 4 == 0 else 1 for i in range(36)],
        "use_sliding_window": False,
        "sliding_window": None,
    },
    "qwen2.5-7b-sliding-off": {  # a window in the file, switched off: transformers reads every layer whole
        "model_type": "qwen2",
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "num_hidden_layers": 28,
        "max_position_embeddings": 32768,
        "max_window_layers": 28,
        "rope_theta": 1000000.0,
        "sliding_window": 131072,
        "use_sliding_window": False,
    },
    "phi-3.5-mini": "phi-3.5-mini",
    "qwen2.5-7b-yarn": "qwen2.5-7b-yarn",
    "llama-3.1-8b": "llama-3.1-8b",
    "mistral-7b": "mistral-7b",
}

SHIPPED = {
    "deepseek-v3": "yarn",
    "gpt-oss-20b": "yarn",
    "qwen3-8b": "default",
    "llama-3.2-1b": "llama3",
    "smollm3-3b": "default",
    "qwen2.5-7b-sliding-off": "default",
    "phi-3.5-mini": "longrope",
    "qwen2.5-7b-yarn": "yarn",
    "llama-3.1-8b": "llama3",
    "mistral-7b": "default",
}
