"""The benchmark runner: builds the inputs, measures inspector beside the floors and the peers in
one run, prints a table and writes it to bench/results/latest.{md,json}.

    python bench/run.py                  # everything (about 5-10 minutes on 2 cores)
    python bench/run.py --no-peers       # inspector and the floors only
    python bench/run.py --big-mb 50 --sessions 300   # a quicker, smaller run

Each measurement runs in its own process; time is wall clock, memory is that process's peak resident memory
(VmHWM: read by the process itself last where it is a snippet of this bench, else from /proc while it runs).
Peers are installed from their registries into bench/work/peers on first use. Ratios compare numbers measured in
the same run, the two sides of a ratio in interleaved rounds, so they hold on a noisy shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
CCL_VERSION = "1.7.0"
CCUSAGE_VERSION = "20.0.24"


@dataclass
class Result:
    name: str
    seconds: float | None
    rss_mb: float | None
    note: str = ""


def vm_hwm(pid: int | str) -> float | None:
    """A live process's peak resident memory (VmHWM, MB), or None when it cannot be read (gone, not Linux)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def run(
    cmd: list[str], *, env: dict[str, str] | None = None, timeout: float = 600, cwd: Path | None = None
) -> tuple[float | None, float | None, int, str]:
    """Run a command; return (seconds, peak memory in MB, exit code, the tail of its output).

    The peak is the child's VmHWM, read from /proc every 5 ms while it runs (never ru_maxrss, which the kernel seeds at
    exec with this harness's own peak and which holds the largest of a process's children too). A snippet of this
    bench reads its own VmHWM last (`py_timed`), which is exact; for a command, a growth in its last 5 ms is missed.
    """
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        deadline = t0 + timeout
        peak: float | None = None
        while True:
            now = vm_hwm(p.pid)
            if now is not None and (peak is None or now > peak):
                peak = now
            pid, status, _ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                p.kill()
                os.wait4(p.pid, 0)
                return None, None, -9, "timed out"
            time.sleep(0.005)
        secs = time.perf_counter() - t0
        out.seek(0)
        tail = out.read()[-2000:].decode("utf-8", "replace")
        code = os.waitstatus_to_exitcode(status)
        return secs, peak, code, tail


def py(code: str, *args: str, env: dict[str, str] | None = None) -> tuple[float | None, float | None, int, str]:
    """Run a snippet from a file (Textual reads its callers' source, which `python -c` does not have)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)
    try:
        return run([PY, f.name, *args], env=env)
    finally:
        os.unlink(f.name)


def py_timed(code: str, *args: str, env: dict[str, str] | None = None) -> tuple[float | None, float | None, int, str]:
    """Like `py`, with the seconds the snippet measured itself (its last line, JSON) instead of the wall time, and the
    peak memory it read of itself last (its VmHWM) when it printed one."""
    secs, rss, rc, tail = py(code, *args, env=env)
    if rc == 0:
        try:
            said = json.loads(tail.strip().splitlines()[-1])
            secs = float(said["seconds"])
            rss = float(said.get("vm_hwm_mb") or rss or 0) or None
        except (ValueError, KeyError, IndexError):
            return secs, rss, 1, "no timing printed: " + tail
    return secs, rss, rc, tail


def env_with(**kw: str) -> dict[str, str]:
    e = dict(os.environ)
    e.update(kw)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    return e


# -- the snippets each measurement runs -------------------------------------------------------

# The floors and the index print the seconds they spent, measured inside the process from before
# their imports: the interpreter's start (the same for all) and the freeing of everything at exit
# (which is not work a user waits for once the result is on screen) are left out of both sides.
FLOOR_NEWLINES = """
import time; t0 = time.perf_counter()
import sys, json
n = 0
with open(sys.argv[1], 'rb') as f:
    while True:
        b = f.read(1 << 20)
        if not b: break
        n += b.count(b'\\n')
