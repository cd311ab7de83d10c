"""What the census reads from transformers is read once per installed version and kept: a later census (or advise)
gives the same answer without importing transformers, torch or a modeling module (work counted in modules, not
seconds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import json, sys
from poskernels.census.advice import advise
from poskernels.census.compute import census_all
out = {"census": census_all(sys.argv[1], 65536, scan_base=False), "advise": advise(sys.argv[1], 262144)["ranking"]}
out["imported"] = sorted(m for m in sys.modules if m == "torch" or m.startswith("transformers"))
print(json.dumps(out))
"""


def _run(cache: Path, config: str) -> dict:
    env = dict(os.environ, POSKERNELS_CACHE=str(cache), PYTHONPATH=str(ROOT / "src"), OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, config], env=env, cwd=cache, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_a_second_census_reads_the_kept_defaults_without_importing_transformers(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 32}))
    cold = _run(tmp_path, str(config))
    assert "torch" in cold["imported"]  # the first reads the class (and its modeling module)
    kept = list((tmp_path / "hf_read").glob("transformers-*.json"))
    assert len(kept) == 1 and "llama" in json.loads(kept[0].read_text())["defaults"]
    warm = _run(tmp_path, str(config))
    assert warm["imported"] == [] and warm["census"] == cold["census"] and warm["advise"] == cold["advise"]
    assert warm["census"]["config"]["head_dim"] == 64


def test_a_damaged_cache_is_read_again_from_transformers(tmp_path):
    from poskernels.census.config import hf_cache

    path = hf_cache.cache_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert hf_cache.memo("t", "k", lambda: [1, 2], root=tmp_path) == [1, 2]
    assert json.loads(path.read_text())["t"]["k"] == [1, 2]
