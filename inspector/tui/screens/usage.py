"""The billing blocks view: what the sessions cost in each 5-hour block of Claude's usage limits (as ccusage's
`blocks` reports them), the active block's burn rate and where it is heading, newest first."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from inspector.textutil import human_tokens, printable


def _local(t: float, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return datetime.fromtimestamp(t).astimezone().strftime(fmt)


def block_rows(blocks: list[Any], now: float) -> list[tuple[Any, ...]]:
    """The table's rows, newest first: the block's local start – end, cost, responses, tokens and its models."""
    from inspector.library.cost import usd

    rows = []
    for b in reversed(blocks):
        c = b.cost
        tokens = sum(c.tokens.values())
        cost = usd(c.usd) + ("+?" if c.unknown else "")
        models = ", ".join(m.replace("claude-", "") for m in sorted(c.by_model, key=lambda m: -c.by_model[m]))
        when = f"{_local(b.start)} – {_local(b.end, '%H:%M')}"
        rows.append(
            (
                Text(when, style="bold green") if b.active(now) else Text(when),
                Text(cost, justify="right"),
                Text(f"{c.responses:,}", justify="right"),
                Text(f"{tokens / 1e6:.1f}M" if tokens >= 1_000_000 else human_tokens(tokens), justify="right"),
                Text(printable(models)),
            )
        )
    return rows


def headline(blocks: list[Any], total: Any, now: float) -> str:
    """The active block's burn rate and projection (or that none is active), and the total."""
    from inspector.library.cost import BLOCK_HOURS, usd

    active = next((b for b in blocks if b.active(now)), None)
    head = f"{len(blocks)} block(s), {usd(total.usd)} in all ({total.responses:,} responses)"
    if active is None:
        return head + f"; no block is active now (none started in the last {BLOCK_HOURS} hours)."
    return (
        head + f". Active since {_local(active.start, '%H:%M')}: {usd(active.cost.usd)} so far, {usd(active.burn_per_hour(now))}"
        f"/hour since {_local(active.first, '%H:%M')}, {usd(active.projected(now))} by {_local(active.end, '%H:%M')} at "
        "this rate."
    )


class BlocksScreen(ModalScreen[None]):
    """b in the browser: the billing blocks of the sessions under the browser's target."""

    BINDINGS = [("escape,q,b", "dismiss", "Close")]

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    def compose(self) -> ComposeResult:
        with Vertical(id="blocks"):
            yield Static(Text("Billing blocks: 5 hours from the hour of a block's first response (local time)", style="bold"))
            yield Static(Text("reading every session…"), id="blocks-head")
            yield DataTable(id="blocks-table", cursor_type="row", zebra_stripes=True)
            yield Static(Text("esc closes · `inspector cost --by block` prints the same", style="dim"))

    def on_mount(self) -> None:
        t = self.query_one(DataTable)
        for label in ("block", "cost", "responses", "tokens", "models"):
            t.add_column(label, key=label)
        t.focus()
        self.compute()

    @work(thread=True, exclusive=True)
    def compute(self) -> None:
        from inspector.library.cost import Ledger, billing_blocks, timed_responses
        from inspector.library.costcache import ResponsesCache
        from inspector.statefiles import cache_dir

        ledger = Ledger()
        with ResponsesCache(cache_dir()) as cache:  # a transcript unchanged since it was last priced is not read again
            priced, total, skipped = timed_responses(self.target, ledger, cache=cache)
        blocks = billing_blocks(priced, ledger.table)
        now = time.time()
        head = headline(blocks, total, now) + (f" {len(skipped)} file(s) could not be read." if skipped else "")
        self.app.call_from_thread(self.show, block_rows(blocks, now), head)

    def show(self, rows: list[tuple[Any, ...]], head: str) -> None:
        t = self.query_one(DataTable)
        t.clear()
        for row in rows:
            t.add_row(*row)
        self.query_one("#blocks-head", Static).update(Text(printable(head)))
