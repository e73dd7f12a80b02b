"""Folder listings kept in the cache database, so that a warm search costs one stat per folder instead of a listing."""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any, Protocol

from inspector.library.cache import path_key
from inspector.transcript.safefs import DIR, FILE, scan_dir

RACY_NS = 2_000_000_000  # a folder changed this recently may change again within its clock's tick: not kept


class Store(Protocol):
    """What the listings need of the index: its connection, and a best-effort batch write."""

    db: sqlite3.Connection

    def write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> bool: ...


def listing_blob(entries: list[tuple[str, int]]) -> bytes:
    """A folder listing as the cache keeps it: "f" or "d" and the name's bytes, joined by "/" (which no name holds), or
    "[]" for an empty folder (nothing at all is damage). Read back without a JSON decoder: a search that finds the
    index up to date starts without one."""
    if not entries:
        return b"[]"
    return "/".join(("f" if k == FILE else "d") + n for n, k in entries).encode("utf-8", "surrogateescape")


def parse_listing(blob: object) -> list[tuple[str, int]] | None:
    """A folder listing as the cache keeps it (`listing_blob`; the JSON [[name, kind], ...] an earlier inspector
    wrote is read too), or None when the entry is damaged (not bytes, bad JSON, not pairs of a name and a kind)."""
    if not isinstance(blob, bytes) or not blob:
        return None
    if blob == b"[]":
        return []
    if blob[:1] == b"[":
        import orjson

        try:
            rows = orjson.loads(blob)
            if not isinstance(rows, list):
                return None
            out = [(n, k) for n, k in rows]  # pairs, or an error (a row of another length, a number)
        except (orjson.JSONDecodeError, ValueError, TypeError):
            return None
        if not {(type(n), type(k)) for n, k in out} <= {(str, int)}:
            return None  # (a row of two characters, or an object of two keys, unpacks to strings)
        if not {k for _, k in out} <= {FILE, DIR}:
            return None
        return out
    out = []
    for e in blob.decode("utf-8", "surrogateescape").split("/"):  # (os.fsdecode of each name)
        if not e:
            continue
        kind = e[0]
        if (kind != "f" and kind != "d") or len(e) < 2:
            return None
        out.append((e[1:], FILE if kind == "f" else DIR))
    return out


class Listings:
    """What `os.scandir` says of a folder (its regular files and folders, links left out; as JSON, or as "f"/"d" + name
    joined by "/" when a name is not UTF-8), kept in the database with
    the folder's time: a folder whose time has not changed has the same entries (adding, removing or renaming an
    entry changes it), so a warm search costs one stat per folder instead of a listing. A listing is kept only once
    its folder has been still for 2 s, so that two changes within one tick of a coarse file-system clock are never
    taken for none."""

    def __init__(self, index: Store) -> None:
        self.index = index
        self.known: dict[bytes, tuple[int, bytes]] | None = None
        self.new: list[tuple[bytes, int, bytes]] = []
        self.parsed: dict[bytes, tuple[int, list[tuple[str, int]]]] = {}  # read back once in this process
        self.blobs: dict[bytes, list[tuple[str, int]]] = {}  # each distinct kept listing, parsed

    def _load(self, first: str) -> dict[bytes, tuple[int, bytes]]:
        lo = path_key(first)
        try:  # the folders under the first one asked for (the target): one query
            rows = self.index.db.execute(
                "SELECT dir, mtime_ns, entries FROM listings WHERE dir >= ? AND dir < ?", (lo, lo + b"\xff")
            ).fetchall()
        except sqlite3.Error:
            rows = []
        return {d: (m, e) for d, m, e in rows}

    def __call__(self, d: str) -> list[tuple[str, int]]:
        """The folder's entries (name, kind); the list is shared with later calls: callers never change it."""
        if self.known is None:
            self.known = self._load(d)
        key = path_key(d)
        try:
            mtime = os.stat(d).st_mtime_ns
        except OSError:
            return []
        seen = self.parsed.get(key)
        if seen is not None and seen[0] == mtime:
            return seen[1]
        hit = self.known.get(key)
        if hit is not None and hit[0] == mtime:
            cached = self.blobs.get(hit[1])  # (most session folders list the same few names: parsed once)
            if cached is None:
                cached = parse_listing(hit[1])
                if cached is not None:
                    self.blobs[hit[1]] = cached
            if cached is not None:
                self.parsed[key] = (mtime, cached)
                if hit[1][:2] == b"[[":  # the JSON of an earlier inspector: kept again in today's form, read quicker
                    blob = listing_blob(cached)
                    self.known[key] = (mtime, blob)
                    self.new.append((key, mtime, blob))
                return cached
            # a damaged entry (a truncated or ill-shaped blob): read the folder again, and the entry is replaced
        entries = scan_dir(d)
        if 0 <= time.time_ns() - mtime > RACY_NS:
            blob = listing_blob(entries)
            self.known[key] = (mtime, blob)
            self.new.append((key, mtime, blob))
            self.parsed[key] = (mtime, entries)
        return entries

    def save(self) -> None:
        """Keep the listings read in this search (best effort: a locked database keeps them for the next one)."""
        rows, self.new = self.new, []
        self.index.write_many("INSERT OR REPLACE INTO listings VALUES(?, ?, ?)", rows)
