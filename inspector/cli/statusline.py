"""`inspector statusline`: the line Claude Code's `statusLine` setting shows, from the JSON it pipes on stdin."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.cli.common import EXIT_OK, Parser, add_install_flags, install_setting, own_command, stdin_json

BUDGET = 2.0  # seconds
# 2: fast mode and US-only; 3: advisor iterations, billed sums, relayed subagent responses; 4: Cost whole;
# 5: a model announcement sets the model in force
STATE_VERSION = 7  # 6: where Claude Code compacted on its own; 7: where the session met a limit (a 1M window refuted)
FIELDS = ("line", "used", "window", "percent", "left", "level", "cost", "model", "version")


def _statusline_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector statusline",
        description="For Claude Code's statusLine setting: reads the JSON Claude Code pipes on stdin (the session's "
        "transcript path, model, version) and prints one line: the context used, how far it is from auto-compaction "
        "by the rules of that release, model and settings (or where the API refuses, when the threshold is not "
        "enforced), the warning or blocking state, and the session's cost so far (as `inspector cost` prices it).",
    )
    p.add_argument(
        "--format",
        metavar="TEMPLATE",
        help="compose your own line from {line} {used} {window} {percent} {left} {level} {cost} {model} {version} "
        "(e.g. '{percent}%% · {left} left')",
    )
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object instead")
    p.add_argument("--no-color", action="store_true", help="no colours (also when NO_COLOR is set)")
    add_install_flags(
        p,
        "set Claude Code's statusLine to this command in your settings.json: shows the change, asks, keeps a backup, "
        "touches no other key",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=BUDGET,
        metavar="SECONDS",
        help=f"the time the first read of a long session may take before the line says how far it got (the read goes "
        f"on from there next time; later reads take only what was appended; default {BUDGET})",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _text(d: dict[str, Any], key: str) -> str | None:
    v = d.get(key)
    return v if isinstance(v, str) and v else None


def cmd_statusline(args: argparse.Namespace, out: Any, err: Any, stdin: Any = None) -> int:
    from inspector.cli.common import json_text
    from inspector.library.cost import usd
    from inspector.textutil import printable
    from inspector.tokens.thresholds import Settings
    from inspector.transcript.discovery import InspectorError

    if args.install:
        return _install(args, out, err)
    data = stdin_json(stdin if stdin is not None else sys.stdin, "statusline", "Claude Code's statusline JSON")
    path = _text(data, "transcript_path")
    if path is None:
        raise InspectorError("statusline: the JSON on stdin names no transcript_path")
    p = Path(path).expanduser()
    if not p.is_file():
        raise InspectorError(f"statusline: no transcript at {printable(str(p))}")
    settings = Settings.from_environment()  # Claude Code's own environment: the command runs inside it
    model = data.get("model")
    model_id = _text(model, "id") if isinstance(model, dict) else None
    if model_id:  # the model running now (after a /model switch too); records never carry its [1m]
        settings = settings.with_(model=model_id)
    from inspector.claude.release import measured_releases, parse_version, show_version

    said = _text(data, "version")  # the release running now: its rules when the transcript names none yet
    if said is not None and parse_version(said) is None:
        raise InspectorError(f"statusline: {printable(said)!r} is not a Claude Code release (the JSON's version)")
    live = read_live(p, settings, budget=args.budget, version=said)
    if live.now is None:  # the first read of a long session did not finish within the budget: it goes on next time
        out.write(f"inspector: reading this session ({100 * live.offset // max(1, live.size)}%)\n")
        return EXIT_OK
    now, cost = live.now, live.cost
    figures = {
        "used": now.tokens,
        "window": now.window,
        "percent": round(100 * now.tokens / now.window),
        "left": now.left,
        "level": now.level,
        "cost": cost.get("cost_usd"),
        "model": now.thresholds.model,
        "version": live.version or _text(data, "version"),
    }
    if args.json:
        out.write(json_text({**now.as_dict(), **figures, "session_id": live.session_id, "read_bytes": live.read}))
        return EXIT_OK
    line = now.describe()
    running = parse_version(live.version)
    newest = max(measured_releases(), default=None)
    if running is not None and newest is not None and running > newest:  # rules not measured on this release yet
        line += f" · rules of {show_version(newest)}"
    priced = cost.get("cost_usd_priced")
    if isinstance(priced, (int, float)):
        line += f" · {usd(priced)}" + ("" if cost.get("cost_usd") is not None else "+?")
    if args.format:
        values = {k: ("" if v is None else v) for k, v in figures.items()}
        values["line"] = line
        values["cost"] = usd(priced) if isinstance(priced, (int, float)) else ""
        try:
            line = args.format.format_map(values)
        except (KeyError, ValueError, IndexError, AttributeError) as exc:
            raise InspectorError(
                f"statusline: --format {args.format!r} is not a template of {', '.join('{' + f + '}' for f in FIELDS)} ({exc})"
            ) from None
    line = printable(line)
    if not (args.no_color or os.environ.get("NO_COLOR")):
        colour = {"warning": "33", "compact": "31", "blocked": "1;31"}.get(now.level)
        if colour:
            line = f"\x1b[{colour}m{line}\x1b[0m"
    out.write(line + "\n")
    return EXIT_OK


def command_line() -> str:
    """How Claude Code should run this inspector's statusline."""
    return own_command("statusline")


