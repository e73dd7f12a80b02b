"""The record types and fields inspector knows, and the ones a transcript has that it does not.

Claude Code adds record types and fields in many releases; a field inspector has never seen may carry what a
report should use (2.1.332's `earlierMessages` on the summary record is sent before the summary). `known_fields.json`
beside this file lists, per record type, the top-level fields of every transcript inspector was checked on (the
bundled samples, ../shared/realdata, the conformance goldens) and the fields of `message`, `compactMetadata` and
`attachment`; `python -m inspector.transcript.fields PATH...` regenerates it from such transcripts. The conformance
harness reports every field of a run that is not in it, so a release's additions show the day it ships; a field is
added here once inspector reads it or has decided to ignore it.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

DATA = Path(__file__).with_name("known_fields.json")
NESTED = ("message", "compactMetadata", "microcompactMetadata", "attachment")


@lru_cache(maxsize=1)
def known() -> dict[str, frozenset[str]]:
    """{record type: its known top-level fields} and {"<type>.<nested>": its known fields}."""
    try:
        data = orjson.loads(DATA.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return {k: frozenset(v) for k, v in data.items() if isinstance(v, list)}


def fields_of(obj: dict[str, Any]) -> Iterable[tuple[str, str]]:
    """(where, field) of one record: its top-level fields under its type, and its nested objects' fields."""
    t = obj.get("type")
    kind = t if isinstance(t, str) else "(no type)"
    for k in obj:
        yield kind, k
    for n in NESTED:
        v = obj.get(n)
        if isinstance(v, dict):
            sub = v.get("type") if n == "attachment" and isinstance(v.get("type"), str) else None
            where = f"{kind}.{n}" + (f"[{sub}]" if sub else "")
            for k in v:
                yield where, k


def unknown_fields(lines: Iterable[bytes]) -> Counter[tuple[str, str]]:
    """The (where, field) pairs of these JSONL lines that the registry does not have, with how often each appears;
    a record type the registry has never seen counts as one pair ("<type>", "*")."""
    reg = known()
    out: Counter[tuple[str, str]] = Counter()
    for raw in lines:
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(obj, dict):
            continue
        for where, k in fields_of(obj):
            have = reg.get(where)
            if have is None:
                base = where.split("[", 1)[0]
                if "." in where and base in reg:  # an attachment type not seen: its fields are judged by its kind's
                    have = reg[base]
                else:
                    out[(where, "*")] += 1
                    continue
            if k not in have:
                out[(where, k)] += 1
    return out


def build(paths: Iterable[Path]) -> dict[str, list[str]]:
    seen: dict[str, set[str]] = {}
    for p in paths:
        for raw in p.read_bytes().splitlines():
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                for where, k in fields_of(obj):
                    seen.setdefault(where, set()).add(k)
                    if "[" in where:  # an attachment's fields also count for attachments of any type
                        seen.setdefault(where.split("[", 1)[0], set()).add(k)
    return {k: sorted(v) for k, v in sorted(seen.items())}


def main(argv: list[str]) -> int:
    """Regenerate known_fields.json from the .jsonl (and .jsonl.gz) files under the given folders."""
    import gzip
    import tempfile

    files: list[Path] = []
    tmp = Path(tempfile.mkdtemp())
    for a in argv:
        for p in sorted(Path(a).rglob("*.jsonl*")):
            if p.suffix == ".gz":
                q = tmp / f"{len(files)}.jsonl"
                q.write_bytes(gzip.decompress(p.read_bytes()))
                files.append(q)
            elif p.suffix == ".jsonl":
                files.append(p)
    data = build(files)
    DATA.write_text(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    print(f"{len(files)} transcripts, {len(data)} record kinds, {sum(map(len, data.values()))} fields -> {DATA}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
