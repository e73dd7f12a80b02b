"""`python -m conformance --random N --seed S [--version V]`: N generated scenarios (conformance/generate.py) run with
the real binary, each checked whole:

- **facts**: every compaction's cause, preTokens and kept count, the threshold and its enforcement, as
  conformance/compare.py reads them from the run and from inspector;
- **requests**: every request the fake received (main thread and subagents, refused ones included) equals the one
  inspector rebuilds from the transcripts alone: messages, system prompt, tools, parameters, betas, cache
  breakpoints;
- **wire**: every main-thread request equals the wire form of the records in force just before it (what the
  previews are made of);
- **fields**: every record type and field the run wrote is one inspector knows;
- **replay**: each compaction done again by inspector from the session cut before it keeps the messages Claude
  Code kept, writes the records it wrote and previews what its records send (conformance/replay.py);
- **round trip**: a seeded choice of the strategies inspector offers on the run's transcript, each saved and
  resumed by the same binary, its first request what the preview showed (conformance/resume.py).

A seed that fails any check is written to conformance/found.json as a named scenario, kept for good: the next
runs (and `--scenario found_<seed>`) run it again, whatever the seeds asked for.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.generate import repl_scenario, scenario
from conformance.runner import Claude, install, run, save
from conformance.scenarios import Scenario

ROOT = Path(__file__).resolve().parent.parent
FOUND = Path(__file__).with_name("found.json")
DOC = ROOT / "docs" / "conformance-generated.md"
CHECKS = ("facts", "requests", "wire", "fields", "replay", "round trip")
ROUND_TRIPS = 2  # strategies resumed per generated run
STEP_TIMEOUT = 180  # seconds a step or a resume may take (a hung run is a finding, not the night)


@dataclass
class GenRow:
    name: str
    doc: str
    failures: dict[str, list[str]] = field(default_factory=dict)  # check -> what differed
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # check -> (ok, tried)
    seconds: float = 0.0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and not any(self.failures.values())


def load_found() -> list[Scenario]:
    if not FOUND.exists():
        return []
    return [Scenario.from_dict(d) for d in json.loads(FOUND.read_text())]


def keep_found(sc: Scenario, version: str, why: str) -> None:
    have = json.loads(FOUND.read_text()) if FOUND.exists() else []
    if any(d["name"] == sc.name.replace("gen_", "found_") for d in have):
        return
    d = sc.as_dict()
    d.update(name=sc.name.replace("gen_", "found_"), version=version, doc=f"{sc.doc}. Found on {version}: {why}"[:600])
    have.append(d)
    tmp = FOUND.with_suffix(".tmp")
    tmp.write_text(json.dumps(have, indent=1) + "\n")
    tmp.replace(FOUND)


def check(sc: Scenario, claude: Claude, out: Path, *, round_trips: int = ROUND_TRIPS) -> GenRow:
    """Run one scenario and every check on what it left."""
    from conformance.compare import compare, wire_differences
    from conformance.replay import replay
    from conformance.resume import run_resume
    from conformance.runner import load_requests

    row = GenRow(sc.name, sc.doc)
    t0 = time.monotonic()
    try:
        r = run(sc, claude, timeout=STEP_TIMEOUT)
    except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
        # the run could not be driven (a REPL's terminal gone, the binary not started): this scenario's row says so,
        # the others go on
        row.error = f"the run could not be driven: {exc}"[:300]
        row.seconds = time.monotonic() - t0
        return row
    try:
        folder = save(r, out)
        failed = [st for st in r.steps if st.returncode not in (0, 1)]
        if failed:
            row.error = f"claude exited {failed[0].returncode}: {failed[0].stderr.strip()[-200:]}"
        c = compare(folder)
        facts = [n for n in c.notes if not n.startswith(("fields inspector", "all ")) and "requests rebuilt" not in n]
        row.failures["facts"] = facts
        row.counts["facts"] = (int(not facts), 1)
        diffs = c.inspector.request_diffs
        recorded = c.inspector.requests_recorded
        total = len([q for q in load_requests(folder) if q["kind"] in ("turn", "subagent")]) if recorded else 0
        row.failures["requests"] = diffs[:5]
        row.counts["requests"] = (total - len([d for d in diffs if d.startswith("request ")]), total)
        checked, wire = wire_differences(folder)
        row.failures["wire"] = wire[:5]
        row.counts["wire"] = (checked - len(wire), checked)
        row.failures["fields"] = [", ".join(c.unknown)] if c.unknown else []
        row.counts["fields"] = (int(not c.unknown), 1)
        rep = replay(folder)
        tried = [x for x in rep if not x.detail.startswith("not replayed")]
        row.failures["replay"] = [f"compaction {x.boundary} ({x.what}): {x.detail}" for x in tried if not x.ok]
        row.counts["replay"] = (sum(x.ok for x in tried), len(tried))
        rng = random.Random(f"round-trip-{sc.name}")
        pick: Callable[[list[Any]], list[Any]] = lambda cases: rng.sample(cases, min(round_trips, len(cases)))  # noqa: E731
        rt = run_resume(folder, claude, pick=pick, timeout=STEP_TIMEOUT) if round_trips else []
        done = [x for x in rt if not x.detail.startswith("not applicable")]
        row.failures["round trip"] = [f"{x.case}: {x.detail}" for x in done if not x.ok]
        row.counts["round trip"] = (sum(x.ok for x in done), len(done))
    except Exception as exc:  # a crash of inspector on a generated run is a finding, not the end of the run
        import traceback

        row.error = f"{type(exc).__name__}: {exc} ({traceback.format_exc().strip().splitlines()[-3].strip()})"
    finally:
        r.close()
    row.seconds = time.monotonic() - t0
    return row


def run_generated(
    n: int,
    seed: int,
    version: str,
    *,
    jobs: int = 2,
    out: Path,
    keep: bool = True,
    repl: int | None = None,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> list[GenRow]:
    """n print-mode scenarios from `seed` on, and `repl` REPL ones ending in a partial compaction (default n // 8,
    none without tmux), then the kept ones."""
    claude = install(version, log=log)
    scs = [scenario(seed + k) for k in range(n)]
    repl = (n // 8 if shutil.which("tmux") else 0) if repl is None else repl
    scs += [repl_scenario(seed + k) for k in range(repl)]
    asked = {_shape(s) for s in scs}
    scs += kept_for(seed, asked)

    def one(sc: Scenario) -> GenRow:
        row = check(sc, claude, out)
        what = (
            "ok" if row.ok else "FAILED " + (row.error or "; ".join(f"{k}: {v[0]}" for k, v in row.failures.items() if v))[:400]
        )
        log(f"{sc.name}: {what} ({row.seconds:.0f} s)")
        if not row.ok and keep and sc.name.startswith("gen_"):
            keep_found(sc, version, row.error or next(f"{k}: {v[0]}" for k, v in row.failures.items() if v))
        return row

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, scs))


def _shape(sc: Scenario) -> str:
    """A scenario as what it runs (its name, words and release aside)."""
    d = sc.as_dict()
    for k in ("name", "doc", "version"):
        d.pop(k, None)
    return json.dumps(d, sort_keys=True)


KEPT_PER_RUN = 100  # kept scenarios a run of --random takes, in rotation: with all of them it no longer fit 30 minutes


def kept_for(seed: int, asked: set[Any], limit: int = KEPT_PER_RUN) -> list[Scenario]:
    """The kept scenarios (conformance/found.json) a run of --random from `seed` checks too: not those its seeds ask
    for again (they run once), nor those the normal suite holds as goldens (their runs are replayed at every test
    run); of the rest, `limit` in a rotation that starts where the seed falls, so that runs from other seeds reach
    every one."""
    goldens = Path(__file__).resolve().parent.parent / "tests" / "goldens"
    rest = [f for f in load_found() if _shape(f) not in asked and not (goldens / f.name.replace("found_", "gen_", 1)).is_dir()]
    if len(rest) <= limit:
        return rest
    start = seed % len(rest)
    return (rest + rest)[start : start + limit]


def table(rows: list[GenRow], version: str, n: int, seed: int, seconds: float, jobs: int, kept: int = 0) -> str:
    ok = sum(r.ok for r in rows)
    lines = [
        f"Claude Code {version}, `python -m conformance --random {n} --seed {seed}` ({len(rows) - kept} generated runs, "
        f"{kept} kept scenarios from conformance/found.json: those no golden holds, {KEPT_PER_RUN} at most in a "
        f"rotation from the seed): {ok} of {len(rows)} runs pass every check, in {seconds / 60:.1f} min with {jobs} jobs.",
        "",
        "| check | passed | of |",
        "|---|---|---|",
    ]
    for c in CHECKS:
        a = sum(r.counts.get(c, (0, 0))[0] for r in rows)
        b = sum(r.counts.get(c, (0, 0))[1] for r in rows)
        lines.append(f"| {c} | {a:,} | {b:,} |")
    bad = [r for r in rows if not r.ok]
    if bad:
        lines += ["", "| run | scenario | what differed |", "|---|---|---|"]
        for r in bad:
            what = r.error or "; ".join(f"{k}: {v[0]}" for k, v in r.failures.items() if v)
            lines.append(f"| `{r.name}` | {_md(r.doc)} | {_md(what[:300])} |")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_doc(text: str) -> None:
    head = (
        "# Generated conformance runs\n\nGenerated by `python -m conformance --random N --seed S --doc` "
        "(conformance/generated.py): seeded scenarios nobody wrote, run with the real binary and checked whole "
        "(facts, every request, every field, each compaction replayed, saved strategies resumed). Not typed.\n\n"
    )
    from conformance.docblocks import write_page

    write_page(DOC, head + text)
