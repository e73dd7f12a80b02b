"""The model registry: every fact inspector keeps about a model, read from one data file (`models.json`).

- **Names.** `price_key()` turns any name Claude Code or a gateway records (`claude-sonnet-4-5-20250929`,
  `us.anthropic.claude-opus-4-1-20250805-v1:0`, `claude-opus-4-1@20250805`, `claude-3-5-sonnet-20241022`,
  `opus[1m]`) into one key (`sonnet-4-5`, `opus-4-1`, `sonnet-3-5`, `opus`), aliases applied; `model_id()` gives the
  registry's id (`claude-sonnet-4-5`) of a Claude model name it knows, or None.
- **The catalog** of Claude Code 2.1.328 (format-2.1.3xx.md §1.1-1.2): window, max output, 1M support and
  the window's source with no settings, for the releases that choose thresholds by catalog (`catalog()`).
- **The max-output rules** of the releases before the catalog (format.md §4.2): substrings of the
  model name, first match wins, some known only from a release on (`max_output_rules()`).
- **Prices**: Anthropic's per-million-token rates as dated rows, each with its source (`price_rows()`), which
  `inspector.library.cost` prices responses by.

Nothing else in the package keeps a table of models: a new model is one entry in `models.json`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import orjson

DATA = Path(__file__).with_name("models.json")


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per million tokens."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    long_over: int | None = None  # a prompt (input + cache writes + cache reads) above this pays `long`
    long: Rates | None = None
    fast: float | None = None  # fast mode (usage.speed "fast") multiplies every rate by this; None: no fast price
    us_only: float = 1.0  # US-only inference (usage.inference_geo "us") multiplies every rate by this


@dataclass(frozen=True, slots=True)
class PriceRow:
    since: str | None  # the first UTC day (YYYY-MM-DD) these rates apply; None: from the start
    rates: Rates
    source: str


@dataclass(frozen=True, slots=True)
class CatalogModel:
    window: int  # the window used without opt-in
    max_output: int  # default max output tokens
    max_output_upper: int
    native_1m: bool = False
    default_source: str = "auto"  # window source with no env or settings: "auto" (not enforced) or "model-default"
    supports_1m: bool = False  # a [1m] model setting (or the 1M beta) gives it 1M
    lean_prompt: bool = False  # the catalog gives it the capability "lean_prompt" (see `lean_prompt`)
    opus_5_prompt_bundle: bool = False  # and "opus_5_prompt_bundle" (see `subagent_nudges`)
    per_turn_effort: bool = False  # and "per_turn_effort": the effort stated on a system-role entry (`wire.wire_effort`)
    default_effort: str | None = None  # the effort it runs at when none is set ("default_effort")


@dataclass(frozen=True, slots=True)
class MaxOutputRule:
    match: str  # a substring of the lowercased model name
    default: int
    upper: int
    since: tuple[int, int, int] | None = None  # releases before this one did not have the row


@dataclass(frozen=True, slots=True)
class Model:
    id: str  # claude-sonnet-4-5
    key: str  # sonnet-4-5
    aliases: tuple[str, ...]
    catalog: CatalogModel | None
    prices: tuple[PriceRow, ...]


@dataclass(frozen=True, slots=True)
class Registry:
    models: dict[str, Model]  # by key
    rules: tuple[MaxOutputRule, ...]
    other: tuple[int, int]
    prices_checked: str
    aliases: dict[str, str]  # alias key -> key


_DATE = re.compile(r"-(\d{8}|v\d+(:\d+)?|latest)$")
_OLD = re.compile(r"^(\d(?:-\d)?)-(opus|sonnet|haiku)$")


@lru_cache(maxsize=4096)  # a pure function of the name, asked once per response by the cost and the thresholds
def _bare(name: str) -> str:
    """A model name without provider prefixes, `claude-`, `[1m]`, dates and version suffixes; old names turned
    around (`3-5-sonnet` to `sonnet-3-5`)."""
    m = name.strip().lower()
    m = m.split("/")[-1]  # vertex / gateway prefixes
    if "anthropic." in m:  # bedrock: us.anthropic.claude-...-v1:0
        m = m.split("anthropic.", 1)[1]
    m = m.replace("[1m]", "").replace("@", "-").removeprefix("claude-")
    m = _DATE.sub("", m)
    m = _DATE.sub("", m)
    old = _OLD.match(m)
    return f"{old.group(2)}-{old.group(1)}" if old else m


RATE_FIELDS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")


def rates_from(d: Any) -> Rates | None:
    """The rates of a price row (the five rates and an optional `long` object with `over` and the five), or None
    when a rate is missing, not a number, negative or NaN. A bad `long` object is left out."""
    try:
        vals = [float(d[k]) for k in RATE_FIELDS]
    except (KeyError, TypeError, ValueError):
        return None
    if any(v < 0 or v != v for v in vals):
        return None
    long = d.get("long")
    lr = rates_from(long) if isinstance(long, dict) else None
    over = long.get("over") if isinstance(long, dict) else None
    inp, out, w5, w1, read = vals
    long_over = int(over) if lr is not None and isinstance(over, int) and over > 0 else None
    fast = _multiplier(d.get("fast"))
    us_only = _multiplier(d.get("us_only")) or 1.0
    return Rates(inp, out, w5, w1, read, long_over=long_over, long=lr, fast=fast, us_only=us_only)


def _multiplier(v: Any) -> float | None:
    """A price row's multiplier (`fast`, `us_only`): a positive number, else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v <= 0:
        return None
    return float(v)


