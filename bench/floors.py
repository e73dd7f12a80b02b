"""The floors under issue 29's missed targets: each a program that does less than the job, as fast as Python does it,
timed in the same run as inspector and the peer it is held to.

    python bench/floors.py [--root PROJECTS] [--rounds 3] [--readme]   (default root: bench/work/inputs/root/projects)

A target whose floor is already past its goal cannot be met by any Python code of this stack on this machine, however
the rest is written: only less work or a compiled core would. The floors, each in a new process per round (wall time,
the interpreter's start included, as for the commands beside them), a process per core as inspector runs:

- usage lines: read every transcript, find each line holding `"usage"` with glibc's memmem and decode just those
  with orjson. `inspector cost --by day` must also find each copy's mark, dedupe, price and group them; ccusage
  `daily` does that job.
- decode every line: read every transcript and orjson-decode each line. Cold `stats` needs fields of every line
  (types, the chain, branches, compactions, persisted outputs), so it cannot do less; ccusage `session` reads usage.
- tokenize: the texts `inspector index` indexes (read out of the transcripts and persisted outputs before the
  rounds, untimed: the process times only its inserts) put into the same FTS5 table (`ascii` tokenizer, contentless,
  `detail=none`) in one transaction per process. With the decode floor, what an index build costs before any Python
  of its own.

Prints the measurements and the targets (goal, inspector, floor), writes bench/results/floors.md and, with
--readme, the floors block of docs/benchmarks.md. Nothing under the root is written.
"""

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
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from index import StepFailed  # noqa: E402  (a measured step that failed: its time measures nothing)

# One program for the three floors: no import of inspector, a fork per core, the parent sums what the children say.
FLOOR = r"""
import os, sys
import orjson

def files_of(root):
    out = []
    for d, _dirs, names in os.walk(root):
        out += [os.path.join(d, n) for n in names if n.endswith(".jsonl")]
    return out

def usage_lines(paths):
    import ctypes
    libc = ctypes.CDLL(None)
    memmem = libc.memmem
    memmem.restype = ctypes.c_void_p
    memmem.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    needle = b'"usage"'
    n = 0
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            b = f.read()
        size = len(b)
        base = ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p).value
        i = 0
        while i < size:
            r = memmem(base + i, size - i, needle, len(needle))
            if not r:
                break
            j = r - base
            s, e = b.rfind(b"\n", 0, j) + 1, b.find(b"\n", j)
            e = size if e < 0 else e
            try:
                n += len(orjson.loads(b[s:e]))
            except orjson.JSONDecodeError:
                pass
            i = e + 1
    return n

def every_line(paths):
    n = 0
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            b = f.read()
        for line in b.split(b"\n"):
            if line:
                try:
                    n += len(orjson.loads(line))
                except orjson.JSONDecodeError:
                    pass
    return n

def tokenize(part):
    import sqlite3, tempfile, time
    with open(part, "rb") as f:
        texts = [(t.decode("utf-8", "replace"),) for t in f.read().split(b"\0") if t]
    with tempfile.TemporaryDirectory() as d:
        db = sqlite3.connect(os.path.join(d, "t.sqlite"), isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE VIRTUAL TABLE texts USING fts5(text, content='', tokenize='ascii', detail=none)")
        t = time.perf_counter()
        db.execute("BEGIN")
        db.executemany("INSERT INTO texts(text) VALUES(?)", texts)
        db.execute("COMMIT")
        took = time.perf_counter() - t
        db.close()
    return int(took * 1e6)

def main():
    kind, *args = sys.argv[1:]
    cores = os.cpu_count() or 1
    if kind == "tokenize":
        parts = [[p] for p in args]
        job = lambda ps: tokenize(ps[0])
    else:
        paths = sorted(files_of(args[0]), key=lambda p: -os.path.getsize(p))
        parts = [paths[k::cores] for k in range(cores)]
        job = usage_lines if kind == "usage" else every_line
    pipes = []
    for part in parts[1:]:
        r, w = os.pipe()
        if os.fork() == 0:
            os.close(r)
            os.write(w, str(job(part)).encode())
            os._exit(0)
        os.close(w)
        pipes.append(r)
    said = [job(parts[0])]
    for r in pipes:
        said.append(int(os.read(r, 64) or b"0"))
        os.close(r)
        os.wait()
    # usage and decode: what was decoded (so nothing is optimised away); tokenize: the slowest process's inserts (us)
    print(max(said) if kind == "tokenize" else sum(said))

main()
"""


