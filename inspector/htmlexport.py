"""A session as one self-contained HTML page, and an index page over many (`inspector export --html DIR`).

The page holds everything it shows: its style inline, the token chart as inline SVG drawn here, no script at all,
and a Content-Security-Policy that refuses every request (images only as data: URIs), so a page opened from disk
never reaches the network. Every text of the transcript goes through `html.escape` after `printable`: it is shown,
never read as markup. Tool results, thinking and persisted outputs are collapsible (`<details>`).
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.textutil import human_size, printable
from inspector.view import Part, build_rows, record_parts

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
PART_CAP = 200_000  # characters of one part shown; the rest is named (the transcript has it)
PERSISTED_CAP = 1 << 20  # bytes of one persisted output embedded
GENERATOR = "inspector export --html"  # marks a page this exporter wrote: only such a page is ever replaced
OPEN_BELOW = 600  # a tool result shorter than this is shown open

STYLE = """
:root { color-scheme: light dark; --fg: #1d1f21; --bg: #fdfdfc; --mute: #6a6f75; --line: #d9dcdf; --box: #f3f4f5;
  --warn: #c77700; --auto: #c62828; --block: #7b1fa2; --ctx: #1565c0; --compact: #2e7d32; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e6e6; --bg: #151718; --mute: #9aa0a6; --line: #33373a;
  --box: #1f2224; --ctx: #64b5f6; --warn: #ffb74d; --auto: #ef5350; --block: #ce93d8; --compact: #81c784; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto;
  max-width: 1100px; padding: 1.5em; }
h1 { font-size: 1.4em; margin: 0 0 .2em; } h2 { font-size: 1.15em; border-bottom: 1px solid var(--line);
  padding-bottom: .2em; margin-top: 2em; } h3 { font-size: .95em; margin: 0; font-weight: 600; }
.meta, .sub { color: var(--mute); font-size: .9em; } .sub { white-space: pre-wrap; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--box); padding: .6em .8em; border-radius: 4px;
  margin: .3em 0; font: 12.5px/1.4 ui-monospace, monospace; }