def _row(mid: str, p: dict[str, Any]) -> PriceRow:
    rates = rates_from(p)
    if rates is None:
        raise ValueError(f"{DATA.name}: a price row of {mid} is not five rates: {p}")
    return PriceRow(p.get("since"), rates, str(p.get("source") or ""))


def _version(text: str) -> tuple[int, int, int]:
    a, b, c = (int(x) for x in text.split("."))
    return a, b, c


@cache
def registry() -> Registry:
    data = orjson.loads(DATA.read_bytes())
    models: dict[str, Model] = {}
    aliases: dict[str, str] = {}
    for mid, e in data["models"].items():
        key = _bare(mid)
        cat = e.get("catalog")
        rows = tuple(_row(mid, p) for p in e.get("prices", ()))
        al = tuple(e.get("aliases", ()))
        models[key] = Model(mid, key, al, CatalogModel(**cat) if cat else None, rows)
        for a in al:
            aliases[_bare(a)] = key
    rules = tuple(
        MaxOutputRule(r["match"], int(r["default"]), int(r["upper"]), _version(r["since"]) if "since" in r else None)
        for r in data["max_output_rules"]
    )
    other = (int(data["max_output_other"]["default"]), int(data["max_output_other"]["upper"]))
    return Registry(models, rules, other, str(data["prices_checked"]), aliases)


def price_key(model: str) -> str:
    """The key a name is priced and looked up by: `claude-sonnet-4-5-20250929` and `sonnet-4-5[1m]` to
    `sonnet-4-5`, `claude-sonnet-4` to `sonnet-4-0`. A name the registry does not know keeps its bare form."""
    k = _bare(model)
    return registry().aliases.get(k, k)


def model(name: str | None) -> Model | None:
    """The registry's entry of a Claude model name (`claude-opus-4-6[1m]`, a Bedrock or Vertex id, a dated id), or
    None when the name is not a Claude model the registry knows. A name without `claude-` is not one (a model
    setting such as `opus` names no particular model)."""
    if not name or "claude-" not in name.lower():
        return None
    return registry().models.get(price_key(name))


def model_id(name: str | None) -> str | None:
    """The registry's id (`claude-sonnet-4-5`) of a Claude model name, or None (see `model`)."""
    m = model(name)
    return m.id if m else None


NAMED = DATA.with_name("first_named.json")


@lru_cache(maxsize=1)
def _first_named() -> tuple[dict[str, tuple[int, int, int] | None], tuple[int, int, int], tuple[int, int, int] | None]:
    """(model id -> the first release whose code names it, None: none checked does; the first release checked, the
    catalog era's; the newest release checked), read from the releases' code (`python -m conformance --catalog`)."""
    try:
        doc = orjson.loads(NAMED.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}, (9999, 0, 0), None
    out = {k: (_version(v) if isinstance(v, str) else None) for k, v in (doc.get("models") or {}).items()}
    up_to = doc.get("checked_up_to")
    return out, _version(str(doc.get("checked_from"))), (_version(up_to) if isinstance(up_to, str) else None)