t1 = time.perf_counter()
hwm = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) / 1024
print(json.dumps({"seconds": t1 - t0, "lines": n, "vm_hwm_mb": hwm}))
"""
FLOOR_DECODE = """
import time; t0 = time.perf_counter()
import sys, json, orjson
n = 0
with open(sys.argv[1], 'rb') as f:
    for line in f:
        orjson.loads(line); n += 1
t1 = time.perf_counter()
hwm = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) / 1024
print(json.dumps({"seconds": t1 - t0, "lines": n, "vm_hwm_mb": hwm}))
"""
OURS_INDEX = """
import time; t0 = time.perf_counter()
import sys, json
from inspector.transcript.session import Session
from inspector.tokens.series import context_series
s = Session.load(sys.argv[1])
series = context_series(s)
t1 = time.perf_counter()
hwm = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) / 1024
print(json.dumps({"seconds": t1 - t0, "records": len(s.records), "turns": len(series.turns), "vm_hwm_mb": hwm}))
"""
OURS_PREVIEWS = """
import sys, time, json
from datetime import datetime, timezone
from inspector.transcript.session import Session
from inspector.compact import compact, make_slice, CompactRequest, MicrocompactParams
from inspector.compact.base import Estimator
from inspector.compact.summary_compact import is_pivot_candidate
t0 = time.perf_counter(); s = Session.load(sys.argv[1]); sl = make_slice(s); t_index = time.perf_counter() - t0
t0 = time.perf_counter(); est = Estimator(s, sl.series); t_est = time.perf_counter() - t0
out = {"index": t_index, "estimator": t_est}
piv = [s.records[i].uuid for i in sl.messages if is_pivot_candidate(sl, i)]
for strat, kw in [("microcompact", {"microcompact_params": MicrocompactParams(force=True)}), ("session-memory", {}), ("full", {}),
                  ("partial", {"pivot": piv[len(piv) // 2]} if piv else None)]:
    if kw is None: continue
    t0 = time.perf_counter(); compact(s, CompactRequest(strat, **kw), estimator=est); out[strat] = time.perf_counter() - t0
print(json.dumps(out))
"""
TUI_PAINT = """
import sys, time, asyncio, json
from pathlib import Path
t_start = time.perf_counter()
from inspector.transcript.discovery import Target
from inspector.tokens.background import count_early
count_early(sys.argv[1])  # what `inspector FILE` does before it imports the app
from inspector.tui.app import InspectorApp
from inspector.tui.screens.session import SessionScreen
from inspector.tui.widgets.timeline import Timeline
marks = {}
async def main():
    app = InspectorApp(Target("file", Path(sys.argv[1])))
    async with app.run_test(size=(160, 48)) as pilot:
        while True:
            screen = app.screen
            if isinstance(screen, SessionScreen):
                if "first_paint" not in marks and screen.series is not None and screen.query_one(Timeline).rows:
                    marks["first_paint"] = time.perf_counter() - t_start
                if "browsable" not in marks and screen.series is not None and not screen.partial:
                    marks["browsable"] = time.perf_counter() - t_start  # every record on the timeline
                if screen.report is not None:
                    marks["loaded"] = time.perf_counter() - t_start
                    break
            await pilot.pause(0.01)
if __name__ == "__main__":  # the app starts worker processes, which import this script again
    asyncio.run(main())
    print(json.dumps(marks))
"""


def read_all(root: Path) -> None:
    """Every file under a folder (or the one file) read once, into the system's page cache: each measurement reads
    from memory, as the peers after it do (this machine's memory manager gives back pages it has not seen used for a
    minute or so, and a run that read the big session from the disk measured a floor of 2.4 s)."""
    if root.is_file():
        with open(root, "rb") as f:
            while f.read(1 << 20):
                pass
        return
    for d, _, names in os.walk(root):
        for n in names:
            try:
                with open(os.path.join(d, n), "rb") as f:
                    while f.read(1 << 20):
                        pass
            except OSError:
                pass


def ensure_peers(work: Path) -> dict[str, list[str] | None]:
    peers: dict[str, list[str] | None] = {"claude-code-log": None, "ccusage": None}
    venv = work / "peers" / "venv"
    ccl = venv / "bin" / "claude-code-log"
    if not ccl.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=False)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"claude-code-log=={CCL_VERSION}"], check=False)
    if ccl.exists():
        peers["claude-code-log"] = [str(ccl)]
    npm_dir = work / "peers" / "npm"
    cc = npm_dir / "node_modules" / ".bin" / "ccusage"
    if not cc.exists() and shutil.which("npm"):
        npm_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(npm_dir), f"ccusage@{CCUSAGE_VERSION}", "--silent"], check=False)
    if cc.exists():
        peers["ccusage"] = [str(cc)]
    return peers


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="inspector benchmarks")
    ap.add_argument("--work", type=Path, default=HERE / "work")
    ap.add_argument("--big-mb", type=int, default=200)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--rebuild", action="store_true", help="make the inputs again")
    args = ap.parse_args(argv)
    work: Path = args.work
    inputs = work / "inputs"
    stamp = inputs / f"made-{args.big_mb}-{args.sessions}"
    if args.rebuild or not stamp.exists():
        r = run(
            [PY, str(HERE / "make_inputs.py"), str(inputs), "--big-mb", str(args.big_mb), "--sessions", str(args.sessions)],
            timeout=1200,
        )
        if r[2] != 0:
            print(r[3], file=sys.stderr)
            return 1
        stamp.touch()
    big = next((inputs / "big" / "projects").rglob("*.jsonl"))
    big = next(p for p in (inputs / "big" / "projects" / "-home-ann-work-weatherly").glob("*.jsonl"))
    small = next((inputs / "small" / "projects" / "-home-ann-work-weatherly").glob("*.jsonl"))
    root = inputs / "root" / "projects"
    big_mb = big.stat().st_size / 2**20
    n_sessions = sum(1 for _ in root.glob("*/*.jsonl"))
    root_gb = sum(p.stat().st_size for p in root.rglob("*.jsonl")) / 2**30
    results: dict[str, Result] = {}
    env = env_with()

    def rec(key: str, name: str, r: tuple[float | None, float | None, int, str], note: str = "") -> None:
        secs, rss, code, tail = r
        if code != 0:
            note = (note + " " if note else "") + (
                "timed out" if code == -9 else f"failed ({code}): {tail.strip().splitlines()[-1] if tail.strip() else ''}"
            )
            secs = None
        results[key] = Result(name, secs, rss, note)
        print(
            f"  {name:<58} {'-' if secs is None else f'{secs:8.2f} s'}  {'' if rss is None else f'{rss:7.0f} MB'}  {note}",
            file=sys.stderr,
        )

    print(f"inputs: {big_mb:.0f} MB session; {n_sessions:,} sessions, {root_gb:.2f} GB", file=sys.stderr)
    read_all(big)
    rec("floor_newlines", f"floor: read {big_mb:.0f} MB and count newlines", py_timed(FLOOR_NEWLINES, str(big), env=env))
    # the floor and the index, and cold stats and ccusage, in interleaved rounds, the medians kept: their targets are
    # ratios, and this machine's speed drifts by a third within minutes (one pair of runs once said 3.8x, the
    # interleaved medians minutes later 1.7x)
    floors: list[tuple[float | None, float | None, int, str]] = []
    indexes: list[tuple[float | None, float | None, int, str]] = []
    for _ in range(ROUNDS):
        read_all(big)
        floors.append(py_timed(FLOOR_DECODE, str(big), env=env))
        read_all(big)
        indexes.append(py_timed(OURS_INDEX, str(big), env=env))
    each = f", median of {ROUNDS}"
    rec("floor_decode", f"floor: orjson-decode every line of {big_mb:.0f} MB{each}", median_run(floors))
    rec("index", f"inspector: index {big_mb:.0f} MB to a ready token series{each}", median_run(indexes))
    peers = ensure_peers(work) if not args.no_peers else {"claude-code-log": None, "ccusage": None}
    cache = Path(tempfile.mkdtemp(prefix="inspector-bench-cache-"))
    stats_env = env_with(XDG_CACHE_HOME=str(cache))
    colds: list[tuple[float | None, float | None, int, str]] = []
    ccusages: list[tuple[float | None, float | None, int, str]] = []
    with tempfile.TemporaryDirectory() as t:
        cfg = Path(t) / "claude"
        cfg.mkdir()
        (cfg / "projects").symlink_to(root)
        for _ in range(ROUNDS):
            # "cold" is inspector's cache empty, not the system's: the root is read once first, as the peers measured
            # after it find it in the page cache too (without this, a run where the system had dropped it measured
            # the disk)
            shutil.rmtree(cache, ignore_errors=True)
            read_all(root)
            colds.append(run([PY, "-m", "inspector", "stats", "--json", str(root)], env=stats_env))
            if peers["ccusage"]:
                ccusages.append(
                    run(
                        peers["ccusage"] + ["session", "--json", "--offline"],
                        env=env_with(CLAUDE_CONFIG_DIR=str(cfg)),
                        timeout=600,
                    )
                )
    rec("stats_cold", f"inspector: stats --json, {n_sessions:,} sessions, cold{each}", median_run(colds))
    if ccusages:
        rec("ccusage_root", f"ccusage {CCUSAGE_VERSION}: session --json, {n_sessions:,} sessions{each}", median_run(ccusages))
    elif not args.no_peers:
        results["ccusage_root"] = Result("ccusage", None, None, "could not be installed")
    rec(
        "stats_warm",
        f"inspector: stats --json, {n_sessions:,} sessions, warm",
        run([PY, "-m", "inspector", "stats", "--json", str(root)], env=stats_env),
    )
    shutil.rmtree(cache, ignore_errors=True)
    # the app with an empty cache (its first opening of a session), and the big session opened again with the cache
    # the first left (the report's token counts are kept per transcript)
    tui_cache = Path(tempfile.mkdtemp(prefix="inspector-bench-tui-"))
    tui_env = env_with(XDG_CACHE_HOME=str(tui_cache))
    for key, path, label, again in (
        ("tui_big", big, f"{big_mb:.0f} MB", False),
        ("tui_big_again", big, f"{big_mb:.0f} MB", True),
        ("tui_small", small, f"{small.stat().st_size / 1024:.0f} KB", False),
    ):
        # the big session's runs, TUI_ROUNDS of each, each after the index measured just before it: the TUI's targets
        # are ratios to the index, and this machine's speed drifts by a third within a run (the same index script
        # 0.6 s, then 0.87 s an hour later; 0.91-1.17 s minutes apart), which one pair, or a ratio to the index
        # measured minutes earlier, reports as the app's. The medians of the rounds are kept.
        rounds = TUI_ROUNDS if path == big else 1
        got: list[dict[str, float]] = []
        indexes: list[float] = []
        rss = None
        failed = None
        for _ in range(rounds):
            if not again:
                shutil.rmtree(tui_cache, ignore_errors=True)
                # what inspector keeps per install, not per session, made as any earlier run of it would have: the
                # tokenizer's parameters (estimate._kept_encoding); the session itself is new to the cache
                py("from inspector.tokens.estimate import encoding; encoding()", "-", env=tui_env)
            if path == big:
                read_all(path)
                isecs, _, icode, itail = py_timed(OURS_INDEX, str(big), env=env)
                if icode != 0 or isecs is None:
                    failed = (isecs, None, icode or 1, itail)
                    break
                indexes.append(isecs)
            read_all(path)
            secs, rss, code, tail = py(TUI_PAINT, str(path), env=tui_env)
            if code != 0:
                failed = (secs, rss, code, tail)
                break
            got.append(json.loads(tail.strip().splitlines()[-1]))
        if failed is not None:
            rec(f"{key}_first", f"inspector TUI, {label} session", failed)
            continue
        marks = {k: statistics.median(g[k] for g in got) for k in got[0]}
        if indexes:
            idx_name = f"inspector: index {big_mb:.0f} MB beside the TUI{' again' if again else ''}, median of {rounds}"
            results[f"{key}_index"] = Result(idx_name, statistics.median(indexes), None)
        each = f", median of {rounds}" if rounds > 1 else ""
        if again:
            results[f"{key}_loaded"] = Result(
                f"inspector TUI: fully loaded, {label} session opened again{each}", marks["loaded"], rss
            )
            print(
                f"  TUI {label} again: loaded {marks['loaded']:.2f} s (index {statistics.median(indexes):.2f} s)", file=sys.stderr
            )
        else:
            results[f"{key}_first"] = Result(f"inspector TUI: first paint, {label} session{each}", marks["first_paint"], rss)
            results[f"{key}_browsable"] = Result(f"inspector TUI: browsable, {label} session{each}", marks["browsable"], rss)
            results[f"{key}_loaded"] = Result(f"inspector TUI: fully loaded, {label} session{each}", marks["loaded"], rss)
            print(
                f"  TUI {label}: first paint {marks['first_paint']:.2f} s, browsable {marks['browsable']:.2f} s, "
                f"loaded {marks['loaded']:.2f} s, {rss:.0f} MB"
                + (f" (index {statistics.median(indexes):.2f} s)" if indexes else ""),
                file=sys.stderr,
            )
    shutil.rmtree(tui_cache, ignore_errors=True)  # the previews count the session's tokens themselves
    secs, rss, code, tail = py(OURS_PREVIEWS, str(big), env=tui_env)
    shutil.rmtree(tui_cache, ignore_errors=True)
    if code == 0:
        d = json.loads(tail.strip().splitlines()[-1])
        results["estimator"] = Result(
            f"inspector: calibrate token counts of {big_mb:.0f} MB (once per session)", d["estimator"], rss
        )
        for k in ("microcompact", "session-memory", "full", "partial"):
            if k in d:
                results[f"preview_{k}"] = Result(f"inspector: {k} preview on {big_mb:.0f} MB", d[k], rss)
        print(f"  previews: {d}", file=sys.stderr)
    else:
        rec("preview_full", "inspector: previews", (secs, rss, code, tail))
    if not args.no_peers:
        with tempfile.TemporaryDirectory() as t:
            if peers["claude-code-log"]:
                out = Path(t) / "ccl"
                rec(
                    "ccl_root",
                    f"claude-code-log {CCL_VERSION}: convert --all-projects, {n_sessions:,} sessions",
                    run(
                        peers["claude-code-log"]
                        + ["convert", str(root), "--all-projects", "--no-cache", "--no-individual-sessions", "-o", str(out)],
                        timeout=600,
                        env=env_with(HOME=t),
                    ),
                )
                rec(
                    "ccl_big",
                    f"claude-code-log {CCL_VERSION}: convert the {big_mb:.0f} MB session",
                    run(
                        peers["claude-code-log"] + ["convert", str(big), "--no-cache", "-o", str(Path(t) / "big.html")],
                        timeout=600,
                        env=env_with(HOME=t),
                    ),
                )
            else:
                results["ccl_root"] = Result("claude-code-log", None, None, "could not be installed")
            if peers["ccusage"]:
                bigcfg = Path(t) / "bigclaude"
                bigcfg.mkdir()
                (bigcfg / "projects").symlink_to(big.parent.parent)
                rec(
                    "ccusage_big",
                    f"ccusage {CCUSAGE_VERSION}: session --json on the {big_mb:.0f} MB session",
                    run(
                        peers["ccusage"] + ["session", "--json", "--offline"],
                        env=env_with(CLAUDE_CONFIG_DIR=str(bigcfg)),
                        timeout=600,
                    ),
                )
    write_results(results, big_mb, n_sessions, root_gb)
    return 0


TUI_ROUNDS = 3  # runs of the app on the big session, each after its own index run (see main)
ROUNDS = 3  # interleaved runs of the floor and the index, and of cold stats and ccusage (see main)


def median_run(runs: list[tuple[float | None, float | None, int, str]]) -> tuple[float | None, float | None, int, str]:
    """The run of the median time among rounds of one measurement, with the largest peak memory of them all; the first
    failed run, if any failed (its time measures nothing)."""
    failed = [r for r in runs if r[2] != 0 or r[0] is None]
    if failed:
        return failed[0]
    ordered = sorted(runs, key=lambda r: r[0] or 0.0)
    mid = ordered[len(ordered) // 2]
    peaks = [r[1] for r in runs if r[1] is not None]
    return mid[0], max(peaks) if peaks else None, mid[2], mid[3]


def ratio(a: Result | None, b: Result | None) -> float | None:
    if a is None or b is None or a.seconds is None or b.seconds is None or b.seconds == 0:
        return None
    return a.seconds / b.seconds


def write_results(results: dict[str, Result], big_mb: float, n: int, gb: float) -> None:
    g = results.get
    targets = []

    def target(what: str, value: float | None, limit: float, unit: str = "×") -> None:
        if value is None:
            targets.append((what, "not measured", f"≤ {limit}{unit}", "?"))
        else:
            targets.append((what, f"{value:.2f}{unit}", f"≤ {limit}{unit}", "met" if value <= limit else "missed"))

    target("index / decode-every-line floor", ratio(g("index"), g("floor_decode")), 1.0)
    idx = g("index")
    # (issue 29) memory under twice the file: the peak (VmHWM) of the process that indexes it, and of the app's
    mem = (idx.rss_mb / big_mb) if idx and idx.rss_mb is not None else None
    target("peak memory (VmHWM) while the big session is indexed / its size", mem, 2.0)
    tui = g("tui_big_loaded")
    app_mem = tui.rss_mb / big_mb if tui and tui.rss_mb else None
    target("peak memory (VmHWM) of the app on the big session / its size", app_mem, 2.0)
    target("TUI first paint, big / small", ratio(g("tui_big_first"), g("tui_small_first")), 1.5)
    # each TUI run against the index measured just before it (see main)
    target("TUI browsable / index, big session", ratio(g("tui_big_browsable"), g("tui_big_index") or idx), 1.5)
    target("TUI fully loaded / index, big session", ratio(g("tui_big_loaded"), g("tui_big_index") or idx), 2.0)
    target(
        "TUI fully loaded / index, big session opened again",
        ratio(g("tui_big_again_loaded"), g("tui_big_again_index") or idx),
        2.0,
    )
    for k in ("microcompact", "session-memory", "full", "partial"):
        target(f"{k} preview / index time", ratio(g(f"preview_{k}"), idx), 0.25)
    warm = g("stats_warm")
    target("stats warm, seconds per 1,000 sessions", warm.seconds / n * 1000 if warm and warm.seconds else None, 0.2, " s")
    target("stats cold / ccusage", ratio(g("stats_cold"), g("ccusage_root")), 1.5)
    target("stats cold / claude-code-log", ratio(g("stats_cold"), g("ccl_root")), 1.0)
    lines = [
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; "
        f"inputs: one {big_mb:.0f} MB session, {n:,} sessions ({gb:.2f} GB).",
        "",
        "| measurement | time | peak memory | note |",
        "|---|---:|---:|---|",
    ]
    for r in results.values():
        lines.append(
            f"| {r.name} | {'-' if r.seconds is None else f'{r.seconds:.2f} s'} | "
            f"{'-' if r.rss_mb is None else f'{r.rss_mb:.0f} MB'} | {r.note} |"
        )
    lines += ["", "| target | measured | goal | |", "|---|---:|---:|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in targets]
    md = "\n".join(lines) + "\n"
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.md").write_text(md)
    sys.path.insert(0, str(ROOT))
    from conformance.docblocks import write_block

    write_block(ROOT / "docs" / "benchmarks.md", "bench", md)
    (out / "latest.json").write_text(
        json.dumps(
            {
                "results": {k: asdict(v) for k, v in results.items()},
                "targets": [dict(zip(("target", "measured", "goal", "status"), t)) for t in targets],
                "inputs": {"big_mb": big_mb, "sessions": n, "root_gb": gb},
            },
            indent=2,
        )
    )
    print(md)


if __name__ == "__main__":
    raise SystemExit(main())
