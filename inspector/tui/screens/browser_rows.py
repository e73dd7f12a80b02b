"""The browser's rows: one `Item` per session (what the cheap read and the stats give), its cells, sort values and
filter text, and the columns they are shown in. No widget here: the screens draw these."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.text import Text

from inspector.textutil import human_size, printable

# the columns `s` sorts by, in turn; S (or a second click on a header) reverses the order
SORTS = ("when", "size", "peak", "cost", "comp", "title", "project", "dur", "model")
ASCENDING_FIRST = {
    "title",
    "project",
    "model",
    "cleanup",
}  # and the sessions due soonest first  # text reads A to Z first; times and sizes largest first
# the most telling first, so that a narrow terminal still shows when, how big and how full
COLUMNS = (
    ("title", "Title"),
    ("project", "Project"),
    ("when", "When"),
    ("dur", "Dur"),
    ("size", "Size"),
    ("peak", "Peak ctx"),
    ("cost", "Cost"),
    ("cleanup", "Cleanup"),
    ("comp", "Compactions"),
    ("model", "Model"),
)


# the column sets `v` goes through: every column, then two narrow ones that fit 80 columns (the title always first)
COLUMN_SETS = (
    ("every column", None),
    ("tokens", ("title", "when", "peak", "comp", "model")),
    ("cost and size", ("title", "when", "dur", "size", "cost", "cleanup")),
)

RESULT_COLUMNS = (("session", "Session"), ("when", "When"), ("line", "Line"), ("where", "Where"), ("snippet", "Text around it"))
RESULTS_SHOWN = 2000  # matches listed (every session with one is still in the sessions table)


def session_window(model: str | None, version: str | None, peak: int | None) -> int:
    """The session's context window by the rules `inspector tokens` applies (its release and model: a natively 1M
    model is 1M from its first turn; the usage past 200k infers it only where the release did so)."""
    from inspector.tokens.thresholds import Settings, other_api_host, thresholds

    try:
        return thresholds(Settings(model=model, other_api_host=other_api_host()), peak or None, version).model_window
    except (ValueError, TypeError):
        return 1_000_000 if (peak or 0) > 200_000 else 200_000


@dataclass(slots=True)
class Item:
    path: Path
    project: str
    title: str
    when: str
    duration: str
    size: int
    model: str = ""
    peak: int | None = None
    window: int = 200_000
    compactions: str = ""
    matches: int | None = None
    flat_agents: list[Path] = field(default_factory=list)
    ts: str = ""
    mtime_ns: int = 0
    span: float = 0.0  # seconds from the first record to the last
    orphan: bool = False  # a subagent transcript whose session is gone
    cost: float | None = None  # USD, subagents included (None: not known yet)
    cost_unknown: bool = False  # some responses are of a model with no price: the figure is a lower bound
    due: datetime | None = None  # when Claude Code's cleanup deletes it
    risk: str | None = None  # "next start", "soon" or None
    version: str | None = None  # the Claude Code release that wrote it (its head and tail)

    def cells(self, title_width: int = 64, project_width: int = 26) -> tuple[Any, ...]:
        """The row's cells, in the order of COLUMNS."""
        peak = f"{self.peak / 1000:.0f}k {100 * self.peak / self.window:.0f}%" if self.peak else ""  # tokens, share of the window
        title = printable(self.title or "(untitled)")
        if self.orphan:
            title = "[subagent without its session] " + title
        if self.matches is not None:
            title = f"[{self.matches} match{'es' if self.matches != 1 else ''}] " + title
        project = printable(self.project)
        project = project if len(project) <= project_width else "…" + project[-(project_width - 1) :]
        title = title if len(title) <= title_width else title[: title_width - 1] + "…"
        # Text, not str: DataTable reads a str cell as markup, and the model name comes from the transcript
        from inspector.library.cost import usd

        cost = "" if self.cost is None else usd(self.cost) + ("+?" if self.cost_unknown else "")
        cleanup = Text("")
        if self.risk == "next start":
            cleanup = Text("next start!", style="bold red")
        elif self.risk == "soon" and self.due is not None:
            cleanup = Text(self.due.astimezone().strftime("%m-%d"), style="bold yellow")
        return (
            Text(title),
            Text(project),
            Text(self.when),
            Text(self.duration),
            Text(human_size(self.size)),
            Text(peak),
            Text(cost),
            cleanup,
            Text(self.compactions),
            Text(printable(self.model)),
        )

    def text(self) -> str:
        """What the filter looks in: the project, the title, the session id and the project's folder name."""
        return f"{self.project} {self.title} {self.path.stem} {self.path.parent.name}".lower()

    def sort_value(self, column: str) -> Any:
        comp = self.compactions.split("+")
        return {
            "when": self.ts,
            "size": self.size,
            "peak": self.peak or 0,
            "title": self.title.lower(),
            "comp": (int(comp[0]) if comp[0].isdigit() else -1, self.compactions),
            "project": self.project.lower(),
            "dur": self.span,
            "model": self.model,
            "cost": self.cost or 0.0,
            "cleanup": (self.due.timestamp() if self.due else float("inf")),
        }[column]
