"""A session: its main transcript, the conversation tree, subagents, persisted outputs, memory.

`Session.load(path)` indexes the main `.jsonl` and finds what lies beside it in the session's
own folder (`<session>/subagents/`, `<session>/tool-results/`, `<session>/session-memory/`).
Nothing outside that folder and the project folder is ever read: paths written inside a
transcript are only used for their file name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from inspector.textutil import timestamp_key
from inspector.transcript.index import Transcript
from inspector.transcript.records import (
    COMPACT_COMMANDS,
    F_COMPACT_SUMMARY,
    F_IMAGE,
    TITLE_SOURCES,
    PersistedMarker,
    Record,
    context_tokens,
    first_typed_prompt,
    iter_blocks,
    opt_count,
    parse_persisted,
    text_of,
    tool_result_text,
)
from inspector.transcript.safefs import list_files, open_regular, real_file, walk_files
from inspector.transcript.tree import Conversation

AGENT_TOOLS = frozenset({"Agent", "Task"})
_SAFE_NAME = re.compile(r"^[A-Za-z0-9._@+-]{1,255}$")
DISPLAY_CAP = 1 << 20  # bytes of a persisted file read for display by default


# ---------------------------------------------------------------------------------------------
# persisted tool results (§5, §13.5)


@dataclass(slots=True)
class PersistedOutput:
    """A tool result whose full output lives in `<session>/tool-results/`."""

    tool_use_id: str
    record: int | None  # index of the tool_result record in the main transcript
    marker: PersistedMarker | None  # shape (b): a <persisted-output> block in the JSONL
    file: Path | None  # the file in the session's own tool-results folder, if present
    file_size: int | None

    @property
    def shape(self) -> str:
        return "marker" if self.marker is not None else "inline"


def safe_child(folder: Path, name: str, base: Path) -> Path | None:
    """`folder/name` when name is a plain file name and the file is a regular file reached from `base` (the
    project folder) without any link: a session folder, or any folder in it, that is a link is never followed."""
    if not _SAFE_NAME.match(name) or name in (".", ".."):
        return None
    cand = folder / name
    return cand if real_file(base, cand) else None


def read_capped(path: Path, limit: int = DISPLAY_CAP, offset: int = 0) -> tuple[str, int]:
    """Read at most `limit` bytes of a text file from `offset` for display: (text, total size). The file is
    opened without following a link."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(offset)
        data = f.read(limit)
    return data.decode("utf-8", "replace"), size


def tool_result_files(transcript: Path) -> list[Path]:
    """The files of a session's own tool-results folder: directly in it, reached without any link, sorted."""
    return list_files(transcript.parent, transcript.with_suffix("") / "tool-results")


def subagent_files(transcript: Path) -> list[Path]:
    """A session's subagent transcripts in its own `subagents/` folder (nested workflow folders too, a bounded
    depth), reached without any link."""
    folder = transcript.with_suffix("") / "subagents"
    return [p for p in walk_files(transcript.parent, folder) if p.name.startswith("agent-") and p.name.endswith(".jsonl")]


def flat_agents(transcript: Path, session_id: str) -> list[Path]:
    """The `agent-*.jsonl` files beside a transcript that belong to its session (1.x kept subagents there)."""
    out = []
    try:
        for p in sorted(transcript.parent.glob("agent-*.jsonl")):
            if p.is_file() and not p.is_symlink() and peek_session_id(p) == session_id:
                out.append(p)
    except OSError:
        pass
    return out


def agent_files(transcript: Path, flat: list[Path]) -> list[tuple[str, str, Path]]:
    """A session's subagent transcripts as (layout, agent id, path), each agent once, in the order Session.subagents
    lists them: its `subagents/` folder's, then the `flat` ones beside it (`flat_agents`) that the folder has not."""
    found: dict[str, tuple[str, str, Path]] = {}
    for p in subagent_files(transcript):
        aid = p.stem[len("agent-") :]
        found[aid] = ("subagents-dir", aid, p)
    for p in flat:
        aid = p.stem[len("agent-") :]
        found.setdefault(aid, ("flat", aid, p))
    return sorted(found.values(), key=lambda t: (t[0], t[1]))


