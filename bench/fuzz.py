"""A mutation fuzz of real transcripts across every command: crashes and hangs, counted.

    python bench/fuzz.py [--files N] [--seed S] [--root DIR] [--limit SECONDS] [--keep DIR]

Each of N files is a real transcript (the samples, and ../shared/realdata when present) with 1-4 mutations: a field
of the wrong type, a 900-1,000-deep nested list, a 30-digit integer, a kept record nested 254-700 deep, a 20 MB string
deep inside a record, truncations, flipped bytes, lines deleted or duplicated. Every command runs on it in this
process under a time limit: a crash is "unexpected error" or an exit status a command never gives, a hang is a run
over the limit. Inputs are hashed before and after (none may change) and every write must land in the output folder.
Failing files are kept (--keep) to join tests/corpus. Prints one summary line and the failures by kind.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector.cli import main  # noqa: E402

REAL = ROOT.parent / "shared" / "realdata" / "projects"


class Hang(Exception):
    pass


def bases(limit_bytes: int = 400_000) -> list[bytes]:
    files = sorted((ROOT / "sample_sessions").rglob("*.jsonl"))
    if REAL.is_dir():
        files += sorted(REAL.rglob("*.jsonl"))
    return [p.read_bytes() for p in files if 0 < p.stat().st_size < limit_bytes and "subagents" not in p.parts]


def _deep_list(d: int) -> object:
    v: object = 1
    for _ in range(d):
        v = [v]
    return v


def _deep_dict(d: int, leaf: object) -> object:
    v = leaf
    for _ in range(d):
        v = {"a": v}
    return v


WRONG = [None, True, 0, -1, 2**70, 1.5, "", "x", [], {}, [1, "a"], {"a": 1}]
FIELDS = [
    "message",
    "content",
    "usage",
    "attachment",
    "toolUseResult",
    "compactMetadata",
    "input",
    "text",
    "type",
    "uuid",
    "parentUuid",
    "timestamp",
    "model",
    "id",
    "tool_use_id",
    "name",
    "tail",
    "cacheControl",
    "params",
    "origin",
    "data",
    "subtype",
    "isCompactSummary",
    "summary",
    "input_tokens",
    "output_tokens",
    "stop_reason",
]


def _set(obj: object, key: str, value: object, rng: random.Random, depth: int = 0) -> bool:
    if isinstance(obj, dict):
        if key in obj and rng.random() < 0.7:
            obj[key] = value
            return True
        return any(_set(v, key, value, rng, depth + 1) for v in list(obj.values()) if depth < 6)
    if isinstance(obj, list):
        return any(_set(v, key, value, rng, depth + 1) for v in obj if depth < 6)
    return False


def mutate(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        n = len(lines)
        i = rng.randrange(max(1, n))
        op = rng.choice(
            ["wrong", "wrong", "wrong", "deeplist", "bigint", "deepkept", "bigdeep", "truncate", "flip", "delete", "duplicate"]
        )
        try:
            obj = orjson.loads(lines[i]) if lines[i].strip() else None
        except orjson.JSONDecodeError:
            obj = None
        if op == "truncate":
            blob = b"\n".join(lines)
            lines = blob[: rng.randrange(len(blob) + 1)].split(b"\n")
            continue
        if op == "flip" and lines[i]:
            b = bytearray(lines[i])
            b[rng.randrange(len(b))] ^= rng.randrange(1, 256)
            lines[i] = bytes(b)
            continue
        if op == "delete" and n > 1:
            del lines[i]
            continue
        if op == "duplicate":
            lines.insert(i, lines[i])
            continue
        if not isinstance(obj, dict):
            continue
        if op == "wrong":
            _set(obj, rng.choice(FIELDS), rng.choice(WRONG), rng)
        elif op == "deeplist":
            _set(
                obj, rng.choice(["content", "input", "toolUseResult", "text", "message"]), _deep_list(rng.randint(900, 1000)), rng
            )
        elif op == "bigint":
            _set(
                obj,
                rng.choice(["input_tokens", "output_tokens", "cache_read_input_tokens", "preTokens", "timestamp"]),
                int("9" * 30),
                rng,
            )
        elif op == "deepkept":
            obj["toolUseResult"] = _deep_dict(rng.randint(254, 700), "x")
        elif op == "bigdeep":
            obj["toolUseResult"] = _deep_dict(rng.randint(20, 200), "y" * (20 << 20))
        try:
            lines[i] = orjson.dumps(obj)
        except (TypeError, orjson.JSONEncodeError):
            import json

            try:
                lines[i] = json.dumps(obj).encode()
            except (RecursionError, ValueError):
                continue
    return b"\n".join(lines)


def commands(path: Path, out_dir: Path) -> list[tuple[list[str], tuple[int, ...]]]:
    p = str(path)
    return [
        (["stats", p], (0, 2)),
        (["stats", "--json", p], (0, 2)),
        (["tokens", p], (0, 2)),
        (["tokens", "--json", p], (0, 2)),
        (["show", p, "--all"], (0, 2)),
        (["show", p, "--all", "--markdown"], (0, 2)),
        (["show", p, "--line", "3"], (0, 2)),
        (["search", "the", p], (0, 1, 2)),
        (["request", p], (0, 2)),
        (["request", "--json", p], (0, 2)),
        (["cost", p], (0, 2)),
        (["cost", "--json", p], (0, 2)),
        (["compact", p], (0, 2)),
        (["compact", p, "--strategy", "full"], (0, 2)),
        (["compact", p, "--strategy", "microcompact", "--force"], (0, 2)),
        (["compact", p, "--strategy", "session-memory"], (0, 2)),
        (["compact", p, "--write", "--out", str(out_dir / "saved.jsonl"), "--allow-live", "--allow-newer"], (0, 2)),
    ]


def run_one(argv: list[str], limit: float) -> tuple[int | None, str, float]:
    out, err = io.StringIO(), io.StringIO()

    def alarm(_sig: int, _frame: object) -> None:
        raise Hang()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    t0 = time.perf_counter()
    try:
        code = main(argv, out, err)
    except Hang:
        return None, "hang", time.perf_counter() - t0
    except BaseException as exc:  # noqa: BLE001 - a crash is what we count
        return -1, f"raised {type(exc).__name__}: {str(exc)[:200]}", time.perf_counter() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return code, err.getvalue(), time.perf_counter() - t0


def tree_hash(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


def main_(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=float, default=30.0, help="seconds a command may take before it counts as a hang")
    ap.add_argument("--keep", type=Path, help="keep each failing file here")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    src = bases()
    work = Path(tempfile.mkdtemp(prefix="inspector-fuzz-"))
    os.environ["HOME"] = str(work / "home")
    os.environ["CLAUDE_CONFIG_DIR"] = str(work / "claude")
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    os.environ["INSPECTOR_NO_INDEX"] = "1"
    kinds: Counter[str] = Counter()
    runs = crashes = hangs = changed = 0
    t0 = time.perf_counter()
    try:
        for k in range(args.files):
            case = work / f"case{k}"
            (case / "proj").mkdir(parents=True)
            (case / "out").mkdir()
            path = case / "proj" / "s.jsonl"
            path.write_bytes(mutate(rng.choice(src), rng))
            before = tree_hash(case / "proj")
            bad = False
            for cmd, ok in commands(path, case / "out"):
                code, err, _secs = run_one(cmd, args.limit)
                runs += 1
                what = None
                if code is None:
                    hangs += 1
                    what = f"hang: {cmd[0]}"
                elif code == -1 or "unexpected error" in err or code not in ok:
                    crashes += 1
                    line = err.strip().splitlines()[-1] if err.strip() else f"exit {code}"
                    what = f"crash: {cmd[0]}: {line[:160]}"
                if what:
                    kinds[what] += 1
                    bad = True
            if tree_hash(case / "proj") != before:
                changed += 1
                kinds["an input changed"] += 1
            if bad and args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, args.keep / f"fuzz-{args.seed}-{k}.jsonl")
            shutil.rmtree(case, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"{args.files} mutated files, {runs} command runs in {time.perf_counter() - t0:.0f} s: {crashes} crashes, "
        f"{hangs} hangs, {changed} inputs changed"
    )
    for what, n in kinds.most_common():
        print(f"  {n:5d}  {what}")
    return 1 if crashes or hangs or changed else 0


if __name__ == "__main__":
    sys.exit(main_())