section.rec { border-left: 3px solid var(--line); padding: .4em .8em; margin: .8em 0; }
section.user { border-left-color: var(--ctx); } section.assistant { border-left-color: var(--compact); }
section.compact { border-left-color: var(--auto); background: var(--box); }
details > summary { cursor: pointer; color: var(--mute); } .label { font-weight: 600; margin-top: .4em; }
.note { font-style: italic; color: var(--mute); } table { border-collapse: collapse; }
td, th { padding: .15em .7em .15em 0; text-align: left; vertical-align: top; } td.n { text-align: right; }
svg text { fill: var(--fg); font: 11px system-ui, sans-serif; } a { color: var(--ctx); }
"""


def esc(text: Any) -> str:
    """Transcript text for HTML: terminal controls made visible, then every markup character escaped."""
    return html.escape(printable(str(text), keep_newlines=True), quote=True)


def _page(title: str, body: Iterator[str]) -> Iterator[str]:
    yield (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f'<meta name="generator" content="{GENERATOR}">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>\n"
    )
    yield from body
    yield "\n</body></html>\n"


# ---------------------------------------------------------------------------------------------
# the token chart


def chart_svg(report: Any, width: int = 1040, height: int = 280) -> str:
    """The context at every response against the thresholds, compactions marked: inline SVG, no script."""
    turns = report.series.turns
    th = report.thresholds
    if not turns:
        return '<p class="note">No API response with usage: no token chart.</p>'
    left, right, top, bottom = 56, 150, 12, 24
    w, h = width - left - right, height - top - bottom
    lines = [("warning", th.warning, "var(--warn)"), ("auto-compact", th.auto_compact, "var(--auto)")]
    if th.has_blocking_limit:  # (up to 2.0.76 Claude Code has none)
        lines.append(("blocking", th.blocking, "var(--block)"))
    peak = max(t.tokens for t in turns)
    ymax = max([peak, *(v for _n, v, _c in lines if v)]) * 1.05 or 1
    n = len(turns)

    def x(k: int) -> float:
        return left + (w * k / (n - 1) if n > 1 else w / 2)

    def y(v: float) -> float:
        return top + h - h * v / ymax

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="context tokens at each of {n} responses">'
    ]
    for frac in (0, 0.25, 0.5, 0.75, 1.0):  # the y axis
        v = ymax * frac
        out.append(
            f'<line x1="{left}" x2="{left + w}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="var(--line)" stroke-width="1"/>'
            f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v / 1000:.0f}k</text>'
        )
    for k, t in enumerate(turns):  # compactions: where a response's segment grows
        if k and t.segment > turns[k - 1].segment:
            out.append(
                f'<line x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{top}" y2="{top + h}" stroke="var(--compact)" '
                'stroke-width="1.5" stroke-dasharray="3 3"><title>compaction</title></line>'
            )
    for name, v, colour in lines:
        if not v:
            continue
        dash = "" if th.enforced else ' stroke-dasharray="2 4"'
        label = name if th.enforced else f"{name} (not enforced)"
        out.append(
            f'<line x1="{left}" x2="{left + w}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="{colour}" stroke-width="1.2"{dash}/>'
            f'<text x="{left + w + 6}" y="{y(v) + 4:.1f}">{esc(label)} {v:,}</text>'
        )
    segments: dict[int, list[str]] = {}  # a line per stretch between compactions: the drop is not a response
    for k, t in enumerate(turns):
        segments.setdefault(t.segment, []).append(f"{x(k):.1f},{y(t.tokens):.1f}")
    for pts in segments.values():
        out.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="var(--ctx)" stroke-width="1.8"/>')
    if n <= 2000:  # each response's figure on hover
        out += [
            f'<circle cx="{x(k):.1f}" cy="{y(t.tokens):.1f}" r="2" fill="var(--ctx)"><title>{t.tokens:,} tokens'
            f"{', ' + esc(t.timestamp) if t.timestamp else ''}</title></circle>"
            for k, t in enumerate(turns)
        ]
    out.append(f'<text x="{left}" y="{height - 6}">response 1</text>')
    out.append(f'<text x="{left + w}" y="{height - 6}" text-anchor="end">response {n:,}</text>')
    out.append("</svg>")
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# one session


def _cut(text: str, where: str) -> str:
    if len(text) <= PART_CAP:
        return text
    return text[:PART_CAP] + f"\n… {len(text) - PART_CAP:,} more characters (in the transcript, {where})"


def _persisted(s: Any, text: str) -> str:
    """The full output a "persisted" part names, embedded (its start when large), read inside the session folder."""
    from inspector.transcript.safefs import open_regular

    po = next((p for p in s.persisted_outputs if p.file is not None and str(p.file) in text), None)
    if po is None or po.file is None:
        return ""
    try:
        with open_regular(po.file) as f:
            data = f.read(PERSISTED_CAP + 1)
    except OSError as exc:
        return f'<p class="note">The persisted output cannot be read: {esc(exc.strerror or exc)}</p>'
    more = f" (its first {human_size(PERSISTED_CAP)})" if len(data) > PERSISTED_CAP else ""
    body = data[:PERSISTED_CAP].decode("utf-8", "replace")
    return f"<details><summary>the persisted output{esc(more)}</summary><pre>{esc(body)}</pre></details>"


COLLAPSIBLE = ("tool result", "thinking", "toolUseResult", "tool call")  # the labels whose part folds under them


def parts_html(s: Any, parts: list[Part], where: str) -> Iterator[str]:
    """One record's parts: the head, then each block; tool results, thinking and JSON collapsible."""
    label = ""
    for p in parts:
        text = _cut(p.text, where)
        if p.kind == "head":
            first, _, rest = text.partition("\n")
            yield f"<h3>{esc(first)}</h3>" + (f'<div class="sub">{esc(rest)}</div>' if rest.strip() else "")
        elif p.kind == "label":
            label = text
            if not label.startswith(COLLAPSIBLE):
                yield f'<div class="label">{esc(text)}</div>'
        elif p.kind in ("note",):
            yield f'<p class="note">{esc(text)}</p>'
        elif p.kind == "persisted":
            yield f'<p class="note">{esc(text)}</p>' + _persisted(s, p.text)
        elif label.startswith(COLLAPSIBLE) or p.kind == "json":
            opened = (
                " open" if label.startswith("tool call") or (label.startswith("tool result") and len(text) < OPEN_BELOW) else ""
            )
            yield f"<details{opened}><summary>{esc(label or 'JSON')}</summary><pre>{esc(text)}</pre></details>"
        else:
            yield f"<pre>{esc(text)}</pre>"


