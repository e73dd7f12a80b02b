"""Per-session facts for `inspector stats`, and a cache keyed by (path, size, mtime_ns).

The facts come from one indexing pass over the main transcript plus a look at the session's
own folder. The cache is best effort: a cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

import orjson

from inspector import __version__
from inspector.cost import session_cost

STATS_SCHEMA = 2  # bumped when the stats of a session gain or change a field: older cache entries are computed again
from inspector.transcript.discovery import Target, project_name, session_files
from inspector.transcript.session import Session, peek_session_id

CACHE_FORMAT = 5  # bump when a stat is computed differently
MAX_PROBLEMS_LISTED = 50


def session_stats(s: Session) -> dict[str, Any]:
    """The JSON-ready facts of one session (the schema of `stats --json`)."""
    t = s.transcript
    conv = s.conversation
    by_type = Counter(r.type for r in t.records)
    comps = s.compactions()
    first, last = s.time_span
    models = s.models
    subs = s.subagents
    skipped = t.skipped
    return {
        "path": str(s.path),
        "session_id": s.session_id,
        "cwd": s.cwd,
        "title": s.title,
        "model": s.main_model if models else None,
        "models": models,
        "version": s.version,
        "first_timestamp": first,
        "last_timestamp": last,
        "size": t.size,
        "records": {
            "total": len(t.records),
            "by_type": dict(sorted(by_type.items())),
            "malformed": len(skipped),
        },
        "problems": [
            {"line": p.line, "offset": p.offset, "reason": p.reason, "skipped": p.skipped}
            for p in t.problems[:MAX_PROBLEMS_LISTED]
        ],
        "chain": {
            "length": len(conv.chain),
            "logical_length": len(conv.logical_chain),
            "leaf_uuid": conv.leaf_uuid,
            "branches": len(conv.branches),
        },
        "compactions": [{k: v for k, v in c.items() if k != "index"} for c in comps],
        "counts": {
            "compactions": sum(1 for c in comps if c["kind"] == "compact"),
            "microcompactions": sum(1 for c in comps if c["kind"] == "microcompact"),
        },
        "context": {"peak_tokens": s.peak_context(), "last_tokens": s.last_context()},
        "persisted_outputs": {
            "markers": sum(len(r.get("persisted") or ()) for r in t.records),
            "files": len(s.tool_result_files()),
        },
        "subagents": len(subs),
        "subagent_list": [
            {"agent_id": a.agent_id, "kind": a.kind, "layout": a.layout, "spawned_by": a.spawned_by}
            for a in subs
        ],
        "session_memory": s.memory_path.is_file(),
        "claude_code_cost": s.claude_cost,
        **session_cost(s),
        "tools_used": s.tools_used,
        "orphan_subagent": s.is_flat_agent,
    }


# ---------------------------------------------------------------------------------------------
# cache


def cache_dir(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "inspector"


def _dir_signature(folder: Path, flat_agents: Iterable[Path]) -> list[Any]:
    """Names, sizes and mtimes of what lies beside a session (subagents, tool-results, memory): the files read for
    its stats, so reached the same way (no link, a bounded depth)."""
    from inspector.transcript.safefs import walk_files

    sig: list[Any] = []
    for p in walk_files(folder.parent, folder):
        try:
            st = p.stat(follow_symlinks=False)
        except OSError:
            continue
        sig.append([str(p.relative_to(folder)), st.st_size, st.st_mtime_ns])
    for p in flat_agents:
        try:
            st = p.stat()
            sig.append([p.name, st.st_size, st.st_mtime_ns])
        except OSError:
            continue
    return sig


class StatsCache:
    """One small JSON file per session, written atomically; never inside ~/.claude."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder / f"stats-v{CACHE_FORMAT}" if folder is not None else None
        self.hits = 0
        self.misses = 0

    def _file(self, path: Path) -> Path:
        assert self.folder is not None
        return self.folder / (hashlib.sha1(os.path.abspath(path).encode("utf-8", "surrogatepass")).hexdigest() + ".json")

    def key(self, path: Path, flat_agents: list[Path]) -> dict[str, Any]:
        st = path.stat()
        return {
            "path": os.path.abspath(path),
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
            "beside": _dir_signature(path.with_suffix(""), flat_agents),
            "inspector": __version__,
            "schema": STATS_SCHEMA,
        }

    def get(self, path: Path, key: dict[str, Any]) -> dict[str, Any] | None:
        if self.folder is None:
            return None
        try:
            data = orjson.loads(self._file(path).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            self.misses += 1
            return None
        if not isinstance(data, dict) or data.get("key") != key or not _well_formed(data.get("stats"), data.get("sum")):
            self.misses += 1  # stale, or damaged: computed again (and the entry rewritten)
            return None
        self.hits += 1
        return data["stats"]

    def put(self, path: Path, key: dict[str, Any], stats: dict[str, Any]) -> None:
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "wb") as f:
                    body = orjson.dumps(stats)  # TypeError: a path that is not UTF-8
                    f.write(b'{"key":' + orjson.dumps(key) + b',"sum":"' + hashlib.sha1(body).hexdigest().encode() +
                            b'","stats":' + body + b"}")
                os.replace(tmp, self._file(path))
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except (OSError, TypeError):
            pass  # the cache is an optimisation; a read-only cache folder (or a path orjson cannot write) is not an error


