"""``poskernels advise`` on ten held-out kinds of hub file: the map each model ships is kept where it reaches the
target and rescaled where it does not, no block lowers ``max_position_embeddings``, and every map says why it
ranks where it does; the reader's fixes the same files need (a derived ``head_dim``, ``use_sliding_window``,
layers without RoPE, LongRoPE's two lists, a model folder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heldout_configs import CONFIGS, SHIPPED
from poskernels import cli
from poskernels.census.advice import advise
from poskernels.census.compute import census_all
from poskernels.census.config import load_config, load_layer_configs, text_config
from poskernels.census.rank import reach

ROOT = Path(__file__).resolve().parents[1]


def _spec(name):
    spec = CONFIGS[name]
    return str(ROOT / spec) if isinstance(spec, str) and spec.endswith(".json") else spec


def _targets(cfg):
    """A target the shipped map reaches (when it reaches past L) and one past its reach."""
    r = reach(cfg)
    within = [min(int(r), 2**20)] if cfg.rope_type != "default" and r > cfg.training_length else []
    return within + [4 * max(cfg.max_position_embeddings, cfg.training_length, int(min(r, 2**20)))]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_shipped_map_is_kept_where_it_reaches_and_rescaled_past_it(name):
    spec = _spec(name)
    cfg = load_config(spec)
    assert cfg.rope_type == SHIPPED[name]
    for N in _targets(cfg):
        a = advise(spec, N)
        assert a["ranking"][0] == a["recommended"] and set(a["ranking"]) == set(a["maps"])
        for t, row in a["maps"].items():  # never lowered, and each place said in words
            assert row["max_position_embeddings"] >= cfg.max_position_embeddings, (name, N, t)
            assert row["why"] and (row["rank"] == 1) == (t == a["recommended"])
        assert a["criterion"].startswith("ranked by")
        if SHIPPED[name] == "default":
            assert a["maps"][a["recommended"]]["how"] == "written"
            assert a["recommended"] not in ("dynamic", "linear"), (name, N, a["reason"])
            continue
        best = a["maps"][a["recommended"]]
        assert a["recommended"] == SHIPPED[name], (name, N, a["reason"])
        if N <= reach(cfg):
            assert best["how"] == "kept"
            shipped = {k: v for k, v in cfg.scaling.items() if k != "type"}
            assert {k: best["rope_parameters"].get(k) for k in shipped if k != "rope_type"} == {
                k: v for k, v in shipped.items() if k != "rope_type"
            }
        else:
            assert best["how"] == "rescaled"
            if SHIPPED[name] != "longrope":
                assert best["rope_parameters"]["factor"] == N / cfg.training_length


def test_dynamic_is_not_advised_where_it_would_lower_max_position_embeddings():
    a = advise(_spec("gpt-oss-20b"), 262144)
    assert "dynamic" not in a["maps"] and "131072 to L = 4096" in a["not_advised"]["dynamic"]


def test_each_alternative_names_the_criterion_it_falls_on(capsys):
    a = advise("llama-3.1-8b", 262144)
    assert a["recommended"] == "llama3" and a["maps"]["llama3"]["how"] == "rescaled"
    assert a["maps"]["yarn"]["why"].startswith("below llama3: it is not the map the weights were trained with")
    assert "more trained planes have their frequency moved" in a["maps"]["linear"]["why"]
    code = cli.main(["advise", "llama-3.1-8b", "--target-length", "262144"])
    out = capsys.readouterr().out
    assert code == 0 and "ranked by: (1) the map the weights were trained with" in out and "rank 3, below" in out


def test_a_llama_file_without_head_dim_derives_it_as_transformers_does():
    from transformers import AutoConfig

    spec = _spec("llama-3.2-1b")
    cfg = load_config(spec)
    hf = AutoConfig.for_model(**spec)
    assert cfg.head_dim == hf.head_dim == 64 and cfg.read_from["width"] == "hidden_size / num_attention_heads"
    assert "head_dim" not in cfg.read_from.get("defaults", {})


def test_use_sliding_window_false_reads_every_layer_whole(capsys):
    """Qwen2: ``use_sliding_window: false`` sets ``sliding_window`` to None in transformers; advise says no layer is
    windowed, and a file that lists windowed layer types is advised as one RoPE without a window note."""
    from transformers import AutoConfig

    spec = _spec("qwen2.5-7b-sliding-off")
    hf = AutoConfig.for_model(**spec)
    text = text_config(spec)
    assert hf.sliding_window is None and text["sliding_window"] is None
    assert text["layer_types"] == hf.layer_types
    listed = dict(spec, layer_types=["sliding_attention"] * 28, num_hidden_layers=28, sliding_window=4096)
    assert advise(listed, 262144)["layer_notes"] == []
    on = dict(listed, use_sliding_window=True)
    assert advise(on, 262144)["layer_notes"][0].startswith("28 of 28 layers are sliding_attention")


def test_layers_without_rope_are_said_in_the_text_and_in_advise(capsys):
    spec = _spec("smollm3-3b")
    code = cli.main(["census", json_path(spec, capsys), "--target-length", "131072"])
    out = capsys.readouterr().out
    assert code == 0 and "9 of 36 layers have no RoPE" in out
    assert any("9 of 36 layers have no RoPE" in n for n in advise(spec, 262144)["layer_notes"])


def json_path(spec, capsys, folder=None):
    import tempfile

    folder = Path(folder or tempfile.mkdtemp())
    (folder / "config.json").write_text(json.dumps(spec))
    return str(folder / "config.json")


def test_longrope_census_says_which_list_it_reports_and_gives_both():
    data = census_all("phi-3.5-mini", 131072)
    cfg = load_config("phi-3.5-mini")
    assert data["longrope_factors"]["config"] == "long_factor"
    long = [t / f for t, f in zip(cfg.theta, data["maps"]["config"]["inv_freq"])]
    short = [t / f for t, f in zip(cfg.theta, data["maps"]["config_short"]["inv_freq"])]
    assert long == pytest.approx(cfg.scaling["long_factor"]) and short == pytest.approx(cfg.scaling["short_factor"])
    assert census_all("phi-3.5-mini", 4096)["longrope_factors"]["config"] == "short_factor"


def test_a_model_folder_is_read_through_its_config_json(tmp_path, capsys):
    path = json_path(_spec("llama-3.2-1b"), capsys, tmp_path)
    assert load_layer_configs(str(tmp_path)) == load_layer_configs(path)
    code = cli.main(["census", str(tmp_path), "--target-length", "262144", "--json", str(tmp_path / "config.json")])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1  # the folder's config.json is an input: not an output
    empty = tmp_path / "empty"
    empty.mkdir()
    code = cli.main(["census", str(empty)])
    _, err = capsys.readouterr()
    assert code == 2 and "holds no config.json" in err and err.count("\n") == 1