def unknown_to(model_name: str | None, version: tuple[int, int, int] | None) -> tuple[int, int, int] | None:
    """The first release that knew a catalog model, when the release `version` (of the catalog era, which sizes
    windows from its own catalog) came before it: to that release the model is an unknown one. None when the release
    knew it, came before the catalog era (its windows follow fixed rules), or the release or the model is not known."""
    m = model(model_name)
    if m is None or version is None:
        return None
    named, start, up_to = _first_named()
    if m.id not in named or version < start:
        return None
    first = named[m.id]
    if first is None:
        return (9999, 0, 0) if up_to is not None and version <= up_to else None
    return first if version < first else None


def named_from(model_name: str | None) -> tuple[int, int, int] | None:
    """The first release whose code names a catalog model (first_named.json), whatever the release asking: a release
    before it, of the catalog era or earlier, does not know the model. None when not known (not a catalog model, or
    no release checked names it)."""
    m = model(model_name)
    if m is None:
        return None
    return _first_named()[0].get(m.id)


def catalog(model_name: str | None) -> CatalogModel | None:
    """The 2.1.328 catalog's entry of a model, or None when the catalog does not list it."""
    m = model(model_name)
    return m.catalog if m else None


def lean_prompt(name: str | None, version: tuple[int, int, int] | None) -> bool | None:
    """Whether release `version` gives model `name` its lean prompt (a built-in agent listed by its `whenToUseLean`
    text, shorter tool texts), as read from 2.1.328 and 2.1.332: the catalog's `lean_prompt` capability (where the
    release's catalog names the model: first_named.json; claude-haiku-5-5 on 2.1.270 took the fallback), else lean
    unless the release's fallback names the model (2.1.328: any claude-3, haiku or sonnet name and Opus 4.0-4.7;
    2.1.332: claude-3 names and ten exact ids; models.json keeps both). None where the releases read disagree or
    the release was not read (before 2.1.328). CLAUDE_CODE_SIMPLE_SYSTEM_PROMPT, which overrides it, is not in
    any transcript."""
    read = lean_fallbacks()
    if not name or version is None or not read or version < read[0][0]:
        return None
    cat = catalog(name)
    if cat is not None and cat.lean_prompt and unknown_to(name, version) is None:  # (the release's own catalog names it)
        return True
    canon = _canonical(name)

    def answer(subs: tuple[str, ...], ids: frozenset[str], lean_ids: frozenset[str], otherwise: bool | None) -> bool | None:
        if canon in lean_ids:
            return True
        if any(x in canon for x in subs) or canon in ids:
            return False
        return otherwise

    return _as_read([(v, answer(subs, ids, lean_ids, other)) for v, subs, ids, lean_ids, other in read], version)


def defers_tools(name: str | None, version: tuple[int, int, int] | None) -> bool | None:
    """Whether a release gives a model deferred tools (loaded on demand through ToolSearch, announced by a
    `deferred_tools_delta` attachment): models.json's `deferred_tools` (2.1.328 and 2.1.332: every model but the
    Claude 3 ones). None where it was not measured (another release, no model)."""
    data = _section("deferred_tools")
    if not name or not _measured(data, version):
        return None
    canon = _canonical(name)
    return not any(x in canon for x in data["all_loaded_substrings"])


def lean_prompt_delta(name: str | None, version: tuple[int, int, int] | None) -> int | None:
    """How many characters (JS length) model `name`'s own prompt is shorter than the full one release `version` sends
    while tool search is held off, negative (models.json's `lean_prompt_size`); None where not measured or where
    the model gets no lean prompt."""
    data = _section("lean_prompt_size")
    if not name or not _measured(data, version) or not lean_prompt(name, version):
        return None
    return int(data["models"].get(_canonical(name), data["default"]))


def skill_listing_rules(version: tuple[int, int, int] | None) -> dict[str, Any] | None:
    """How a release renders the skill listing (models.json `skill_listing`); None where it was not read."""
    data = _section("skill_listing")
    return data if _measured(data, version) else None


def listing_chars_per_token(name: str | None, rules: Mapping[str, Any]) -> int:
    """The characters a token a skill listing's budget takes for the main model (`Fy`: 4 for the older families the
    release names, 3 for every other model; 4 with no model)."""
    if not name:
        return 4
    return 4 if _canonical(name).replace(".", "-").replace("_", "-") in rules["four_chars_per_token"] else 3