def _install(args: argparse.Namespace, out: Any, err: Any) -> int:
    return install_setting(
        args,
        out,
        err,
        "statusLine",
        {"type": "command", "command": command_line()},
        already="statusLine is already set to this command",
        done="statusLine set",
        after="Claude Code shows it from its next message",
    )


# -- the session read as it grows ---------------------------------------------------------------------------------
@dataclass
class Live:
    """What the statusline knows of a session: its context now (None while a first read is still going on), its cost
    (as `inspector cost` prices it, subagents included), and how much of the file was read."""

    now: Any
    cost: dict[str, Any]
    offset: int
    size: int
    read: int  # bytes read by this run
    version: str | None
    session_id: str


def read_live(path: Path, settings: Any, *, budget: float = BUDGET, env: Any = None, version: str | None = None) -> Live:
    """The transcript's figures, reading only what was appended since the last run: the whole-file facts and the
    responses' cost go on from an offset kept in the cache (tokens.series.FileFacts, library.cost.RunningCost), and
    the context at the leaf is read from the file's end (tokens.now.tail_context). A file that was replaced, cut or
    rewritten before the offset is read again from its start. `version`: the release running the session, whose rules
    apply while the transcript names none (its first records)."""
    import time

    from inspector.library.cost import PriceTable, RunningCost, price_subagents
    from inspector.statefiles import read_state, state_file, write_state
    from inspector.tokens.now import tail_context
    from inspector.tokens.series import FileFacts
    from inspector.transcript.index import FileChanged, Transcript

    deadline = time.monotonic() + budget
    table = PriceTable.load()
    where = state_file("statusline", str(path.resolve()), env)
    st = os.stat(path)
    prices = [table.date, *_prices_stamp()]
    state = read_state(where)
    if not _state_holds(state, path, st, prices):
        state = None
    for attempt in range(2):
        if state is None:
            state = {"v": STATE_VERSION, "ino": st.st_ino, "offset": 0, "line": 1, "prices": prices, "sid": [None, None]}
            # a second read keeps every response open: the file repeats one that the first had let go of
            facts, cost, subs = FileFacts(), RunningCost(None if attempt else RunningCost.RECENT), {}
        else:
            facts, cost = FileFacts.from_json(state["facts"]), RunningCost.from_json(state["cost"])
            subs = state.get("subs") or {}
        t = Transcript.resume(path, state["offset"], state["line"], state["ino"])
        read, ok, late = 0, True, False
        try:
            while True:
                before = t.scanned_to
                new = t.update(max_bytes=CHUNK)
                read += t.scanned_to - before
                for r in new:
                    facts.add(r)
                    facts.add_leaf(r)
                    if not cost.add(r, table):
                        ok = False
                        break
                    sid = r.session_id
                    if sid:
                        if state["sid"][1] is None:
                            state["sid"][1] = sid
                        if state["sid"][0] is None and not r.is_sidechain:
                            state["sid"][0] = sid
                late = time.monotonic() > deadline
                if not ok or not new or t.scanned_to >= t.size or late:
                    break
                t.records.clear()
        except FileChanged:
            ok = False
        finally:
            t.close()
        if ok:
            break
        state = None  # read it again from the start
    state.update(offset=t.scanned_to, line=t.next_line, tail=_tail_hash(path, t.scanned_to))
    state["facts"], state["cost"] = facts.as_json(), cost.as_json()
    session_id = state["sid"][0] or state["sid"][1] or path.stem
    if late and t.scanned_to < t.size:  # out of time: say how far, go on next time
        write_state(where, state)
        return Live(None, {}, t.scanned_to, t.size, read, facts.version, session_id)
    if facts.version is None and version is not None:
        facts.version = version  # for this run's figures only: the state keeps what the file says
    now, tail = tail_context(path, facts, t.scanned_to, settings)
    own = cost.cost(table)
    sub_resps = _subagent_responses(path, session_id, subs, cost.copied_agents)
    sub_resps += cost.relayed_responses({r.key for r in sub_resps})  # a subagent whose transcript is gone
    sub_cost = price_subagents(cost.seen, sub_resps, table)
    state["subs"] = subs
    write_state(where, state)
    return Live(now, _cost_fields(own, sub_cost, table), t.scanned_to, t.size, read + tail, facts.version, session_id)


