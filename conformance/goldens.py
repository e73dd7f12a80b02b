"""The committed goldens (tests/goldens/): runs of the real Claude Code as the harness saved them, transcripts,
request logs and persisted outputs xz-compressed (a transcript repeats its system prompt snapshot: xz's dictionary
holds the repeats where gzip's 32 KB window does not, a third of the size). The system prompts and tool lists of the
request logs, the same few in every run, are kept once for all goldens (`shared.json.xz`: 44 goldens' logs held them
at 1.3 MB compressed, the distinct ones are 55 KB). `expand_golden` unpacks one into a folder, for the harness's round
trips and for the tests."""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = ROOT / "tests" / "goldens"
SHARED = GOLDENS / "shared.json.xz"  # a file beside the goldens' folders: {"system": {hash: ...}, "tools": {hash: ...}}
SHARED_PARTS = ("system", "tools")


def expand_golden(name: str, dst: Path) -> Path:
    """A committed golden as the harness saved it (its compressed files unpacked)."""
    src = GOLDENS / name
    out = dst / name
    for p in src.rglob("*"):
        if p.is_dir():
            continue
        target = out / p.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        if p.name == "requests.json.xz":
            target.with_suffix("").write_bytes(_with_shared(lzma.decompress(p.read_bytes())))
        elif p.suffix == ".xz":
            target.with_suffix("").write_bytes(lzma.decompress(p.read_bytes()))
        else:
            shutil.copyfile(p, target)
    return out


def pack(data: bytes) -> bytes:
    """A golden file's bytes as committed (xz)."""
    return lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)


def dump_requests(data: dict[str, Any]) -> bytes:
    """A request log as the harness saves it (`runner.save`)."""
    return json.dumps(data, indent=1, sort_keys=True).encode()


def _shared(store: Path = SHARED) -> dict[str, dict[str, Any]]:
    return json.loads(lzma.decompress(store.read_bytes())) if store.exists() else {k: {} for k in SHARED_PARTS}


def _write_shared(shared: dict[str, dict[str, Any]], store: Path) -> None:
    tmp = store.with_name(store.name + ".tmp")
    tmp.write_bytes(pack(json.dumps(shared, sort_keys=True).encode()))
    tmp.replace(store)


def _with_shared(raw: bytes, store: Path = SHARED) -> bytes:
    """A golden's request log with the system prompts and tool lists it left to the shared store put back (the bytes
    the harness saved)."""
    data = json.loads(raw)
    if not any(v is None for k in SHARED_PARTS for v in (data.get(k) or {}).values()):
        return raw
    shared = _shared(store)
    for k in SHARED_PARTS:
        for h, v in (data.get(k) or {}).items():
            if v is None:
                data[k][h] = shared[k][h]
    return dump_requests(data)


def pack_requests(raw: bytes, store: Path = SHARED) -> bytes:
    """A run's request log as committed: its system prompts and tool lists moved to the shared store (kept by hash,
    None in the log), then compressed."""
    data = json.loads(raw)
    shared = _shared(store)
    for k in SHARED_PARTS:
        for h, v in (data.get(k) or {}).items():
            if v is not None:
                shared.setdefault(k, {})[h] = v
                data[k][h] = None
    _write_shared(shared, store)
    return pack(dump_requests(data))


def prune_shared(goldens: Path = GOLDENS) -> None:
    """Drop from the shared store what no golden's request log names any more."""
    store = goldens / SHARED.name
    if not store.exists():
        return
    named: dict[str, set[str]] = {k: set() for k in SHARED_PARTS}
    for p in goldens.glob("*/requests.json.xz"):
        data = json.loads(lzma.decompress(p.read_bytes()))
        for k in SHARED_PARTS:
            named[k] |= {h for h, v in (data.get(k) or {}).items() if v is None}
    shared = _shared(store)
    kept = {k: {h: v for h, v in shared.get(k, {}).items() if h in named[k]} for k in SHARED_PARTS}
    if kept != shared:
        _write_shared(kept, store)