def _compactions(report: Any, href: Callable[[int], str]) -> Iterator[str]:
    exps = report.compactions
    if not exps:
        yield "<p>No compaction in this session.</p>"
        return
    for e in exps:
        what = "microcompaction" if e.kind == "microcompact" else f"{e.kind} compaction"
        anchor = f' (<a href="{href(e.index)}">the boundary</a>)'
        yield f"<h3>{esc(what)} at {esc(e.timestamp or '?')}{anchor}</h3>"
        yield f"<p>{esc(e.explanation)}</p>"
        facts = [
            ("cause", e.cause),
            ("evidence", e.cause_evidence),
            ("context before", f"{e.pre_tokens:,}" if e.pre_tokens is not None else None),
            ("threshold", f"{e.threshold:,}" if e.threshold is not None else None),
            ("size after", f"{e.size_after:,} ({e.size_after_source})" if e.size_after is not None else None),
            ("rules", e.rules),
        ]
        yield "<table>" + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts if v) + "</table>"
        if e.summary_text:
            yield f"<details><summary>the summary</summary><pre>{esc(_cut(e.summary_text, 'the summary'))}</pre></details>"


@dataclass(slots=True)
class PageFacts:
    """What the index lists of one exported session."""

    path: Path
    file: str  # the page, relative to the export folder
    project: str
    title: str
    started: str
    responses: int
    peak: int | None
    compactions: int
    cost: float | None


PAGE_BUDGET = 4 << 20  # bytes of transcript a page of the conversation holds, about (a long session gets pages)


def page_plan(s: Any, rows: list[Any]) -> list[list[Any]]:
    """The conversation's rows cut into pages of about PAGE_BUDGET bytes of transcript (each record's line, and the
    persisted outputs embedded with it): a browser opens a page of a few megabytes at once, not one of 200."""
    embedded: dict[int, int] = {}
    for po in s.persisted_outputs:
        if po.record is not None and po.file is not None:
            embedded[po.record] = embedded.get(po.record, 0) + min(po.file_size or 0, PERSISTED_CAP)
    pages: list[list[Any]] = [[]]
    size = 0
    for row in rows:
        n = s.records[row.index].length + embedded.get(row.index, 0)
        if pages[-1] and size + n > PAGE_BUDGET:
            pages.append([])
            size = 0
        pages[-1].append(row)
        size += n
    return pages


def page_file(stem: str, k: int) -> str:
    """The file name of a session's k-th page (0: the first, which holds the token story)."""
    return f"{stem}.html" if k == 0 else f"{stem}-p{k + 1}.html"


def session_pages(
    s: Any,
    report: Any,
    cost: dict[str, Any] | None = None,
    index_href: str | None = None,
    stem: str | None = None,
    span: tuple[str | None, str | None] | None = None,
) -> list[tuple[str, Iterator[str]]]:
    """A session's pages, each (file name, its chunks): the first with the token story, the compactions and the
    start of the conversation, the next ones with the rest, linked both ways."""
    stem = stem or Path(s.path).stem
    rows = build_rows(s, scope="chain")
    plan = page_plan(s, rows)
    where = {row.index: k for k, page in enumerate(plan) for row in page}
    total = len(plan)

    def href(index: int) -> str:
        return f"{html.escape(page_file(stem, where.get(index, 0)))}#r{index}"

    span = span or s.time_span  # read once: it walks every record
    return [
        (page_file(stem, k), _one_page(s, report, cost, index_href, stem, plan, k, href, len(rows), span)) for k in range(total)
    ]


