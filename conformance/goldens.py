"""The committed goldens (tests/goldens/): runs of the real Claude Code as the harness saved them, transcripts,
request logs and persisted outputs xz-compressed (a transcript repeats its system prompt snapshot: xz's dictionary
holds the repeats where gzip's 32 KB window does not, a third of the size). `expand_golden` unpacks one into a folder,
for the harness's round trips and for the tests."""

from __future__ import annotations

import lzma
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = ROOT / "tests" / "goldens"


def expand_golden(name: str, dst: Path) -> Path:
    """A committed golden as the harness saved it (its compressed files unpacked)."""
    src = GOLDENS / name
    out = dst / name
    for p in src.rglob("*"):
        if p.is_dir():
            continue
        target = out / p.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        if p.suffix == ".xz":
            target.with_suffix("").write_bytes(lzma.decompress(p.read_bytes()))
        else:
            shutil.copyfile(p, target)
    return out


def pack(data: bytes) -> bytes:
    """A golden file's bytes as committed (xz)."""
    return lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)
