"""`inspector cost`."""

from __future__ import annotations

import argparse
import re
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from inspector.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    Parser,
    add_window_flags,
    json_lines,
    refuse_unreadable,
    report_skipped,
    target_of,
    when_arg,
)


def _cost_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector cost",
        description="What the sessions under PATH cost: every API response priced by its model (input, output, cache "
        "reads, 5-minute and 1-hour cache writes, web searches), each response counted once across the whole root "
        "(streamed fragments, resumed and forked copies, subagent files that repeat their parent's), subagents "
        "included. Prices: the table shipped in the package (dated), over which $XDG_CONFIG_HOME/inspector/"
        "prices.json (or $INSPECTOR_PRICES) wins; a model with no price is reported, never priced as zero.",
    )
    p.add_argument("path", nargs="?", help="a projects root, a project folder or a .jsonl file (default: the projects root)")
    p.add_argument(
        "--by",
        choices=["session", "project", "day", "week", "month", "model", "block"],
        default="session",
        help="group by session (default), project, day, ISO week or month (UTC, of each response), model, or block: "
        "the 5-hour billing blocks of Claude's usage limits (from the hour of a block's first response; the active "
        "block's burn rate and projection to its end)",
    )
    add_window_flags(p, "responses")
    p.add_argument(
        "--check-prices",
        action="store_true",
        help="say which models of the sessions under PATH have no price (in the table shipped with inspector or your "
        "prices file), and which have no fast-mode price where a response ran fast; exit 1 when any has none",
    )
    p.add_argument("--json", action="store_true", help="print JSON Lines: one object per group, one per line")
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor keep what each transcript's responses were read as (by day, week, month, model or "
        "block over a folder, a transcript unchanged since the last run is not read again)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_cost(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.library.cost import Cost, Ledger, responses, subagent_responses, usd
    from inspector.textutil import printable
    from inspector.transcript.discovery import project_name
    from inspector.transcript.session import Session

    path, target = target_of(args, err)
    since, until = when_arg(args.since, "--since"), when_arg(args.until, "--until")
    windowed = since is not None or until is not None

    def in_window(r: Any) -> bool:
        ts = (r.timestamp or "")[:19]
        return not windowed or (bool(ts) and (since is None or ts >= since) and (until is None or ts < until))

    ledger = Ledger()
    if args.check_prices:
        return _check_prices(target, ledger, out)
    for problem in ledger.table.problems:
        err.write(printable(f"inspector: prices: {problem}") + "\n")
    if args.by == "block":
        from inspector.library.cost import timed_responses

        with _responses_cache(args) as cache:
            priced, total, skipped = timed_responses(target, ledger, in_window, cache=cache)
        report_skipped(skipped, err)
        return _blocks_report(args, out, priced, ledger, total)
    from inspector.library.cost import oldest_first

    groups: dict[str, dict[str, Any]] = {}
    skipped: list[tuple[Path, str]] = []
    total = Cost()

    def group(key: str, **facts: Any) -> dict[str, Any]:
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"key": key, **facts, "own": Cost(), "subagents": Cost(), "claude_code_usd": None}
        return g

    def charge(g: dict[str, Any], side: str, r: Any) -> None:
        ledger.price([r], g[side])  # the total is the groups' (added up once, below)

    whole = args.by in ("session", "project")  # the title, the cwd, Claude Code's own figure: every record
    # only the responses (rows by day, week, month or model over a folder): read in worker processes, each file once
    responses_only = not whole and target.kind != "file"
    with _responses_cache(args) as cache:
        if responses_only:
            from inspector.library.cost import responses_oldest_first

            for f, got in responses_oldest_first(target, cache=cache):
                if isinstance(got, str):
                    skipped.append((f, got))
                    continue
                own_rs, sub_rs = got
                for side, r in [("own", r) for r in own_rs] + [("subagents", r) for r in sub_rs]:
                    if not in_window(r):
                        continue
                    key, facts = _group_of(args.by, r)
                    charge(group(key, **facts), side, r)
        # each subagent transcript's responses kept across runs (costcache.KeptMemo)
        memo = cache.memo() if cache is not None and not responses_only else None
        if memo is not None and target.kind != "file":
            cache.prefetch(target.path)  # (one query for the folder's rows, not one a subagent file)
        for f in () if responses_only else oldest_first(target):  # every record: the session's facts
            try:
                s = Session.load(f)
            except OSError as exc:
                skipped.append((f, exc.strerror or str(exc)))
                continue
            if target.kind == "file":
                refuse_unreadable(s, f)
            try:
                if args.by == "session" and not windowed:
                    own, subs = ledger.session(s, memo)
                    g = group(
                        str(f),
                        session_id=s.session_id,
                        title=s.title,
                        project=s.cwd or f.parent.name,
                        first_timestamp=s.time_span[0],
                    )
                    g["own"].merge(own)
                    g["subagents"].merge(subs)
                    cc = s.claude_cost
                    if cc is not None:
                        g["claude_code_usd"] = cc["total_usd"]
                    continue
                for side, r in [("own", r) for r in responses(s)] + [("subagents", r) for r in subagent_responses(s, memo)]:
                    if not in_window(r):
                        continue
                    if args.by == "session":
                        key = str(f)
                        first = s.time_span[0]
                        g = group(
                            key, session_id=s.session_id, title=s.title, project=s.cwd or f.parent.name, first_timestamp=first
                        )
                    elif args.by == "project":
                        key = str(f.parent)
                        g = group(key, project=project_name([s.cwd], f.parent) if s.cwd else f.parent.name)
                    else:
                        key, facts = _group_of(args.by, r)
                        g = group(key, **facts)
                    charge(g, side, r)
            finally:
                s.close()
        if memo is not None:
            memo.flush()
    report_skipped(skipped, err)
    rows = list(groups.values())
    for g in rows:  # in the order the groups began: a session's, as it was read
        total.merge(g["own"])
        total.merge(g["subagents"])
    if args.by in ("day", "week", "month"):
        rows.sort(key=lambda g: g["key"])
    else:
        rows.sort(key=lambda g: -(g["own"].usd + g["subagents"].usd))
    if args.json:

        def obj(g: dict[str, Any]) -> dict[str, Any]:
            both = Cost()
            both.merge(g["own"])
            both.merge(g["subagents"])
            d = {k: v for k, v in g.items() if k not in ("own", "subagents", "key")}
            if args.by in ("session", "project"):
                d["path" if args.by == "session" else "project_dir"] = g["key"]
            d.update(
                cost_usd=round(both.usd, 6) if not both.unknown else None,
                cost_usd_priced=round(both.usd, 6),
                cost_subagents_usd=round(g["subagents"].usd, 6),
                cost_by_model=both.as_dict()["by_model"],
                unknown_models=both.as_dict()["unknown_models"],
                responses=both.responses,
                duplicates_skipped=both.duplicates,
                tokens=both.tokens,
                web_searches=both.web_searches,
                fast=both.as_dict()["fast"],
                us_only=both.as_dict()["us_only"],
                long_context=both.as_dict()["long_context"],
                prices=ledger.table.date,
            )
            if g.get("claude_code_usd") is not None:
                d["difference_usd"] = round(both.usd - g["claude_code_usd"], 6)
            return d

        out.write(json_lines(obj(g) for g in rows))
        return EXIT_OK
    label = {
        "session": "session",
        "project": "project",
        "day": "day (UTC)",
        "week": "ISO week (UTC)",
        "month": "month (UTC)",
        "model": "model",
    }[args.by]
    out.write(f"{'cost':>10} {'subagents':>10} {'responses':>9}  {label}\n")
    for g in rows:
        both = Cost()
        both.merge(g["own"])
        both.merge(g["subagents"])
        if args.by == "session":
            name = f"{(g.get('first_timestamp') or '')[:10]}  {g.get('title') or '(untitled)'}  [{g.get('project')}]"
        else:
            name = str(g.get("project")) if args.by == "project" else g["key"]
        extra = ""
        if both.unknown:
            extra += f"  (+ {sum(both.unknown.values())} response(s) of {', '.join(both.unknown)} with no price)"
        if g.get("claude_code_usd") is not None:
            extra += f"  (Claude Code says {usd(g['claude_code_usd'])})"
        out.write(
            printable(
                f"{usd(both.usd):>10} {usd(g['subagents'].usd) if g['subagents'].responses else '':>10} "
                f"{both.responses:>9}  {name}{extra}"
            )
            + "\n"
        )
    tail = f"{usd(total.usd):>10} {'':>10} {total.responses:>9}  total"
    if total.unknown:
        tail += f" of what has a price; no price for {', '.join(f'{m} ({n})' for m, n in total.unknown.items())}"
    out.write(printable(tail) + "\n")  # model names come from the transcript: never terminal escapes
    if total.fast_responses:
        out.write(
            f"  of which fast mode: {usd(total.fast_usd)} over {total.fast_responses:,} response(s) (every rate times the "
            "model's fast multiplier)\n"
        )
    if total.us_only_responses:
        out.write(
            f"  of which US-only inference: {usd(total.us_only_usd)} over {total.us_only_responses:,} response(s) (every "
            "rate times 1.1 on Claude 4.6 and later)\n"
        )
    if total.long_responses:
        out.write(
            f"  of which long-context rates: {usd(total.long_premium_usd)} more over {total.long_responses:,} response(s) "
            "(a prompt over the model's long-context threshold bills the whole request at the long rates)\n"
        )
    out.write(
        printable(
            f"prices of {ledger.table.date} ({ledger.table.source})"
            + (f"; {total.duplicates:,} duplicate response(s) counted once" if total.duplicates else "")
        )
        + "\n"
    )
    return EXIT_OK