def _nav(stem: str, k: int, total: int) -> str:
    if total == 1:
        return ""
    links = [f"<b>{n + 1}</b>" if n == k else f'<a href="{html.escape(page_file(stem, n))}">{n + 1}</a>' for n in range(total)]
    return f'<p class="meta">page {k + 1} of {total}: ' + " · ".join(links) + "</p>"


def _one_page(
    s: Any,
    report: Any,
    cost: dict[str, Any] | None,
    index_href: str | None,
    stem: str,
    plan: list[list[Any]],
    k: int,
    href: Callable[[int], str],
    n_rows: int,
    span: tuple[str | None, str | None],
) -> Iterator[str]:
    from inspector.library.cost import usd

    th = report.thresholds
    title = s.title or s.session_id
    total = len(plan)

    def body() -> Iterator[str]:
        if index_href:
            yield f'<p class="meta"><a href="{html.escape(index_href)}">← all sessions</a></p>'
        yield f"<h1>{esc(title)}</h1>"
        first, last = span
        meta = [
            s.cwd or "",
            f"session {s.session_id}",
            f"Claude Code {s.version or '?'}",
            f"model {th.model or '?'}",
            f"{first or '?'} – {last or '?'}",
        ]
        if cost is not None:
            priced = cost.get("cost_usd")
            meta.append(
                f"cost {usd(priced)}"
                if priced is not None
                else f"cost at least {usd(cost.get('cost_usd_priced'))} (models without a price)"
            )
        yield f'<p class="meta">{esc(" · ".join(m for m in meta if m))}</p>'
        nav = _nav(stem, k, total)
        yield nav
        if k == 0:
            yield "<h2>Token story</h2>"
            yield chart_svg(report)
            yield (
                f'<p class="meta">{esc(th.rules)}</p><table>'
                + "".join(
                    f'<tr><th>{esc(name)}</th><td class="n">{v:,}</td></tr>'
                    for name, v in (
                        ("context window", th.context_window),
                        ("warning", th.warning),
                        ("auto-compact", th.auto_compact),
                        ("blocking", th.blocking if th.has_blocking_limit else 0),
                    )
                    if v
                )
                + "</table>"
            )
            if not th.enforced:
                yield f'<p class="note">{esc(th.unenforced_threshold or "The thresholds are not enforced for this model.")}</p>'
            yield "<h2>Compactions</h2>"
            yield from _compactions(report, href)
            if report.anomalies:
                yield "<h2>Anomalies</h2><ul>" + "".join(f"<li>{esc(a)}</li>" for a in report.anomalies) + "</ul>"
        rows = plan[k]
        done = sum(len(p) for p in plan[:k])
        here = f", records {done + 1:,}–{done + len(rows):,} here" if total > 1 else ""
        yield f"<h2>Conversation ({n_rows:,} records{here})</h2>"
        for row in rows:
            r = s.records[row.index]
            kind = "compact" if (r.is_compact_boundary or r.is_compact_summary) else r.type
            yield f'<section class="rec {esc(kind)}" id="r{row.index}">'
            yield from parts_html(s, record_parts(s, row.index), f"line {r.line}")
            yield "</section>\n"
        yield nav

    return _page(f"{title} · inspector" + (f" ({k + 1}/{total})" if total > 1 else ""), body())


def index_page(pages: list[PageFacts], where: str) -> Iterator[str]:
    """The sessions exported, by project, newest first, each linking to its page."""
    from inspector.library.cost import usd

    def body() -> Iterator[str]:
        yield f'<h1>Claude Code sessions</h1><p class="meta">{esc(where)} · {len(pages):,} session(s)</p>'
        by_project: dict[str, list[PageFacts]] = {}
        for p in pages:
            by_project.setdefault(p.project, []).append(p)
        for project in sorted(by_project):
            yield f"<h2>{esc(project)}</h2><table><tr><th>started</th><th>title</th><th>responses</th><th>peak</th>"
            yield "<th>compactions</th><th>cost</th></tr>"
            for p in sorted(by_project[project], key=lambda q: q.started, reverse=True):
                yield (
                    f"<tr><td>{esc(p.started[:16].replace('T', ' '))}</td>"
                    f'<td><a href="{html.escape(p.file)}">{esc(p.title[:120])}</a></td>'
                    f'<td class="n">{p.responses:,}</td><td class="n">{"" if p.peak is None else f"{p.peak:,}"}</td>'
                    f'<td class="n">{p.compactions}</td><td class="n">{"" if p.cost is None else esc(usd(p.cost))}</td></tr>'
                )
            yield "</table>"

    return _page("Claude Code sessions · inspector", body())


