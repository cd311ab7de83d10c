"""The one scheme registry: every entry carries its metadata and its hooks, a scheme without its backward is refused,
and a new scheme is one entry plus its hand-written gradient (and, for the oracle, one reference term)."""

from __future__ import annotations

import numpy as np
import pytest

from poskernels import encodings
from poskernels.encodings import BUILT_IN, SCHEMES, Scheme
from poskernels.encodings.scheme import WHERE
from poskernels.errors import PosKernelsError
from poskernels.model import HeadConfig
from poskernels.model.engine.one_head import cross_entropy, query_backward, query_forward
from poskernels.model.head import init_params
from poskernels.model.optim import central_difference
from poskernels.model.reading import PLAIN
from poskernels.tasks.cue import cue_batch

SMALL = dict(d=6, vocab=9, n_classes=4, n_train=10, settings={"t5_buckets": 8, "t5_max_distance": 12, "shaw_clip": 3})


def test_one_registry():
    import poskernels.model as model

    assert not hasattr(model, "HEAD_SCHEMES")  # one name for the one registry
    article, beyond = ["nope", "sinusoidal", "learned", "rope", "alibi"], ["t5", "shaw", "kerple_log", "kerple_power"]
    trained = ["nope_ssmax", "rope_ssmax", "sinusoidal_randpos", "rope_randpos"]  # training-side variants
    variants = ["xpos_rescaled", "fire_c1"]  # a paper's constant changed, each a scheme of its own name
    assert list(SCHEMES) == [*article, *beyond, "fire", "xpos", "p_rope", "partial_rotary", *trained, *variants]
    with pytest.raises(PosKernelsError, match="unknown scheme 'cope'"):
        HeadConfig(scheme="cope")


@pytest.mark.parametrize("name", list(SCHEMES))
def test_every_entry_has_metadata_and_the_hooks_of_where_it_acts(name):
    s = SCHEMES[name]
    assert s.name == name and s.title and s.article and isinstance(s.in_article, bool)
    assert s.where in WHERE and s.rotary == (s.where == "rotation")
    cfg = HeadConfig(scheme=name, **SMALL)
    params = s.init(cfg, np.random.default_rng(0))  # the scheme's own parameters, unstacked
    pos = encodings.default_positions(cfg.n_train)
    r = pos[::-1].copy()  # (n,) the keys' offsets from the last position
    q = np.random.default_rng(1).normal(size=(2, 3, cfg.d))  # (M, U, d)
    stacked = {k: np.stack([v, v]) for k, v in params.items()}  # a stack of two heads
    code, bias = s.code(params, cfg, pos), s.bias_at(stacked, cfg, q, r, pos[-1])
    assert (code is not None) == (s.where == "input")
    assert (bias is not None) == (s.where == "score")
    if code is not None:
        assert code.shape == (cfg.n_train, cfg.d)
        grads = s.code_backward(np.ones((2, cfg.n_train, cfg.d)), stacked, cfg, pos)
        assert sorted(grads) == sorted(params)  # every parameter gets its gradient, and nothing else
    if bias is not None:
        _, grads = s.bias_backward_at(np.ones((2, 3, cfg.n_train)), stacked, cfg, q, r, pos[-1])
        assert sorted(grads) == sorted(params)
    scaled = set()
    if s.scale_grows:  # a logit scale of the key count: its parameters get their gradient from dL/dlambda
        lam = s.logit_scale_at(stacked, cfg, PLAIN, cfg.n_train)
        assert np.shape(lam) == (2,)
        scaled = set(s.logit_scale_backward(np.ones(2), stacked, cfg, PLAIN, cfg.n_train))
        assert scaled and scaled <= set(params)
    if s.where in ("none", "rotation"):
        assert set(params) == scaled


def test_the_article_tournament_and_beyond_come_from_the_registry():
    from poskernels.experiments.tournament import ARTICLE_SCHEMES, EXTRA_SCHEMES

    assert ARTICLE_SCHEMES == ("nope", "sinusoidal", "learned", "rope", "alibi")  # the article's table, in order
    assert EXTRA_SCHEMES == ("t5", "shaw", "kerple_log", "kerple_power", "fire", "xpos", "p_rope", "partial_rotary",
                             "nope_ssmax", "rope_ssmax", "sinusoidal_randpos", "rope_randpos", "xpos_rescaled",
                             "fire_c1")  # fmt: skip
    assert {n for n, s in SCHEMES.items() if s.offset_kernel is not None} == {"sinusoidal", "rope", "alibi"}


@pytest.mark.parametrize("where", ["input", "score"])
def test_a_forward_without_its_backward_is_refused(where):
    forward, backward = WHERE[where]
    body = {"name": "half", "title": "half a scheme", "article": "none", "where": where}
    body[forward] = lambda self, *args: None
    with pytest.raises(PosKernelsError, match=f"writes {forward} but not its backward {backward}"):
        type("Half", (Scheme,), body)
    body[backward] = lambda self, *args: {}
    assert type("Whole", (Scheme,), body).where == where  # with its backward, the same class is accepted


