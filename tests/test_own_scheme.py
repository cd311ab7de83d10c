"""Bring your own positional encoding, end to end: the example file is loaded, checked, trained in the tournament,
read at long context and swept, with nothing inside ``src/`` changed; broken files get one line naming file, class
and problem (exit 2), never a traceback and never a cache entry."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from poskernels.cli import main
from poskernels.encodings import SCHEMES
from poskernels.model.config import HeadConfig, preset
from poskernels.model.scheme_check import check_scheme
from poskernels.model.scheme_file import load_scheme_file
from poskernels.model.trained import head_path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gaussian_bias.py"


def test_the_example_file_registers_its_scheme_and_passes_every_check(clean_registry):
    assert load_scheme_file(EXAMPLE) == ["gauss"]
    assert load_scheme_file(EXAMPLE) == ["gauss"]  # a second load (a worker's) is a no-op
    cfg = HeadConfig(scheme="gauss")
    assert cfg.gauss_width == 8.0 and HeadConfig(scheme="gauss", settings={"gauss_width": 2.0}).gauss_width == 2.0
    checks = check_scheme("gauss")
    assert [c.ok for c in checks] == [True] * 7, [c.line() for c in checks]  # torch is in the test extra


def test_a_wrong_backward_fails_its_check(clean_registry, tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        EXAMPLE.read_text().replace('return None, {"c": dc[:, None]}', 'return None, {"c": 2 * dc[:, None]}')
    )
    load_scheme_file(wrong)
    bad = {c.name: c.ok for c in check_scheme("gauss")}
    assert bad["backward against central differences"] is False and bad["PyTorch autograd"] is False


BROKEN = {
    "syntax": ("class Oops(:\n", "line 1: not valid Python"),
    "raises": ("import numpy as np\nnp.zeros(-1)\n", "line 2: raised ValueError while loading"),
    "empty": ("x = 1\n", "defines no subclass of poskernels.encodings.Scheme"),
    "half": (
        "from poskernels.encodings import Scheme\nclass Half(Scheme):\n"
        "    name, title, article, where = 'half', 'half', 'none', 'score'\n"
        "    def bias(self, params, cfg, q, r):\n        return -r\n",
        "class Half: scheme 'half' writes bias but not its backward bias_backward",
    ),
    "builtin": (
        "from poskernels.encodings import Scheme\nclass Mine(Scheme):\n"
        "    name, title, article = 'rope', 'my rope', 'none'\n",
        "class Mine: scheme 'rope' is built in",
    ),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_file_is_one_line_exit_2_and_trains_nothing(kind, clean_registry, tmp_path, capsys):
    text, message = BROKEN[kind]
    path = tmp_path / f"{kind}.py"
    path.write_text(text)
    before = dict(SCHEMES)
    cache = tmp_path / "cache"
    for argv in (["check-scheme", str(path)], ["tournament", "--scheme-file", str(path), "--cache", str(cache)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "Traceback" not in err, err
        assert f"scheme file {path}" in err and message in err, err
    assert SCHEMES == before and not cache.exists()


def test_the_tournament_trains_the_example_beside_a_built_in_scheme(clean_registry, tmp_path, capsys):
    argv = ["tournament", "--scheme-file", str(EXAMPLE), "--schemes", "alibi,gauss", "--seeds", "2",
            "--first-seed", "7", "--lengths", "32,64", "--cache", str(tmp_path), "--json", "-"]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    table = json.loads(captured.out)
    # progress on stderr (not a terminal here: one line as each scheme is trained and as it is read), never stdout
    progress = [ln for ln in captured.err.splitlines() if ln.startswith("[tournament] ")]
    assert progress == ["[tournament] alibi (1/2): 2 heads trained or read from the cache",
                        "[tournament] alibi (1/2): read at 2 lengths",
                        "[tournament] gauss (2/2): 2 heads trained or read from the cache",
                        "[tournament] gauss (2/2): read at 2 lengths"], captured.err  # fmt: skip
    assert sorted(table["accuracy"]) == ["alibi", "gauss"]
    assert table["seeds"] == [7, 8]  # the first seed given wins over the environment
    assert table["accuracy"]["gauss"]["32"] > 0.5  # the marked symbol is learned within the window
    assert table["stderr"]["gauss"]["64"] is not None
    per_seed = table["per_seed"]["gauss"]["64"]  # each seed's value, from which the mean and its SE come
    assert len(per_seed) == 2 and abs(sum(per_seed) / 2 - table["accuracy"]["gauss"]["64"]) < 1e-12
    assert head_path(tmp_path, preset("tournament", "gauss"), 7).exists()  # keyed by the file's source


def test_an_edited_file_does_not_read_the_old_heads(clean_registry, tmp_path):
    load_scheme_file(EXAMPLE)
    old = head_path(tmp_path, preset("tournament", "gauss"), 0)
    edited = tmp_path / "gaussian_bias.py"
    edited.write_text(EXAMPLE.read_text().replace("-0.5 * r**2", "-0.25 * r**2"))
    del SCHEMES["gauss"]
    load_scheme_file(edited)
    assert head_path(tmp_path, preset("tournament", "gauss"), 0) != old


def test_long_context_and_a_sweep_read_the_example(clean_registry, tmp_path):
    from poskernels.experiments.long_context import run_long_context
    from poskernels.sweep.grid import parse_grid
    from poskernels.sweep.point import point_key, run_job

    load_scheme_file(EXAMPLE)
    quick = preset("quick")
    data = run_long_context(None, seeds=[0, 1], lengths=(64,), offsets=(4,), count=20, config=quick, workers=1,
                            schemes=["gauss"])  # fmt: skip
    assert data["length"]["per_seed"]["gauss"]["64"] is not None and "gauss" in data["readers"]
    grid = tmp_path / "grid.toml"
    grid.write_text(f'[sweep]\nscheme_file = "{EXAMPLE}"\n[fixed]\nsteps = 5\nbatch = 4\ntest_lengths = [8]\n'
                    'test_size = 10\n[grid]\nscheme = ["gauss"]\ngauss_width = [2.0, 4.0]\n')  # fmt: skip
    g = parse_grid(grid.read_text(), str(grid))
    assert [p["gauss_width"] for p in g.points] == [2.0, 4.0] and g.scheme_files == (str(EXAMPLE),)
    del SCHEMES["gauss"]  # a fresh worker: the job loads the grid's file itself
    out = run_job({"points": [[point_key(p), p] for p in g.points], "cache_dir": None, "scheme_files": g.scheme_files})
    assert out["trained"] == 2 and all(np.isfinite(r["final_loss"]) for r in out["results"].values())


def test_the_labs_curves_read_the_example(clean_registry):
    from poskernels.experiments import curves
    from poskernels.model.train import train

    load_scheme_file(EXAMPLE)
    head = train(preset("quick", "gauss"), 0)
    drift = curves.drift({"gauss": head})["scores"]["gauss"]
    against = curves.scores_against_offset({"gauss": head}, ["gauss"])["scores"]["gauss"]
    assert np.all(np.isfinite(drift)) and np.all(np.isfinite(against))
    assert against[200] < against[0]  # the Gaussian bias: a far key scores below a near one
