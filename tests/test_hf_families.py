"""The census against every RoPE family of the installed transformers (:mod:`poskernels.census.hf_families`).

Oracle: each family's own rotary module, built from its default config and from one config per rope type
it accepts; the census reads the same ``config.json`` and must agree, or refuse in one line.  One pass over
every model type takes about 20 s of CPU (most of it importing transformers' modeling modules).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch  # noqa: E402,F401 - the test extra installs both; a missing one is an error, not a skip
import transformers  # noqa: E402

from poskernels.census import hf_families  # noqa: E402
from poskernels.census.keys import attribute_map, default_theta  # noqa: E402

README = Path(__file__).resolve().parents[1] / "docs" / "guide" / "census.md"  # the page that holds the block


@pytest.fixture(scope="module")
def cases():
    return hf_families.enumerate_families()


def test_no_family_is_read_silently_wrong(cases):
    wrong = [c for c in cases if c.status == "wrong"]
    assert not wrong, wrong[:5]


def test_most_families_agree_and_refusals_are_one_line(cases):
    summary = hf_families.summarize(cases)
    assert len(summary["agree"]) > 0.7 * summary["classes"]  # the families that are language RoPE, nearly all
    for c in cases:
        assert c.status in ("agrees", "refused")
        if c.status == "refused":
            assert "\n" not in c.detail and len(c.detail) < 400
    # every rope type transformers implements is read somewhere
    assert set(summary["types"]) >= {"default", "linear", "dynamic", "yarn", "llama3", "longrope"}


def test_per_layer_type_configs_are_read_per_layer_type(cases):
    layered = {c.rotary for c in cases if c.layer_type is not None and c.status == "agrees"}
    assert "Gemma3RotaryEmbedding" in layered
    gemma3 = {c.layer_type for c in cases if c.rotary == "Gemma3RotaryEmbedding" and c.rope_type == "default"}
    assert gemma3 == {"full_attention", "sliding_attention"}


def test_shipped_key_tables_are_transformers_own():
    """data/hf_attribute_map.json: each family's key names and default base, as the installed transformers has them."""
    table = hf_families.attribute_map_table()
    shipped = {"attribute_map": attribute_map(), "default_theta": default_theta()}
    same_version = transformers.__version__ in json.dumps(table["_source"])
    for part in ("attribute_map", "default_theta"):
        if same_version and shipped[part] != table[part]:
            pytest.fail(
                "data/hf_attribute_map.json is stale: python -m poskernels.census.hf_families --attribute-map PATH"
            )
        for model_type in set(shipped[part]) & set(table[part]):  # another version: the shared entries agree
            assert shipped[part][model_type] == table[part][model_type], (part, model_type)


def test_variants_are_read(cases):
    """The default config without rope_theta, and multimodal files read through their text_config."""
    for label in hf_families.VARIANTS:
        assert any(c.rope_type == label and c.status == "agrees" for c in cases), label


def test_readme_statement_is_the_enumerators_output(cases):
    text = README.read_text()
    block = re.search(r"<!-- hf-families:start -->\n(.*?)<!-- hf-families:end -->", text, re.S)
    assert block, "docs/guide/census.md lacks the generated block of transformers families"
    stated = re.search(r"transformers (\S+):", block.group(1)).group(1)
    # constraints.txt pins transformers, so the version the README states is the one installed
    assert stated == transformers.__version__, (
        "regenerate: python -m poskernels.census.hf_families --readme docs/guide/census.md"
    )
    rendered = hf_families.render(hf_families.summarize(cases), markdown=True)
    assert block.group(1).strip() == rendered.strip()


def test_hub_files_read_with_and_without_transformers_agree_with_it(cases):
    """Every family's default config with every default key removed (the file a hub holds): the census, with the
    defaults from transformers and from the shipped table, equals transformers' own rotary module."""
    hub = {c.rotary for c in cases if c.rope_type == hf_families.VARIANTS[3]}  # rotaries of the language model
    agree = {c.rotary for c in cases if c.rope_type == "default" and c.status == "agrees"} & hub
    assert len(agree) >= 100
    for label in hf_families.VARIANTS[3:]:
        read = {c.rotary for c in cases if c.rope_type == label and c.status == "agrees"}
        assert read == agree, (label, sorted(agree ^ read)[:5])


def test_shipped_defaults_table_is_transformers_own():
    """data/hf_text_defaults.json: the text defaults of every config class, as the installed transformers has them."""
    from poskernels.census.config.defaults import _shipped, defaults_table

    table, shipped = defaults_table(), _shipped()
    assert transformers.__version__ in shipped["_source"], "python -m poskernels.census.hf_families --defaults PATH"
    assert table["families"] == shipped["families"], "stale: python -m poskernels.census.hf_families --defaults PATH"


def test_layer_types_derived_for_other_layer_counts_agree_with_transformers():
    """A file with its own num_hidden_layers and no layer_types: the shipped table's repeated pattern gives the
    layer types (the set the census reads one RoPE for) transformers derives, for every family with per-layer
    types; the lists themselves differ where a family forces its last layer (stated as assumed)."""
    from transformers import CONFIG_MAPPING

    from poskernels.census.config.defaults import _shipped, use_transformers
    from poskernels.census.config.fill import _layer_types

    checked, other_set = 0, []
    for model_type, entry in _shipped()["families"].items():
        default = entry["defaults"].get("layer_types")
        if not isinstance(default, list) or len(set(default)) < 2 or entry["part"]:
            continue
        for n in (len(default) + 3, 2 * len(default)):
            try:
                theirs = CONFIG_MAPPING[model_type](num_hidden_layers=n).layer_types
            except Exception:  # noqa: BLE001 - the class refuses that count
                continue
            use_transformers(False)
            try:
                ours, how = _layer_types(entry, {"num_hidden_layers": n}, "table")
            finally:
                use_transformers(True)
            checked += 1
            assert how.startswith("assumed") and len(ours) == n
            rope = entry["defaults"].get("rope_parameters") or {}
            keys = {k for k, v in rope.items() if isinstance(v, dict)} or set(theirs) | set(ours)
            if set(theirs) & keys != set(ours) & keys:  # the layer types that carry a RoPE of their own
                other_set.append((model_type, n))
    assert checked >= 100
    assert not other_set
