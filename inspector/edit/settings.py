"""A change to one key of a Claude Code settings file, shown before it is made and made without losing anything.

`plan_setting` reads the file (it must be a JSON object, or absent) and says what would change; `apply` keeps a
backup of the file as it was (a new file beside it, never over another), then writes the new content to a temporary
file and renames it over the settings, so that Claude Code never reads half a file. Every other key stays as it was,
in its order. Used by `inspector statusline --install` (and the hooks' install).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.edit.files import SaveError, write_atomic
from inspector.transcript.discovery import config_dir


def settings_path(env: Mapping[str, str] | None = None) -> Path:
    """The user's Claude Code settings: $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json."""
    return config_dir(env) / "settings.json"


@dataclass(frozen=True, slots=True)
class SettingChange:
    path: Path
    key: str
    before: Any  # the key's value now (None: not set)
    after: Any
    existed: bool  # the file exists (its backup is kept before the write)
    content: dict[str, Any]  # the whole file after the change
    original: bytes = b""  # the file as read: written over only if it is still that

    @property
    def needed(self) -> bool:
        return self.before != self.after

    def describe(self) -> str:
        new = json.dumps({self.key: self.after}, indent=2)
        if not self.existed:
            return f"create {self.path} with:\n{new}"
        if self.before is None:
            return f"add to {self.path}:\n{new}"
        return f"replace in {self.path}:\n{json.dumps({self.key: self.before}, indent=2)}\nwith:\n{new}"


def plan_setting(path: Path, key: str, value: Any) -> SettingChange:
    """What setting `key` to `value` in the settings file `path` changes (nothing is written here). `value` may be a
    function of the key's value now (None when unset), for a change that merges into it (the hooks)."""
    make = value if callable(value) else (lambda _before: value)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        value = make(None)
        return SettingChange(path, key, None, value, False, {key: value})
    except OSError as exc:
        raise SaveError(f"could not read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise SaveError(f"{path} is not valid JSON ({exc}): nothing was changed; fix it or set {key} by hand") from None
    if not isinstance(data, dict):
        raise SaveError(f"{path} is not a JSON object: nothing was changed")
    content = dict(data)
    value = make(data.get(key))
    content[key] = value
    return SettingChange(path, key, data.get(key), value, True, content, raw)


def apply(change: SettingChange) -> Path | None:
    """Make the change; returns the backup's path (None when the file did not exist)."""
    path = change.path
    path.parent.mkdir(parents=True, exist_ok=True)
    body = (json.dumps(change.content, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    backup = None
    try:
        now = path.read_bytes()
    except FileNotFoundError:
        now = None
    if now != (change.original if change.existed else None):
        raise SaveError(f"{path} changed since it was read: nothing was written; run it again")
    if change.existed:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.inspector-backup-{stamp}")
        n = 1
        while backup.exists():
            n += 1
            backup = path.with_name(f"{path.name}.inspector-backup-{stamp}-{n}")
        write_atomic(backup, [change.original])
    tmp = path.with_name(f".{path.name}.inspector-{os.getpid()}.tmp")
    write_atomic(tmp, [body])
    try:
        if change.existed:
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise SaveError(f"could not write {path}: {exc.strerror or exc}") from None
    return backup
