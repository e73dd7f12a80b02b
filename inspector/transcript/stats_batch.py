"""Compute session stats in a separate process, streaming each result as a JSON line.

The TUI runs this with `python -m inspector.transcript.stats_batch` so that its own threads are never
forked: the request (a JSON list of [index, path, flat agent paths]) comes on stdin, and each
`[index, stats]` goes to stdout as soon as it is ready (in several processes when there are many).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson

from inspector.transcript.stats import _compute


def main() -> int:
    raw = sys.stdin.buffer.read()
    try:
        req = orjson.loads(raw)
    except orjson.JSONDecodeError:  # paths that are not UTF-8 come as \u escapes of lone surrogates
        req = json.loads(raw)
    todo = [(k, Path(p), [Path(a) for a in agents], None) for k, p, agents in req]
    out = sys.stdout.buffer
    for k, st in _compute(todo, None, skip_errors=True):
        try:
            line = orjson.dumps([k, st])
        except TypeError:  # a path that is not UTF-8 (lone surrogates): \u escapes (the reader falls back to json)
            line = json.dumps([k, st], ensure_ascii=True).encode()
        out.write(line + b"\n")
        out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
