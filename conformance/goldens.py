"""The committed goldens (tests/goldens/): runs of the real Claude Code as the harness saved them, transcripts and
request logs gzipped. `expand_golden` unzips one into a folder, for the harness's round trips and for the tests."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = ROOT / "tests" / "goldens"


def expand_golden(name: str, dst: Path) -> Path:
    """A committed golden as the harness saved it (transcripts and request logs unzipped)."""
    src = GOLDENS / name
    out = dst / name
    for p in src.rglob("*"):
        if p.is_dir():
            continue
        target = out / p.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        if p.suffix == ".gz":
            target.with_suffix("").write_bytes(gzip.decompress(p.read_bytes()))
        else:
            shutil.copyfile(p, target)
    return out
