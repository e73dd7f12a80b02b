"""A session's token report kept in inspector's cache: opening an unchanged session again (the app, `inspector
tokens`, the MCP server's token story) reads its compactions' explanations back instead of working them out again
(on the bench's 200 MB session, 139 compactions: a third of a second alone, half a second beside the app's drawing).

The key is everything the report is made from, and a report is kept only when that is all known:
- the transcript as it was read (its inode, size, time and bytes read, the records and the chain: the counts' key);
- what lies beside it that the report reads: every file under the session's folder (subagents, summarizers, memory,
  the tool-results folder by its own time), by name, size and time, and the flat agent files of its project;
- the settings it was explained under and the baseline a what-if compares with (their whole `repr`);
- the code and the release data that explain it: the name, size and time of every file of the inspector package
  (an upgrade, or a checkout of another commit of a clone installed with `pip install -e`, is another key).
A fork (`--fork-session`) is explained from the session it was forked from, another file: its report is not kept.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

from inspector.tokens.calibrate import Calibration, Progress, _counts_key, _keep_newest, kept_chain_counts
from inspector.tokens.context import RestoredFile
from inspector.tokens.explain import TokenReport, analyze
from inspector.tokens.explanation import Explanation
from inspector.tokens.series import context_series, session_thresholds
from inspector.tokens.thresholds import Settings
from inspector.transcript.session import Session

REPORT_SCHEMA = 1  # bumped when what a kept report holds changes shape
KEPT_REPORTS = 64  # sessions whose reports are kept; the least recently explained go first


def kept_analyze(
    s: Session, settings: Settings | None = None, progress: Progress | None = None, baseline: Settings | None = None
) -> TokenReport:
    """`analyze`, its compactions' explanations kept for the session as read (see the module). A cache that cannot be
    read or written is no cache: the report is made as `analyze` makes it."""
    from inspector.statefiles import read_state, state_file, write_state

    settings = settings or Settings()
    key = report_key(s, settings, baseline)
    if key is None:
        return analyze(s, settings, progress, baseline)
    where = state_file("report", key["path"])
    got = read_state(where)
    if got is not None and got.get("key") == key:
        try:
            return _report_from(s, settings, got, progress)
        except (KeyError, TypeError, ValueError):
            pass  # damaged: made again and written over
    report = analyze(s, settings, progress, baseline)
    if write_state(where, {"key": key, **_report_as(report)}):
        _keep_newest(where.parent, KEPT_REPORTS)
        _sweep_gone(where.parent)
    return report


_KEPT_PATH = re.compile(rb'"path":"((?:[^"\\]|\\.)*)"')


def _sweep_gone(folder: Path) -> None:
    """Delete the kept reports of sessions gone from disk: a report holds what its session's summaries say, and a
    deleted session's text does not stay in the cache (the stats cache sweeps its rows so too). A report names its
    transcript near its start (the key is written first): 4 KB of each is read."""
    import json

    try:
        with os.scandir(folder) as it:
            files = [e.path for e in it if e.name.endswith(".json") and e.is_file(follow_symlinks=False)]
    except OSError:
        return
    for f in files:
        try:
            with open(f, "rb") as fh:
                m = _KEPT_PATH.search(fh.read(4096))
            if m is None:
                continue
            path = json.loads(b'"' + m.group(1) + b'"')
            if not os.path.exists(path):
                os.unlink(f)
        except (OSError, ValueError):
            continue


def report_key(s: Session, settings: Settings, baseline: Settings | None) -> dict[str, Any] | None:
    """What a kept report of this session must have been made from; None when it is not to be kept."""
    if any(r.extra and r.extra.get("fork_copy") for r in s.records):
        return None  # explained from the session it was forked from (another file)
    series = context_series(s, settings, session_thresholds(s, settings))
    counted = _counts_key(s, series)
    if counted is None:
        return None  # a partial index, or one that began inside the file
    from inspector.transcript.safefs import stat_signature

    folder = s.path.with_suffix("")
    try:  # (the session's folder walked as the report's readers reach it: no link, a bounded depth)
        beside = stat_signature(folder if folder.is_dir() else None, s._find_flat_agents())
    except OSError:
        return None
    return {
        "report_schema": REPORT_SCHEMA,
        **counted,
        "beside": beside,
        "settings": repr(settings),
        "baseline": repr(baseline) if baseline is not None and baseline != settings else None,
        "code": _code_stamp(),
    }


@cache
def _code_stamp() -> str:
    """A digest of the name, size and time of every file of the inspector package: the code and the release data a
    report is made by (read once per process)."""
    import hashlib

    root = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(digest_size=16)
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json")):
                st = os.stat(os.path.join(d, name))
                h.update(f"{os.path.relpath(os.path.join(d, name), root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _report_as(r: TokenReport) -> dict[str, Any]:
    return {
        "compactions": [asdict(e) for e in r.compactions],
        "calibration": asdict(r.calibration),
        "anomalies": list(r.anomalies),
    }


def _report_from(s: Session, settings: Settings, got: dict[str, Any], progress: Progress | None) -> TokenReport:
    th = session_thresholds(s, settings)
    series = context_series(s, settings, th)
    exps = []
    for d in got["compactions"]:
        d = dict(d)
        d["restored_files"] = [RestoredFile(**f) for f in d["restored_files"]]
        exps.append(Explanation(**d))
    anomalies = got["anomalies"]
    if not isinstance(anomalies, list) or not all(isinstance(a, str) for a in anomalies):
        raise ValueError("anomalies")
    counts = kept_chain_counts(s, series, progress)
    return TokenReport(s, settings, th, series, counts, Calibration(**got["calibration"]), exps, anomalies)


__all__ = ["KEPT_REPORTS", "REPORT_SCHEMA", "kept_analyze", "report_key"]