_DAY = re.compile(r"\d{4}-\d\d-\d\d")


def _responses_cache(args: argparse.Namespace) -> Any:
    """The responses cache of a run (costcache), written and closed at the end of its `with`; None with --no-cache."""
    if args.no_cache:
        return nullcontext()
    from inspector.library.costcache import ResponsesCache
    from inspector.statefiles import cache_dir

    return ResponsesCache(cache_dir())


def _group_of(by: str, r: Any) -> tuple[str, dict[str, str]]:
    """The row a response goes to when rows are by day, week, month or model: its key and its facts."""
    if by in ("week", "month"):
        key = period_of((r.timestamp or "")[:10], by)
        return key, {by: key}
    if by == "day":
        key = (r.timestamp or "")[:10]
        key = key if _DAY.fullmatch(key) else "unknown"
        return key, {"day": key}
    key = r.priced_as  # a fast-mode response is its own row: another price
    return key, {"model": key}


def period_of(day: str, by: str) -> str:
    """A UTC day's ISO week (2026-W48) or month (2026-11); "unknown" for a response with no time."""
    import datetime as dt

    try:
        d = dt.date.fromisoformat(day)
    except ValueError:
        return "unknown"
    if by == "month":
        return f"{d.year}-{d.month:02d}"
    y, w, _ = d.isocalendar()
    return f"{y}-W{w:02d}"


