"""The bench's measuring snippets still run against today's code (a snippet that calls an API since changed makes a
bench run print 'failed' where a number belongs: the previews' did, unnoticed, until issue 29's run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import SAMPLES, sample_session

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    """bench/run.py (not a package), loaded by its path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("inspector_bench_run", ROOT / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["OURS_INDEX", "OURS_PREVIEWS", "FLOOR_DECODE", "FLOOR_NEWLINES"])
def test_a_bench_snippet_runs_and_prints_its_measure(name, tmp_path):
    session = sample_session("Fix forecast", SAMPLES)
    code = getattr(_bench(), name)
    script = tmp_path / "snippet.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, str(script), str(session)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out and all(isinstance(v, (int, float)) for v in out.values())
    if name == "OURS_PREVIEWS":
        assert {"index", "estimator", "full"} <= set(out)


def _floors():
    import importlib.util

    spec = importlib.util.spec_from_file_location("inspector_bench_floors", ROOT / "bench" / "floors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_floors_do_the_work_they_stand_for(tmp_path):
    """bench/floors.py's floor program on the samples: the usage floor decodes exactly the lines that hold a usage, the
    decode floor every line, and the tokenize floor inserts the texts the index would (timed, so a positive number)."""
    floors = _floors()
    script = tmp_path / "floor.py"
    script.write_text(floors.FLOOR)
    lines = [ln for p in sorted(SAMPLES.rglob("*.jsonl")) for ln in p.read_bytes().split(b"\n") if ln.strip()]
    import orjson

    def keys(line: bytes) -> int:  # what a line adds to the floors' sums: a malformed one (the samples have some) none
        try:
            return len(orjson.loads(line))
        except orjson.JSONDecodeError:
            return 0

    keys_of = [keys(ln) for ln in lines]
    assert keys_of.count(0) < len(lines) // 2

    def run(*args: str) -> int:
        r = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        return int(r.stdout.strip())

    assert run("every", str(SAMPLES)) == sum(keys_of)
    assert run("usage", str(SAMPLES)) == sum(k for k, ln in zip(keys_of, lines) if b'"usage"' in ln)
    chars, texts = floors.prepare_texts(SAMPLES, tmp_path, 2)
    assert texts > 100 and chars > texts
    assert run("tokenize", str(tmp_path / "texts-0.bin"), str(tmp_path / "texts-1.bin")) > 0
