"""Per-session facts for `inspector stats`, and a cache keyed by (path, size, mtime_ns).

The facts come from one indexing pass over the main transcript plus a look at the session's
own folder. The cache is best effort: a cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from inspector import __version__
from inspector.library.cache import is_normal_absolute
from inspector.library.rowcache import RowCache
from inspector.statefiles import cache_dir
from inspector.transcript.discovery import Target, project_name, session_files

if TYPE_CHECKING:  # the session and the prices are imported where stats are computed, not by `search` for a title
    from inspector.transcript.session import Session

STATS_SCHEMA = 8  # bumped when the stats of a session gain or change a field: older cache entries are computed again

MAX_PROBLEMS_LISTED = 50


def session_stats(s: Session) -> dict[str, Any]:
    """The JSON-ready facts of one session (the schema of `stats --json`)."""
    from inspector.library.cost import session_cost

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
            "trailing_uuid": s.records[conv.trailing_leaf].uuid if conv.trailing_leaf is not None else None,
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
        "subagent_list": [{"agent_id": a.agent_id, "kind": a.kind, "layout": a.layout, "spawned_by": a.spawned_by} for a in subs],
        "session_memory": s.memory_path.is_file(),
        "claude_code_cost": s.claude_cost,
        **session_cost(s),
        "tools_used": s.tools_used,
        # the session its copied records came from (a session inspector saved, or Claude Code's own fork): None
        "copied_from": next((r.extra["copied_from"] for r in t.records if r.extra and "copied_from" in r.extra), None),
        "orphan_subagent": s.is_flat_agent,
    }


# ---------------------------------------------------------------------------------------------
# cache


def _subfolders(folder: str) -> set[str]:
    """The names of the real folders (no link) directly in a folder."""
    from inspector.transcript.safefs import DIR, scan_dir

    return {n for n, k in scan_dir(folder) if k == DIR}


def _dir_signature(folder: Path | None, flat_agents: Iterable[Path], listed: bool = False) -> list[Any]:
    """Names, sizes and mtimes of what lies beside a session (subagents, memory): the files read for its stats, so
    reached the same way (no link, a bounded depth). Its `tool-results` folder counts by its own time: the stats
    count its files, which Claude Code writes once each (a file added or removed changes the folder's time), and
    each is written with the record that names it (which changes the transcript's size, in the key too)."""
    from inspector.transcript.safefs import stat_signature

    return stat_signature(folder, flat_agents, opaque=("tool-results",), listed=listed)


class StatsCache(RowCache):
    """One row per session in the inspector database (`stats`), keyed by the session's path and checked against its
    `key` (size, time and what lies beside it)."""

    TABLE = "stats"
    VALUE = "stats"

    def opened(self, index: Any) -> bool:
        if self.folder is not None:
            _sweep_json_cache(self.folder)
        return True

    def key(self, path: Path, flat_agents: list[Path], folders: dict[str, set[str]] | None = None) -> dict[str, Any]:
        """What the stats of a session depend on. `folders`: each project folder's sub-folders, listed once (most
        sessions have no folder of their own: no walk is tried then)."""
        st = os.stat(path)
        name = os.fspath(path)
        folder: Path | None = path.with_suffix("")
        listed = False  # the folder is in its project's listing as a folder (not a link): not looked at again
        if folders is not None:
            parent, _, base = name.rpartition(os.sep)
            if parent not in folders:
                folders[parent] = _subfolders(parent)
            if base.endswith(".jsonl"):
                listed = base[:-6] in folders[parent]
                if not listed:
                    folder = None
        return {
            "path": name if is_normal_absolute(name) else os.path.abspath(name),
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
            "beside": _dir_signature(folder, flat_agents, listed=listed),
            "inspector": __version__,
            "schema": STATS_SCHEMA,
        }

    def get(self, path: Path, key: dict[str, Any]) -> dict[str, Any] | None:
        try:
            want = orjson.dumps(key)
        except TypeError:
            want = None
        row = self.row(os.fsencode(key["path"])) if want is not None else None  # the absolute path, as `key` made it
        stats = None
        if row is not None and row[0] == want:
            try:
                stats = orjson.loads(row[1])
            except (orjson.JSONDecodeError, TypeError):  # (a damaged row can hold any type of SQLite's)
                stats = None
            if not _well_formed(stats):
                stats = None  # damaged: computed again (and the row rewritten)
        if stats is None:
            self.misses += 1
            return None
        self.hits += 1
        return stats

    def put(self, path: Path, key: dict[str, Any], stats: dict[str, Any]) -> None:
        try:
            key_b, stats_b = orjson.dumps(key), orjson.dumps(stats)
        except TypeError:
            return  # a path orjson cannot write (not UTF-8): not cached
        self.put_row(self.path_bytes(path), key_b, stats_b)


def _sweep_json_cache(folder: Path) -> None:
    """Remove the stats caches of earlier inspectors, one JSON file per session (folders `stats-v*` in inspector's
    own cache folder): the database holds the stats now."""
    import shutil

    try:
        old = [d for d in folder.iterdir() if d.name.startswith("stats-v") and d.is_dir() and not d.is_symlink()]
    except OSError:
        return
    for d in old:
        shutil.rmtree(d, ignore_errors=True)


_REQUIRED = {
    "path": str,
    "session_id": str,
    "records": dict,
    "chain": dict,
    "compactions": list,
    "counts": dict,
    "context": dict,
    "persisted_outputs": dict,
    "subagent_list": list,
    "problems": list,
}
_REQUIRED_ITEMS = tuple(_REQUIRED.items())


def _well_formed(stats: Any) -> bool:
    """A cache row's stats have the fields the readers use, of their types."""
    if not isinstance(stats, dict):
        return False
    for k, t in _REQUIRED_ITEMS:
        if not isinstance(stats.get(k), t):
            return False
    return True


def _one(path: Path, flat_agents: list[Path]) -> dict[str, Any]:
    from inspector.transcript.session import Session

    return session_stats(Session.load(path, flat_agents=flat_agents))


def _compute(
    todo: list[tuple[int, Path, list[Path], Any]],
    workers: int | None,
    skip_errors: bool = False,
    errors: list[tuple[int, OSError]] | None = None,
) -> Iterable[tuple[int, dict[str, Any]]]:
    """Stats of the sessions not in the cache, in several processes when there are many.

    With `skip_errors`, a session that cannot be read is left out (and put in `errors`) instead of stopping the rest."""
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    done: set[int] = set()

    def settle(got: Iterable[tuple[int, dict[str, Any] | OSError]]) -> Iterable[tuple[int, dict[str, Any]]]:
        """Each session's stats, read here or by the pool (`_many`); one that could not be read raised, or left out
        and put in `errors` (skip_errors)."""
        for n, st in got:
            done.add(n)
            if isinstance(st, OSError):
                if not skip_errors:
                    raise st
                if errors is not None:
                    errors.append((n, st))
                continue
            yield n, st

    def here(items: list[tuple[int, Path, list[Path], Any]]) -> Iterable[tuple[int, dict[str, Any]]]:
        for n, path, mine, _ in items:  # one at a time: each yielded as soon as it is read
            yield from settle(_many([(n, path, mine)]))

    if n_workers <= 1 or len(todo) < 8:
        yield from here(todo)
        return
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # biggest first, so the pool does not wait on one large file at the end; sent in batches (a task costs the
    # pool a fifth of a millisecond each way, 0.4 s of a 2,000-session root's cold stats when each was one)
    sizes = {t[0]: _size(t[1]) for t in todo}
    order = sorted(todo, key=lambda t: -sizes[t[0]])
    import multiprocessing

    try:
        # forkserver, not fork: the caller may be a threaded app (the TUI), and forking threads is unsafe
        with ProcessPoolExecutor(max_workers=n_workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
            from concurrent.futures import as_completed

            futures = [pool.submit(_many, [(n, path, mine) for n, path, mine, _ in batch]) for batch in _batches(order, sizes)]
            for f in as_completed(futures):
                yield from settle(f.result())  # (BrokenProcessPool: the rest is done here, below)
    except (BrokenProcessPool, RuntimeError, PermissionError) as exc:  # no worker processes here: this one does it
        import sys

        print(f"inspector: reading the sessions in one process ({exc})", file=sys.stderr)
        yield from here([t for t in order if t[0] not in done])
    except OSError:
        if done:
            raise  # a session's own error, raised above
        yield from here(order)  # the pool could not start (no semaphores, no /dev/shm)


BATCH_FILES = 16  # sessions in one task of the pool at most
BATCH_BYTES = 16 << 20  # and their bytes (a larger session is a task of its own)


def _batches(
    order: list[tuple[int, Path, list[Path], Any]], sizes: dict[int, int]
) -> list[list[tuple[int, Path, list[Path], Any]]]:
    """The sessions in the order given, cut into the pool's tasks: consecutive ones, up to BATCH_FILES of them and
    BATCH_BYTES together."""
    out: list[list[tuple[int, Path, list[Path], Any]]] = []
    cur: list[tuple[int, Path, list[Path], Any]] = []
    held = 0
    for item in order:
        size = sizes[item[0]]
        if cur and (len(cur) >= BATCH_FILES or held + size > BATCH_BYTES):
            out.append(cur)
            cur, held = [], 0
        cur.append(item)
        held += size
    if cur:
        out.append(cur)
    return out


def _many(items: list[tuple[int, Path, list[Path]]]) -> list[tuple[int, dict[str, Any] | OSError]]:
    """A pool's task: the stats of each session, or the error that kept it from being read."""
    out: list[tuple[int, dict[str, Any] | OSError]] = []
    for n, path, mine in items:
        try:
            out.append((n, _one(path, mine)))
        except OSError as exc:
            out.append((n, exc))
    return out


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
    from inspector.transcript.session import Session, orphan_agents, own_agents

    files = session_files(target)
    out: list[dict[str, Any]] = []

    def failed(path: Path, exc: OSError) -> None:
        if skipped is None:
            raise exc
        skipped.append((path, exc.strerror or str(exc)))

    agent_owner: dict[Path, str | None] = {}
    slots: list[dict[str, Any] | None] = []
    if cache and target.kind != "file":
        cache.prefetch(target.path)
    todo: list[tuple[int, Path, list[Path], dict[str, Any] | None]] = []
    folders: dict[str, set[str]] = {}
    for n, (path, agents) in enumerate(files):
        mine = own_agents(path, agents, agent_owner)
        try:
            key = cache.key(path, mine, folders) if cache else None
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
    if cache:
        cache.sweep()  # the rows of sessions gone since
        cache.flush()
    for n, why in errors:
        failed(files[n][0], why)
    out.extend(st for st in slots if st is not None)
    # flat agent files that belong to no session in their project are listed on their own
    for a in orphan_agents(files, agent_owner):
        try:
            out.append(session_stats(Session.load(a)))
        except OSError as exc:
            failed(a, exc)
    by_project: dict[str, list[dict[str, Any]]] = {}
    for st in out:
        by_project.setdefault(os.path.dirname(st["path"]) or ".", []).append(st)
    for folder, items in by_project.items():
        name = project_name([i["cwd"] for i in items], Path(folder))
        for i in items:
            i["project"] = name
            i["project_dir"] = folder
    return out


def known_stats(path: Path, cache: StatsCache | None = None) -> dict[str, Any] | None:
    """The stats of one session if the cache holds them for the file as it is now (None otherwise: nothing is
    computed here). What `search` titles a session with, so that it names it as `stats` and the browser do."""
    cache = cache if cache is not None else StatsCache(cache_dir())
    try:
        key = cache.key(path, [])
    except OSError:
        return None
    return cache.get(path, key)


__all__ = ["StatsCache", "cache_dir", "collect_stats", "known_stats", "session_stats"]