def wall(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True)
    took = time.perf_counter() - t
    if r.returncode:
        raise StepFailed(f"{' '.join(cmd[:4])} exited {r.returncode}: {r.stderr.decode('utf-8', 'replace')[-800:]}")
    return took, r.stdout.decode("utf-8", "replace")


def prepare_texts(root: Path, out: Path, parts: int) -> tuple[int, int]:
    """The texts `inspector index` indexes under the root (transcripts, subagents, persisted outputs), as its shards
    get them, into `parts` files of NUL-separated UTF-8, balanced by characters. (characters, texts)."""
    from inspector.library.search import list_transcripts
    from inspector.library.shards import persisted_batches, read_texts
    from inspector.transcript.discovery import resolve_target
    from inspector.transcript.session import tool_result_files

    files, with_results = list_transcripts(resolve_target(root))
    sinks = [open(out / f"texts-{k}.bin", "wb") for k in range(parts)]
    held = [0] * parts
    chars = count = 0

    def put(batches: object) -> None:
        nonlocal chars, count
        for batch in batches:  # type: ignore[attr-defined]
            if not isinstance(batch, list):
                continue  # the End
            for row in batch:
                if row is None:
                    continue
                text = row[0]
                k = held.index(min(held))
                sinks[k].write(text.replace("\0", " ").encode("utf-8", "surrogatepass") + b"\0")
                held[k] += len(text)
                chars += len(text)
                count += 1

    for path, _session in files:
        put(read_texts(os.fspath(path), 0, 0))
    for session in with_results:
        for p in tool_result_files(session):
            put(persisted_batches(os.fspath(p)))
    for s in sinks:
        s.close()
    return chars, count


