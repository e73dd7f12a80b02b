"""The detail pane: the selected record, block by block (only this record's widgets are mounted)."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from inspector.textutil import human_size, printable
from inspector.transcript.records import iter_blocks, tool_result_text
from inspector.transcript.session import Session

TEXT_CAP = 20_000  # characters of one block shown before it is cut (the raw view and paging show more)
MARKDOWN_CAP = 12_000
JSON_CAP = 200_000


def safe(s: str, cap: int = TEXT_CAP) -> Text:
    """Untrusted text as a Rich Text: never markup, no terminal escapes, capped."""
    more = len(s) - cap
    s = printable(s[:cap], keep_newlines=True)
    t = Text(s)
    if more > 0:
        t.append(f"\n… {more:,} more characters (r shows the raw record)", style="italic dim")
    return t


def pretty(obj: Any, cap: int = JSON_CAP) -> str:
    s = json.dumps(obj, indent=2, ensure_ascii=False, default=str)
    return s


class Detail(VerticalScroll, can_focus=True):
    DEFAULT_CSS = """
    Detail { padding: 0 1; }
    Detail > .detail--head { color: $text-muted; margin-bottom: 1; }
    Detail > .detail--block { margin-bottom: 1; }
    Detail > .detail--label { color: $accent; text-style: bold; }
    Detail > .detail--thinking { color: $text-muted; text-style: italic; }
    Detail > .detail--note { color: $warning; }
    """

    def clear(self) -> None:
        self.remove_children()

    def show_text(self, title: str, text: str) -> None:
        self.remove_children()
        self.mount(Static(Text(title, style="bold"), classes="detail--label"), Static(safe(text, JSON_CAP), classes="detail--block"))
        self.scroll_home(animate=False)

    def show_record(self, s: Session, i: int, *, raw: bool = False) -> None:
        self.remove_children()
        r = s.records[i]
        try:
            body = s.body(i)
        except Exception as exc:  # noqa: BLE001
            self.mount(Static(Text(f"This record cannot be re-read: {exc}"), classes="detail--note"))
            return
        head = f"{r.type}{' / ' + r.subtype if r.subtype else ''}   line {r.line}   {r.timestamp or ''}\nuuid {r.uuid or '-'}   parent {r.parent or '-'}"
        if r.model:
            head += f"\nmodel {r.model}   message {r.message_id or '-'}"
        if r.usage:
            u = r.usage
            head += f"\nusage: input {u[0]:,} + cache creation {u[1]:,} + cache read {u[2]:,} + output {u[3]:,} = {sum(u):,}"
        widgets: list[Static | Markdown] = [Static(Text(head), classes="detail--head")]
        if raw:
            widgets.append(Static(safe(pretty(body), JSON_CAP), classes="detail--block"))
            self.mount(*widgets)
            self.scroll_home(animate=False)
            return
        msg = body.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, str):
            widgets += self._text_block("summary" if r.is_compact_summary else r.type, content, markdown=r.type == "assistant" or r.is_compact_summary)
        for b in iter_blocks(content):
            widgets += self._block(s, r, b)
        if r.type not in ("user", "assistant"):
            shown = {k: v for k, v in body.items() if k not in ("parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch",
                                                                  "uuid", "timestamp", "type", "subtype", "slug", "entrypoint")}
            widgets.append(Static(safe(pretty(shown)), classes="detail--block"))
        tur = body.get("toolUseResult")
        if tur is not None:
            widgets.append(Static(Text("toolUseResult (the tool's structured output, beside what the model saw)"), classes="detail--label"))
            widgets.append(Static(safe(pretty(tur), 10_000), classes="detail--block"))
        self.mount(*widgets)
        self.scroll_home(animate=False)

    def _text_block(self, label: str, text: str, *, markdown: bool) -> list[Static | Markdown]:
        out: list[Static | Markdown] = [Static(Text(label), classes="detail--label")]
        if markdown and len(text) <= MARKDOWN_CAP:
            out.append(Markdown(printable(text, keep_newlines=True), classes="detail--block"))
        else:
            out.append(Static(safe(text), classes="detail--block"))
        return out

    def _block(self, s: Session, r: Any, b: dict[str, Any]) -> list[Static | Markdown]:
        t = b.get("type")
        if t == "text" and isinstance(b.get("text"), str):
            return self._text_block("text", b["text"], markdown=r.type == "assistant")
        if t == "thinking":
            return [Static(Text("thinking"), classes="detail--label"), Static(safe(str(b.get("thinking", ""))), classes="detail--thinking")]
        if t == "redacted_thinking":
            return [Static(Text("redacted thinking"), classes="detail--label")]
        if t == "tool_use":
            return [Static(Text(f"tool call {b.get('name', '?')}  ({b.get('id', '')})"), classes="detail--label"),
                    Static(safe(pretty(b.get("input", {}))), classes="detail--block")]
        if t == "tool_result":
            tid = b.get("tool_use_id", "")
            name = s.tool_name(tid) if isinstance(tid, str) else None
            inner = b.get("content")
            text = tool_result_text(inner)
            out: list[Static | Markdown] = [Static(Text(f"tool result {name or ''}  ({tid}){'  ERROR' if b.get('is_error') else ''}  "
                                                        f"{human_size(len(text))}"), classes="detail--label")]
            for po in s.persisted_outputs:
                if po.tool_use_id == tid:
                    if po.file is not None:
                        out.append(Static(Text(f"Full output persisted in {po.file} ({human_size(po.file_size)}): press f to read it"),
                                          classes="detail--note"))
                    elif po.marker is not None:
                        out.append(Static(Text(f"Persisted output ({po.marker.size_text}) recorded at {po.marker.path}: the file is not in "
                                               "this session's folder"), classes="detail--note"))
            out.append(Static(safe(text), classes="detail--block"))
            for ib in iter_blocks(inner):
                if ib.get("type") in ("image", "document"):
                    out.append(Static(Text(self._media(ib)), classes="detail--note"))
            return out
        if t in ("image", "document"):
            return [Static(Text(self._media(b)), classes="detail--note")]
        return [Static(Text(f"{t} block"), classes="detail--label"), Static(safe(pretty(b)), classes="detail--block")]

    @staticmethod
    def _media(b: dict[str, Any]) -> str:
        src = b.get("source") if isinstance(b.get("source"), dict) else {}
        data = src.get("data") if isinstance(src.get("data"), str) else ""
        size = len(data) * 3 // 4
        return f"[{b.get('type')}: {src.get('media_type', '?')}, {human_size(size)}]"
