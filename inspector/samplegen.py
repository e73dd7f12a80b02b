"""Deterministic generator of realistic Claude Code sessions, laid out as a projects root.

`python -m inspector.samplegen OUT` writes the bundled `sample_sessions/`. The same builder,
scaled up with `--scale`, makes the benchmark inputs. Everything is derived from a seeded RNG
and a fixed clock, so two runs write identical bytes.

The samples follow a developer fixing a bug in a small weather CLI ("weatherly"):
- session 1 (2.1.39 shape): context climbs through the warning threshold into an automatic
  compaction (boundary, summary, `agent-acompact-*` sidechain); parallel tool calls with
  interleaved results; thinking; an Agent subagent with `.meta.json`; a `<persisted-output>`
  marker with its file; a content-replacement record; `session-memory/summary.md`; an image.
- session 2 (2.1.20 shape): microcompact boundaries; tool results persisted with their full
  text inline and a file beside; legacy progress records; a rewind branch; an interrupt; a
  manual `/compact`; record types, subtypes and fields from the future; a custom title.
- session 3: a live session whose last line is only half written.
- a 1.0.x-era project with a legacy `summary` record, subtype-less system records and a
  sidechain stored inside the main file.
"""

from __future__ import annotations

import argparse
import base64
import math
import random
import shutil
import struct
import uuid as uuidlib
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

MODEL = "claude-sonnet-4-5-20250929"
OVERHEAD = 14_800  # system prompt + tools + CLAUDE.md, in tokens
CHARS_PER_TOKEN = 3.6
AUTO_THRESHOLD = 167_000
START = datetime(2026, 10, 5, 9, 12, 0, tzinfo=UTC)


def est(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


# ---------------------------------------------------------------------------------------------
# plausible content for the weatherly project


MODULES = {
    "weatherly/api.py": (
        "HTTP client for the Open-Meteo forecast API",
        ["fetch_forecast", "fetch_hourly", "fetch_daily", "build_params", "retry_request", "parse_error"],
    ),
    "weatherly/models.py": (
        "Dataclasses for forecasts",
        ["HourlyPoint", "DailySummary", "Forecast", "from_payload", "to_dict", "merge_hourly"],
    ),
    "weatherly/cli.py": (
        "The weatherly command line",
        ["main", "cmd_forecast", "cmd_history", "format_table", "parse_args", "load_config"],
    ),
    "weatherly/cache.py": (
        "On-disk cache of API responses",
        ["cache_key", "read_cache", "write_cache", "expire_old", "cache_dir"],
    ),
    "weatherly/units.py": ("Unit conversions", ["c_to_f", "kmh_to_mph", "mm_to_in", "format_temp", "format_wind"]),
    "tests/test_api.py": (
        "Tests for the API client",
        [
            "test_fetch_forecast_ok",
            "test_fetch_hourly_empty",
            "test_retry_on_429",
            "test_parse_error_body",
            "test_build_params_units",
        ],
    ),
    "tests/test_cli.py": (
        "Tests for the CLI",
        ["test_forecast_table", "test_forecast_empty_hourly", "test_history_range", "test_config_missing"],
    ),
}

BODY_LINES = [
    "    if not {arg}:",
    '        raise ValueError("{name}: {arg} must not be empty")',
    '    params = {{"latitude": lat, "longitude": lon, "timezone": tz or "auto"}}',
    '    response = session.get(BASE_URL + "/forecast", params=params, timeout=timeout)',
    "    if response.status_code == 429:",
    '        delay = float(response.headers.get("Retry-After", "1"))',
    "        time.sleep(min(delay, MAX_BACKOFF))",
    "    payload = response.json()",
    '    hourly = payload.get("hourly") or {{}}',
    '    times = hourly.get("time", [])',
    '    temps = hourly.get("temperature_2m", [])',
    "    points = [HourlyPoint(t, v) for t, v in zip(times, temps)]",
    '    log.debug("%s: %d points for %s", "{name}", len(points), {arg})',
    "    first = points[0]  # crashes when the API returns an empty hourly list",
    "    return Forecast(location={arg}, hourly=points, daily=summarize(points))",
    "    result = {{}}",
    "    for key, value in sorted(data.items()):",
    "        result[key] = value if value is not None else default",
    "    return result",
    '    with open(path, "rb") as fh:',
    "        blob = fh.read()",
    '    return json.loads(blob.decode("utf-8"))',
    "    assert {arg} is not None",
    '    expected = Forecast(location="Oslo", hourly=[], daily=[])',
    '    assert run_cli(["forecast", "Oslo"]).exit_code == 0',
]


def module_source(path: str, rng: random.Random, repeat: int = 1) -> str:
    doc, names = MODULES[path]
    out = [f'"""{doc}."""', "", "from __future__ import annotations", "", "import json", "import logging", "import time", ""]
    out += ["log = logging.getLogger(__name__)", 'BASE_URL = "https://api.open-meteo.com/v1"', "MAX_BACKOFF = 30.0", ""]
    for r in range(repeat):
        for name in names:
            suffix = f"_{r}" if r else ""
            arg = rng.choice(["location", "data", "payload", "points", "config"])
            if name[0].isupper():
                out.append("@dataclass(frozen=True)")
                out.append(f"class {name}{suffix}:")
                out.append(f'    """{name} as returned by the forecast endpoint."""')
                for field in rng.sample(["time", "value", "unit", "location", "source", "fetched_at"], 3):
                    out.append(f"    {field}: str")
                out.append("")
                continue
            out.append(f"def {name}{suffix}({arg}, *, timeout: float = 10.0):")
            out.append(f'    """{name.replace("_", " ").capitalize()}."""')
            for line in rng.sample(BODY_LINES, rng.randint(5, 11)):
                out.append(line.format(arg=arg, name=name))
            out.append("")
    return "\n".join(out) + "\n"


def numbered(text: str) -> str:
    return "\n".join(f"{i + 1:6d}\t{line}" for i, line in enumerate(text.split("\n")[:-1]))


def pytest_log(rng: random.Random, n: int, failing: list[str]) -> str:
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.6, pytest-8.3.3, pluggy-1.5.0",
        "rootdir: /home/ann/work/weatherly",
        f"collected {n} items",
        "",
    ]
    for i in range(n):
        mod = rng.choice(["tests/test_api.py", "tests/test_cli.py", "tests/test_cache.py", "tests/test_units.py"])
        name = (
            rng.choice(["fetch", "parse", "format", "cache", "convert", "retry", "history"])
            + f"_{rng.choice(['ok', 'empty', 'error', 'units', 'tz'])}_{i}"
        )
        status = "FAILED" if f"test_{name}" in failing else "PASSED"
        lines.append(f"{mod}::test_{name} {status}{' ' * max(1, 60 - len(name))}[{int(100 * (i + 1) / n):3d}%]")
    for f in failing:
        lines += [
            "",
            f"_________________________________ {f} _________________________________",
            "",
            "    def test_forecast_empty_hourly(monkeypatch):",
            '        monkeypatch.setattr(api, "fetch_hourly", lambda *a, **k: [])',
            '>       forecast = api.fetch_forecast("Oslo")',
            "",
            "weatherly/api.py:48: in fetch_forecast",
            "    first = points[0]",
            "E   IndexError: list index out of range",
        ]
    lines.append(f"========================= {len(failing)} failed, {n - len(failing)} passed in 3.41s =========================")
    return "\n".join(lines)


