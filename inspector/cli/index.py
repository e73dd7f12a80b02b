"""`inspector index`: build or check the search index."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspector.cli.common import EXIT_OK, Parser, _default_path


def _index_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector index",
        description="The search index ($XDG_CACHE_HOME/inspector/index.sqlite, SQLite FTS5 by words): bring it up "
        "to date for the transcripts under PATH (new files, and only the new lines of grown ones), --rebuild it from "
        "nothing, or show its --status. search and the app keep it up to date on their own; deleting it loses nothing.",
    )
    p.add_argument("path", nargs="?", help="a projects root, a project folder or a .jsonl file (default: the projects root)")
    p.add_argument("--rebuild", action="store_true", help="delete the index and build it again")
    p.add_argument("--status", action="store_true", help="only say what the index holds")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def cmd_index(args: argparse.Namespace, out: Any, err: Any) -> int:
    from inspector.library.cache import db_path, remove_index
    from inspector.textutil import printable
    from inspector.transcript.discovery import InspectorError

    def notice(m: str) -> None:
        err.write(printable(f"inspector: {m}") + "\n")

    if args.rebuild:
        remove_index(db_path())
    import sqlite3

    for attempt in (1, 2):  # a damaged index found by a query is removed and built again, once
        try:
            return _index_once(args, out, err, notice)
        except sqlite3.DatabaseError as exc:
            from inspector.library.cache import is_damage, is_locked

            if is_locked(exc):
                raise InspectorError(
                    f"the search index stayed locked for {sum(INDEX_LOCK_WAITS):g} s ({exc}): what was "
                    "indexed is kept; run inspector index again when the machine is quieter"
                ) from None
            if not is_damage(exc) or attempt == 2:
                raise
            notice(f"the search index {db_path()} was damaged ({exc}): it is built again")
            remove_index(db_path())
    return EXIT_OK


INDEX_LOCK_WAITS = (1.0, 2.0, 4.0, 8.0, 16.0)  # seconds between tries when SQLite says "database is locked"


def _refresh_waiting(idx: Any, files: list[Path], with_results: list[Path], notice: Callable[[str], None]) -> int:
    """The index brought up to date, a lock (its own shard processes, a checkpoint, another reader) waited out and the
    work taken up again where it stopped (what is indexed stays indexed), never the command's end."""
    import sqlite3
    import time

    from inspector.library.cache import is_locked

    for wait in (*INDEX_LOCK_WAITS, None):
        try:  # the lines of the last try only: those indexed before a lock are kept, not counted again
            return idx.refresh(files, with_results, wait=True)
        except sqlite3.OperationalError as exc:
            if wait is None or not is_locked(exc):
                raise
            notice(f"the search index is locked ({exc}): trying again in {wait:g} s")
            time.sleep(wait)
    return 0


def _index_once(args: argparse.Namespace, out: Any, err: Any, notice: Callable[[str], None]) -> int:
    import sqlite3
    import time

    from inspector.library.cache import IndexFull, IndexUnavailable, is_full
    from inspector.library.fts import SearchIndex
    from inspector.library.search import list_transcripts
    from inspector.textutil import human_size, printable
    from inspector.transcript.discovery import InspectorError, resolve_target

    try:
        idx = SearchIndex(notice=notice)
    except IndexUnavailable as exc:
        raise InspectorError(f"the search index cannot be used: {exc}") from None
    try:
        if not args.status:
            path = Path(args.path) if args.path else _default_path(err)
            listing = idx.listing()
            files, with_results = list_transcripts(resolve_target(path), scan=listing)
            listing.save()
            t0 = time.perf_counter()
            tty = err.isatty() if hasattr(err, "isatty") else False
            if tty:
                shown = [0.0]

                def progress(what: str, done: int, of: int) -> None:  # a long build says how far it is
                    if time.monotonic() - shown[0] > 0.2 or done == of:
                        shown[0] = time.monotonic()
                        err.write(f"\rinspector: indexing {what}: {done:,}/{of:,}\x1b[K")
                        err.flush()

                idx.progress = progress
            try:
                lines = _refresh_waiting(idx, [f for f, _ in files], with_results, notice)
            except IndexFull as exc:
                raise InspectorError(
                    f"the disk of the search index ({idx.path.parent}) has {human_size(exc.room)} free, "
                    f"too little for the {human_size(exc.need)} indexing would take: nothing was written; "
                    "searches read the files meanwhile"
                ) from None
            except sqlite3.Error as exc:
                if not is_full(exc):
                    raise
                what = idx.give_back()
                raise InspectorError(
                    f"the disk of the search index ({idx.path.parent}) filled up: the index was not "
                    f"brought up to date ({what}); searches read the files meanwhile"
                ) from None
            if tty:
                err.write("\r\x1b[K")
            gone = idx.prune(f for f, _ in files)
            out.write(
                f"Indexed {lines:,} new line(s) and persisted output(s) of {len(files):,} transcript(s) and the "
                f"tool-results folders of {len(with_results):,} session(s) in {time.perf_counter() - t0:.2f} s"
                + (f"; {gone} file(s) no longer on disk dropped" if gone else "")
                + "\n"
            )
        st = idx.status()
        out.write(
            printable(
                f"{st.path}: {st.files:,} transcript(s) and {st.persisted:,} persisted output(s) indexed "
                f"({human_size(st.bytes_indexed)}, {st.texts:,} texts), the stats of {st.sessions:,} "
                f"session(s); {human_size(st.size)} on disk"
            )
            + "\n"
        )
    finally:
        idx.close()
    return EXIT_OK