def main(argv: list[str] | None = None) -> int:
    from run import CCUSAGE_VERSION, ensure_peers

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE / "work" / "inputs" / "root" / "projects")
    ap.add_argument("--work", type=Path, default=HERE / "work")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--readme", action="store_true", help="write the table into docs/benchmarks.md (the floors block)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    if not root.is_dir():
        print(f"no projects root at {root}: python bench/run.py makes it", file=sys.stderr)
        return 2
    peers = ensure_peers(args.work)
    cc = peers.get("ccusage")
    cores = os.cpu_count() or 1
    times: dict[str, list[float]] = {}

    def note(name: str, secs: float) -> None:
        times.setdefault(name, []).append(secs)

    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        (tmp / "claude").mkdir()
        (tmp / "claude" / "projects").symlink_to(root)
        floor_py = tmp / "floor.py"
        floor_py.write_text(FLOOR)
        env = {"CLAUDE_CONFIG_DIR": str(tmp / "claude"), "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": t, "TZ": "UTC"}
        env["PYTHONPATH"] = str(HERE.parent)
        started = time.perf_counter()
        chars, texts = prepare_texts(root, tmp, cores)
        print(f"texts of the index: {texts:,} ({chars / 1e6:,.0f} M characters), read in {time.perf_counter() - started:.1f} s")
        for path in root.rglob("*.jsonl"):  # read once: every round reads from the page cache
            path.read_bytes()
        for k in range(args.rounds):  # interleaved: whatever else the machine does falls on all of them
            cold = {**env, "XDG_CACHE_HOME": str(tmp / f"cache-{k}"), "XDG_CONFIG_HOME": t}
            inspector = [sys.executable, "-m", "inspector"]
            if cc:
                note("ccusage daily", wall(cc + ["daily", "--json", "--offline"], env)[0])
            note("floor usage", wall([sys.executable, str(floor_py), "usage", str(root)], env)[0])
            note("cost by day", wall(inspector + ["cost", "--by", "day", "--json", str(root)], cold)[0])
            if cc:
                note("ccusage session", wall(cc + ["session", "--json", "--offline"], env)[0])
            note("floor decode", wall([sys.executable, str(floor_py), "every", str(root)], env)[0])
            note("stats cold", wall(inspector + ["stats", "--json", str(root)], cold)[0])
            parts = [str(tmp / f"texts-{j}.bin") for j in range(cores)]
            note("floor tokenize", int(wall([sys.executable, str(floor_py), "tokenize", *parts], env)[1]) / 1e6)
            note("index cold", wall(inspector + ["index", str(root)], cold)[0])
            print(f"round {k + 1} of {args.rounds} done", file=sys.stderr)
    m = {name: statistics.median(v) for name, v in times.items()}
    m["floor index"] = m["floor decode"] + m["floor tokenize"]
    n = sum(1 for _ in root.glob("*/*.jsonl"))
    gb = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e9
    label = {
        "ccusage daily": f"ccusage {CCUSAGE_VERSION} daily --offline",
        "floor usage": "floor: find the usage lines (memmem) and decode them, a process per core",
        "cost by day": "inspector cost --by day, cold",
        "ccusage session": f"ccusage {CCUSAGE_VERSION} session --offline",
        "floor decode": "floor: orjson-decode every line, a process per core",
        "stats cold": "inspector stats, cold",
        "floor tokenize": f"floor: FTS5 inserts of the index's texts ({chars / 1e6:,.0f} M characters), a process per core",
        "index cold": "inspector index, cold",
        "floor index": "floor of an index build: decode every line + the inserts",
    }
    lines = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.uname().machine}, {cores} cores, "
        f"Python {sys.version.split()[0]}; root: {n:,} sessions, {gb:.2f} GB with subagents and persisted outputs. "
        f"Wall times, the median of {args.rounds} interleaved rounds (the tokenize floor: its processes' inserts).",
        "",
        "| measurement | time |",
        "|---|---:|",
        *(f"| {label[k]} | {m[k]:.2f} s |" for k in label if k in m),
        "",
        "| target | goal | inspector | floor | |",
        "|---|---:|---:|---:|---|",
    ]

    def row(name: str, goal: float, ours: float, floor: float) -> str:
        if ours <= goal:
            verdict = "met"
        elif floor > goal:
            verdict = "missed; the floor alone is past the goal"
        else:
            verdict = f"missed; the floor leaves {100 * (goal - floor) / goal:.0f}% of the goal for the rest of the job"
        return f"| {name} | ≤ {goal:.1f}× | {ours:.2f}× | {floor:.2f}× | {verdict} |"

    if cc:
        cd, cs = m["ccusage daily"], m["ccusage session"]
        lines.append(row("cost --by day cold / ccusage daily", 1.0, m["cost by day"] / cd, m["floor usage"] / cd))
        lines.append(row("stats cold / ccusage session", 1.5, m["stats cold"] / cs, m["floor decode"] / cs))
    lines.append(row("index build / cold stats", 1.5, m["index cold"] / m["stats cold"], m["floor index"] / m["stats cold"]))
    lines.append(
        f"| index build / cold stats, were stats at their floor | ≤ 1.5× | | {m['floor index'] / m['floor decode']:.2f}× | "
        "the floor of the one over the floor of the other |"
    )
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "floors.md").write_text(text)
    print(json.dumps({k: round(v, 3) for k, v in m.items()}))
    if args.readme:
        from conformance.docblocks import write_block

        write_block(HERE.parent / "docs" / "benchmarks.md", "floors", text)
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except StepFailed as exc:
        print(f"failed: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