CHUNK = 8 << 20  # bytes read between two looks at the clock


def _cost_fields(own: Any, subs: Any, table: Any) -> dict[str, Any]:
    from inspector.library.cost import Cost

    total = Cost()
    total.merge(own)
    total.merge(subs)
    return {
        "cost_usd": round(total.usd, 6) if not total.unknown else None,
        "cost_usd_priced": round(total.usd, 6),
        "cost_subagents_usd": round(subs.usd, 6),
        "cost_unknown_models": dict(sorted(total.unknown.items())),
        "cost_responses": total.responses,
    }


def _subagent_responses(path: Path, session_id: str, memo: dict[str, Any], skip: set[str]) -> list[Any]:
    """The session's subagent transcripts' responses (library.cost.agent_file_responses), each file read again only
    when it changed (`memo`: path -> [size, mtime_ns, responses], kept in the state; left with the files there now)."""
    from inspector.library.cost import Response, agent_file_responses
    from inspector.transcript.session import agent_files, flat_agents

    flat = [] if path.name.startswith("agent-") else flat_agents(path, session_id)
    known = {(p, int(v[0]), int(v[1])): [Response(*r) for r in v[2]] for p, v in memo.items()}
    got = agent_file_responses([(aid, p) for _layout, aid, p in agent_files(path, flat)], skip, known)
    memo.clear()
    memo.update({key[0]: [key[1], key[2], [list(_astuple(r)) for r in found]] for key, found in got})
    return [r for _key, found in got for r in found]


def _astuple(r: Any) -> tuple[Any, ...]:
    return (
        r.key, r.model, r.timestamp, r.input, r.cache_write, r.cache_write_1h, r.cache_read, r.output, r.web_searches, r.line,
        r.fast, r.us_only,
    )  # fmt: skip


def _prices_stamp() -> list[Any]:
    """The user's prices file as it is now (a change prices the session again)."""
    from inspector.library.cost import user_prices_path

    try:
        st = os.stat(user_prices_path())
        return [st.st_size, st.st_mtime_ns]
    except OSError:
        return [None, None]


def _tail_hash(path: Path, offset: int) -> str:
    import hashlib

    with open(path, "rb") as f:
        f.seek(max(0, offset - 256))
        return hashlib.blake2b(f.read(min(offset, 256)), digest_size=12).hexdigest()


def _state_holds(state: dict[str, Any] | None, path: Path, st: os.stat_result, prices: list[Any]) -> bool:
    """Whether a kept state is of this file as it is (same inode, not shorter, the same bytes before its offset) and
    of the same prices."""
    if not state or state.get("v") != STATE_VERSION or state.get("prices") != prices or state.get("ino") != st.st_ino:
        return False
    try:
        off = int(state["offset"])
        if off > st.st_size or not isinstance(state.get("facts"), dict) or not isinstance(state.get("cost"), dict):
            return False
        return state.get("tail") == _tail_hash(path, off)
    except (KeyError, TypeError, ValueError, OSError):
        return False