def run_as(name: str, version: tuple[int, int, int] | None) -> str:
    """The model a release runs when asked for `name` (models.json's `run_as`: a retired Opus 4 or 4.1 is Opus 5.5
    on 2.1.328-2.1.332; its [1m] kept); `name` itself elsewhere and for every other model."""
    data = _section("run_as")
    if not _measured(data, version):
        return name
    to = data["models"].get(_canonical(name))
    return name if to is None else to + ("[1m]" if name.strip().lower().endswith("[1m]") else "")


def reminder_style(name: str | None, version: tuple[int, int, int] | None) -> str:
    """How release `version` (None: today's) sends model `name` the reminders it renders with the system role
    (models.json's `reminder_style`): "user" (as user text), "system" (system-role turns inside <system-reminder>)
    or "system-bare" (the same without it). A model no catalog names takes system-role turns."""
    data = _section("reminder_style")
    if version is not None and tuple(version[:3]) < _version(data["system_turns_from"]):
        return "user"
    if not name:
        return "user"
    key = model_id(name)
    if key is None:
        return "system-bare"
    own = data["by_model"].get(key)
    if own is not None:
        at = [style for since, style in own if version is None or _version(since) <= tuple(version[:3])]
        if at:
            return str(at[-1])
    listed_from = data["one_m_listed_from"].get(key)
    if listed_from is not None and "[1m]" in name.lower() and version is not None and version < _version(listed_from):
        return "system-bare"
    m = re.match(r"claude-(?:[a-z]+-)?(\d+)", key)
    return "user" if m and int(m.group(1)) < 5 else "system-bare"


def _measured(data: dict[str, Any], version: tuple[int, int, int] | None) -> bool:
    """Whether `version` is within a section's measured `releases` (the first and the last)."""
    lo, hi = (_version(v) for v in data["releases"])
    return version is not None and lo <= tuple(version[:3]) <= hi


@cache
def _section(key: str) -> dict[str, Any]:
    """A section of models.json beside the models (`run_as`, `deferred_tools`, `lean_prompt_size`, `skill_listing`,
    `native_1m`)."""
    return dict(orjson.loads(DATA.read_bytes())[key])


def _canonical(name: str) -> str:
    """A model's registry id, else its name without [1m] and date suffixes (the name Claude Code's lists compare)."""
    return model_id(name) or _DATE.sub("", _DATE.sub("", name.strip().lower().replace("[1m]", "")))


def _as_read(answers: list[tuple[tuple[int, int, int], bool | None]], version: tuple[int, int, int]) -> bool | None:
    """What release `version` answers, given each read release's answer (oldest first, `version` not before the
    first): the read one's own, else the last earlier one's where the next later one agrees (or none is later)."""
    at = [f for v, f in answers if v == version]
    if at:
        return at[0]
    before = [f for v, f in answers if v < version][-1]
    after = [f for v, f in answers if v > version]
    return before if not after or after[0] == before else None


@cache
def lean_fallbacks() -> list[tuple[tuple[int, int, int], tuple[str, ...], frozenset[str], frozenset[str], bool | None]]:
    """(release, substrings and ids given the full prompt, ids given the lean one first, what any other model gets:
    True lean, None a feature flag decides) of every release whose lean-prompt fallback was read, oldest first."""
    data = orjson.loads(DATA.read_bytes()).get("lean_prompt_fallback") or {}
    return sorted(
        (
            _version(v),
            tuple(e["substrings"]),
            frozenset(e["ids"]),
            frozenset(e.get("lean_ids", ())),
            None if e.get("otherwise") == "flag" else True,
        )
        for v, e in data.items()
        if v[:1].isdigit()
    )


TASK_TOOLS = ("TaskCreate", "TaskGet", "TaskList", "TaskUpdate")


def task_tools(name: str | None, version: tuple[int, int, int] | None) -> bool | None:
    """Whether release `version` gives a main loop on model `name` the task tools (TASK_TOOLS, deferred), as read from
    2.1.328 and 2.1.332 (`mce`): its canonical name in the release's list (Claude 3.x and 4.x), or an application
    inference profile. None where the releases read disagree or the release was not read (before 2.1.328), or no
    model is named. CLAUDE_CODE_ENABLE_TODO_TOOLS and CLAUDE_CODE_ENABLE_TASKS, which change it, are in no transcript."""
    read = task_tool_lists()
    if not name or version is None or not read or version < read[0][0]:
        return None
    canon, profile = _canonical(name), "application-inference-profile" in name.lower()
    return _as_read([(v, profile or canon in ids) for v, ids in read], version)


