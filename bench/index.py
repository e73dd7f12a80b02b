"""The search index's targets (issue 17), measured in one run on the bench's root of sessions.

    python bench/index.py [--root PROJECTS]    (default: bench/work/inputs/root/projects, made by bench/run.py)

Each step runs `python -m inspector ...` in its own process with a fresh cache folder (wall time, the interpreter's
start included, as a user meets it). Prints a table of the measurements and of the targets as ratios, and writes it
to bench/results/index.md. The root is copied first only for the append step (one session gets one more record in
the copy); nothing under the root is changed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, r.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE / "work" / "inputs" / "root" / "projects")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    if not root.is_dir():
        print(f"no projects root at {root} (python bench/run.py makes one)", file=sys.stderr)
        return 2
    n = sum(1 for _ in root.glob("*/*.jsonl"))
    py = [sys.executable, "-m", "inspector"]
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as t:
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(t) / "cache"), "PYTHONPATH": str(HERE.parent)}
        cold_stats, _ = timed(py + ["stats", "--json", str(root)], env)
        warm_stats, _ = timed(py + ["stats", "--json", str(root)], env)
        build, _ = timed(py + ["index", str(root)], env)
        first, _ = timed(py + ["search", "zq9absentword", str(root)], env)  # also indexes the persisted outputs
        absent, _ = timed(py + ["search", "zq9absentword", str(root)], env)
        rare, _ = timed(py + ["search", "prompt shows git", str(root)], env)
        scan, _ = timed(py + ["search", "zq9absentword", str(root), "--no-index"], env)
        grep, _ = timed(["grep", "-r", "zq9absentword", str(root)], env)
        # one record appended to one session (in a copy of its project), then a search that must find it
        copy = Path(t) / "copy" / "projects"
        shutil.copytree(root, copy, symlinks=True)
        build_copy, _ = timed(py + ["index", str(copy)], env)
        timed(py + ["search", "zq9absentword", str(copy)], env)
        victim = next(copy.glob("*/*.jsonl"))
        with open(victim, "ab") as f:
            f.write(b'\n{"type":"user","uuid":"bench-append","parentUuid":null,'
                    b'"message":{"role":"user","content":"zq9appended"}}\n')
        append, code = timed(py + ["search", "zq9appended", str(copy)], env)
        if code != 0:
            print("the appended record was not found", file=sys.stderr)
            return 1
        size = sum(p.stat().st_size for p in (Path(t) / "cache" / "inspector").glob("index.sqlite*"))
    rows = [("stats --json, cold", cold_stats), ("stats --json, warm", warm_stats), ("index, cold (transcripts)", build),
            ("first search (indexes the persisted outputs)", first), ("search, absent word, warm", absent),
            ("search, rare phrase, warm", rare), ("search --no-index (the scan), absent word", scan),
            ("grep -r, absent word", grep), ("append one record, search it", append)]
    lines = [f"Root {root}: {n:,} sessions; index on disk {size / 2**20:,.0f} MB (the copy's build: {build_copy:.1f} s).", "",
             "| measurement | time |", "|---|---:|"] + [f"| {a} | {b:.2f} s |" for a, b in rows]

    def target(what: str, value: float, goal: float, unit: str = "") -> str:
        return f"| {what} | {value:.3f}{unit} | ≤ {goal}{unit} | {'met' if value <= goal else 'missed'} |"

    lines += ["", "| target | measured | goal | |", "|---|---:|---:|---|",
              target("absent word, warm", absent, 0.05, " s"), target("rare phrase, warm", rare, 0.05, " s"),
              target("absent word / grep -r", absent / grep, 0.05, "×"),
              target("index build / cold stats", (build + first) / cold_stats, 1.5, "×"),
              target("append + search", append, 0.1, " s"),
              target("warm stats per 1,000 sessions", warm_stats / n * 1000, 0.1, " s")]
    text = "\n".join(lines) + "\n"
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "index.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