_REQUIRED = {"path": str, "session_id": str, "records": dict, "chain": dict, "compactions": list, "counts": dict,
             "context": dict, "persisted_outputs": dict, "subagent_list": list, "problems": list}


def _well_formed(stats: Any, digest: Any) -> bool:
    """A cache entry's stats as they were written: the checksum matches and the fields the readers use are there."""
    if not isinstance(stats, dict) or not isinstance(digest, str):
        return False
    if any(not isinstance(stats.get(k), t) for k, t in _REQUIRED.items()):
        return False
    return hashlib.sha1(orjson.dumps(stats)).hexdigest() == digest


def orphan_agents(files: list[tuple[Path, list[Path]]], owners: dict[Path, str | None] | None = None,
                  ids: dict[Path, str] | None = None) -> list[Path]:
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


def _one(path: Path, flat_agents: list[Path]) -> dict[str, Any]:
    return session_stats(Session.load(path, flat_agents=flat_agents))


def _compute(todo: list[tuple[int, Path, list[Path], Any]], workers: int | None,
             skip_errors: bool = False, errors: list[tuple[int, OSError]] | None = None) -> Iterable[tuple[int, dict[str, Any]]]:
    """Stats of the sessions not in the cache, in several processes when there are many.

    With `skip_errors`, a session that cannot be read is left out (and put in `errors`) instead of stopping the rest."""
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    if n_workers <= 1 or len(todo) < 8:
        for n, path, mine, _ in todo:
            try:
                yield n, _one(path, mine)
            except OSError as exc:
                if not skip_errors:
                    raise
                if errors is not None:
                    errors.append((n, exc))
        return
    from concurrent.futures import ProcessPoolExecutor

    # biggest first, so the pool does not wait on one large file at the end
    order = sorted(todo, key=lambda t: -_size(t[1]))
    import multiprocessing

    # forkserver, not fork: the caller may be a threaded app (the TUI), and forking threads is unsafe
    with ProcessPoolExecutor(max_workers=n_workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
        futures = {pool.submit(_one, path, mine): n for n, path, mine, _ in order}
        from concurrent.futures import as_completed

        for f in as_completed(futures):
            try:
                yield futures[f], f.result()
            except OSError as exc:
                if not skip_errors:
                    raise
                if errors is not None:
                    errors.append((futures[f], exc))


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def collect_stats(
    target: Target,
    cache: StatsCache | None = None,
    progress: Callable[[int, int, Path], None] | None = None,
    workers: int | None = None,
    skipped: list[tuple[Path, str]] | None = None,
) -> list[dict[str, Any]]:
    """Stats of every session under a target, in path order, with project names filled in.

    A file that cannot be read is left out and named in `skipped` (with why), so one unreadable session never
    costs the others; without a `skipped` list the first such error is raised."""
    files = session_files(target)
    out: list[dict[str, Any]] = []

    def failed(path: Path, exc: OSError) -> None:
        if skipped is None:
            raise exc
        skipped.append((path, exc.strerror or str(exc)))

    agent_owner: dict[Path, str | None] = {}
    slots: list[dict[str, Any] | None] = []
    todo: list[tuple[int, Path, list[Path], dict[str, Any] | None]] = []
    for n, (path, agents) in enumerate(files):
        mine = own_agents(path, agents, agent_owner)
        try:
            key = cache.key(path, mine) if cache else None
        except OSError as exc:
            failed(path, exc)
            slots.append(None)
            continue
        st = cache.get(path, key) if cache and key else None
        slots.append(st)
        if st is None:
            todo.append((n, path, mine, key))
    done = len(files) - len(todo)
    keys = {n: k for n, _, _, k in todo}
    errors: list[tuple[int, OSError]] = []
    for n, st in _compute(todo, workers, skip_errors=skipped is not None, errors=errors):
        slots[n] = st
        key = keys[n]
        if cache and key:
            cache.put(files[n][0], key, st)
        done += 1
        if progress:
            progress(done - 1, len(files), files[n][0])
    for n, exc in errors:
        failed(files[n][0], exc)
    out.extend(st for st in slots if st is not None)
    # flat agent files that belong to no session in their project are listed on their own
    for a in orphan_agents(files, agent_owner):
        try:
            out.append(session_stats(Session.load(a)))
        except OSError as exc:
            failed(a, exc)
    by_project: dict[str, list[dict[str, Any]]] = {}
    for st in out:
        by_project.setdefault(str(Path(st["path"]).parent), []).append(st)
    for folder, items in by_project.items():
        name = project_name([i["cwd"] for i in items], Path(folder))
        for i in items:
            i["project"] = name
            i["project_dir"] = folder
    return out