@pytest.mark.parametrize(
    "body, message",
    [
        ({"where": "score"}, "acts at 'score' but writes no bias"),
        ({"where": "rotation", "bias": lambda self, *a: None}, "acts at 'rotation' but writes bias/bias_backward"),
        ({"where": "input", "title": ""}, "needs a title"),
        ({"where": "anywhere"}, "where must be one of none, input, rotation, score; got 'anywhere'"),
        ({"where": "none", "relative": 1}, "relative must be True or False; got 1"),
        ({"where": "none", "init": lambda self, cfg, rng: {"w": np.zeros(1)}}, "has parameters"),
        ({"where": "none", "offset_kernel": lambda r: r}, "offset_kernel must be a staticmethod"),
        ({"where": "none", "name": "two words"}, "name must be an identifier; got 'two words'"),
    ],
)
def test_metadata_and_behaviour_that_disagree_are_refused(body, message):
    full = {"name": "odd", "title": "an odd scheme", "article": "none", **body}
    with pytest.raises(PosKernelsError, match=message):
        type("Odd", (Scheme,), full)


def test_a_scheme_is_read_only():
    with pytest.raises(AttributeError, match="read-only"):
        SCHEMES["alibi"].title = "something else"


class LearnedSlope(Scheme):
    """A scheme the registry does not ship: ALiBi with a learned slope, ``-s r``, ``s`` from 1/2."""

    name, title, article = "learned_slope", "learned slope", "Definition 3 (a variant)"
    where, relative, defined_everywhere = "score", True, True

    def init(self, cfg, rng):
        return {"slope": np.full(1, 0.5)}  # (1,)

    def bias(self, params, cfg, q, r):
        return -params["slope"] * r  # (M, 1) * (n,) = (M, n), or (1,) * (n, n)

    def bias_backward(self, dz, params, cfg, q, r):
        return None, {"slope": -(dz * r).sum(axis=(1, 2))[:, None]}  # (M, 1)


def _slope_bias(tp, cfg, q, r, dtype):
    import torch

    return -tp["slope"][:, :, None] * torch.tensor(r, dtype=dtype)  # (M, 1, n)


def test_a_new_scheme_is_one_entry_plus_its_gradient(monkeypatch):
    # registering the entry is all the head needs: config, init, forward and backward follow from it
    monkeypatch.setitem(SCHEMES, "learned_slope", LearnedSlope())
    rng = np.random.default_rng(3)
    cfg = HeadConfig(scheme="learned_slope", **SMALL)
    params = {k: v * (4.0 if k != "slope" else 1.0) for k, v in init_params(cfg, rng).items()}
    assert params["slope"].tolist() == [0.5]
    tokens, targets = cue_batch(rng, 5, 10, n_symbols=4, mark_prob=0.3)
    logits, cache = query_forward(params, cfg, tokens)
    loss, dlogits = cross_entropy(logits, targets)
    grads = query_backward(params, cfg, cache, dlogits)

    def total():
        return cross_entropy(query_forward(params, cfg, tokens)[0], targets)[0]

    for name, value in params.items():
        assert np.allclose(grads[name], central_difference(total, value), rtol=1e-5, atol=1e-8), name
    assert abs(grads["slope"][0]) > 1e-6

    # the oracle refuses a scheme it has no term for, and checks it once it has one
    from poskernels.model import reference

    with pytest.raises(PosKernelsError, match="no terms for scheme 'learned_slope'"):
        reference.torch_loss_and_grad(params, cfg, tokens, targets)
    monkeypatch.setattr(LearnedSlope, "reference_bias", lambda self, *args: _slope_bias(*args), raising=False)
    ref_loss, ref = reference.torch_loss_and_grad(params, cfg, tokens, targets)
    assert np.isclose(ref_loss, loss, rtol=1e-12)
    assert all(np.allclose(grads[k], ref[k], rtol=1e-9, atol=1e-12) for k in params)


def test_every_built_in_scheme_writes_its_own_term_in_torch():
    from poskernels.model.reference import reference_terms

    for name in sorted(BUILT_IN):
        scheme, terms = SCHEMES[name], reference_terms(name)
        assert (terms.code is not None, terms.turn is not None, terms.bias is not None) == (
            scheme.where == "input",
            scheme.rotary,
            scheme.where == "score",
        ), name
        assert (terms.scale is not None) == scheme.scale_grows, name
        if scheme.rotary:  # its own turn, written from its paper, not its transform's frequencies turned for it
            assert terms.turn == scheme.reference_turn, name
    from poskernels.model import reference

    # the oracle is written apart from the head's hooks: it holds neither the registry nor a scheme
    assert not any(v is SCHEMES or isinstance(v, Scheme) for v in vars(reference).values())


def test_every_built_in_scheme_has_a_colour_of_its_own():
    # the figures and the lab tell the schemes apart by colour alone (the payload carries them)
    colours = [SCHEMES[name].colour for name in sorted(BUILT_IN)]
    assert len(set(colours)) == len(colours), {c: n for n, c in zip(sorted(BUILT_IN), colours) if colours.count(c) > 1}