# ---------------------------------------------------------------------------------------------
# writing


@dataclass(slots=True)
class ExportReport:
    to: Path
    pages: list[PageFacts] = field(default_factory=list)  # one per session (its first page)
    files: int = 0  # the pages written, a long session's further pages and the index included
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # sessions that could not be read, and why


class ExportError(Exception):
    """One clear reason the export could not be written."""


def _ours(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f'content="{GENERATOR}"'.encode() in f.read(1024)
    except OSError:
        return False


def write_page(dest: Path, chunks: Iterator[str]) -> None:
    """Write a page atomically: a new file, or in place of a page this exporter wrote before (never another file)."""
    from inspector.edit.files import SaveError, write_atomic

    if os.path.lexists(dest) and not (dest.is_file() and not dest.is_symlink() and _ours(dest)):
        raise ExportError(f"{dest} exists and is not a page inspector exported: not replaced")
    tmp = dest.with_name(f".{dest.name}.inspector-{os.getpid()}.tmp")
    try:
        write_atomic(tmp, (c.encode("utf-8", "surrogateescape") for c in chunks))
        os.replace(tmp, dest)
    except SaveError as exc:
        raise ExportError(str(exc)) from None
    except OSError as exc:
        raise ExportError(f"could not write {dest}: {exc.strerror or exc}") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def export_html(target: Any, to: Path, progress: Callable[[int, int], None] | None = None) -> ExportReport:
    """Write a page per session under `target` and an `index.html` into `to` (each file written atomically; nothing
    is written inside the transcripts' folders)."""
    from inspector.library.cost import session_cost
    from inspector.library.retention import inside, projects_roots
    from inspector.tokens.explain import analyze
    from inspector.transcript.discovery import session_files
    from inspector.transcript.session import Session

    for root in projects_roots(target):  # never a write among the transcripts
        if inside(to.resolve(), root.resolve()):
            raise ExportError(f"{to} is inside the transcripts ({root}): choose a folder outside")
    to.mkdir(parents=True, exist_ok=True)
    rep = ExportReport(to)
    files = [p for p, _agents in session_files(target)]
    for n, path in enumerate(files):
        if progress is not None:
            progress(n, len(files))
        try:
            s = Session.load(path)
        except (OSError, ValueError) as exc:
            rep.skipped.append((path, getattr(exc, "strerror", None) or str(exc)))
            continue
        try:
            report = analyze(s)
            cost = session_cost(s)
            folder = to / path.parent.name  # the project's folder, as in a projects root
            folder.mkdir(parents=True, exist_ok=True)
            span = s.time_span
            pages = session_pages(s, report, cost, "../index.html", span=span)
            for file, chunks in pages:
                write_page(folder / file, chunks)
                rep.files += 1
            name, first = f"{path.parent.name}/{pages[0][0]}", span[0]
            turns = report.series.turns
            rep.pages.append(
                PageFacts(
                    path,
                    name,
                    s.cwd or path.parent.name,
                    s.title or s.session_id,
                    first or "",
                    len(turns),
                    max((t.tokens for t in turns), default=None),
                    sum(1 for e in report.compactions if e.kind != "microcompact"),
                    cost.get("cost_usd"),
                )
            )
        finally:
            s.close()
    where = str(getattr(target, "path", ""))
    write_page(to / "index.html", index_page(rep.pages, where))
    rep.files += 1
    return rep


__all__ = [
    "CSP",
    "ExportError",
    "ExportReport",
    "session_pages",
    "page_plan",
    "chart_svg",
    "esc",
    "export_html",
    "index_page",
]