def _blocks_report(args: argparse.Namespace, out: Any, priced: list[tuple[float, Any]], ledger: Any, total: Any) -> int:
    """`cost --by block`: each 5-hour block's cost, and for the active one its burn rate and projection."""
    import time
    from datetime import UTC, datetime

    from inspector.library.cost import billing_blocks, usd
    from inspector.textutil import printable

    now = time.time()
    blocks = billing_blocks(priced, ledger.table)

    def iso(t: float) -> str:
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    if args.json:
        rows = []
        for b in blocks:
            d = {
                "start": iso(b.start),
                "end": iso(b.end),
                "first_response": iso(b.first),
                "last_response": iso(b.last),
                "active": b.active(now),
                "cost_usd": round(b.cost.usd, 6) if not b.cost.unknown else None,
                "cost_usd_priced": round(b.cost.usd, 6),
                "responses": b.cost.responses,
                "tokens": b.cost.tokens,
                "unknown_models": dict(b.cost.unknown),
            }
            if b.active(now):
                d["burn_usd_per_hour"] = round(b.burn_per_hour(now), 6)
                d["projected_usd"] = round(b.projected(now), 6)
            rows.append(d)
        out.write(json_lines(rows))
        return EXIT_OK
    out.write(f"{'cost':>10} {'responses':>9}  block (UTC, 5 hours from the hour of its first response)\n")
    for b in blocks:
        line = f"{usd(b.cost.usd):>10} {b.cost.responses:>9}  {iso(b.start)[:16]} – {iso(b.end)[11:16]}"
        if b.active(now):
            line += (
                f"  ACTIVE: {usd(b.burn_per_hour(now))}/hour since {iso(b.first)[11:16]}, "
                f"{usd(b.projected(now))} by {iso(b.end)[11:16]} at this rate"
            )
        out.write(printable(line) + "\n")
    out.write(f"{usd(total.usd):>10} {total.responses:>9}  total, {len(blocks)} block(s)\n")
    return EXIT_OK


def _check_prices(target: Any, ledger: Any, out: Any) -> int:
    """`cost --check-prices`: each model the sessions used, with its price's date and source, or none."""
    from inspector.library.cost import responses, subagent_responses
    from inspector.textutil import printable
    from inspector.transcript.discovery import session_files
    from inspector.transcript.session import Session

    used: dict[str, int] = {}
    for f, _ in session_files(target):
        try:
            s = Session.load(f)
        except OSError:
            continue
        try:
            for r in responses(s) + subagent_responses(s):
                if r.model and r.model != "<synthetic>":
                    used[r.priced_as] = used.get(r.priced_as, 0) + 1
        finally:
            s.close()
    table = ledger.table
    missing = []
    for name, n in sorted(used.items()):
        model, fast = (name[: -len(" (fast)")], True) if name.endswith(" (fast)") else (name, False)
        rates = table.rates_for(model)
        if rates is None:
            missing.append(name)
            out.write(printable(f"  no price      {name} ({n:,} response(s))") + "\n")
        elif fast and rates.fast is None:
            missing.append(name)
            out.write(printable(f"  no fast price {name} ({n:,} response(s): fast mode, whose multiplier is not known)") + "\n")
        else:
            out.write(printable(f"  priced        {name} ({n:,} response(s))") + "\n")
    out.write(
        f"{len(used):,} model(s) used, {len(missing):,} without a price; prices of {table.date} ({table.source}); a model "
        "can be priced in $XDG_CONFIG_HOME/inspector/prices.json (or $INSPECTOR_PRICES)\n"
    )
    return EXIT_ERROR if missing else EXIT_OK
