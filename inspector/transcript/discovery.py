"""Where sessions are: the projects root, project folders, session files (§1.1–1.3).

Project folders are named by Claude Code's lossy encoding of the launch directory; the folder
name is never decoded. A project is named from the `cwd` its records carry.
"""

from __future__ import annotations

import os
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from inspector.transcript.safefs import DIR, FILE, scan_dir


class InspectorError(Exception):
    """An error to show the user as one line, without a traceback."""


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude` (NFC-normalised, as Claude Code does)."""
    source: Mapping[str, str] = os.environ if env is None else env
    raw = source.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return Path(unicodedata.normalize("NFC", raw))


def project_folder_name(cwd: str) -> str:
    """The name of the folder Claude Code keeps a project's sessions in (§1.2): every character that is not a letter
    or a digit becomes '-'. (Over 200 characters Claude Code adds a hash of the path that only its runtime makes.)"""
    import re

    return re.sub(r"[^a-zA-Z0-9]", "-", cwd)


def default_projects_root(env: dict[str, str] | None = None) -> Path:
    return config_dir(env) / "projects"


def samples_root() -> Path | None:
    """The bundled sample sessions: inside the installed package, else the source checkout."""
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "_samples", here.parent / "sample_sessions"):
        if cand.is_dir():
            return cand
    return None


class Target(NamedTuple):
    """What a path given by the user points at."""

    kind: str  # "root", "project" or "file"
    path: Path


def resolve_target(path: str | os.PathLike[str]) -> Target:
    """Classify a path: a projects root, one project folder, or one `.jsonl` transcript.

    A Claude config folder (one with a `projects` folder inside, like ~/.claude) means its projects root."""
    p = Path(path).expanduser()
    if not p.exists():
        raise InspectorError(f"no such file or directory: {p}")
    if p.is_file():
        if p.suffix != ".jsonl":
            raise InspectorError(f"not a JSONL transcript (expected a .jsonl file): {p}")
        if not os.access(p, os.R_OK):
            raise InspectorError(f"cannot read {p}: permission denied")
        return Target("file", p)
    if not p.is_dir():
        raise InspectorError(f"not a file or folder: {p}")
    try:
        if any(c.suffix == ".jsonl" and c.is_file() for c in p.iterdir()):
            return Target("project", p)
    except PermissionError:
        raise InspectorError(f"cannot read {p}: permission denied") from None
    if (p / "projects").is_dir():  # a config folder (~/.claude, $CLAUDE_CONFIG_DIR): its projects root
        return Target("root", p / "projects")
    return Target("root", p)


def project_dirs(root: Path) -> list[Path]:
    return [root / n for n in sorted(n for n, k in scan_dir(os.fspath(root)) if k == DIR)]


def transcript_names(entries: Iterable[tuple[str, int]]) -> tuple[list[str], list[str]]:
    """(session transcripts, flat `agent-*.jsonl` subagent transcripts) among a project folder's entries (name, kind
    as `safefs.scan_dir` gives them): regular files named `*.jsonl` (never a link), in name order."""
    names = sorted(n for n, k in entries if k == FILE and n.endswith(".jsonl") and len(n) > 6)
    return [n for n in names if not n.startswith("agent-")], [n for n in names if n.startswith("agent-")]


def project_files(project: Path) -> tuple[list[Path], list[Path]]:
    """(session transcripts, flat `agent-*.jsonl` subagent transcripts) of a project folder (`transcript_names`)."""
    sessions, agents = transcript_names(scan_dir(os.fspath(project)))
    return [project / n for n in sessions], [project / n for n in agents]


def unreadable_folders(target: Target) -> list[tuple[Path, str]]:
    """The folders of a target that cannot be listed (no read permission): their sessions are missing from whatever
    is made of the target, which must say so rather than skip them in silence."""
    if target.kind == "file":
        return []
    dirs = [target.path] if target.kind == "project" else [target.path, *project_dirs(target.path)]
    out = []
    for d in dirs:
        try:
            with os.scandir(d):
                pass
        except FileNotFoundError:
            continue
        except OSError as exc:
            out.append((d, exc.strerror or str(exc)))
    return out


def session_files(target: Target) -> list[tuple[Path, list[Path]]]:
    """Every session transcript under a target, each with its project's flat agent files."""
    if target.kind == "file":
        return [(target.path, [])]
    projects = [target.path] if target.kind == "project" else project_dirs(target.path)
    out = []
    for proj in projects:
        sessions, agents = project_files(proj)
        for s in sessions:
            out.append((s, agents))
    return out


# ---------------------------------------------------------------------------------------------
# the cheap read: a head and a tail, never the whole file


class SessionInfo:
    """What a session browser shows at once, from the first and last 64 KB of the file. (A plain class, as the others
    `search` imports: the dataclasses module costs a search a tenth of its time.)"""

    __slots__ = (
        "path",
        "size",
        "mtime_ns",
        "session_id",
        "cwd",
        "title",
        "first_prompt",
        "first_timestamp",
        "last_timestamp",
        "version",
    )

    def __init__(self, path: Path, size: int, mtime_ns: int, session_id: str) -> None:
        self.path, self.size, self.mtime_ns, self.session_id = path, size, mtime_ns, session_id
        self.cwd: str | None = None
        self.title: str | None = None
        self.first_prompt: str | None = None
        self.first_timestamp: str | None = None
        self.last_timestamp: str | None = None
        self.version: str | None = None

    def __repr__(self) -> str:
        return "SessionInfo(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionInfo):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was


def _lines(chunk: bytes, *, drop_first: bool, drop_last: bool) -> list[dict]:
    import orjson  # (imported where a file is read: resolving a target, as `search` does, needs none of it)

    parts = chunk.split(b"\n")
    if drop_first and parts:
        parts = parts[1:]
    if drop_last and parts:
        parts = parts[:-1]
    out = []
    for raw in parts:
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _head_and_tail(path: Path, window: int) -> tuple[os.stat_result, list[dict], list[dict]]:
    """The file's status and the JSON objects of its first and last `window` bytes (a line cut by either edge left
    out)."""
    st = path.stat()
    with open(path, "rb") as f:
        head = f.read(window)
        if st.st_size > window:
            f.seek(max(window, st.st_size - window))
            tail = f.read(window)
        else:
            tail = b""
    head_objs = _lines(head, drop_first=False, drop_last=st.st_size > window)
    tail_objs = _lines(tail, drop_first=True, drop_last=False) if tail else []
    return st, head_objs, tail_objs


def _first_of(objs: list[dict]) -> str | None:
    from inspector.textutil import timestamp_key

    stamps = [(key, ts) for o in objs if isinstance(ts := o.get("timestamp"), str) and (key := timestamp_key(ts)) is not None]
    return min(stamps)[1] if stamps else None


def first_timestamp(path: Path, window: int = 65536) -> str | None:
    """A session's first time as `quick_info` reads it (the earliest of its head's and tail's), and nothing else:
    the order `cost` reads a root in, without the titles and prompts."""
    _st, head, tail = _head_and_tail(path, window)
    return _first_of(head + tail)


def quick_info(path: Path, window: int = 65536) -> SessionInfo:
    """Read only the head and the tail of a transcript (like Claude Code's /resume picker)."""
    from inspector.textutil import timestamp_key
    from inspector.transcript.records import TITLE_SOURCES, first_typed_prompt, index_record

    st, head_objs, tail_objs = _head_and_tail(path, window)
    info = SessionInfo(path=path, size=st.st_size, mtime_ns=st.st_mtime_ns, session_id=path.stem)
    titles: dict[str, str] = {}
    prompts: list[str | None] = []
    stamps: list[tuple[float, str]] = []
    for obj in head_objs + tail_objs:
        t = obj.get("type")
        if isinstance(obj.get("sessionId"), str) and info.session_id == path.stem and obj.get("isSidechain") is not True:
            info.session_id = obj["sessionId"]
        if info.cwd is None and isinstance(obj.get("cwd"), str):
            info.cwd = obj["cwd"]
        if isinstance(obj.get("version"), str):
            info.version = obj["version"]
        ts = obj.get("timestamp")
        if isinstance(ts, str) and (key := timestamp_key(ts)) is not None:
            stamps.append((key, ts))
        for kind, name in TITLE_SOURCES:
            if t == kind and isinstance(obj.get(name), str):
                titles[kind] = obj[name]
        if t == "user" and obj.get("isSidechain") is not True:
            prompts.append(index_record(obj, 0, 0, 0).get("prompt"))  # the prompt fact as Session reads it
    if stamps:  # the earliest and latest, as Session.time_span (of the head and tail read here)
        info.first_timestamp, info.last_timestamp = min(stamps)[1], max(stamps)[1]
    first = first_typed_prompt(prompts)
    info.first_prompt = first[:100] if first else None
    for kind, _ in TITLE_SOURCES:
        if titles.get(kind, "").strip():
            info.title = " ".join(titles[kind].split())[:100]
            break
    if info.title is None:
        info.title = info.first_prompt
    return info


def project_name(cwds: list[str | None], folder: Path) -> str:
    """A project's name: the cwd most of its sessions were started in, else the folder name."""
    c = Counter(x for x in cwds if x)
    return c.most_common(1)[0][0] if c else folder.name
