"""Compute session stats in a separate process, streaming each result as a JSON line.

The TUI runs this with `python -m inspector.library.stats_batch` so that its own threads are never
forked: the request (a JSON list of [index, path, flat agent paths]) comes on stdin, and each
`[index, stats]` goes to stdout as soon as it is ready (in several processes when there are many).
"""

from __future__ import annotations

import sys
from pathlib import Path

from inspector.library.stats import _compute
from inspector.textutil import json_dumps, json_loads


def main() -> int:
    req = json_loads(sys.stdin.buffer.read())  # paths that are not UTF-8 come as \u escapes
    todo = [(k, Path(p), [Path(a) for a in agents], None) for k, p, agents in req]
    out = sys.stdout.buffer
    for k, st in _compute(todo, None, skip_errors=True):
        out.write(json_dumps([k, st]) + b"\n")
        out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
