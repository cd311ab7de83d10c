"""The README's torch example equals transformers on the same tensors.

The example is read out of README.md and run; its tensors are then rotated by transformers' own
``LlamaRotaryEmbedding`` (whose ``ROPE_INIT_FUNCTIONS`` give the frequencies and YaRN's attention factor) and
``apply_rotary_pos_emb``, and compared with what the example computed: the default rope, and transformers' ``yarn``
with its attention factor.  The article's YaRN and the ``pairs`` layout, named as the article's in the README, are
checked to differ from transformers by far more than rounding (so the comparison can fail).
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
import torch
import transformers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

from poskernels import extend, omega
from poskernels.torch_rope import apply_rope

README = Path(__file__).resolve().parents[1] / "README.md"
EPS = float(torch.finfo(torch.bfloat16).eps)


def _example() -> dict:
    """The README's python block that uses ``torch_rope``, run; its names."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    block = next(b for b in blocks if "torch_rope" in b)
    code = "\n".join(ex.source for ex in doctest.DocTestParser().get_examples(block))
    names: dict = {}
    torch.manual_seed(0)
    exec(compile(code, str(README), "exec"), names)  # noqa: S102 - the README's own example
    return names


def _config(**rope) -> transformers.LlamaConfig:
    return transformers.LlamaConfig(
        hidden_size=512, num_attention_heads=8, head_dim=64, max_position_embeddings=8192,
        rope_parameters={"rope_theta": 10000.0, **rope},
    )  # fmt: skip


def _transformers(q: torch.Tensor, pos: torch.Tensor, config) -> torch.Tensor:
    cos, sin = LlamaRotaryEmbedding(config)(q, pos)  # attention factor included, cast to q's dtype
    return apply_rotary_pos_emb(q, q, cos, sin)[0]


@pytest.fixture(scope="module")
def example():
    return _example()


def _close(a: torch.Tensor, b: torch.Tensor, scale: float) -> None:
    torch.testing.assert_close(a.float(), b.float(), atol=4 * EPS * scale, rtol=0)


def test_the_readme_example_rotates_as_transformers_default_rope(example):
    q, pos = example["q"], example["pos"]
    _close(example["plain"], _transformers(q, pos, _config(rope_type="default")), float(q.float().abs().max()))


def test_the_readme_yarn_is_transformers_yarn_with_its_attention_factor(example):
    q, pos, yarn = example["q"], example["pos"], example["yarn"]
    config = _config(rope_type="yarn", factor=4.0, original_max_position_embeddings=2048)
    inv_freq, factor = ROPE_INIT_FUNCTIONS["yarn"](config, "cpu")
    torch.testing.assert_close(torch.as_tensor(yarn.inv_freq, dtype=torch.float32), inv_freq.float(), rtol=1e-6, atol=0)
    assert yarn.attention_factor == pytest.approx(factor, rel=1e-12)
    scale = float(q.float().abs().max()) * factor
    _close(example["q_yarn"], _transformers(q, pos, config), scale)


def test_the_articles_variants_differ_from_transformers_beyond_rounding(example):
    q, pos = example["q"], example["pos"]
    config = _config(rope_type="yarn", factor=4.0, original_max_position_embeddings=2048)
    hf = _transformers(q, pos, config).float()
    article = extend("yarn", omega(64), 4, 2048)
    ours = apply_rope(q, pos, article.inv_freq, attention_factor=article.attention_factor, layout="half").float()
    yarn = extend("yarn_hf", omega(64), 4, 2048)
    pairs = apply_rope(q, pos, yarn.inv_freq, attention_factor=yarn.attention_factor, layout="pairs").float()
    tol = 4 * EPS * float(q.float().abs().max()) * 1.2
    assert float((ours - hf).abs().max()) > 10 * tol and float((pairs - hf).abs().max()) > 10 * tol
