"""inspector's own folders (XDG cache, config, data) and the small JSON files it keeps in them, written whole.

Below every layer: the reading layer's callers, the token counts (`tokens.calibrate.kept_chain_counts`), the
statusline and the app's preferences keep their state here; the databases of the cache are `library.cache`'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

_XDG = {"cache": ("XDG_CACHE_HOME", (".cache",)), "config": ("XDG_CONFIG_HOME", (".config",)),
        "data": ("XDG_DATA_HOME", (".local", "share"))}  # fmt: skip


def inspector_dir(kind: str, env: Mapping[str, str] | None = None) -> Path:
    """inspector's own folder of a kind: "cache" ($XDG_CACHE_HOME/inspector, by default ~/.cache/inspector),
    "config" ($XDG_CONFIG_HOME, ~/.config) or "data" ($XDG_DATA_HOME, ~/.local/share)."""
    environ: Mapping[str, str] = os.environ if env is None else env
    var, default = _XDG[kind]
    base = environ.get(var) or os.path.join(os.path.expanduser("~"), *default)
    return Path(base) / "inspector"


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """inspector's cache folder: $XDG_CACHE_HOME/inspector (by default ~/.cache/inspector)."""
    return inspector_dir("cache", env)


# -- small JSON states (what a command that runs often keeps between runs: `inspector statusline`) ----------------
def state_file(kind: str, key: str, env: Mapping[str, str] | None = None) -> Path:
    """Where the state of `kind` for `key` (a transcript's path) is kept: cache/<kind>/<hash of key>.json."""
    import hashlib

    name = hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()
    return cache_dir(env) / kind / f"{name}.json"


def read_state(path: Path) -> dict | None:
    """A state written by write_state, or None (none yet, unreadable, not an object: it is made again)."""
    import orjson

    try:
        with open(path, "rb") as f:
            data = orjson.loads(f.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_state(path: Path, data: dict, *, readable: bool = False) -> bool:
    """Write a state whole (a temporary file renamed over it); False when it could not be written (a full disk, a
    read-only cache): the cache is only a cache, the next run reads again. `readable`: indented, for a file a person
    may open (the app's preferences)."""
    import orjson

    try:
        raw = orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n" if readable else orjson.dumps(data)
    except TypeError:
        return False
    return write_bytes(path, raw)


def write_bytes(path: Path, raw: bytes) -> bool:
    """Write a cache file whole (a temporary file renamed over it); False when it could not be written (see
    write_state)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