def tiny_png(w: int = 32, h: int = 16) -> str:
    """A small real PNG (a red/blue gradient), base64-encoded."""
    raw = b"".join(b"\x00" + bytes(v for x in range(w) for v in (x * 8 % 256, 40, 255 - x * 8 % 256)) for _ in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(png).decode()


def format_file_size(n: int) -> str:
    """Claude Code's formatFileSize (§5.2)."""
    if n < 1024:
        return f"{n} bytes"
    for unit, div in (("KB", 1024), ("MB", 1024**2), ("GB", 1024**3)):
        if n < div * 1024 or unit == "GB":
            v = f"{n / div:.1f}"
            return (v[:-2] if v.endswith(".0") else v) + unit
    return f"{n} bytes"


def persisted_block(path: str, content: str) -> str:
    """The exact `<persisted-output>` replacement text of §5.2."""
    if len(content) <= 2000:
        preview, more = content, False
    else:
        cut = content[:2000]
        nl = cut.rfind("\n")
        preview, more = (cut[:nl] if nl > 1000 else cut), True
    text = f"<persisted-output>\nOutput too large ({format_file_size(len(content))}). Full output saved to: {path}\n\nPreview (first 2KB):\n{preview}"
    return text + ("\n...\n</persisted-output>" if more else "\n</persisted-output>")


# ---------------------------------------------------------------------------------------------
# the writer


class Writer:
    """Writes one transcript as Claude Code would, tracking the context it implies."""

    def __init__(
        self,
        rng: random.Random,
        *,
        session_id: str,
        cwd: str,
        version: str,
        start: datetime,
        sidechain: bool = False,
        agent_id: str | None = None,
        branch: str = "main",
    ) -> None:
        self.rng = rng
        self.session_id = session_id
        self.cwd = cwd
        self.version = version
        self.t = start
        self.sidechain = sidechain
        self.agent_id = agent_id
        self.branch = branch
        self.lines: list[bytes] = []
        self.last: str | None = None
        self.ctx = 0  # conversation tokens since the last boundary (what the next call sends)
        self.last_usage_total = 0
        self.records: list[dict[str, Any]] = []

    def uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def hexid(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def tick(self, lo: float = 1.0, hi: float = 6.0) -> str:
        self.t += timedelta(milliseconds=int(self.rng.uniform(lo, hi) * 1000))
        return self.t.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def emit(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.lines.append(dumps(obj))
        self.records.append(obj)
        return obj

    def envelope(self, rtype: str, parent: str | None = "__last__", **fields: Any) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "parentUuid": self.last if parent == "__last__" else parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": self.branch,
        }
        if self.agent_id:
            obj["agentId"] = self.agent_id
        obj["type"] = rtype
        obj.update(fields)
        obj["uuid"] = self.uuid()
        obj["timestamp"] = self.tick()
        return obj

    # -- records ----------------------------------------------------------------------------
    def user(self, content: Any, parent: str | None = "__last__", **extra: Any) -> str:
        obj = self.envelope("user", parent, message={"role": "user", "content": content}, **extra)
        self.emit(obj)
        self.last = obj["uuid"]
        self.ctx += self.tokens_of(content)
        return obj["uuid"]

    @staticmethod
    def tokens_of(content: Any) -> int:
        if isinstance(content, str):
            return est(content)
        n = 0
        for b in content:
            t = b.get("type")
            if t == "text":
                n += est(b["text"])
            elif t == "image":
                n += 1_600
            elif t == "tool_result":
                n += Writer.tokens_of(b["content"]) if not isinstance(b["content"], str) else est(b["content"])
            elif t == "tool_use":
                n += est(b["name"] + orjson.dumps(b["input"]).decode())
            elif t == "thinking":
                n += est(b["thinking"])
        return n + 4

    def response(
        self, blocks: list[dict[str, Any]], *, model: str = MODEL, stop: str = "end_turn", parent: str | None = "__last__"
    ) -> list[str]:
        """One API response written as one record per content block (§2.8)."""
        out_tokens = sum(self.tokens_of([b]) for b in blocks)
        total_in = OVERHEAD + self.ctx
        cache_read = min(self.last_usage_total, total_in) if self.last_usage_total else 0
        creation = max(0, total_in - cache_read - 3)
        msg_id = "msg_01" + "".join(
            self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789") for _ in range(22)
        )
        req_id = "req_011C" + "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(20))
        uuids = []
        for k, b in enumerate(blocks):
            final = k == len(blocks) - 1
            usage = {
                "input_tokens": 3,
                "cache_creation_input_tokens": creation,
                "cache_read_input_tokens": cache_read,
                "cache_creation": {"ephemeral_5m_input_tokens": creation, "ephemeral_1h_input_tokens": 0},
                "output_tokens": out_tokens if final else self.rng.randint(1, 9),
                "service_tier": "standard",
            }
            message = {
                "model": model,
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": [b],
                "stop_reason": (stop if final else None),
                "stop_sequence": None,
                "usage": usage,
            }
            obj = self.envelope("assistant", parent if k == 0 else "__last__", message=message, requestId=req_id)
            self.emit(obj)
            self.last = obj["uuid"]
            uuids.append(obj["uuid"])
        self.ctx += out_tokens
        self.last_usage_total = total_in + out_tokens
        return uuids

    def tool_result(
        self, source: str, tool_use_id: str, content: Any, result: Any = None, is_error: bool = False, model_content: Any = None
    ) -> str:
        block: dict[str, Any] = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        extra: dict[str, Any] = {"sourceToolAssistantUUID": source}
        if result is not None and not self.sidechain:
            extra["toolUseResult"] = result
        obj = self.envelope("user", source, message={"role": "user", "content": [block]}, **extra)
        self.emit(obj)
        self.last = obj["uuid"]
        self.ctx += self.tokens_of([block]) if model_content is None else est(model_content)
        return obj["uuid"]

    def system(self, subtype: str, parent: str | None = "__last__", chain: bool = True, **fields: Any) -> str:
        obj = self.envelope("system", parent, subtype=subtype, isMeta=False, **fields)
        self.emit(obj)
        if chain:
            self.last = obj["uuid"]
        return obj["uuid"]

    def meta(self, rtype: str, **fields: Any) -> None:
        self.emit({"type": rtype, **fields})

    def tool_id(self) -> str:
        return "toolu_01" + "".join(
            self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789") for _ in range(22)
        )

    def call(
        self,
        name: str,
        inp: dict[str, Any],
        output: str,
        *,
        result: Any = None,
        think: str | None = None,
        text: str | None = None,
        persist_dir: Path | None = None,
        persisted_path: str | None = None,
    ) -> tuple[str, str]:
        """An assistant turn with one tool call and its result."""
        blocks: list[dict[str, Any]] = []
        if think:
            blocks.append({"type": "thinking", "thinking": think, "signature": base64.b64encode(self.rng.randbytes(48)).decode()})
        if text:
            blocks.append({"type": "text", "text": text})
        tid = self.tool_id()
        blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        uu = self.response(blocks, stop="tool_use")
        content = output
        model_view = None
        if persist_dir is not None and persisted_path is not None:
            persist_dir.mkdir(parents=True, exist_ok=True)
            (persist_dir / f"{tid}.txt").write_text(output)
            content = persisted_block(persisted_path.format(id=tid), output)
            model_view = content
        self.tool_result(
            uu[-1],
            tid,
            content,
            result if result is not None else {"stdout": output, "stderr": "", "interrupted": False, "isImage": False},
            model_content=model_view,
        )
        return tid, uu[-1]

    def write(self, path: Path, *, truncate_tail: int = 0) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = b"\n".join(self.lines) + b"\n"
        if truncate_tail:
            data = data[:-truncate_tail]
        path.write_bytes(data)


# ---------------------------------------------------------------------------------------------
# the sessions


PROJECT_CWD = "/home/ann/work/weatherly"
PROJECT_DIR = "-home-ann-work-weatherly"

MEMORY_MD = """# Session Title
_A short and distinctive 5-10 word descriptive title for the session. Super info dense, no filler_

Fix weatherly forecast crash on empty hourly data

# Current State
_What is actively being worked on right now? Pending tasks not yet completed. Immediate next steps._

The IndexError in `fetch_forecast` is fixed (guard for an empty `hourly` list) and covered by
`test_forecast_empty_hourly`. Next: make `format_table` print "no hourly data" instead of an empty table.

# Task specification
_What did the user ask to build? Any design decisions or other explanatory context_

`weatherly forecast Oslo` crashed when Open-Meteo returned an empty hourly list. Fix the crash, keep
the CLI output stable, add regression tests. Do not change the cache format.

# Files and Functions
_What are the important files? In short, what do they contain and why are they relevant?_

- `weatherly/api.py`: `fetch_forecast`, `fetch_hourly`; the crash was `points[0]` on an empty list.
- `weatherly/cli.py`: `cmd_forecast`, `format_table` (prints the table).
- `tests/test_api.py`, `tests/test_cli.py`: regression tests added.

# Workflow
_What bash commands are usually run and in what order? How to interpret their output if not obvious?_

`uv run pytest -q` for the suite; `uv run weatherly forecast Oslo --hours 6` to try the CLI.

# Errors & Corrections
_Errors encountered and how they were fixed. What did the user correct? What approaches failed and should not be tried again?_

- `IndexError: list index out of range` at `weatherly/api.py:48`: guarded with `if not points`.
- The user asked not to catch the error in the CLI but to fix it at the source.

# Codebase and System Documentation
_What are the important system components? How do they work/fit together?_

`cli.py` -> `api.fetch_forecast` -> `models.Forecast`; responses cached by `cache.py` (one JSON per key).

# Learnings
_What has worked well? What has not? What to avoid? Do not duplicate items from other sections_

The API returns `hourly: {}` (not missing) for far-future dates; tests must cover both shapes.

# Key results
_If the user asked a specific output such as an answer to a question, a table, or other document, repeat the exact result here_

# Worklog
_Step by step, what was attempted, done? Very terse summary for each step_

- Reproduced the crash with a monkeypatched empty response.
- Fixed `fetch_forecast`; added two tests; suite green (212 passed).
"""

SUMMARY_TEXT = """1. Primary Request and Intent:
   The user reported that `weatherly forecast Oslo` crashes with an IndexError when the Open-Meteo API returns an empty hourly list, and asked to find the bug, fix it at the source and add regression tests.

2. Key Technical Concepts:
   - Open-Meteo forecast API (`hourly` and `daily` blocks)
   - dataclasses `HourlyPoint`, `Forecast`; pytest with monkeypatch

3. Files and Code Sections:
   - weatherly/api.py: `fetch_forecast` indexed `points[0]` unconditionally. Changed to return an empty `Forecast` when `points` is empty.
   - tests/test_api.py: added `test_fetch_hourly_empty`.
   - tests/test_cli.py: added `test_forecast_empty_hourly`.

4. Errors and fixes:
   - IndexError at weatherly/api.py:48 (`first = points[0]`): guarded with `if not points: return Forecast(location, [], [])`.

5. Problem Solving:
   Reproduced with a monkeypatched `fetch_hourly` returning []; confirmed the fix with the full suite.

6. All user messages:
   - "The `weatherly forecast` command crashes when the API returns an empty hourly list. Find the bug and fix it, then add tests."
   - "Don't catch it in the CLI, fix it where it happens."
   - "Here is what I see in the terminal" (screenshot)

7. Pending Tasks:
   - Make `format_table` print "no hourly data" for an empty forecast.

8. Current Work:
   Running the full test suite after the fix in `fetch_forecast`; 212 passed.

9. Optional Next Step:
   Update `format_table` in weatherly/cli.py so an empty forecast prints "no hourly data"."""


def restored_tokens(w: Writer) -> int:
    """Tokens of the files a full compaction re-attaches (§8.5): the 5 most recently read files,
    each at most 5,000 tokens (a larger one becomes a short reference). They are attachments kept
    in memory, never written to the transcript, but the next API call counts them."""
    seen: dict[str, str] = {}
    by_id = {}
    for r in w.records:
        msg = r.get("message")
        if r.get("type") == "assistant" and isinstance(msg, dict):
            for b in msg["content"]:
                if b.get("type") == "tool_use" and b.get("name") == "Read":
                    by_id[b["id"]] = b["input"]["file_path"]
        elif r.get("type") == "user" and isinstance(msg, dict) and isinstance(msg["content"], list):
            for b in msg["content"]:
                if b.get("type") == "tool_result" and b.get("tool_use_id") in by_id:
                    path = by_id[b["tool_use_id"]]
                    seen.pop(path, None)
                    seen[path] = b["content"] if isinstance(b["content"], str) else ""
        if r.get("type") == "system" and r.get("subtype") == "compact_boundary":
            seen.clear()
    total = 0
    for text in list(seen.values())[-5:]:
        n = est(text) + 20
        total += n if n <= 5_000 else 30
    return total


def _read_result(path: str, text: str) -> dict[str, Any]:
    n = text.count("\n") + 1
    return {"type": "text", "file": {"filePath": path, "content": text, "numLines": n, "startLine": 1, "totalLines": n}}


def session_auto_compact(root: Path, rng: random.Random, scale: int = 1) -> Path:
    """Session 1: climbs into an automatic compaction."""
    sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    proj = root / PROJECT_DIR
    sdir = proj / sid
    w = Writer(rng, session_id=sid, cwd=PROJECT_CWD, version="2.1.39", start=START)
    tr_dir = sdir / "tool-results"
    abs_sdir = f"/home/ann/.claude/projects/{PROJECT_DIR}/{sid}"

    w.meta(
        "file-history-snapshot",
        messageId=None,
        snapshot={"messageId": None, "trackedFileBackups": {}, "timestamp": w.tick()},
        isSnapshotUpdate=False,
    )
    first = w.user(
        "The `weatherly forecast` command crashes when the API returns an empty hourly list. Find the bug and fix it, then add tests.",
        promptId="p-0001",
        permissionMode="default",
    )
    w.records[0]["messageId"] = first
    w.records[0]["snapshot"]["messageId"] = first
    w.lines[0] = dumps(w.records[0])
    w.response(
        [
            {
                "type": "thinking",
                "thinking": "Start with the API client and the CLI entry point; the traceback should point at the indexing of the hourly list.",
                "signature": "c2lnMQ==",
            },
            {"type": "text", "text": "I'll look at the API client and the CLI together."},
        ]
    )
    # parallel reads: A1(tool_use1), A2(tool_use2), U1 -> A1, U2 -> A2  (the repair case of §2.7)
    t1, t2 = w.tool_id(), w.tool_id()
    src1, src2 = module_source("weatherly/api.py", rng, 3 * scale), module_source("weatherly/cli.py", rng, 3 * scale)
    a = w.response(
        [
            {"type": "tool_use", "id": t1, "name": "Read", "input": {"file_path": f"{PROJECT_CWD}/weatherly/api.py"}},
            {"type": "tool_use", "id": t2, "name": "Read", "input": {"file_path": f"{PROJECT_CWD}/weatherly/cli.py"}},
        ],
        stop="tool_use",
    )
    w.tool_result(a[0], t1, numbered(src1), _read_result(f"{PROJECT_CWD}/weatherly/api.py", src1))
    w.tool_result(a[1], t2, numbered(src2), _read_result(f"{PROJECT_CWD}/weatherly/cli.py", src2))
    w.call(
        "Grep",
        {"pattern": "points\\[0\\]", "path": PROJECT_CWD, "output_mode": "content", "-n": True},
        "weatherly/api.py:48:    first = points[0]  # crashes when the API returns an empty hourly list\nweatherly/models.py:77:    first = points[0]",
        result={"mode": "content", "numFiles": 2, "filenames": [], "content": "", "numLines": 2},
        text="The crash is the unguarded `points[0]`. Let me reproduce it first.",
    )
    log = pytest_log(rng, 212 * scale, ["test_forecast_empty_hourly"])
    w.call(
        "Bash",
        {"command": "uv run pytest -q", "description": "Run the test suite"},
        log,
        persist_dir=tr_dir,
        persisted_path=abs_sdir + "/tool-results/{id}.txt",
    )
    # an image from the user
    w.user(
        [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": tiny_png()}},
            {"type": "text", "text": "Here is what I see in the terminal"},
        ],
        promptId="p-0002",
    )
    w.response(
        [{"type": "text", "text": "That matches the failing test: `IndexError: list index out of range` from `fetch_forecast`."}]
    )
    w.user("Don't catch it in the CLI, fix it where it happens.", promptId="p-0003")
    # an Agent subagent explores the cache module
    agent_id = "a" + w.hexid(16)
    agent_tid, agent_src = w.tool_id(), None
    agent_src = w.response(
        [
            {
                "type": "tool_use",
                "id": agent_tid,
                "name": "Agent",
                "input": {
                    "description": "Check cache for empty responses",
                    "subagent_type": "Explore",
                    "prompt": "Find out whether weatherly/cache.py stores empty hourly responses and whether a cached empty response could trigger the same crash. Report file:line facts only.",
                },
            }
        ],
        stop="tool_use",
    )[-1]
    sub = Writer(
        random.Random(rng.getrandbits(32)),
        session_id=sid,
        cwd=PROJECT_CWD,
        version="2.1.39",
        start=w.t,
        sidechain=True,
        agent_id=agent_id,
    )
    sub.user(
        "Find out whether weatherly/cache.py stores empty hourly responses and whether a cached empty response could trigger the same crash. Report file:line facts only.",
        parent=None,
    )
    csrc = module_source("weatherly/cache.py", rng, scale)
    sub.call(
        "Read",
        {"file_path": f"{PROJECT_CWD}/weatherly/cache.py"},
        numbered(csrc),
        result=_read_result(f"{PROJECT_CWD}/weatherly/cache.py", csrc),
    )
    sub.response(
        [
            {
                "type": "text",
                "text": 'weatherly/cache.py:31 `write_cache` stores any payload, including `{"hourly": {}}`; `read_cache` (line 18) returns it unchanged, so a cached empty response reaches `fetch_forecast` and crashes the same way. The fix in `fetch_forecast` covers both paths.',
            }
        ]
    )
    sub.write(sdir / "subagents" / f"agent-{agent_id}.jsonl")
    (sdir / "subagents" / f"agent-{agent_id}.meta.json").write_bytes(
        dumps({"agentType": "Explore", "description": "Check cache for empty responses", "toolUseId": agent_tid})
    )
    w.t = sub.t
    report = sub.records[-1]["message"]["content"][0]["text"]
    w.tool_result(
        agent_src,
        agent_tid,
        [
            {
                "type": "text",
                "text": report
                + f"\nagentId: {agent_id} (for resuming to continue this agent's work if needed)\n<usage>total_tokens: 9120\ntool_uses: 1\nduration_ms: 8210</usage>",
            }
        ],
        {
            "status": "completed",
            "prompt": "Find out whether weatherly/cache.py stores empty hourly responses…",
            "agentId": agent_id,
            "agentType": "Explore",
            "content": [{"type": "text", "text": report}],
            "totalToolUseCount": 1,
            "totalDurationMs": 8210,
            "totalTokens": 9120,
            "usage": {
                "input_tokens": 6,
                "cache_creation_input_tokens": 2100,
                "cache_read_input_tokens": 6800,
                "output_tokens": 214,
            },
        },
    )
    # a WebFetch whose result was later replaced by the per-message budget (content-replacement)
    doc = "\n".join(
        f"hourly.{v}: array of {u} values, one per hour; empty when the requested range has no data"
        for v, u in [("temperature_2m", "°C"), ("precipitation", "mm"), ("wind_speed_10m", "km/h"), ("relative_humidity_2m", "%")]
        * 40
        * scale
    )
    wf_tid, _ = w.call(
        "WebFetch",
        {"url": "https://open-meteo.com/en/docs", "prompt": "What does the API return for hourly when there is no data?"},
        doc,
        result={
            "bytes": len(doc),
            "code": 200,
            "codeText": "OK",
            "result": doc,
            "durationMs": 812,
            "url": "https://open-meteo.com/en/docs",
        },
    )
    (tr_dir / f"{wf_tid}.txt").write_text(doc)
    w.meta(
        "content-replacement",
        sessionId=sid,
        replacements=[
            {
                "kind": "tool-result",
                "toolUseId": wf_tid,
                "replacement": persisted_block(f"{abs_sdir}/tool-results/{wf_tid}.txt", doc),
            }
        ],
    )
    w.ctx -= est(doc) - est(persisted_block("x", doc))

    # climb: read every module, run tests, edit, until the auto-compact threshold is crossed
    files = list(MODULES)
    k = 0
    warned = False
    while True:
        path = files[k % len(files)]
        k += 1
        src = module_source(path, rng, 2 * scale)
        w.call(
            "Read",
            {"file_path": f"{PROJECT_CWD}/{path}"},
            numbered(src),
            result=_read_result(f"{PROJECT_CWD}/{path}", src),
            think=f"Check how {path} handles an empty hourly list." if k % 3 == 0 else None,
        )
        if k % 4 == 0:
            old = "    first = points[0]  # crashes when the API returns an empty hourly list"
            new = "    if not points:\n        return Forecast(location=location, hourly=[], daily=[])\n    first = points[0]"
            w.call(
                "Edit",
                {"file_path": f"{PROJECT_CWD}/weatherly/api.py", "old_string": old, "new_string": new, "replace_all": False},
                f"The file {PROJECT_CWD}/weatherly/api.py has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n    46\t    points = [HourlyPoint(t, v) for t, v in zip(times, temps)]\n    47\t    if not points:\n    48\t        return Forecast(location=location, hourly=[], daily=[])\n    49\t    first = points[0]",
                result={
                    "filePath": f"{PROJECT_CWD}/weatherly/api.py",
                    "oldString": old,
                    "newString": new,
                    "originalFile": None,
                    "structuredPatch": [],
                    "userModified": False,
                    "replaceAll": False,
                },
            )
            w.call(
                "Bash",
                {"command": "uv run pytest -q tests/test_api.py", "description": "Run API tests"},
                pytest_log(rng, 40 * scale, []),
            )
        if not warned and OVERHEAD + w.ctx >= AUTO_THRESHOLD - 20_000:
            warned = True
        estimate = w.last_usage_total + 40  # last usage + rough estimate of what follows (§3.3)
        if estimate >= AUTO_THRESHOLD:
            break
    w.meta("ai-title", sessionId=sid, aiTitle="Fix forecast crash on empty hourly data")
    w.meta("last-prompt", sessionId=sid, lastPrompt="Don't catch it in the CLI, fix it where it happens.")
    # the compaction call, stored as a sidechain (§13.2)
    cid = "acompact-" + w.hexid(16)
    comp = Writer(
        random.Random(rng.getrandbits(32)),
        session_id=sid,
        cwd=PROJECT_CWD,
        version="2.1.39",
        start=w.t,
        sidechain=True,
        agent_id=cid,
    )
    comp.ctx = w.ctx
    comp.last_usage_total = w.last_usage_total
    logical_parent = w.last
    comp.user(
        "Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions.\n"
        "Before providing your final summary, wrap your analysis in <analysis> tags. Then write the summary in <summary> tags with the nine numbered sections.",
        parent=logical_parent,
    )
    analysis = (
        "<analysis>\nChronologically: the user reported a crash in `weatherly forecast` on an empty hourly list. I read api.py and cli.py in parallel, "
        "found `points[0]` at api.py:48, reproduced with pytest (1 failure), received a terminal screenshot, and the user asked to fix it at the source "
        "rather than in the CLI. An Explore agent confirmed cached empty responses take the same path. I guarded `fetch_forecast` and added tests; the "
        "suite passes. Remaining: `format_table` should print a message for an empty forecast.\n</analysis>\n\n"
    )
    comp.response([{"type": "text", "text": analysis + "<summary>\n" + SUMMARY_TEXT + "\n</summary>"}])
    comp.write(sdir / "subagents" / f"agent-{cid}.jsonl")
    w.t = comp.t
    pre = w.last_usage_total + 40
    restored = restored_tokens(w)
    boundary = w.system(
        "compact_boundary",
        parent=None,
        content="Conversation compacted",
        level="info",
        compactMetadata={"trigger": "auto", "preTokens": pre},
        logicalParentUuid=logical_parent,
    )
    transcript_path = f"/home/ann/.claude/projects/{PROJECT_DIR}/{sid}.jsonl"
    summary = (
        "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n"
        "Summary:\n"
        + SUMMARY_TEXT
        + f"\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: {transcript_path}\n"
        "Please continue the conversation from where we left it off without asking the user any further questions. Continue with the last task that you were asked to work on."
    )
    w.ctx = restored  # §8.5: recently read files re-attached in memory, not written
    w.last_usage_total = 0
    w.user(summary, parent=boundary, isVisibleInTranscriptOnly=True, isCompactSummary=True)
    # after the compaction: finish the pending task
    clisrc = module_source("weatherly/cli.py", rng, scale)
    w.call(
        "Read",
        {"file_path": f"{PROJECT_CWD}/weatherly/cli.py"},
        numbered(clisrc),
        result=_read_result(f"{PROJECT_CWD}/weatherly/cli.py", clisrc),
        text="Continuing with `format_table`: an empty forecast should print a message.",
    )
    w.call(
        "Edit",
        {
            "file_path": f"{PROJECT_CWD}/weatherly/cli.py",
            "old_string": "    rows = [format_row(p) for p in forecast.hourly]",
            "new_string": '    if not forecast.hourly:\n        return "no hourly data"\n    rows = [format_row(p) for p in forecast.hourly]',
            "replace_all": False,
        },
        f"The file {PROJECT_CWD}/weatherly/cli.py has been updated.",
    )
    w.call(
        "TodoWrite",
        {
            "todos": [
                {"content": "Guard empty hourly list in fetch_forecast", "status": "completed", "activeForm": "Guarding"},
                {
                    "content": "Print 'no hourly data' in format_table",
                    "status": "completed",
                    "activeForm": "Updating format_table",
                },
                {"content": "Add a changelog entry", "status": "pending", "activeForm": "Adding changelog entry"},
            ]
        },
        "Todos have been modified successfully.",
    )
    w.call("Bash", {"command": "uv run pytest -q", "description": "Run the full suite"}, pytest_log(rng, 30, []))
    w.response(
        [
            {
                "type": "text",
                "text": 'Done: `fetch_forecast` returns an empty forecast instead of crashing, `format_table` prints "no hourly data", and two regression tests cover it. 214 tests pass. A changelog entry is still pending.',
            }
        ]
    )
    w.system("turn_duration", durationMs=512_330, messageCount=len(w.records))
    w.meta("ai-title", sessionId=sid, aiTitle="Fix forecast crash on empty hourly data")
    w.write(proj / f"{sid}.jsonl")
    (sdir / "session-memory").mkdir(parents=True, exist_ok=True)
    (sdir / "session-memory" / "summary.md").write_text(MEMORY_MD)
    return proj / f"{sid}.jsonl"


def session_microcompact(root: Path, rng: random.Random, scale: int = 1) -> Path:
    """Session 2: microcompactions, inline persisted outputs, a rewind, a manual /compact, drift."""
    sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    proj = root / PROJECT_DIR
    sdir = proj / sid
    w = Writer(
        rng, session_id=sid, cwd=PROJECT_CWD, version="2.1.20", start=START + timedelta(days=1, hours=2), branch="feature/history"
    )
    w.user(
        "Add a `weatherly history CITY --days N` command that prints past daily temperatures from the archive API.",
        promptId="p-0100",
    )
    w.response([{"type": "text", "text": "I'll read the CLI and API modules, then add the command."}])
    reads = []
    for path in [
        "weatherly/cli.py",
        "weatherly/api.py",
        "weatherly/models.py",
        "weatherly/cache.py",
        "weatherly/units.py",
        "tests/test_cli.py",
    ]:
        src = module_source(path, rng, 14 * scale)
        tid, _ = w.call(
            "Read", {"file_path": f"{PROJECT_CWD}/{path}"}, numbered(src), result=_read_result(f"{PROJECT_CWD}/{path}", src)
        )
        # 2.1.14-2.1.20: large results persisted with the full text still inline (§13.5a)
        if len(numbered(src)) > 40_000:
            (sdir / "tool-results").mkdir(parents=True, exist_ok=True)
            (sdir / "tool-results" / f"{tid}.txt").write_text(numbered(src))
        reads.append((tid, est(numbered(src))))
        # legacy progress record in the chain (bridged on load, §2.6)
        prog = w.envelope(
            "progress",
            data={
                "type": "hook_progress",
                "hookEvent": "PostToolUse",
                "hookName": "PostToolUse:Read",
                "command": "ruff check --quiet",
            },
            toolUseID=tid,
            parentToolUseID=tid,
        )
        w.emit(prog)
        w.last = prog["uuid"]
    # microcompact: clear the oldest results, keep the most recent (§6.2, §13.4)
    cleared = reads[:4]
    saved = sum(n for _, n in cleared)
    w.system(
        "microcompact_boundary",
        content="Context microcompacted",
        level="info",
        microcompactMetadata={
            "trigger": "auto",
            "preTokens": w.last_usage_total,
            "tokensSaved": saved,
            "compactedToolIds": [t for t, _ in cleared],
            "clearedAttachmentUUIDs": [],
        },
    )
    w.ctx -= saved
    w.response(
        [{"type": "text", "text": "The archive endpoint is `/v1/archive`; I'll add `fetch_history` next to `fetch_daily`."}]
    )
    # a branch that the user rewinds away from (§9.2)
    fork = w.last
    w.user("Use the requests library directly instead of the session helper.", promptId="p-0101")
    w.response(
        [{"type": "text", "text": "Switching to `requests.get` would bypass the retry logic in `retry_request`; are you sure?"}]
    )
    w.last = fork
    w.user("Keep the session helper; add the command with a --json flag too.", promptId="p-0102")
    # an interrupted turn
    w.response([{"type": "text", "text": "Adding `cmd_history` with `--days` and `--json`."}])
    w.user("[Request interrupted by user]", promptId="p-0103")
    w.user("Also print the unit in the header.", promptId="p-0104")
    for i in range(3):
        src = module_source("weatherly/api.py", rng, 3 * scale)
        tid, _ = w.call(
            "Read",
            {"file_path": f"{PROJECT_CWD}/weatherly/api.py", "offset": 1 + 200 * i, "limit": 200},
            numbered(src),
            result=_read_result(f"{PROJECT_CWD}/weatherly/api.py", src),
        )
        reads.append((tid, est(numbered(src))))
    cleared2 = reads[4:7]
    saved2 = sum(n for _, n in cleared2)
    w.system(
        "microcompact_boundary",
        content="Context microcompacted",
        level="info",
        microcompactMetadata={
            "trigger": "auto",
            "preTokens": w.last_usage_total,
            "tokensSaved": saved2,
            "compactedToolIds": [t for t, _ in cleared2],
            "clearedAttachmentUUIDs": [],
        },
    )
    w.ctx -= saved2
    w.call(
        "Write",
        {"file_path": f"{PROJECT_CWD}/weatherly/history.py", "content": module_source("weatherly/units.py", rng)},
        f"File created successfully at: {PROJECT_CWD}/weatherly/history.py",
    )
    w.response(
        [
            {
                "type": "text",
                "text": "`weatherly history Oslo --days 7` now prints a table with the unit in the header; `--json` prints the raw series.",
            }
        ]
    )
    # record types, subtypes and fields from the future (§10): must load as opaque records
    w.meta("quantum-bookmark", sessionId=sid, bookmark={"label": "history command done", "color": "teal"})
    fut = w.envelope("hologram", data={"frames": 3, "note": "an unknown chain record type"}, futureField=[1, 2, 3])
    w.emit(fut)
    w.last = fut["uuid"]
    w.system("context_forecast", content="Predicted 41% context use next turn", level="info", forecast={"next": 0.41})
    # manual /compact (§8.6)
    pre = w.last_usage_total + 120
    logical_parent = w.last
    restored = restored_tokens(w)
    boundary = w.system(
        "compact_boundary",
        parent=None,
        content="Conversation compacted",
        level="info",
        compactMetadata={"trigger": "manual", "preTokens": pre, "postTokens": 4_210, "durationMs": 21_400},
        logicalParentUuid=logical_parent,
    )
    w.ctx, w.last_usage_total = restored, 0
    w.user(
        "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n"
        "1. Primary Request and Intent:\n   Add `weatherly history CITY --days N` (archive API), with `--json` and the unit in the header.\n"
        "2. Key Technical Concepts:\n   Open-Meteo archive endpoint; the session helper with retries.\n"
        "3. Files and Code Sections:\n   - weatherly/history.py (new): `fetch_history`, `format_history`.\n"
        "4. Errors and fixes:\n   None.\n5. Problem Solving:\n   Kept the session helper for retries (user's choice after the rewind).\n"
        "6. All user messages:\n   - Add a `weatherly history CITY --days N` command…\n   - Keep the session helper; add the command with a --json flag too.\n   - Also print the unit in the header.\n"
        "7. Pending Tasks:\n   - Tests for history.\n8. Current Work:\n   The history command is done.\n9. Optional Next Step:\n   Write tests for `format_history`.",
        parent=boundary,
        isVisibleInTranscriptOnly=True,
        isCompactSummary=True,
    )
    w.user(
        "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>",
        isMeta=True,
    )
    w.user(
        "<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args></command-args>"
    )
    w.user("<local-command-stdout>\x1b[2mCompacted (ctrl+o to see full summary)\x1b[22m</local-command-stdout>")
    w.user("Now write tests for the history command.", promptId="p-0105")
    tsrc = module_source("tests/test_cli.py", rng, scale)
    w.call(
        "Write",
        {"file_path": f"{PROJECT_CWD}/tests/test_history.py", "content": tsrc},
        f"File created successfully at: {PROJECT_CWD}/tests/test_history.py",
    )
    w.call(
        "Bash", {"command": "uv run pytest -q tests/test_history.py", "description": "Run the new tests"}, pytest_log(rng, 6, [])
    )
    w.response([{"type": "text", "text": "Added six tests for `weatherly history`; all pass."}])
    w.meta("custom-title", sessionId=sid, customTitle="history command")
    w.write(proj / f"{sid}.jsonl")
    return proj / f"{sid}.jsonl"


def session_live(root: Path, rng: random.Random) -> Path:
    """Session 3: still being written; the last line is cut in the middle."""
    sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    w = Writer(rng, session_id=sid, cwd=PROJECT_CWD, version="2.1.88", start=START + timedelta(days=2))
    w.user("Add a changelog entry for the empty-forecast fix and the history command.", promptId="p-0200")
    w.call(
        "Read",
        {"file_path": f"{PROJECT_CWD}/CHANGELOG.md"},
        "     1\t# Changelog\n     2\t\n     3\t## 0.4.0\n     4\t- Cache responses on disk.\n",
    )
    w.call(
        "Edit",
        {
            "file_path": f"{PROJECT_CWD}/CHANGELOG.md",
            "old_string": "## 0.4.0",
            "new_string": "## 0.5.0\n- `forecast` no longer crashes on an empty hourly list.\n- New `history` command.\n\n## 0.4.0",
        },
        f"The file {PROJECT_CWD}/CHANGELOG.md has been updated.",
    )
    w.response(
        [
            {
                "type": "text",
                "text": "Added a 0.5.0 section to CHANGELOG.md with both changes. Shall I bump the version in pyproject.toml too?",
            }
        ]
    )
    w.user("Yes, bump it.", promptId="p-0201")
    w.response([{"type": "text", "text": "Bumping the version in pyproject.toml to 0.5.0 now."}])
    path = root / PROJECT_DIR / f"{sid}.jsonl"
    w.write(path, truncate_tail=len(w.lines[-1]) // 2 + 1)
    return path


def session_legacy(root: Path, rng: random.Random) -> Path:
    """A 1.0.x-era session: legacy summary record, subtype-less system records, in-file sidechain."""
    sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    cwd = "/home/ann/work/dotfiles"
    proj = root / "-home-ann-work-dotfiles"
    w = Writer(rng, session_id=sid, cwd=cwd, version="1.0.43", start=START - timedelta(days=90))
    w.meta("summary", summary="Zsh prompt shows git branch", leafUuid="00000000-0000-4000-8000-000000000000")
    u = w.user("Make my zsh prompt show the current git branch.")
    tid = w.tool_id()
    a = w.response(
        [
            {
                "type": "tool_use",
                "id": tid,
                "name": "Task",
                "input": {
                    "description": "Find prompt config",
                    "prompt": "Find where the zsh prompt is configured in this dotfiles repo.",
                },
            }
        ],
        stop="tool_use",
    )
    # the subagent's records live in the main file, marked isSidechain (1.0.x)
    side = Writer(random.Random(rng.getrandbits(32)), session_id=sid, cwd=cwd, version="1.0.43", start=w.t, sidechain=True)
    side.user("Find where the zsh prompt is configured in this dotfiles repo.", parent=None)
    side.call("Grep", {"pattern": "PROMPT=", "path": cwd}, "zsh/prompt.zsh:3:PROMPT='%n@%m %~ %# '")
    side.response([{"type": "text", "text": "The prompt is set in zsh/prompt.zsh line 3."}])
    w.lines += side.lines
    w.records += side.records
    w.t = side.t
    w.tool_result(a[-1], tid, [{"type": "text", "text": "The prompt is set in zsh/prompt.zsh line 3."}])
    w.system("", parent="__last__", content="Running PostToolUse hooks…", level="info")
    w.records[-1].pop("subtype")
    w.lines[-1] = dumps(w.records[-1])
    w.call(
        "Edit",
        {
            "file_path": f"{cwd}/zsh/prompt.zsh",
            "old_string": "PROMPT='%n@%m %~ %# '",
            "new_string": "autoload -Uz vcs_info\nprecmd() { vcs_info }\nzstyle ':vcs_info:git:*' formats '(%b) '\nsetopt PROMPT_SUBST\nPROMPT='%n@%m %~ ${vcs_info_msg_0_}%# '",
        },
        f"The file {cwd}/zsh/prompt.zsh has been updated.",
    )
    w.response(
        [
            {
                "type": "text",
                "text": "Your prompt now shows the branch in parentheses, e.g. `ann@box ~/work/dotfiles (main) %`. Open a new shell to see it.",
            }
        ]
    )
    w.records[0]["leafUuid"] = w.last
    w.lines[0] = dumps(w.records[0])
    del u
    path = proj / f"{sid}.jsonl"
    w.write(path)
    return path


def generate(root: Path, *, seed: int = 7, scale: int = 1) -> list[Path]:
    """Write every sample session under `root` (a projects root). Returns the session files."""
    rng = random.Random(seed)
    return [
        session_auto_compact(root, rng, scale),
        session_microcompact(root, rng, scale),
        session_live(root, rng),
        session_legacy(root, rng),
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m inspector.samplegen", description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path, help="folder to write (a projects root); replaced if it exists")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--scale", type=int, default=1, help="multiply the size of file reads and logs")
    args = p.parse_args(argv)
    if args.out.exists():
        shutil.rmtree(args.out)
    for f in generate(args.out, seed=args.seed, scale=args.scale):
        print(f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
