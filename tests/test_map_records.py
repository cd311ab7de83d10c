"""A context-extension map is one record (poskernels.extension.maps): the trial "dynamic YaRN" reaches the parser,
the census, ``advise``, the family check's trials, the readers and the census guide's table from its record alone,
and leaves with it; no module that reads the records keeps a table or a branch keyed by a rope type.

transformers (5.x) has no dynamic YaRN rope type (``ROPE_INIT_FUNCTIONS`` holds linear, dynamic, yarn, longrope,
llama3, proportional), so the trial registers it here: YaRN (transformers' ramp) at the factor the sequence length
asks for, ``max(N, L) / L``, as the reference code's ``DynamicYaRN`` does.
"""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from poskernels.census import advice as advise_cli
from poskernels.census import advice_text
from poskernels.census import rank as advise_rank
from poskernels.census.compute import census_all
from poskernels.census.config import parse, parse_config, record
from poskernels.census.hf_families import cases
from poskernels.errors import PosKernelsError
from poskernels.experiments import readers
from poskernels.extension import MAPS, MapSpec, Option, extend, register_map, unregister_map
from poskernels.extension.maps import MAP_SPECS, ROPE_TYPES, factor_block, guide_table
from poskernels.extension.yarn_reference import yarn_hf

# A config as a model that shipped dynamic YaRN would spell it (no model_type: transformers is not asked).
CONFIG = {
    "head_dim": 128,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "max_position_embeddings": 4096,
    "rope_parameters": {"rope_type": "dynamic_yarn", "rope_theta": 10000.0, "factor": 4.0, "beta_fast": 16.0},
}


def _dynamic_yarn(theta, kappa, L, **options):
    e = yarn_hf(theta, kappa, L, **options)
    return type(e)("dynamic_yarn", e.inv_freq, e.attention_factor, theta)


RECORD = MapSpec(
    "dynamic_yarn",
    _dynamic_yarn,
    rope_type="dynamic_yarn",
    options=(Option("factor", required=True, minimum=1.0, passed=False, carried=False, trial=4.0),
             *(Option(k) for k in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor"))),
    follows="training_length",
    needs_length=True,
    advise_order=5,
    block=factor_block,
    what="YaRN at the factor the sequence length asks for, `max(N, L) / L`",
    title="dynamic YaRN",
    colour="#e69f00",
)  # fmt: skip


@pytest.fixture
def dynamic_yarn():
    register_map(RECORD)
    try:
        yield RECORD
    finally:
        unregister_map("dynamic_yarn")


def test_one_record_reaches_the_parser_census_advise_families_readers_and_guide(dynamic_yarn):
    cfg = parse_config(CONFIG)
    assert cfg.rope_type == "dynamic_yarn" and ROPE_TYPES["dynamic_yarn"] == "dynamic_yarn"
    assert cfg.map_options("dynamic_yarn") == {"beta_fast": 16.0}
    with pytest.raises(PosKernelsError, match=r"'rope_parameters.factor' must be >= 1; got 0.5"):
        parse_config({**CONFIG, "rope_parameters": {**CONFIG["rope_parameters"], "factor": 0.5}})
    with pytest.raises(PosKernelsError, match=r"'rope_parameters.beta_fast' must be a finite number"):
        parse_config({**CONFIG, "rope_parameters": {**CONFIG["rope_parameters"], "beta_fast": "x"}})
    # the census reads it at the length asked for: kappa = N / L, against YaRN computed at that kappa
    data = census_all(CONFIG, 4 * 4096)
    own = data["maps"]["config"]
    expected = yarn_hf(cfg.theta, 4.0, 4096, beta_fast=16.0)
    assert own["map"] == "dynamic_yarn" and own["kappa"] == 4.0
    np.testing.assert_array_equal(own["inv_freq"], expected.inv_freq)
    assert "dynamic_yarn" in data["maps"] and "dynamic_yarn" in MAPS
    # advise writes its block (the shipped map rescaled: factor L = 16384 falls short of N) and ranks it
    advice = advise_cli.advise(CONFIG, 8 * 4096)
    row = advice["maps"]["dynamic_yarn"]
    assert row["rope_parameters"] == {
        "rope_type": "dynamic_yarn", "rope_theta": 10000.0, "beta_fast": 16.0, "factor": 8.0,
        "original_max_position_embeddings": 4096,
    }  # fmt: skip
    assert row["how"] == "rescaled" and advice["shipped_map"] == "dynamic_yarn"
    assert "dynamic_yarn" in advice["ranking"] and "linear, dynamic, dynamic_yarn" in advice["criterion"]
    assert advise_rank.block_for("dynamic_yarn", parse_config({**CONFIG, "rope_parameters": {}}), 8192)[2] == "written"
    # the family check tries it; the readers name and colour it; the guide's table lists it
    assert cases.TYPE_OPTIONS["dynamic_yarn"] == {"factor": 4.0}
    assert readers.reader_label("rope_dynamic_yarn") == "RoPE + dynamic YaRN"
    assert readers.colours()["dynamic_yarn"] == "#e69f00"
    assert "| `dynamic_yarn` | YaRN at the factor the sequence length asks for" in guide_table()
    assert extend("dynamic_yarn", cfg.theta, 2.0, 4096).name == "dynamic_yarn"


def test_unregistering_takes_it_out_of_every_table(dynamic_yarn):
    unregister_map("dynamic_yarn")
    try:
        for table in (MAPS, ROPE_TYPES, MAP_SPECS, cases.TYPE_OPTIONS, readers.MAP_TITLES, readers.MAP_COLOURS):
            assert "dynamic_yarn" not in table
        assert "dynamic_yarn" not in guide_table() and "dynamic_yarn" not in advise_rank.criterion()
        with pytest.raises(PosKernelsError, match=r"unknown rope type 'dynamic_yarn'"):
            parse_config(CONFIG)
    finally:
        register_map(RECORD)  # the fixture takes it out


def test_a_taken_name_or_spelling_and_a_built_in_are_refused(dynamic_yarn):
    with pytest.raises(PosKernelsError, match=r"a map named 'dynamic_yarn' is registered already"):
        register_map(RECORD)
    with pytest.raises(PosKernelsError, match=r"rope type 'yarn' is read as map 'yarn_hf' already"):
        register_map(MapSpec("other", _dynamic_yarn, rope_type="yarn"))
    with pytest.raises(PosKernelsError, match=r"'llama3' is not a map registered from outside"):
        unregister_map("llama3")


def _keyed_by_a_map(tree: ast.AST) -> list[str]:
    """Comparisons against a rope type or map name, and tables keyed by one, in a module's code."""
    names = (set(ROPE_TYPES) | set(MAPS) | set(MAP_SPECS)) - {"none"}  # "none": a head read as trained, no map
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                consts = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                found += [c.value for c in consts if isinstance(c, ast.Constant) and c.value in names]
        if isinstance(node, ast.Dict):
            found += [k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in names]
    return found


@pytest.mark.parametrize("module", [parse, record, advise_cli, advice_text, advise_rank, cases, readers])
def test_no_side_table_or_branch_keyed_by_a_map_creeps_back(module):
    """The modules that read the records compare no value with a map's name and key no table by one."""
    assert _keyed_by_a_map(ast.parse(inspect.getsource(module))) == []


def test_the_guard_finds_a_side_table_and_a_branch():
    code = 'T = {"llama3": 1}\nif rope_type == "linear":\n    pass\nif t in ("yarn", "x"):\n    pass\n'
    assert _keyed_by_a_map(ast.parse(code)) == ["llama3", "linear", "yarn"]
