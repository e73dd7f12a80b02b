"""The statusline's speed (issue 26.1): Claude Code runs `inspector statusline` after every message, so what counts
is a run on a long session that grew by one record since the last. On a transcript of --mb megabytes (bench's own
generator), each round appends one record and runs `inspector statusline` once; a bare `python -c pass` runs in the
same rounds, interleaved, so the ratio holds on a noisy machine. Also the first run (no state in the cache: the
whole file is read once, within the statusline's budget, and the read goes on at the next run when it is over).

    python bench/statusline.py [--mb 100] [--rounds 21] [--readme]

--readme writes the table into docs/benchmarks.md (the statusline block)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))


def timed(cmd: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, env=env)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {p.stderr.decode(errors='replace')[-400:]}")
    return dt, p.stdout.decode(errors="replace").strip()


def main(argv: list[str] | None = None) -> int:
    from bench.make_inputs import big_session

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--readme", action="store_true")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="inspector-bench-statusline-"))
    src = big_session(work / "projects", int(args.mb * (1 << 20)))
    lines = src.read_bytes().splitlines(keepends=True)
    # the session grows by records of its own kind: the last 2*rounds lines are held back and appended one by one
    held = lines[-2 * args.rounds :]
    src.write_bytes(b"".join(lines[: -2 * args.rounds]))
    size_mb = src.stat().st_size / (1 << 20)
    # as a user's Python runs it: its modules' bytecode cached (this machine's environment turns that off)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PYTHONDONTWRITEBYTECODE")}
    env["XDG_CACHE_HOME"] = str(work / "cache")
    stdin = json.dumps({"session_id": src.stem, "transcript_path": str(src), "model": {"id": "claude-sonnet-4-5"}}).encode()
    exe = [sys.executable, "-m", "inspector", "statusline", "--no-color"]
    bare = [sys.executable, "-c", "pass"]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "inspector")], env=env, check=True)
    first, line = timed(exe + ["--budget", "600"], stdin, env)  # the first run reads the whole file once
    runs, floors = [], []
    for k in range(args.rounds):
        with open(src, "ab") as f:
            f.write(b"".join(held[2 * k : 2 * k + 2]))
        floors.append(timed(bare, b"", env)[0])
        dt, line = timed(exe, stdin, env)
        runs.append(dt)
    med, floor = statistics.median(runs), statistics.median(floors)
    text = (
        f"Measured {time.strftime('%Y-%m-%d')} on a {size_mb:.0f} MB transcript (bench/make_inputs.py) growing by "
        f"one record a round, {args.rounds} rounds, Python {sys.version.split()[0]}:\n\n"
        "| run | median | against `python -c pass` |\n|---|---|---|\n"
        f"| `inspector statusline`, the session grew by one record | {med * 1000:.0f} ms | {med / floor:.1f}x |\n"
        f"| `python -c pass` (the floor, same rounds) | {floor * 1000:.0f} ms | 1.0x |\n"
        f"| the first run (no state yet: the whole file read once) | {first * 1000:.0f} ms | {first / floor:.0f}x |\n\n"
        f"The line it printed: `{line}`\n"
    )
    print(text)
    if args.readme:
        from conformance.docblocks import write_block

        write_block(ROOT / "docs" / "benchmarks.md", "statusline", text)
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
