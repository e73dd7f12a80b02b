"""The same root priced by inspector and by ccusage, session by session and day by day: do the totals agree, and
how long does each take?

    python bench/cost.py [--root PROJECTS] [--work bench/work] [--runs 3] [--readme]

ccusage (installed by bench/run.py into bench/work/peers, or here if missing) runs with --offline (its bundled
prices). A session is compared when both name it (ccusage keys a session by its file name); the totals of those must
agree within 1%. Days are UTC on both sides (TZ=UTC): `inspector cost --by day` against `ccusage daily`, each day's
total within 1%, and the wall time of each (interleaved runs, the median; ratio in this run). The table goes to
bench/results/cost.md and stdout.
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

from run import CCUSAGE_VERSION, ensure_peers  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE.parent.parent / "shared" / "realdata" / "projects")
    ap.add_argument("--work", type=Path, default=HERE / "work")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each daily report (the median is kept)")
    ap.add_argument("--readme", action="store_true", help="write the tables into docs/benchmarks.md (the cost block)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    if not root.is_dir():
        print(f"no projects root at {root}", file=sys.stderr)
        return 2
    peers = ensure_peers(args.work)
    if not peers["ccusage"]:
        print("ccusage could not be installed", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as t:
        cfg = Path(t) / "claude"
        cfg.mkdir()
        (cfg / "projects").symlink_to(root)
        env = {"CLAUDE_CONFIG_DIR": str(cfg), "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": t, "TZ": "UTC"}
        mine_env = {**env, "XDG_CONFIG_HOME": t, "XDG_CACHE_HOME": str(Path(t) / "cache")}

        def go(argv: list[str], e: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
            t0 = time.perf_counter()
            r = subprocess.run(argv, capture_output=True, text=True, env=e, timeout=1800)
            return r, time.perf_counter() - t0

        cc, _ = go(peers["ccusage"] + ["session", "--json", "--offline"], env)
        ours, _ = go([sys.executable, "-m", "inspector", "cost", "--json", str(root)], mine_env)
        day_theirs: list[float] = []
        day_mine: list[float] = []
        day_warm: list[float] = []
        for k in range(args.runs):  # interleaved: whatever else the machine does falls on both
            ccd, secs = go(peers["ccusage"] + ["daily", "--json", "--offline"], env)
            day_theirs.append(secs)
            cold_env = {**mine_env, "XDG_CACHE_HOME": str(Path(t) / f"cache-day-{k}")}  # a cache of its own: cold
            oursd, secs = go([sys.executable, "-m", "inspector", "cost", "--by", "day", "--json", str(root)], cold_env)
            day_mine.append(secs)
            warmd, secs = go([sys.executable, "-m", "inspector", "cost", "--by", "day", "--json", str(root)], cold_env)
            day_warm.append(secs)  # the same cache again: each transcript's responses as the cold run kept them
    if warmd.stdout != oursd.stdout:
        print("cost --by day read from its cache differs from the cold run", file=sys.stderr)
        return 1
    for r in (cc, ours, ccd, oursd, warmd):
        if r.returncode:
            print(r.stderr[-2000:], file=sys.stderr)
            return 1
    theirs = {s["period"]: s["totalCost"] for s in json.loads(cc.stdout)["session"]}
    mine: dict[str, float] = {}
    for line in ours.stdout.splitlines():
        d = json.loads(line)
        mine[Path(d["path"]).stem] = mine.get(Path(d["path"]).stem, 0.0) + d["cost_usd_priced"]
    both = sorted(set(theirs) & set(mine))
    a, b = sum(mine[k] for k in both), sum(theirs[k] for k in both)
    off = [k for k in both if abs(mine[k] - theirs[k]) > 0.01 * max(theirs[k], 0.01)]
    lines = [
        f"Root {os.path.relpath(root, HERE.parent.parent)}: {len(mine)} sessions priced by inspector, "
        f"{len(theirs)} by ccusage {CCUSAGE_VERSION} (--offline), "
        f"{len(both)} by both.",
        "",
        "| | inspector | ccusage | difference |",
        "|---|---:|---:|---:|",
        f"| the {len(both)} sessions both price | ${a:,.4f} | ${b:,.4f} | {100 * (a - b) / b if b else 0:+.3f}% |",
        f"| every session | ${sum(mine.values()):,.4f} | ${sum(theirs.values()):,.4f} | |",
        "",
        f"Sessions more than 1% apart: {len(off)}"
        + (" (" + ", ".join(off[:10]) + ")" if off else "")
        + (
            ". Where a session's subagent file is gone, ccusage's `session` leaves out the responses its agent_progress "
            "records relay (its `daily` counts them, as inspector does); a prompt over 200k tokens is billed whole at "
            "the long-context rates, ccusage bills only the tokens above 200k so (the day table below)"
            if off
            else ""
        ),
        f"Only inspector names: {len(set(mine) - set(theirs))}; only ccusage: {len(set(theirs) - set(mine))} "
        "(a session ccusage keys by a file name that is not a session id).",
    ]
    days_theirs = {d.get("period") or d.get("date"): d["totalCost"] for d in json.loads(ccd.stdout)["daily"]}
    rows = [d for d in map(json.loads, oursd.stdout.splitlines()) if d.get("day")]
    days_mine = {d["day"]: d["cost_usd_priced"] for d in rows}
    premium = {d["day"]: d["long_context"]["premium_usd"] for d in rows}
    shared = sorted(set(days_theirs) & set(days_mine))
    da, db = sum(days_mine.values()), sum(days_theirs.values())

    def apart(d: str) -> bool:
        """More than 1% apart, beyond what the long-context rule explains: Anthropic bills a request whose prompt is
        over 200k at the long rates whole; ccusage prices only the tokens above 200k at them."""
        gap, room = days_mine[d] - days_theirs[d], 0.01 * max(days_theirs[d], 0.01)
        return abs(gap) > room and not (0 < gap <= premium.get(d, 0.0) + room)

    days_off = [d for d in shared if apart(d)]
    long_days = [d for d in shared if premium.get(d) and abs(days_mine[d] - days_theirs[d]) > 0.01 * max(days_theirs[d], 0.01)]
    tm, tt = statistics.median(day_mine), statistics.median(day_theirs)
    lines += [
        "",
        f"Day by day (UTC): {len(days_mine)} days from inspector, {len(days_theirs)} from ccusage, {len(shared)} both.",
        "",
        "| | inspector `cost --by day` | ccusage `daily` | |",
        "|---|---:|---:|---:|",
        f"| total | ${da:,.4f} | ${db:,.4f} | {100 * (da - db) / db if db else 0:+.3f}% |",
        f"| of it, long-context rates (whole requests over 200k) | ${sum(premium.values()):,.4f} | | |",
        f"| days apart by the long-context rule alone | {len(long_days)} | | {', '.join(long_days[:6])} |",
        f"| days more than 1% apart otherwise | {len(days_off)} | | {', '.join(days_off[:6])} |",
        f"| wall time, median of {args.runs} (cold cache) | {tm:.2f} s | {tt:.2f} s | {tm / tt:.2f}× |",
        f"| wall time, median of {args.runs}, run again (the responses cache kept; ccusage keeps none) | "
        f"{statistics.median(day_warm):.2f} s | {tt:.2f} s | {statistics.median(day_warm) / tt:.2f}× |",
    ]
    text = "\n".join(lines) + "\n"
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "cost.md").write_text(text)
    print(text)
    if args.readme:
        from conformance.docblocks import write_block

        write_block(HERE.parent / "docs" / "benchmarks.md", "cost", text)
    agree = not days_off  # the same job, the same root: every day agrees, but for the long-context rule
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