def agent_transcripts_of(transcript: Path, session_id: str, flat: list[Path] | None = None) -> list[tuple[str, Path]]:
    """(agent id, path) of each subagent transcript of a session (`agent_files`): what `Session.agent_transcripts`
    lists, from the folder listings and the session's id alone. `flat`: the flat agent files beside it, when known
    (else looked for, unless the transcript is one itself)."""
    if flat is None:
        flat = [] if transcript.name.startswith("agent-") else flat_agents(transcript, session_id)
    return [(aid, p) for _layout, aid, p in agent_files(transcript, flat)]


# ---------------------------------------------------------------------------------------------
# session memory (§7.2)


@dataclass(frozen=True, slots=True)
class MemorySection:
    title: str
    description: str
    body: str


def split_memory(text: str) -> list[MemorySection]:
    """Split a session-memory `summary.md` into its `# ` sections."""
    sections: list[MemorySection] = []
    title: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if title is None:
            return
        desc = ""
        body_lines = list(lines)
        while body_lines and not body_lines[0].strip():
            body_lines.pop(0)
        if body_lines and re.match(r"^_.*_\s*$", body_lines[0].strip()):
            desc = body_lines.pop(0).strip().strip("_")
        sections.append(MemorySection(title, desc, "\n".join(body_lines).strip("\n")))

    for line in text.splitlines():
        if line.startswith("# "):
            flush()
            title, lines = line[2:].strip(), []
        elif title is not None:
            lines.append(line)
    flush()
    return sections


# ---------------------------------------------------------------------------------------------
# subagents (§2.9)


@dataclass(slots=True)
class Subagent:
    """A sidechain transcript, wherever it was stored."""

    agent_id: str
    layout: str  # "subagents-dir", "flat", "in-file" or "progress"
    path: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    spawned_by: str | None = None  # tool_use id of the Agent/Task call in the main thread
    boundary: int | None = None  # for agent-acompact-*: index of the compact boundary it produced

    @property
    def kind(self) -> str:
        a = self.agent_id
        if a.startswith("acompact"):
            return "compaction"
        if a.startswith("asession_memory"):
            return "session-memory"
        if re.match(r"^a[a-z_]+-", a):
            return "helper"
        return "agent"


def peek_session_id(path: Path, limit: int = 65536) -> str | None:
    """The sessionId of a transcript from its first lines (a cheap read)."""
    try:
        with open(path, "rb") as f:
            head = f.read(limit)
    except OSError:
        return None
    for line in head.split(b"\n"):
        if b'"sessionId"' not in line:
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("sessionId"), str):
            return obj["sessionId"]
    return None


# ---------------------------------------------------------------------------------------------


