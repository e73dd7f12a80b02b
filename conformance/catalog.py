"""Which release first names each model of inspector's catalog (`python -m conformance --catalog`).

From 2.1.159 Claude Code sizes a model's window from its own model catalog; a model the release does not know is an
unknown model to it (the era matrix's `claude-foo-1`: 2.1.163 does not enforce a threshold for one, 2.1.237 does). A
session's model that came out after its release (a `--model` id typed before the release knew it, or the catalog's
newer models asked of an older release) is read by that release's unknown-model rules, not by today's catalog entry.

The model ids are read from each release's code: the binary (or cli.js) names the model in its catalog, its aliases
and its prices. Naming is bisected over npm's releases from the catalog era's first (2.1.159) to the newest installed:
a model once named stays named (checked at both ends and at every release the bisection visits). The first release
that names each model is written to inspector/claude/first_named.json, which `inspector.claude.models` reads."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from conformance.matrix import CATALOG_ERA, _vkey, npm_versions
from conformance.runner import Claude, install

MODELS_JSON = Path(__file__).resolve().parent.parent / "inspector" / "claude" / "models.json"
NAMED_JSON = MODELS_JSON.with_name("first_named.json")
START = CATALOG_ERA  # the first release that sizes windows from its catalog


def _code(claude: Claude) -> Path:
    """The file that holds a release's code: the native binary, or node's cli.js."""
    return Path(claude.argv[-1])


_READ: dict[str, bytes] = {}


def names(claude: Claude, model: str) -> bool:
    """Whether the release's code names `model` as an id of its own (not as the start of a longer id:
    claude-opus-5 is not named by claude-opus-5-5)."""
    data = _READ.get(claude.version)
    if data is None:
        _READ.clear()  # one release's code in memory at a time (about 300 MB)
        data = _READ[claude.version] = _code(claude).read_bytes()
    return re.search(re.escape(model.encode()) + rb"(?![-0-9A-Za-z_.])", data) is not None


def first_named(model: str, versions: list[str], log: Callable[[str], None] = print) -> str | None:
    """The first of `versions` (oldest first) whose code names `model`, by bisection; None when the newest does not."""
    if not names(install(versions[-1]), model):
        return None
    if names(install(versions[0]), model):
        return versions[0]
    a, b = 0, len(versions) - 1  # versions[a] does not name it, versions[b] does
    while b - a > 1:
        m = (a + b) // 2
        hit = names(install(versions[m]), model)
        log(f"  {model} {versions[m]}: {'named' if hit else 'not named'}")
        if hit:
            b = m
        else:
            a = m
    return versions[b]


def run(hi: str | None = None, log: Callable[[str], None] = print) -> dict[str, str | None]:
    data = json.loads(MODELS_JSON.read_text())
    models = sorted(k for k, e in data["models"].items() if e.get("catalog"))
    versions = [v for v in npm_versions() if _vkey(v) >= _vkey(START) and (hi is None or _vkey(v) <= _vkey(hi))]
    out: dict[str, str | None] = {}
    for m in models:
        out[m] = first_named(m, versions, log)
        log(f"{m}: first named by {out[m] or 'none up to ' + versions[-1]}")
    doc = {
        "about": (
            f"the first release from {START} (the catalog era) whose code names each model of the catalog, bisected "
            f"over npm's releases up to {versions[-1]} by `python -m conformance --catalog`; a release before it "
            "treats the model as unknown. A model named by the era's first release is given as that release; null: "
            "no release up to the newest checked names it."
        ),
        "checked_from": versions[0],
        "checked_up_to": versions[-1],
        "models": out,
    }
    tmp = NAMED_JSON.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(NAMED_JSON)
    return out
