"""What the tests share: the paths (the repository, the pristine samples, ../shared/realdata, the goldens) and the
helpers that build, run and compare. Imported as `from helpers import ...`; fixtures live in conftest.py."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import orjson
import pytest

from conformance.goldens import GOLDENS as GOLDENS  # the tests take them from here
from conformance.goldens import expand_golden as expand_golden

ROOT = Path(__file__).resolve().parent.parent  # the repository
SAMPLES_SOURCE = ROOT / "sample_sessions"  # the committed samples (a user may have saved sessions in a clone's copy)


def _pristine_samples() -> Path:
    """The samples as the generator makes them, in a temporary folder: the tests never depend on what else the
    checkout's sample_sessions/ holds (a session a user saved there)."""
    import atexit
    import tempfile

    from inspector.samplegen import generate

    base = Path(tempfile.mkdtemp(prefix="inspector-samples-"))
    atexit.register(shutil.rmtree, base, True)
    generate(base / "sample_sessions")
    return base / "sample_sessions"


SAMPLES = _pristine_samples()
REALDATA = (ROOT / ".." / "shared" / "realdata").resolve()
REAL_PROJECTS = REALDATA / "projects"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): sha256(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def write_jsonl(path: Path, records: list, *, raw_lines: list[bytes] | None = None) -> Path:
    """Write records (dicts, or raw bytes lines) as a JSONL file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for r in records:
        out.append(r if isinstance(r, bytes) else orjson.dumps(r))
    path.write_bytes(b"\n".join(out) + (b"\n" if out else b""))
    return path


def real_files() -> list[Path]:
    if not REAL_PROJECTS.is_dir():
        return []
    return sorted(REAL_PROJECTS.rglob("*.jsonl"))


requires_realdata = pytest.mark.skipif(not REAL_PROJECTS.is_dir(), reason="../shared/realdata is absent")


def sample_session(title_prefix: str, root: Path = SAMPLES) -> Path:
    """The weatherly sample session whose title starts with `title_prefix` (under `root`)."""
    from inspector.transcript.session import Session

    return next(p for p in (root / "-home-ann-work-weatherly").glob("*.jsonl") if Session.load(p).title.startswith(title_prefix))


def copied_sample(title_prefix: str, into: Path) -> Path:
    """A sample session copied into the folder `into` (its session folder too), so that a test can change it."""
    import shutil

    src = sample_session(title_prefix, SAMPLES)
    dst = into / src.name
    into.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    if src.with_suffix("").is_dir():
        shutil.copytree(src.with_suffix(""), dst.with_suffix(""))
    return dst


def sample_as_release(title_prefix: str, into: Path, version: str) -> Path:
    """A sample session copied into `into` (copied_sample) with every record's release changed to `version`: the same
    session as another release would have written it."""
    import orjson

    dst = copied_sample(title_prefix, into)
    lines = []
    for line in dst.read_bytes().splitlines():
        rec = orjson.loads(line)
        if isinstance(rec, dict) and "version" in rec:
            rec["version"] = version
        lines.append(orjson.dumps(rec))
    dst.write_bytes(b"\n".join(lines) + b"\n")
    return dst


def run_cli(*argv):
    """Run the command line in-process: (exit code, stdout, stderr)."""
    import io

    from inspector.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


DATA = ROOT / "tests" / "data"
CORPUS = ROOT / "tests" / "corpus"


def saved_run(into: Path, name: str) -> Path:
    """A conformance run the harness saved (tests/data/NAME.tar.xz: gen_SEED_VERSION, without its HOME), unpacked into
    `into`; its folder."""
    import tarfile

    with tarfile.open(DATA / f"{name}.tar.xz") as tar:
        tar.extractall(into, filter="data")
    return into / name.rsplit("_", 1)[0]


def golden_transcript(folder: Path) -> Path:
    return next(p for p in (folder / "projects").rglob("*.jsonl") if "subagents" not in p.parts)


def jsonl(text: str) -> list:
    """The objects of a --json output: JSON Lines, one object per line (json, not orjson: a path that is not
    UTF-8 is written with a lone surrogate escape, which JSON allows and orjson refuses)."""
    import json

    return [json.loads(line) for line in text.splitlines() if line.strip()]