class Session:
    """One Claude Code session, indexed, with everything stored beside it."""

    def __init__(self, transcript: Transcript, *, flat_agents: list[Path] | None = None) -> None:
        self.transcript = transcript
        self.path = transcript.path
        self._flat_agents = flat_agents

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        flat_agents: list[Path] | None = None,
        progress: Callable[[int, int], None] | None = None,
        only: tuple[bytes, ...] | None = None,
    ) -> Session:
        """A session's index; `only`: a partial one, of the lines holding one of these byte strings (Transcript.load),
        and its subagents' likewise."""
        return cls(Transcript.load(path, progress, only), flat_agents=flat_agents)

    def close(self) -> None:
        """Let go of the transcript's open file (reading a body again reopens it)."""
        self.transcript.close()

    def update(self) -> int:
        """Read lines appended since loading; drop derived views. Returns new record count."""
        new = self.transcript.update()
        if new:
            for name in ("conversation", "subagents", "persisted_outputs", "tool_index"):
                self.__dict__.pop(name, None)
        return len(new)

    # -- where things are -------------------------------------------------------------------
    @property
    def records(self) -> list[Record]:
        return self.transcript.records

    @property
    def session_dir(self) -> Path:
        return self.path.with_suffix("")

    @property
    def project_dir(self) -> Path:
        return self.path.parent

    @cached_property
    def session_id(self) -> str:
        for r in self.records:
            if r.session_id and not r.is_sidechain:
                return r.session_id
        for r in self.records:
            if r.session_id:
                return r.session_id
        return self.path.stem

    @property
    def is_flat_agent(self) -> bool:
        return self.path.name.startswith("agent-")

    def body(self, index: int) -> dict[str, Any]:
        return self.transcript.body(self.records[index])

    # -- the tree ---------------------------------------------------------------------------
    @cached_property
    def conversation(self) -> Conversation:
        return Conversation(self.records, main_thread=not self.is_flat_agent)

    @cached_property
    def tool_index(self) -> dict[str, tuple[int | None, int | None]]:
        """tool_use id -> (index of the record with the tool_use, index of its tool_result)."""
        out: dict[str, list[int | None]] = {}
        for i, r in enumerate(self.records):
            for tid, _name in r.tool_uses:
                out.setdefault(tid, [None, None])[0] = i
            for tid in r.tool_results:
                out.setdefault(tid, [None, None])[1] = i
        return {k: (v[0], v[1]) for k, v in out.items()}

    def tool_name(self, tool_use_id: str) -> str | None:
        i = self.tool_index.get(tool_use_id, (None, None))[0]
        if i is None:
            return None
        return dict(self.records[i].tool_uses).get(tool_use_id)

    # -- metadata and facts -----------------------------------------------------------------
    def metadata(self, kind: str) -> dict[str, Any] | None:
        return self.transcript.metadata.get(kind)

    @property
    def claude_cost(self) -> dict[str, Any] | None:
        """Claude Code's own count of what the session cost (its last `cost-state` record, 2.1.3xx): total and by model."""
        m = self.metadata("cost-state")
        if not m:
            return None
        total = m.get("totalCostUSD")
        by_model = {}
        usage = m.get("modelUsage")
        for model, u in usage.items() if isinstance(usage, dict) else ():
            if isinstance(u, dict) and isinstance(u.get("costUSD"), (int, float)) and not isinstance(u.get("costUSD"), bool):
                by_model[str(model)] = float(u["costUSD"])
        if not isinstance(total, (int, float)) or isinstance(total, bool):
            return None
        return {"total_usd": float(total), "by_model": by_model, "unknown_model_cost": m.get("hasUnknownModelCost") is True}

    @property
    def tools_used(self) -> list[str] | None:
        """The tools Claude Code says were used so far (its last `tools-used` record, 2.1.3xx)."""
        m = self.metadata("tools-used")
        tools = m.get("tools") if m else None
        return [str(t) for t in tools if isinstance(t, str)] if isinstance(tools, list) else None

    @property
    def title(self) -> str:
        """custom-title, else ai-title, else summary, else the first real user prompt."""
        for kind, key in TITLE_SOURCES:
            m = self.metadata(kind)
            if m and isinstance(m.get(key), str) and m[key].strip():
                return one_line(m[key])
        return self.first_prompt or ""

    @property
    def first_prompt(self) -> str | None:
        return first_typed_prompt(r.get("prompt") for r in self.records if not r.is_sidechain)

    @property
    def cwd(self) -> str | None:
        for r in self.records:
            if r.cwd:
                return r.cwd
        return None

    @property
    def version(self) -> str | None:
        for r in reversed(self.records):
            if r.version:
                return r.version
        return None

    @property
    def time_span(self) -> tuple[str | None, str | None]:
        stamps = [r.timestamp for r in self.records if timestamp_key(r.timestamp) is not None]
        if not stamps:
            return None, None

        def when(ts: str | None) -> float:
            return timestamp_key(ts) or 0.0  # every stamp here has a key

        return min(stamps, key=when), max(stamps, key=when)

    def main_responses(self) -> list[tuple[int, tuple[int, int, int, int]]]:
        """Real API responses of the main thread, fragments merged (§2.8, §3.1).

        One entry per `message.id` (records without an id stand alone): the index of its last
        fragment and the usage with the input side of that fragment and the largest output.
        """
        groups: dict[str, list[int]] = {}
        order: list[str] = []
        for i, r in enumerate(self.records):
            if r.type != "assistant" or r.is_sidechain or not r.has_real_usage:
                continue
            key = r.message_id or f"#{i}"
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(i)
        out = []
        for key in order:
            idx = groups[key]
            last = idx[-1]
            u = self.records[last].usage
            assert u is not None
            out_tok = max(self.records[j].usage[3] for j in idx)  # type: ignore[index]
            out.append((last, (u[0], u[1], u[2], out_tok)))
        return out

    @property
    def models(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.records:
            if r.type == "assistant" and r.model and r.has_real_usage and not r.is_sidechain:
                seen.setdefault(r.model, None)
        return list(seen)

    @property
    def main_model(self) -> str | None:
        """The model in force at the end of the conversation (the leaf's chain), the model a resume continues with:
        that of its last real response, or of a later `model` announcement (2.1.3xx writes one as a process starts
        or switches models, with its [1m], before any reply of that model); a session that switched models reports
        the one it ended on."""
        recs = self.records
        got = in_force((recs[i] for i in reversed(self.conversation.logical_chain)), self.announces_models)
        if got:
            return got
        for r in reversed(recs):
            if r.type == "assistant" and r.model and r.has_real_usage and not r.is_sidechain:
                return r.model
        return None

    def model_at(self, index: int) -> str | None:
        """The model in force when record `index` was written (file order): the last real response's or `model`
        announcement's before it."""
        return in_force((self.records[j] for j in range(index - 1, -1, -1)), self.announces_models)

    @cached_property
    def announces_models(self) -> bool:
        """Whether the session has a `model` announcement (2.1.3xx), which names a [1m] setting."""
        return any(r.type == "attachment" and announced_model(r) for r in self.records)

    def peak_context(self) -> int | None:
        vals = [context_tokens(u) for _, u in self.main_responses()]
        return max(vals) if vals else None

    def last_context(self) -> int | None:
        """Context of the last real response on the active chain (preserved copies excluded)."""
        conv = self.conversation
        on = set(conv.chain)
        mids_on = {self.records[j].message_id for j in conv.chain if self.records[j].message_id}
        zeroed = conv.relink.preserved if conv.relink else frozenset()
        last = None
        for i, u in self.main_responses():
            r = self.records[i]
            if (i in on or (r.message_id is not None and r.message_id in mids_on)) and r.uuid not in zeroed:
                last = context_tokens(u)
        return last

    # -- compactions ------------------------------------------------------------------------
    def compactions(self) -> list[dict[str, Any]]:
        """Every compact and microcompact boundary, in file order, with its metadata."""
        out = []
        for i, r in enumerate(self.records):
            if r.is_compact_boundary:
                m = r.get("compact") or {}
                pre, post = opt_count(m.get("preTokens")), opt_count(m.get("postTokens"))
                out.append(
                    {
                        "index": i,
                        "uuid": r.uuid,
                        "kind": "compact",
                        "trigger": m.get("trigger") if isinstance(m.get("trigger"), str) else None,
                        "pre_tokens": pre,
                        "post_tokens": post,
                        "tokens_saved": pre - post if pre is not None and post is not None else None,
                        "timestamp": r.timestamp,
                        "line": r.line,
                    }
                )
            elif r.flags & F_COMPACT_SUMMARY and r.is_unmarked_compaction:
                # up to 1.0.108: the summary alone (no boundary, no metadata)
                out.append(
                    {
                        "index": i,
                        "uuid": r.uuid,
                        "kind": "compact",
                        "trigger": self.unmarked_trigger(i),
                        "pre_tokens": None,
                        "post_tokens": None,
                        "tokens_saved": None,
                        "timestamp": r.timestamp,
                        "line": r.line,
                    }
                )
            elif r.is_microcompact_boundary:
                m = r.get("microcompact") or {}
                pre, saved = opt_count(m.get("preTokens")), opt_count(m.get("tokensSaved"))
                out.append(
                    {
                        "index": i,
                        "uuid": r.uuid,
                        "kind": "microcompact",
                        "trigger": m.get("trigger") if isinstance(m.get("trigger"), str) else None,
                        "pre_tokens": pre,
                        "post_tokens": None,
                        "tokens_saved": saved,
                        "timestamp": r.timestamp,
                        "line": r.line,
                        "compacted_tool_ids": [t for t in m.get("compactedToolIds") or () if isinstance(t, str)]
                        if isinstance(m.get("compactedToolIds"), list)
                        else [],
                    }
                )
        return out

    # -- persisted outputs ------------------------------------------------------------------
    @property
    def tool_results_dir(self) -> Path:
        return self.session_dir / "tool-results"

    def tool_result_files(self) -> list[Path]:
        return tool_result_files(self.path)

    @cached_property
    def persisted_outputs(self) -> list[PersistedOutput]:
        """Both shapes: `<persisted-output>` markers, and inline results with a file beside."""
        files = {p.name: p for p in self.tool_result_files()}
        by_stem: dict[str, Path] = {}
        for name, p in files.items():
            stem, _, ext = name.rpartition(".")
            if ext in ("txt", "json") and stem:
                by_stem[stem] = p
        out: list[PersistedOutput] = []
        seen: set[str] = set()
        for i, r in enumerate(self.records):
            for m in r.get("persisted") or ():
                f = self._resolve_persisted(m.tool_use_id, m.path)
                out.append(PersistedOutput(m.tool_use_id, i, m, f, _size(f)))
                seen.add(m.tool_use_id)
        for stem, p in by_stem.items():
            if stem in seen:
                continue
            rec = self.tool_index.get(stem, (None, None))[1]
            out.append(PersistedOutput(stem, rec, None, p, _size(p)))
        return out

    def _resolve_persisted(self, tool_use_id: str, recorded: str) -> Path | None:
        """Find a persisted file by name inside this session's tool-results folder only."""
        folder = self.tool_results_dir
        names = []
        base = recorded.replace("\\", "/").rsplit("/", 1)[-1].strip()
        if base:
            names.append(base)
        names += [f"{tool_use_id}.txt", f"{tool_use_id}.json"]
        for n in names:
            p = safe_child(folder, n, self.project_dir)
            if p is not None:
                return p
        return None

    def read_persisted(self, po: PersistedOutput, limit: int = DISPLAY_CAP, offset: int = 0) -> tuple[str, int]:
        if po.file is None:
            raise FileNotFoundError(f"no persisted file for {po.tool_use_id}")
        return read_capped(po.file, limit, offset)

    def tool_result_content(self, index: int, tool_use_id: str | None = None) -> Any:
        """What the model saw for a tool result: content-replacement applied (§5.3)."""
        body = self.body(index)
        msg = body.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        for b in iter_blocks(content):
            if b.get("type") == "tool_result" and (tool_use_id is None or b.get("tool_use_id") == tool_use_id):
                tid = b.get("tool_use_id")
                reps = self.transcript.replacements
                aid = self.records[index].agent_id
                if aid:
                    reps = self.transcript.agent_replacements.get(aid, reps)
                if isinstance(tid, str) and tid in reps:
                    return reps[tid]
                return b.get("content")
        return None

    # -- session memory ---------------------------------------------------------------------
    @property
    def memory_path(self) -> Path:
        return self.session_dir / "session-memory" / "summary.md"

    def memory_file(self) -> Path | None:
        """The session's notes file, when it is a regular file reached without any link."""
        return safe_child(self.session_dir / "session-memory", "summary.md", self.project_dir)

    def memory(self) -> list[MemorySection] | None:
        p = self.memory_file()
        if p is None:
            return None
        text, _ = read_capped(p, 4 << 20)
        return split_memory(text)

    # -- subagents --------------------------------------------------------------------------
    @cached_property
    def subagents(self) -> list[Subagent]:
        found: dict[str, Subagent] = {}
        for layout, aid, p in self._agent_files():
            meta: dict[str, Any] = {}
            mp = p.with_suffix(".meta.json")
            if layout == "subagents-dir" and real_file(self.project_dir, mp):
                try:
                    with open_regular(mp) as f:
                        loaded = orjson.loads(f.read(1 << 20))
                    meta = loaded if isinstance(loaded, dict) else {}
                except (orjson.JSONDecodeError, OSError):
                    meta = {}
            found[aid] = Subagent(aid, layout, p, meta)
        spawn: dict[str, str] = {}
        if not self.is_flat_agent:
            for aid, tid in self._in_file_sidechains().items():
                found.setdefault(aid, Subagent(aid, "in-file"))
                if tid:
                    spawn[aid] = tid
        for r in self.records:
            aid = r.get("spawned_agent")
            if aid and r.tool_results:
                spawn.setdefault(aid, r.tool_results[0])
            pa = r.get("progress_agent")
            if pa:
                found.setdefault(pa, Subagent(pa, "progress"))
                if r.get("progress_tool_use"):
                    spawn.setdefault(pa, r.get("progress_tool_use"))
        for aid, sa in found.items():
            sa.spawned_by = spawn.get(aid) or (sa.meta.get("toolUseId") if isinstance(sa.meta.get("toolUseId"), str) else None)
        self._link_compactions(found)
        return sorted(found.values(), key=lambda s: (s.layout, s.agent_id))

    def _in_file_sidechains(self) -> dict[str, str | None]:
        """Sidechains stored inside the main file (1.0.x): group id -> spawning tool_use id.

        A group is keyed by its agentId, else by its root record's uuid; it is linked to the
        Task/Agent call whose prompt equals the text of the group's first user record.
        """
        groups: dict[str, int] = {}
        for i, r in enumerate(self.records):
            if r.is_sidechain and r.uuid is not None:
                key = r.agent_id or (r.uuid if r.parent is None else None)
                if key is None:
                    continue
                groups.setdefault(key, i)
        if not groups:
            return {}
        calls: dict[str, str] = {}
        for i, r in enumerate(self.records):
            if r.is_sidechain:
                continue
            for tid, name in r.tool_uses:
                if name in AGENT_TOOLS:
                    msg = self.body(i).get("message")
                    for b in iter_blocks(msg.get("content") if isinstance(msg, dict) else None):
                        inp = b.get("input")
                        if b.get("id") == tid and isinstance(inp, dict) and isinstance(inp.get("prompt"), str):
                            calls.setdefault(inp["prompt"].strip(), tid)
        out: dict[str, str | None] = {}
        for key, first in groups.items():
            text = self.record_text(first).strip() if self.records[first].type == "user" else ""
            out["sidechain" if key == self.records[first].uuid and len(groups) == 1 else key] = calls.get(text)
        return out

    def tool_use_result(self, index: int) -> Any:
        """The tool's raw structured output (`toolUseResult`), kept beside the tool_result content."""
        return self.body(index).get("toolUseResult")

    def agent_transcripts(self) -> list[tuple[str, Path]]:
        """(agent id, path) of each subagent transcript, in the order `subagents` lists those with a file: only the
        folder listings, no meta file or transcript read (what a cost needs of a session's subagents); `subagents`'
        own, when it was listed already (stats lists both)."""
        listed = self.__dict__.get("subagents")
        if listed is not None:
            return [(sa.agent_id, sa.path) for sa in listed if sa.path is not None]
        return agent_transcripts_of(self.path, self.session_id, self._flat_agents)

    def _agent_files(self) -> list[tuple[str, str, Path]]:
        """The session's subagent transcripts as `agent_files` lists them, with the flat ones beside it."""
        flat = self._flat_agents if self._flat_agents is not None else self._find_flat_agents()
        return agent_files(self.path, flat)

    def _find_flat_agents(self) -> list[Path]:
        return [] if self.is_flat_agent else flat_agents(self.path, self.session_id)

    def _link_compactions(self, found: dict[str, Subagent]) -> None:
        """Link each agent-acompact-* transcript to the compact boundary it produced."""
        bounds = [i for i, r in enumerate(self.records) if r.is_compact_boundary]
        if not bounds:
            return
        for sa in found.values():
            if sa.kind != "compaction" or sa.path is None:
                continue
            try:
                t = Transcript.load(sa.path)
            except OSError:
                continue
            ids = {r.uuid for r in t.records if r.uuid} | {r.parent for r in t.records if r.parent}
            for b in bounds:
                lp = self.records[b].logical_parent
                if lp and lp in ids:
                    sa.boundary = b
                    break
            else:
                last = max((timestamp_key(r.timestamp) or 0.0 for r in t.records), default=0.0)
                after = [b for b in bounds if (timestamp_key(self.records[b].timestamp) or 0.0) >= last]
                if after:
                    sa.boundary = after[0]

    def load_subagent(self, sa: Subagent) -> Session | None:
        return Session.load(sa.path, only=self.transcript.only) if sa.path is not None else None

    # -- text helpers -----------------------------------------------------------------------
    def find_record(self, ref: str) -> int:
        """The record a user names as `show` prints it: a whole uuid, a unique uuid prefix (at least 4 characters), or a
        line number ("42", "line 42" or "L42"). Raises LookupError with the reason when there is none or several."""
        ref = ref.strip()
        i = self.conversation.by_uuid.get(ref)
        if i is not None:
            return i
        low = ref.lower()
        digits = low.removeprefix("line").strip().removeprefix("l").strip() if not low.isdigit() else low
        if digits.isdigit() and len(digits) < 9:  # a line number (a uuid prefix of digits alone is never this short)
            n = int(digits)
            k = next((k for k, r in enumerate(self.records) if r.line == n), None)
            if k is not None:
                return k
            bad = next((p for p in self.transcript.problems if p.line == n), None)
            why = (
                f": that line was skipped ({bad.reason})"
                if bad
                else (
                    f": the file has {self.records[-1].line if self.records else 0} lines"
                    if not self.records or n > self.records[-1].line
                    else ": it holds no record"
                )
            )
            raise LookupError(f"no record on line {n}{why}")
        if len(ref) < 4:
            raise LookupError(f"no record with uuid {ref} (a uuid prefix needs at least 4 characters; a line number is digits)")
        hits = [k for k, r in enumerate(self.records) if r.uuid and r.uuid.lower().startswith(low)]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise LookupError(f"no record {ref}: no uuid is or starts with it")
        lines = ", ".join(str(self.records[k].line) for k in hits[:6])
        raise LookupError(
            f"{len(hits)} records have a uuid starting with {ref!r} (lines {lines}{' …' if len(hits) > 6 else ''}): give more "
            f"of it"
        )

    def unmarked_trigger(self, index: int) -> str:
        """What started a compaction written as its summary alone (up to 1.0.108, `Record.is_unmarked_compaction`):
        "manual" when the `/compact` command's records follow the summary (the REPLs of 1.0.17 and 1.0.51 write them right
        after it), else "auto"."""
        recs = self.records
        for j in range(index + 1, min(index + 6, len(recs))):
            r = recs[j]
            if r.type != "user" or r.parent is None or r.is_sidechain:
                break
            text = self.record_text(j)
            if any(c in text for c in COMPACT_COMMANDS):
                return "manual"
        return "auto"

    def record_text(self, index: int) -> str:
        body = self.body(index)
        msg = body.get("message")
        if isinstance(msg, dict):
            return text_of(msg.get("content"))
        c = body.get("content")
        return c if isinstance(c, str) else ""


def orphan_agents(
    files: list[tuple[Path, list[Path]]], owners: dict[Path, str | None] | None = None, ids: dict[Path, str] | None = None
) -> list[Path]:
    """The flat `agent-*.jsonl` files whose session is not among `files` (its transcript was deleted, or never
    written): the browser and `stats` list them on their own, so that no transcript is hidden. `owners` and `ids`
    keep what was read of each file's head between calls (a file's session id does not change)."""
    owners = {} if owners is None else owners
    ids = {} if ids is None else ids
    if not any(agents for _, agents in files):
        return []  # only 2.0.x wrote flat agent files: nothing to read for the rest
    sessions = set()
    for path, _ in files:
        if path not in ids:
            ids[path] = peek_session_id(path) or path.stem
        sessions.add(ids[path])
    out: list[Path] = []
    seen: set[Path] = set()
    for _path, agents in files:
        for a in agents:
            if a in seen:
                continue
            seen.add(a)
            if a not in owners:
                owners[a] = peek_session_id(a)
            if owners[a] not in sessions:
                out.append(a)
    return out


def own_agents(path: Path, agents: list[Path], owners: dict[Path, str | None]) -> list[Path]:
    """The project's flat `agent-*.jsonl` files that belong to this session (by their sessionId).

    `owners` caches each agent file's session id across the sessions of a project."""
    if not agents:
        return []
    for a in agents:
        if a not in owners:
            owners[a] = peek_session_id(a)
    sid = peek_session_id(path) or path.stem
    return [a for a in agents if owners[a] == sid]


def one_line(s: str, width: int = 100) -> str:
    s = " ".join(s.split())
    return s if len(s) <= width else s[: width - 1] + "…"


def _size(p: Path | None) -> int | None:
    if p is None:
        return None
    try:
        return p.stat().st_size
    except OSError:
        return None


__all__ = [
    "Session",
    "Subagent",
    "PersistedOutput",
    "MemorySection",
    "split_memory",
    "safe_child",
    "read_capped",
    "peek_session_id",
    "one_line",
    "tool_result_text",
    "parse_persisted",
    "F_IMAGE",
]


def model_in_force(r: Any) -> str | None:
    """The model a record says is in force: a main-thread real response's model, or the model a `model` announcement
    names (2.1.3xx); None for any other record."""
    if r.type == "assistant":
        return r.model if r.model and r.has_real_usage and not r.is_sidechain else None
    return announced_model(r)


def announced_model(r: Any) -> str | None:
    """The model a 2.1.3xx `model` attachment announces (with its [1m]), else None."""
    if r.type == "attachment" and r.extra:
        got = r.extra.get("announced_model")
        return got if isinstance(got, str) and got else None
    return None


def same_model(a: str | None, b: str | None) -> bool:
    """Whether two model names are one model, a [1m] setting aside (the API's model name drops the [1m] a 2.1.3xx
    announcement keeps)."""
    return bool(a and b) and str(a).lower().replace("[1m]", "") == str(b).lower().replace("[1m]", "")


def in_force(newest_first: Any, announces: bool = True) -> str | None:
    """The model in force after these records (given newest first): the newest response's or announcement's; a
    response of the model an earlier announcement named is that announcement's name (the API's model name drops
    the [1m] the announcement keeps)."""
    reply: str | None = None
    for r in newest_first:
        if reply is None:
            got = model_in_force(r)
            if got and r.type != "assistant":
                return got
            reply = got
            if reply and not announces:
                return reply  # no announcement to name its [1m]: no need to look further
            continue
        ann = announced_model(r)
        if ann:
            return ann if same_model(ann, reply) else reply
    return reply