@cache
def task_tool_lists() -> list[tuple[tuple[int, int, int], frozenset[str]]]:
    """(release, models) of every release whose task-tools list was read, oldest first."""
    data = orjson.loads(DATA.read_bytes()).get("task_tools_models") or {}
    return sorted((_version(v), frozenset(ids)) for v, ids in data.items() if v[:1].isdigit())


# From this release a model with the catalog's `opus_5_prompt_bundle` capability is not nudged about subagents (the
# steer's model floor, "no_nudges": bisected; read in 2.1.219, 2.1.250, 2.1.273, 2.1.285, 2.1.328 and 2.1.332); before
# it every model is (2.1.141-2.1.214: the note unless the Pro plan; 2.1.215-2.1.218: the steer, "default")
SUBAGENT_FLOOR_FROM = (2, 1, 219)


def subagent_nudges(name: str | None, version: tuple[int, int, int] | None) -> bool | None:
    """Whether release `version` nudges model `name` about subagents (the steer "default": an agent listing ends in
    the note to launch independent agents in one message): every model before SUBAGENT_FLOOR_FROM; from it, not a
    model the release's catalog gives the `opus_5_prompt_bundle` capability (steer "no_nudges"; a model the release
    does not know has none); latched by a process on its first prompt model. None without a model or a release. The
    Pro plan and CLAUDE_CODE_THISTLE_GREBE, which also turn it off, are not in any transcript."""
    if not name or version is None:
        return None
    if version < SUBAGENT_FLOOR_FROM or unknown_to(name, version) is not None:
        return True
    cat = catalog(name)
    return not (cat is not None and cat.opus_5_prompt_bundle)


def catalog_ids() -> list[str]:
    """The ids the 2.1.328 catalog lists, in the registry's order."""
    return [m.id for m in registry().models.values() if m.catalog is not None]


def max_output_rules() -> tuple[MaxOutputRule, ...]:
    return registry().rules


def max_output_other() -> tuple[int, int]:
    return registry().other


def price_rows() -> dict[str, tuple[PriceRow, ...]]:
    """Each priced model's dated rows, by price key (an alias's name is looked up by its model's key)."""
    return {k: m.prices for k, m in registry().models.items() if m.prices}


def prices_checked() -> str:
    """The day the built-in prices were last checked against the source."""
    return registry().prices_checked


def native_1m(model_name: str | None, version: tuple[int, int, int] | None, anthropic_host: bool = True) -> bool:
    """Whether release `version` (None: today's) gives `model_name` a native 1M window without a [1m] setting, with
    the API on Anthropic's own host (`anthropic_host`: no ANTHROPIC_BASE_URL, or api.anthropic.com) or another
    (models.json's `native_1m`). A model the release does not know gets none of it here."""
    data = _section("native_1m")
    m = model(model_name)
    name = m.id if m is not None else _canonical(model_name or "")
    if version is None:
        version = (9999, 0, 0)
    lists = [(_version(since), names) for since, names in data["lists"]]
    if version < lists[0][0]:
        return False
    if not anthropic_host and native_1m_host_dependent(version):
        return False
    if version >= _version(data["catalog_from"]):
        if name in data["also"]:
            return True
        return bool(m is not None and m.catalog is not None and m.catalog.native_1m and unknown_to(name, version) is None)
    return name in next(names for since, names in reversed(lists) if version >= since)


def native_1m_enforced(model_name: str | None, version: tuple[int, int, int] | None) -> bool:
    """Whether a native 1M window's threshold is enforced in the catalog era's release `version` (models.json's
    `native_1m`: from `enforced_from`, before only for the models of `enforced_early`; None: today's)."""
    data = _section("native_1m")
    if version is None or version >= _version(data["enforced_from"]):
        return True
    return _canonical(model_name or "") in data["enforced_early"]


def native_1m_host_dependent(version: tuple[int, int, int] | None) -> bool:
    """Whether release `version` gives a native 1M window only on Anthropic's own API host."""
    data = _section("native_1m")
    return version is not None and _version(data["host_from"]) <= version < _version(data["any_host_from"])
