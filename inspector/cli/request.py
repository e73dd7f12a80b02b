"""`inspector request`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from inspector.cli.common import EXIT_OK, Parser, _report, json_lines, one_session


def _request_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector request",
        description="Rebuild, from a Claude Code 2.1.3xx transcript alone, the API requests it sent: the system prompt, the "
        "tools and every message, as the API received them (the billing header line aside, which is not recorded).",
    )
    p.add_argument("path", help="the session's .jsonl transcript")
    p.add_argument(
        "--at",
        metavar="REF",
        help="only the request that produced this record (or the last one before it); a uuid, a uuid prefix or a line number",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="JSON Lines: one object per request (id, timestamp, query_source, model, request), one per line",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_request(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.claude.requests import rebuild_requests
    from inspector.textutil import printable
    from inspector.transcript.discovery import InspectorError

    s = one_session(Path(args.path), "request needs one .jsonl transcript, not a folder: {path}")
    found = rebuild_requests(s)
    if not found:
        v = s.version or "an unknown version"
        raise InspectorError(f"this transcript records no API request (Claude Code {v}; requests are recorded from 2.1.3xx)")
    if args.at:
        try:  # a uuid, a uuid prefix or a line number, as `show` prints them
            i = s.find_record(args.at)
        except LookupError as exc:
            raise InspectorError(f"{exc} in {args.path}") from None
        ref = s.body(i).get("requestRef")
        mine = [q for q in found if q.id == ref] or [q for q in found if q.index < i][-1:]
        if not mine:
            raise InspectorError(f"no request was recorded before {args.at}")
        found = mine
    if args.json:
        out.write(json_lines(q.as_dict() for q in found))
        return EXIT_OK
    lines = [f"{printable(s.title or s.session_id)}: {len(found)} request(s) rebuilt from the transcript"]
    for q in found:
        req = q.request
        msgs = req.get("messages") or []
        roles: dict[str, int] = {}
        for m in msgs:
            roles[str(m.get("role"))] = roles.get(str(m.get("role")), 0) + 1
        state = "answered" if q.answered else "no reply (refused, or the session ended)"
        exact = f"; {len(q.unresolved)} message(s) not in the transcript" if q.unresolved else ""
        if q.capped:
            exact += f"; {q.capped}"
        if q.not_recorded:
            exact += f"; also sent, not recorded: {', '.join(q.not_recorded)}"
        lines.append(
            f"  {q.id}  {(q.timestamp or '')[:19]}  {q.query_source or '?'}  {q.model or '?'}  "
            f"{len(req.get('system') or [])} system block(s), {len(req.get('tools') or [])} tools, {len(msgs)} messages "
            f"({', '.join(f'{n} {r}' for r, n in roles.items())}); {state}{exact}"
        )
    out.write(_report(lines))
    return EXIT_OK
