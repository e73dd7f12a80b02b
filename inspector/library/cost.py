"""What sessions cost: every API response priced by its model, each response counted once.

The prices ship with the package (dated, offline) and a user file overrides or extends them
(`$XDG_CONFIG_HOME/inspector/prices.json`, or `INSPECTOR_PRICES`): a JSON object of model name to
`{"input", "output", "cache_write_5m", "cache_write_1h", "cache_read"}` in USD per million tokens, with an
optional `"long"` object (`"over"`: the prompt size in tokens above which a request pays the long-context
rates, and the same five rates). A model that is in neither is reported as unknown, never priced as zero.

A response is one API call. Claude Code writes one record per content block of a streamed response, all with
the same `message.id` and `requestId`; a resumed or forked session copies the records of the one it continues,
and a subagent file can repeat its parent's. A `Ledger` keeps the keys it has priced, so whatever reads
through it (one session and its subagents, or a whole root) counts each response once.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import orjson

from inspector.claude.models import PriceRow, Rates, price_key, price_rows, prices_checked, rates_from

PRICES_DATE = prices_checked()
PRICES_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"
WEB_SEARCH_USD = 0.01  # $10 per 1,000 searches
SYNTHETIC = "<synthetic>"  # Claude Code's own placeholder replies: no API call, no cost


# the built-in prices: the model registry's dated rows (inspector/claude/models.json), by price key
PRICE_ROWS: dict[str, tuple[PriceRow, ...]] = price_rows()
BUILTIN: dict[str, Rates] = {k: rows[-1].rates for k, rows in PRICE_ROWS.items()}  # today's rates


def model_key(model: str) -> str:
    """`claude-sonnet-4-5-20250929`, `sonnet-4-5[1m]`, `claude-3-5-sonnet-20241022`, a Bedrock id... to `sonnet-4-5`
    (the registry's price key)."""
    return price_key(model)


def user_prices_path(env: Mapping[str, str] | None = None) -> Path:
    environ: Mapping[str, str] = os.environ if env is None else env
    if environ.get("INSPECTOR_PRICES"):
        return Path(environ["INSPECTOR_PRICES"])
    from inspector.statefiles import inspector_dir

    return inspector_dir("config", environ) / "prices.json"


@dataclass(slots=True)
class PriceTable:
    rates: dict[str, Rates]
    date: str = PRICES_DATE
    source: str = "built in, " + PRICES_SOURCE
    problems: list[str] = field(default_factory=list)  # a user file that could not be read, or entries skipped

    @classmethod
    def load(cls, env: dict[str, str] | None = None) -> PriceTable:
        """The built-in prices, then the user's file over them (its entries win; bad ones are named and skipped)."""
        table = cls(dict(BUILTIN))
        path = user_prices_path(env)
        if not path.is_file():
            return table
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            table.problems.append(f"{path}: not read ({exc})")
            return table
        if not isinstance(data, dict):
            table.problems.append(f"{path}: not a JSON object of model name to prices")
            return table
        n = 0
        for name, d in data.items():
            r = rates_from(d) if isinstance(d, dict) else None
            if r is None:
                table.problems.append(
                    f"{path}: {name!r} skipped (needs input, output, cache_write_5m, cache_write_1h, cache_read)"
                )
                continue
            table.rates[model_key(str(name))] = r
            n += 1
        if n:
            table.source += f"; {n} from {path}"
        return table

    def rates_for(self, model: str, day: str | None = None) -> Rates | None:
        key = model_key(model)
        r = self.rates.get(key)
        if r is None:
            return None
        if r is BUILTIN.get(key):  # the built-in rows are dated (a user's own entry is used as written)
            for row in PRICE_ROWS[key]:
                if row.since is None or (day or "9999") >= row.since:
                    r = row.rates
        return r


class Response(NamedTuple):
    """One API response, its fragments merged. A tuple, not a frozen dataclass: a root's responses are made in worker
    processes and sent back pickled, and a tuple is made and unpickled ten times faster (bench/cost.py)."""

    key: str
    model: str | None
    timestamp: str | None
    input: int
    cache_write: int  # 5-minute and 1-hour writes together, as cache_creation_input_tokens says
    cache_write_1h: int
    cache_read: int
    output: int
    web_searches: int
    line: int  # of its first record
    fast: bool = False  # served in fast mode (usage.speed "fast"): every rate times the model's fast multiplier
    us_only: bool = False  # US-only inference (usage.inference_geo "us"): every rate times the model's premium

    @property
    def priced_as(self) -> str:
        """The model as it is priced: its name, and "(fast)" for a fast-mode response."""
        return f"{self.model or '?'} (fast)" if self.fast else self.model or "?"

    def cost(self, table: PriceTable) -> float | None:
        """USD, or None when the model has no price (or no fast-mode price, for a fast response)."""
        return self.priced(table)[0]

    def priced(self, table: PriceTable) -> tuple[float | None, float]:
        """(USD or None, of it what the long-context rates added: 0 unless the prompt was over the model's
        long-context threshold, when the whole request is billed at the long rates, as Anthropic's pricing page
        says)."""
        if self.model is None or self.model == SYNTHETIC:
            return 0.0, 0.0
        r = table.rates_for(self.model, (self.timestamp or "")[:10] or None)
        if r is None:
            return None, 0.0
        mult = r.us_only if self.us_only else 1.0
        if self.fast:
            if r.fast is None:
                return None, 0.0  # a fast price not known: unpriced, never priced at standard speed
            mult *= r.fast
        prompt = self.input + self.cache_write + self.cache_read
        base = self._at(r)
        long = r.long is not None and r.long_over is not None and prompt > r.long_over
        usd = self._at(r.long) if long and r.long is not None else base
        return usd * mult + self.web_searches * WEB_SEARCH_USD, (usd - base) * mult

    def _at(self, r: Rates) -> float:
        w1 = min(self.cache_write_1h, self.cache_write)
        return (
            self.input * r.input
            + self.output * r.output
            + (self.cache_write - w1) * r.cache_write_5m
            + w1 * r.cache_write_1h
            + self.cache_read * r.cache_read
        ) / 1e6


def response_key(r: Any) -> str:
    """What makes the records of one API response one: its message id and request id (a record with neither is a
    response of its own)."""
    if not r.message_id:
        return f"uuid:{r.uuid or r.line}"
    return f"{r.message_id}:{r.request_id}" if r.request_id else r.message_id


def is_copy(r: Any) -> bool:
    """A response copied from another session (`forkedFrom`: Claude Code's fork; `inspectorCopiedFrom`: a session
    inspector saved): that session made the call and is charged for it, never the copy."""
    return bool(r.extra) and "copied_from" in r.extra


def copied_agent(r: Any) -> str | None:
    """The subagent a copied record's tool result names (it ran for the session the record was copied from)."""
    return r.get("spawned_agent") if is_copy(r) else None


def copied_responses(s: Any) -> int:
    """How many responses of a transcript are copies of another session's (not charged to it)."""
    return len({response_key(r) for r in s.records if r.type == "assistant" and r.usage is not None and is_copy(r)})


FileKey = tuple[str, int, int]  # a transcript file as it is now: (path, size, mtime_ns)


def subagent_responses(s: Any, memo: dict[FileKey, list[Response]] | None = None) -> list[Response]:
    """The responses of a session's subagent transcripts (each read, then closed; an unreadable one is left out),
    and those its agent_progress records relay that no transcript holds (a subagent file deleted or never copied:
    billed all the same). `memo` keeps each file's responses by (path, size, mtime): a live session asked again reads
    only what changed."""
    return subagents_of(s.agent_transcripts(), copied_agents(s), relayed_of(s.records), memo)


def copied_agents(s: Any) -> set[str]:
    """The subagents a session's copied records name (charged to the session they were copied from)."""
    return {a for r in s.records if (a := copied_agent(r))}


def subagents_of(
    agents: list[tuple[str, Path]],
    copied: set[str] | frozenset[str],
    relayed: Relayed,
    memo: dict[FileKey, list[Response]] | None = None,
) -> list[Response]:
    """`subagent_responses` from its parts: the session's subagent transcripts (`Session.agent_transcripts`), the
    agents its copied records name, and the responses its agent_progress records relay (`relay`)."""
    got = agent_file_responses(agents, copied, memo)
    out = [r for _key, found in got for r in found]
    return out + relayed_out(relayed, {r.key for r in out}, copied)


Relayed = dict[str, list[Any]]  # response key -> [its agent, a fragment() row], its fragments merged


def relay(into: Relayed, r: Any) -> None:
    """A subagent response an agent_progress record relays, into `into` (its fragments merged)."""
    pr = (r.extra or {}).get("progress_response") if r.type == "progress" else None
    if pr is None:
        return
    model, ts, mid, rid, u, bill = pr
    h1, web, fast, us = (tuple(bill) + (0, 0, 0, 0))[:4]
    key, row = (f"{mid}:{rid}" if rid else mid), [model, ts, *u, h1, web, r.line, fast, us]
    cur = into.get(key)
    if cur is None:
        into[key] = [(r.extra or {}).get("progress_agent"), row]
    else:
        _max_row(cur[1], row)


def relayed_out(relayed: Relayed, have: set[str], copied: set[str] | frozenset[str]) -> list[Response]:
    """The relayed responses but for those in `have` (read from a subagent transcript) and those of an agent a
    copied record names (charged to the session it was copied from)."""
    return [_response(k, row) for k, (agent, row) in relayed.items() if k not in have and agent not in copied]


def _max_row(cur: list[Any], row: list[Any]) -> None:
    for k in (2, 3, 4, 5, 6, 7, 9, 10):
        if row[k] > cur[k]:
            cur[k] = row[k]


def relayed_responses(s: Any, have: set[str], copied: set[str] | frozenset[str] = frozenset()) -> list[Response]:
    """The subagent responses a session's agent_progress records relay, each once (see relayed_out)."""
    return relayed_out(relayed_of(s.records), have, copied)


def relayed_of(records: Iterable[Any]) -> Relayed:
    """The subagent responses agent_progress records relay, by response key (`relay`)."""
    relayed: Relayed = {}
    for r in records:
        relay(relayed, r)
    return relayed


def agent_file_responses(
    files: Iterable[tuple[str, Path]],
    skip: set[str] | frozenset[str],
    memo: dict[FileKey, list[Response]] | None = None,
    load: Callable[[Path], Any] | None = None,
    known: frozenset[FileKey] | set[FileKey] = frozenset(),
) -> list[tuple[FileKey, list[Response]]]:
    """Each subagent transcript's responses with the file's key, in order: a file `memo` holds as it is now is not
    read again, one that cannot be read is left out, and an agent in `skip` (named by a copied call: charged to the
    session that ran it) is not counted. `load` reads a file (by default the partial index of the cost's lines:
    a subagent file's responses are all its cost needs). A file whose key is in `known` is neither read nor listed
    (the caller holds its responses)."""
    from inspector.transcript.session import Session

    load = load or (lambda p: Session.load(p, only=COST_LINES))
    out: list[tuple[FileKey, list[Response]]] = []
    for aid, path in files:
        if aid in skip:
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        key = (str(path), st.st_size, st.st_mtime_ns)
        if key in known:
            continue
        found = memo.get(key) if memo is not None else None
        if found is None:
            try:
                sub = load(path)
            except OSError:
                continue
            if sub is None:
                continue
            try:
                found = responses(sub)
            finally:
                sub.close()
            if memo is not None:
                memo[key] = found
        out.append((key, found))
    return out


def responses(s: Any) -> list[Response]:
    """The API responses of one transcript, in file order, each once (its streamed fragments merged, field by field
    the largest: a fragment written before the response ended can carry a smaller output count)."""
    merged: dict[str, list[Any]] = {}
    order: list[str] = []
    for r in s.records:
        if r.type != "assistant" or r.usage is None or is_copy(r):
            continue
        key = response_key(r)
        cur = merged.get(key)
        if cur is None:
            merged[key] = fragment(r)
            order.append(key)
        else:
            merge_fragment(cur, r)
        for akey, row in advisor_rows(r, key):
            if akey not in merged:
                merged[akey] = row
                order.append(akey)
    return [_response(key, merged[key]) for key in order]


def _bill(r: Any) -> tuple[int, int, int, int]:
    """A record's billing extras (records.billing_extras): (1-hour writes, web searches, fast, US-only)."""
    b: tuple[int, ...] = tuple((r.extra or {}).get("billing") or ())
    return (b + (0, 0, 0, 0))[:4]  # type: ignore[return-value]


def billed(r: Any) -> tuple[int, int, int, int]:
    """What the API charged for a record's response: its top-level usage (a record whose context is read from its
    last sampling iteration keeps the sum it was billed as `billed`)."""
    b = (r.extra or {}).get("billed")
    return tuple(b) if b else r.usage


def advisor_rows(r: Any, key: str) -> list[tuple[str, list[Any]]]:
    """The advisor iterations of a record's response (`key`), each (its own key, a fragment() row at the advisor's
    model): billed beside the response, at that model's price (2.1.88's cost tracker adds each `advisor_message`
    iteration at its own model). Every fragment of the response lists them: the caller keeps each key once."""
    rows = (r.extra or {}).get("iterations") or ()
    advisors = [row for row in rows if row[0] == "advisor_message" and row[1]]
    return [(f"{key}#advisor{n}", [row[1], r.timestamp, *row[2:6], 0, 0, r.line, 0, 0]) for n, row in enumerate(advisors)]


def fragment(r: Any) -> list[Any]:
    """A response's first record as the merged row responses() keeps: [model, timestamp, input, cache write, cache
    read, output, 1-hour write, web searches, line, fast, US-only]."""
    h1, web, fast, us = _bill(r)
    return [r.model, r.timestamp, *billed(r), h1, web, r.line, fast, us]


def merge_fragment(cur: list[Any], r: Any) -> None:
    """Another record of the same response into its row: field by field the largest (a fragment written before the
    response ended can carry a smaller output count), the model once known."""
    _max_row(cur, fragment(r))
    if cur[0] is None and r.model:
        cur[0] = r.model


@dataclass(slots=True)
class Cost:
    """What a set of responses cost."""

    usd: float = 0.0
    by_model: dict[str, float] = field(default_factory=dict)
    unknown: dict[str, int] = field(default_factory=dict)  # model -> responses it has no price for
    responses: int = 0
    duplicates: int = 0  # responses already counted elsewhere (a copy in a resumed session, a fork, a subagent)
    tokens: dict[str, int] = field(
        default_factory=lambda: {"input": 0, "output": 0, "cache_write_5m": 0, "cache_write_1h": 0, "cache_read": 0}
    )
    web_searches: int = 0
    fast_usd: float = 0.0  # of usd: what the fast-mode responses cost
    fast_responses: int = 0
    us_only_usd: float = 0.0  # of usd: what the US-only responses cost (their 1.1x premium included)
    us_only_responses: int = 0
    long_premium_usd: float = 0.0  # of usd: what the long-context rates added (prompts over the model's threshold)
    long_responses: int = 0

    def add(self, resp: Response, table: PriceTable) -> float | None:
        usd, extra = resp.priced(table)
        model = resp.priced_as
        self.responses += 1
        t = self.tokens
        t["input"] += resp.input
        t["output"] += resp.output
        t["cache_write_1h"] += min(resp.cache_write_1h, resp.cache_write)
        t["cache_write_5m"] += resp.cache_write - min(resp.cache_write_1h, resp.cache_write)
        t["cache_read"] += resp.cache_read
        self.web_searches += resp.web_searches
        if usd is None:
            self.unknown[model] = self.unknown.get(model, 0) + 1
            return None
        self.usd += usd
        if resp.fast:
            self.fast_usd += usd
            self.fast_responses += 1
        if resp.us_only:
            self.us_only_usd += usd
            self.us_only_responses += 1
        if extra:
            self.long_premium_usd += extra
            self.long_responses += 1
        if model != SYNTHETIC:
            self.by_model[model] = self.by_model.get(model, 0.0) + usd
        return usd

    def merge(self, other: Cost) -> None:
        self.usd += other.usd
        for m, v in other.by_model.items():
            self.by_model[m] = self.by_model.get(m, 0.0) + v
        for m, n in other.unknown.items():
            self.unknown[m] = self.unknown.get(m, 0) + n
        self.responses += other.responses
        self.duplicates += other.duplicates
        for k, v in other.tokens.items():
            self.tokens[k] += v
        self.web_searches += other.web_searches
        self.fast_usd += other.fast_usd
        self.fast_responses += other.fast_responses
        self.us_only_usd += other.us_only_usd
        self.us_only_responses += other.us_only_responses
        self.long_premium_usd += other.long_premium_usd
        self.long_responses += other.long_responses

    def as_dict(self) -> dict[str, Any]:
        return {
            "usd": round(self.usd, 6),
            "by_model": {m: round(v, 6) for m, v in sorted(self.by_model.items())},
            "unknown_models": dict(sorted(self.unknown.items())),
            "responses": self.responses,
            "duplicates_skipped": self.duplicates,
            "tokens": dict(self.tokens),
            "web_searches": self.web_searches,
            "fast": {"usd": round(self.fast_usd, 6), "responses": self.fast_responses},
            "us_only": {"usd": round(self.us_only_usd, 6), "responses": self.us_only_responses},
            "long_context": {"premium_usd": round(self.long_premium_usd, 6), "responses": self.long_responses},
        }


class Ledger:
    """Prices responses, each key once across everything read through it."""

    def __init__(self, table: PriceTable | None = None) -> None:
        self.table = table or PriceTable.load()
        self.seen: set[str] = set()

    def price(self, resps: Iterable[Response], into: Cost | None = None) -> Cost:
        c = into if into is not None else Cost()
        for r in resps:
            if r.key in self.seen and not r.key.startswith("uuid:"):
                c.duplicates += 1
                continue
            self.seen.add(r.key)
            c.add(r, self.table)
        return c

    def session(self, s: Any, memo: dict[tuple[str, int, int], list[Response]] | None = None) -> tuple[Cost, Cost]:
        """(the session's own responses, its subagents') for a loaded session; subagent transcripts are read here
        (or taken from `memo`, see subagent_responses)."""
        own = self.price(responses(s))
        return own, self.price(subagent_responses(s, memo))


def session_cost(
    s: Any, table: PriceTable | None = None, memo: dict[tuple[str, int, int], list[Response]] | None = None
) -> dict[str, Any]:
    """The fields `stats --json` carries: the session's cost with its subagents', by model, what has no price, and
    Claude Code's own figure beside it when the transcript records one (2.1.3xx `cost-state`)."""
    ledger = Ledger(table)
    own, subs = ledger.session(s, memo)
    total = Cost()
    total.merge(own)
    total.merge(subs)
    out = {
        "cost_usd": round(total.usd, 6) if not total.unknown else None,
        "cost_usd_priced": round(total.usd, 6),
        "cost_by_model": {m: round(v, 6) for m, v in sorted(total.by_model.items())},
        "cost_subagents_usd": round(subs.usd, 6),
        "cost_unknown_models": dict(sorted(total.unknown.items())),
        "cost_responses": total.responses,
        "cost_prices": ledger.table.date,
    }
    copies = copied_responses(s)
    if copies:
        out["cost_copied_responses"] = copies  # copies of another session's responses: charged there, not here
    cc = s.claude_cost
    if cc is not None:
        out["cost_claude_code_usd"] = cc["total_usd"]
        out["cost_difference_usd"] = round(total.usd - cc["total_usd"], 6)
    return out


class RunningCost:
    """The responses of one transcript read as it grows, a record at a time (`inspector statusline`): what the last
    `RECENT` responses are so far (a later fragment can still raise a count), what the older ones cost, and a short
    hash of every response key seen, so that a response is counted once, as `responses()` counts it on the whole
    file. `add` answers False when a record continues a response that was already priced and let go: the caller reads
    the file again from its start (it does not happen in the files Claude Code writes, whose fragments are adjacent).
    Kept as JSON between runs (`as_json`, `from_json`)."""

    RECENT = 256

    def __init__(self, recent: int | None = RECENT) -> None:
        self.limit = recent  # None: none is let go of
        self.seen: set[str] = set()
        self.recent: dict[str, list[Any]] = {}  # key -> a fragment() row
        self.done = Cost()  # the responses let go of, priced
        self.copied_agents: set[str] = set()  # subagents named by a copied record: charged to their own session
        self.relayed: Relayed = {}  # the subagent responses agent_progress records relay

    def relayed_responses(self, have: set[str]) -> list[Response]:
        """What relayed_responses() gives for the whole file: the relayed responses no subagent transcript holds."""
        return relayed_out(self.relayed, have, self.copied_agents)

    def add(self, r: Any, table: PriceTable) -> bool:
        if r.type == "progress":
            relay(self.relayed, r)
        if r.type != "assistant" or r.usage is None or is_copy(r):
            agent = copied_agent(r)
            if agent:
                self.copied_agents.add(agent)  # its subagent ran for the session it was copied from
            return True
        key = response_key(r)
        cur = self.recent.get(key)
        if cur is None:
            h = key_hash(key)
            if h in self.seen and not key.startswith("uuid:"):
                return False
            self.seen.add(h)
            self._keep(key, fragment(r), table)
        else:
            merge_fragment(cur, r)
        for akey, row in advisor_rows(r, key):  # priced beside the response, once
            h = key_hash(akey)
            if akey not in self.recent and h not in self.seen:
                self.seen.add(h)
                self._keep(akey, row, table)
        return True

    def _keep(self, key: str, row: list[Any], table: PriceTable) -> None:
        self.recent[key] = row
        if self.limit is not None and len(self.recent) > self.limit:
            old = next(iter(self.recent))
            self.done.add(_response(old, self.recent.pop(old)), table)

    def cost(self, table: PriceTable) -> Cost:
        """What every response so far cost (the recent ones priced now)."""
        c = Cost()
        c.merge(self.done)
        for key, v in self.recent.items():
            c.add(_response(key, v), table)
        return c

    def as_json(self) -> dict[str, Any]:
        d = self.done
        return {
            "limit": self.limit,
            "copied_agents": sorted(self.copied_agents),
            "seen": sorted(self.seen),
            "recent": self.recent,
            "done": dataclasses.asdict(d),  # every field of the Cost: none to list here again
            "relayed": self.relayed,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunningCost:
        rc = cls(d.get("limit"))
        rc.seen = set(d["seen"])
        rc.copied_agents = set(d.get("copied_agents") or ())
        rc.recent = {str(k): list(v) for k, v in d["recent"].items()}
        rc.relayed = {str(k): [v[0], list(v[1])] for k, v in (d.get("relayed") or {}).items()}
        rc.done = Cost(**d["done"])
        return rc


def key_hash(key: str) -> str:
    """A response key's short hash (what RunningCost keeps of every response: 16 hex digits)."""
    from inspector.textutil import blake2b

    return blake2b(key.encode("utf-8", "surrogatepass"), 8).hexdigest()


def _response(key: str, v: list[Any]) -> Response:
    m, ts, inp, cw, cr, o, h1, web, line, fast, us = v
    return Response(key, m, ts, inp, cw, h1, cr, o, web, line, bool(fast), bool(us))


def price_subagents(own_keys: set[str], subs: Iterable[Response], table: PriceTable) -> Cost:
    """The subagents' responses that the session's own (`own_keys`: their key_hash) and an earlier subagent did not
    count already, priced (as a Ledger reads a session: its own responses first)."""
    seen = set(own_keys)
    c = Cost()
    for r in subs:
        h = key_hash(r.key)
        if h in seen and not r.key.startswith("uuid:"):
            c.duplicates += 1
            continue
        seen.add(h)
        c.add(r, table)
    return c


BLOCK_HOURS = 5  # Claude's usage limits reset in windows of five hours from the first message (ccusage's blocks)


@dataclass(slots=True)
class Block:
    """One 5-hour billing block: it starts at the hour of its first response and ends five hours later; the first
    response after that end starts the next one (as ccusage's `blocks` reports them)."""

    start: float  # epoch seconds, the hour of its first response
    first: float  # its first response
    last: float  # its last response
    cost: Cost = field(default_factory=Cost)

    @property
    def end(self) -> float:
        return self.start + BLOCK_HOURS * 3600

    def active(self, now: float) -> bool:
        return self.start <= now < self.end

    def burn_per_hour(self, now: float) -> float:
        """USD an hour since the block's first response (to now while it is active, else to its last)."""
        upto = now if self.active(now) else self.last
        hours = max((upto - self.first) / 3600, 1 / 60)
        return self.cost.usd / hours

    def projected(self, now: float) -> float:
        """What the block will have cost at its end at the rate so far (its cost when it is over)."""
        if not self.active(now):
            return self.cost.usd
        return self.cost.usd + self.burn_per_hour(now) * (self.end - now) / 3600


# The lines a transcript's cost is read from: a response's usage (its own, or a subagent's an agent_progress record
# relays), and a copy's mark (a copied record's tool result names the subagent charged elsewhere). A record without
# any of them adds nothing to the cost, so the cost of a file needs only these lines decoded.
COST_LINES = (b'"usage"', b'edFrom"')  # "forkedFrom", "inspectorCopiedFrom": one search for both


def file_responses(path: Path, no_flat_agents: bool = False) -> tuple[list[Response], list[Response]] | str:
    """A transcript's own responses and its subagents' (from the partial index of the cost's lines), or, when it
    cannot be read, why. Run in worker processes by `responses_of_files`: only the responses come back.
    `no_flat_agents`: its project folder has no flat agent file (`session_files` listed it), so none is looked for."""
    from inspector.transcript.session import Session

    try:
        s = Session.load(path, only=COST_LINES, flat_agents=[] if no_flat_agents else None)
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        return responses(s), subagent_responses(s)
    finally:
        s.close()


def _first_time(path: Path) -> str | None:
    """A transcript's place in `oldest_first`: its first time ("~" when it has none), None when its head cannot be
    read (`oldest_first` leaves such a file out)."""
    from inspector.transcript.discovery import first_timestamp

    try:
        return first_timestamp(path) or "~"
    except OSError:
        return None


POOL_FILES = 16  # transcripts below which one process reads them (starting the workers costs ~0.2 s)
POOL_BYTES = 64 << 20

A = TypeVar("A")
T = TypeVar("T")


@contextmanager
def _pool_for(files: list[Path], workers: int | None = None) -> Iterator[Any]:
    """A process per core when there is much to read (None: read here, when there is little or when worker processes
    cannot start: a sandbox, no /dev/shm)."""
    n = workers if workers is not None else (os.cpu_count() or 1)
    size = 0
    for f in files:
        try:
            size += f.stat().st_size
        except OSError:
            pass
    if n <= 1 or len(files) < POOL_FILES or size < POOL_BYTES:
        yield None
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        # forkserver, not fork: the caller may be a threaded program (the app), and forking threads is unsafe
        pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("forkserver"))
    except (RuntimeError, PermissionError, OSError):
        yield None
        return
    with pool:
        yield pool


def _each_file(fn: Callable[[A], T], files: list[Path], pool: Any, args: list[A] | None = None) -> Iterator[tuple[Path, T]]:
    """`fn` of each file (or of the `args` given for each), in the files' order: by the pool's processes, or here
    (without a pool, or for the rest when its processes cannot start or die)."""
    from concurrent.futures.process import BrokenProcessPool

    items: list[Any] = list(files) if args is None else args
    done = 0
    if pool is not None:
        try:
            for f, got in zip(files, pool.map(fn, items, chunksize=8)):
                yield f, got
                done += 1
            return
        except (BrokenProcessPool, RuntimeError, PermissionError, OSError):
            pass  # the rest is read here
    for f, item in zip(files[done:], items[done:]):
        yield f, fn(item)


def responses_of_files(
    files: list[Path], workers: int | None = None
) -> Iterator[tuple[Path, tuple[list[Response], list[Response]] | str]]:
    """`file_responses` of each file, in the files' order (a copied response is charged to the first session that
    holds it: the order matters)."""
    with _pool_for(files, workers) as pool:
        yield from _each_file(file_responses, files, pool)


def responses_oldest_first(
    target: Any, workers: int | None = None, cache: Any = None
) -> Iterator[tuple[Path, tuple[list[Response], list[Response]] | str]]:
    """`responses_of_files(oldest_first(target))` in one pass of one pool: each worker reads a file's place in that
    order (its head and tail) and its responses together, and they are given back in that order once all are read
    (the responses of a whole root are held at once: about 150 bytes each; a second pass over the pool for the order
    alone cost 0.4 s of a 2,000-session root's 3 s, bench/cost.py). `cache` (a costcache.ResponsesCache): what each
    transcript was read as before, taken as it is while the file is unchanged (and kept for the next time)."""
    from inspector.transcript.session import agent_transcripts_of, subagent_files

    files = transcripts_of(target)
    folder = getattr(target, "path", None)
    if cache is not None and folder is not None and os.path.isdir(folder):
        cache.prefetch(folder)
    got: list[tuple[str, Path, tuple[list[Response], list[Response]] | str]] = []
    sessions: list[tuple[Path, Digest, list[tuple[str, Path]]]] = []  # (transcript, digest, its agent transcripts)
    # each subagent file's responses: those read now and, through the cache (costcache.KeptMemo), those kept before
    kept = cache.memo() if cache is not None else None
    memo: dict[FileKey, list[Response]] = kept if kept is not None else {}
    jobs: list[tuple[Path, bool, frozenset[FileKey]]] = []
    for f, flat in files:
        d = cache.digest(f) if cache is not None else None
        if d is not None:
            sessions.append((f, d, agent_transcripts_of(f, d.session_id, [] if not flat else None)))
        else:  # read by a worker, which skips the subagent files the cache holds
            known = frozenset(kept.hold(subagent_files(f))) if kept is not None and cache.has_agents else frozenset()
            jobs.append((f, not flat, known))
    paths = [f for f, _, _ in jobs]
    with _pool_for(paths, workers) as pool:
        for f, (when, d, agents, read) in _each_file(_session_costs, paths, pool, jobs):
            if when is None:
                continue  # its head cannot be read: left out, as oldest_first leaves it
            if isinstance(d, str):
                got.append((when, f, d))
                continue
            for key, found in read:
                memo[key] = found
            sessions.append((f, d, agents))
            if cache is not None:
                cache.put_digest(f, d)
    for f, d, agents in sessions:
        subs = subagents_of(agents, set(d.copied), d.relayed, memo)  # a file changed since it was read is read here
        got.append((d.when, f, (d.own, subs)))
    if kept is not None:
        kept.flush()
    got.sort(key=lambda x: (x[0], x[1]))
    for _when, f, r in got:
        yield f, r


class Digest(NamedTuple):
    """What the cost needs of a session's own transcript (kept by costcache.ResponsesCache)."""

    key: tuple[int, int, int]  # the file as read: (inode, size, mtime_ns)
    when: str  # its place in the order a root is read (`first_timestamp`, "~" for none)
    own: list[Response]
    copied: list[str]  # the agents its copied records name
    relayed: Relayed  # the responses its agent_progress records relay
    session_id: str


def _session_costs(
    item: tuple[Path, bool, frozenset[FileKey]],
) -> tuple[str | None, Digest | str, list[tuple[str, Path]], list[tuple[FileKey, list[Response]]]]:
    """One job of `responses_oldest_first`'s workers: a transcript's place in the order (None: its head cannot be
    read), its digest or why it cannot be read, its subagent transcripts, and the responses of
    those not `known` to the caller (`item`: the transcript, whether its project has no flat agent file, the known)."""
    from inspector.transcript.session import Session

    path, no_flat_agents, known = item
    when = _first_time(path)
    if when is None:
        return None, "", [], []
    try:
        s = Session.load(path, only=COST_LINES, flat_agents=[] if no_flat_agents else None)
    except OSError as exc:
        return when, exc.strerror or str(exc), [], []
    try:
        t = s.transcript
        copied = copied_agents(s)
        d = Digest((t.inode or 0, t.size, t.mtime_ns), when, responses(s), sorted(copied), relayed_of(s.records), s.session_id)
        agents = s.agent_transcripts()
        return when, d, agents, agent_file_responses(agents, copied, known=known)
    finally:
        s.close()


def transcripts_of(target: Any) -> list[tuple[Path, list[Path]]]:
    """Every transcript under a target with its project's flat agent files (`session_files`), orphaned subagent
    files included (a subagent whose session is gone still cost something)."""
    from inspector.transcript.discovery import session_files
    from inspector.transcript.session import orphan_agents

    files = session_files(target)
    return files + [(a, []) for a in orphan_agents(files)]


def oldest_first(target: Any) -> list[Path]:
    """Every transcript under a target (`transcripts_of`), oldest first: a resumed or forked session's copy of earlier
    responses counts for the session they came from, as the ledger reads them in this order."""
    from inspector.transcript.discovery import first_timestamp

    dated = []
    for f, _ in transcripts_of(target):
        try:
            dated.append(((first_timestamp(f) or "~"), f))
        except OSError:
            continue
    return [f for _, f in sorted(dated)]


def timed_responses(
    target: Any, ledger: Ledger | None = None, keep: Callable[[Response], bool] | None = None, cache: Any = None
) -> tuple[list[tuple[float, Response]], Cost, list[tuple[Path, str]]]:
    """Every response under a target with its time (epoch seconds), each once (the ledger's rule: a copy in a resumed
    or forked session counts for the session it came from), subagents and orphaned subagent files included; the
    priced total; the files that could not be read. `keep` narrows the responses (a date window); `cache` as
    `responses_oldest_first` takes it."""
    from inspector.textutil import timestamp_key

    ledger = ledger or Ledger()
    out: list[tuple[float, Response]] = []
    total = Cost()
    skipped: list[tuple[Path, str]] = []
    for f, got in responses_oldest_first(target, cache=cache):
        if isinstance(got, str):
            skipped.append((f, got))
            continue
        own, subs = got
        for r in own + subs:
            if keep is not None and not keep(r):
                continue
            c = Cost()
            ledger.price([r], c)
            when = timestamp_key(r.timestamp)
            if when is not None and (c.responses or c.unknown):
                out.append((when, r))
            total.merge(c)
    return out, total, skipped


def billing_blocks(priced: Iterable[tuple[float, Response]], table: PriceTable) -> list[Block]:
    """The 5-hour blocks of responses (epoch seconds, response), each response in the block its time falls in."""
    blocks: list[Block] = []
    for t, r in sorted(priced, key=lambda x: x[0]):
        if not blocks or t >= blocks[-1].end:
            blocks.append(Block(t - t % 3600, t, t))
        b = blocks[-1]
        b.last = t
        b.cost.add(r, table)
    return blocks


def usd(v: float | None) -> str:
    if v is None:
        return "?"
    return f"${v:,.2f}" if v >= 0.995 or v == 0 else f"${v:.3f}" if v >= 0.001 else f"${v:.4f}"


__all__ = [
    "BUILTIN",
    "Cost",
    "Ledger",
    "PRICES_DATE",
    "PriceTable",
    "Rates",
    "Response",
    "RunningCost",
    "agent_file_responses",
    "Block",
    "billing_blocks",
    "copied_responses",
    "is_copy",
    "key_hash",
    "price_subagents",
    "model_key",
    "response_key",
    "responses",
    "subagent_responses",
    "session_cost",
    "usd",
]
