"""A scripted fake of the Anthropic Messages API, for running the real Claude Code offline.

Every request to `/v1/messages` is answered from the request itself, so the conversation Claude Code builds decides
what happens next, as with the real API:

- the context of a request is `start + step × (assistant messages in it)` tokens, reported as usage (input and a
  little output); past `ptl_at` the request is refused with 400 "prompt is too long: N tokens > LIMIT maximum";
- a request that asks for a summary (Claude Code's compaction prompt) is answered with a summary in `<analysis>` and
  `<summary>` blocks (or refused as too long when it carries more than `summary_ptl_above` messages);
- any other request gets a tool call (`tool`, with `cmd` formatted with the turn number) until `turns` of them
  were given in this run (a compaction shortens the request, not the work to do), then a final text reply.

Replies are streamed as server-sent events when asked (`stream: true`), as JSON otherwise. `/v1/messages/count_tokens`
answers with the same size. Every request body is logged, with what was answered.
"""

from __future__ import annotations

import json
import threading
import uuid as uuidlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARY_MARKERS = (
    "create a detailed summary of the conversation",
    "Your task is to create a detailed summary",
    "summary of the RECENT portion",
    "summarize the conversation",
)
SUMMARY = (
    "<analysis>\nThe user asked to run the checks; each step was run with a tool and reported.\n</analysis>\n\n"
    "<summary>\n1. Primary Request and Intent:\n   Run the checks step by step.\n2. Key Technical Concepts:\n"
    "   - shell commands\n3. Files and Code Sections:\n   - none\n4. Errors and fixes:\n   - none\n"
    "5. Problem Solving:\n   Each step ran.\n6. All user messages:\n   - run the checks\n7. Pending Tasks:\n"
    "   - the remaining steps\n8. Current Work:\n   Running the next step.\n9. Optional Next Step:\n"
    "   Run the next step.\n</summary>"
)
FINAL_TEXT = "All checks done."
SUBAGENT_MARK = "SUBAGENT TASK:"  # in the prompt of a subagent the fake starts (answered in one reply, not a turn)
SUBAGENT_TEXT = "Subagent done: nothing to report."
BASH_FOR = {
    "Grep": lambda i: f"grep -rn {json.dumps(str(i.get('pattern', 'x')))} {i.get('path', '.')}",
    "Glob": lambda i: f"ls {i.get('path', '.')}",
}


@dataclass
class Script:
    """How the fake behaves; one per step of a scenario."""

    turns: int = 6  # tool-call replies before the final text
    start: int = 20_000  # context of a request with no reply in it
    step: int = 15_000  # added per assistant message in the request
    ptl_at: int | None = None  # refuse requests at or above this size
    limit: int = 200_000  # the maximum named in the refusal
    tool: str = "Bash"
    cmd: str = "echo step {k}"
    summary_ptl_above: int | None = None  # refuse summarize requests with more messages than this
    output_tokens: int = 10
    # the era matrix's probes: the size reported for the k-th reply is sizes[k] (k counts tool-call replies, so a
    # compaction does not restart it); once a summary was served, `after` instead (the context a compaction left)
    sizes: tuple[int, ...] | None = None
    after: int = 20_000
    summary_status: int | None = None  # answer every summarize request with this HTTP error (a failing summarizer)
    stop_after_summary: bool = False  # the work is done once a summary was served (a probe needs nothing after it)
    count_text: bool = False  # count_tokens answers with the text's size (4 characters a token), as with `sizes`
    summary_text: str | None = None  # the summarizer's reply (default: SUMMARY)
    # generated runs: the k-th tool call is calls[k % len(calls)], each (tool, input as JSON text with {k} for the
    # call's number); a tool the request does not offer (Grep and Glob left in 2.1.3xx) becomes its Bash equivalent
    calls: tuple[tuple[str, str], ...] = ()
    # a reply sampled in this many iterations (a server tool loop, an advisor): `usage.iterations` lists each, every
    # one reporting the request's context, and the top-level usage is their sum, as the API reports it
    iterations: int = 0
    # a turn's reply opens with its reasoning, as a model thinking does: "thinking" (a signed block, its text empty when
    # the request asks for it omitted, as the API does) or "redacted" (a redacted_thinking block); None: no reasoning
    thinking: str | None = None
    parallel: int = 1  # tool calls in one reply (the next calls of `calls`), answered together in one user message


@dataclass
class Logged:
    path: str
    body: dict[str, Any]
    kind: str  # "turn", "summary", "count", "other"
    answer: str  # "tool_use", "text", "summary", "prompt_too_long", "count", "404"
    tokens: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None  # the message of an error answer
    reply_id: str | None = None  # the message id of the reply sent (its records carry it: a release that writes no
    # api-request row is checked against the records before that reply)


def s_linear(s: Script) -> bool:
    return s.sizes is None and not s.count_text


CONTINUED = "This session is being continued from a previous conversation"  # a compaction's summary starts so


def _asks_a_subagent(content: Any) -> bool:
    """Whether a request's first message is a subagent's prompt: a text holding the mark that is not a compaction's
    summary (a summary of a subagent's own transcript quotes its prompt: a saved compaction of it, resumed, is a turn;
    2.0.76 seed 143103)."""
    texts = [content] if isinstance(content, str) else [b.get("text") for b in content or () if isinstance(b, dict)]
    return any(isinstance(t, str) and SUBAGENT_MARK in t and not t.lstrip().startswith(CONTINUED) for t in texts)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    out = []
    for b in content or ():
        if isinstance(b, dict):
            if isinstance(b.get("text"), str):
                out.append(b["text"])
            elif b.get("type") == "tool_result":
                out.append(_text_of(b.get("content")))
    return "\n".join(out)


def call_for(s: Script, k: int, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool call of the k-th reply (k from 0): the scripted one, or with `calls` the k-th of them, in the names
    of the tools the request offers."""
    if not s.calls:
        inp = {"command": s.cmd.format(k=k + 1)} if s.tool == "Bash" else {"file_path": s.cmd.format(k=k + 1)}
        if s.tool == "Bash":
            inp["description"] = f"Run step {k + 1}"
        return s.tool, inp
    tool, template = s.calls[k % len(s.calls)]
    inp = json.loads(template.replace("{k}", str(k + 1)))
    offered = {t.get("name") for t in body.get("tools") or () if isinstance(t, dict)}
    if tool in ("Agent", "Task"):
        tool = "Agent" if "Agent" in offered or "Task" not in offered else "Task"
    elif tool not in offered and tool in BASH_FOR:
        return "Bash", {"command": BASH_FOR[tool](inp), "description": f"Run step {k + 1}"}
    return tool, inp


def reasoning(s: Script, body: dict[str, Any], k: int) -> list[dict[str, Any]]:
    """The reasoning block a turn's k-th reply opens with (`Script.thinking`), or none. A request that asks for its
    reasoning omitted (`thinking.display: "omitted"`) gets the block with its text empty and its signature, as the API
    sends it."""
    asked = body.get("thinking") if isinstance(body.get("thinking"), dict) else {}
    if s.thinking is None or asked.get("type") in (None, "disabled"):
        return []  # a request that does not ask the model to think gets no reasoning
    if s.thinking == "redacted":
        return [{"type": "redacted_thinking", "data": "RXJyb3I6IHJlZGFjdGVk" + uuidlib.uuid4().hex}]
    text = "" if asked.get("display") == "omitted" else f"Step {k + 1} is next; run it."
    return [{"type": "thinking", "thinking": text, "signature": "EqQBCkYIBRgCKkB" + uuidlib.uuid4().hex * 2}]


def is_summary_request(body: dict[str, Any]) -> bool:
    msgs = body.get("messages") or []
    last_user = next((m for m in reversed(msgs) if m.get("role") == "user"), None)
    text = _text_of(last_user.get("content")) if last_user else ""
    return any(m.lower() in text.lower() for m in SUMMARY_MARKERS) and "<summary>" in text


class FakeAPI:
    """The server, on 127.0.0.1 and a free port, in a thread. Use as a context manager."""

    def __init__(self, script: Script | None = None) -> None:
        self.script = script or Script()
        self.log: list[Logged] = []
        self.replies = 0
        self.summaries = 0  # summaries served
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n) if n else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                headers = {k.lower(): v for k, v in self.headers.items() if k.lower() in ("anthropic-beta", "anthropic-version")}
                path = self.path.split("?", 1)[0]
                if path.endswith("/v1/messages/count_tokens"):
                    # what is counted (a file to re-attach, a tool list) is sized as text: 4 characters a token,
                    # or, with the old linear model and no `sizes`, the scripted context
                    tokens = (
                        fake.size(body) if s_linear(fake.script) else max(1, len(json.dumps(body.get("messages") or [])) // 4)
                    )
                    fake.record(Logged(self.path, body, "count", "count", tokens, headers))
                    return self._json(200, {"input_tokens": tokens})
                if not path.endswith("/v1/messages"):
                    fake.record(Logged(self.path, body, "other", "404", None, headers))
                    return self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})
                s = fake.script
                summary = is_summary_request(body)
                msgs = body.get("messages") or []
                if not summary and not body.get("tools"):
                    # a side query (1.x-2.1.1xx: "extract the file paths of this command", titles): no turn of the work
                    fake.record(Logged(self.path, body, "side", "text", None, headers))
                    return self._reply(body, [{"type": "text", "text": "<filepaths>\n</filepaths>"}], 100)
                if not summary and _asks_a_subagent((msgs[0] if msgs else {}).get("content")):
                    fake.record(Logged(self.path, body, "subagent", "text", s.start, headers))
                    return self._reply(body, [{"type": "text", "text": SUBAGENT_TEXT}], s.start)
                tokens = fake.turn_size(body) if not summary else fake.size(body)
                if summary and s.summary_status is not None:
                    fake.record(Logged(self.path, body, "summary", f"error {s.summary_status}", tokens, headers))
                    return self._json(
                        s.summary_status,
                        {
                            "type": "error",
                            "error": {
                                "type": "invalid_request_error" if s.summary_status < 500 else "api_error",
                                "message": "the summarizer failed (scripted)",
                            },
                        },
                    )
                too_long = (s.ptl_at is not None and tokens >= s.ptl_at) or (
                    summary and s.summary_ptl_above is not None and len(msgs) > s.summary_ptl_above
                )
                if too_long:
                    said = f"prompt is too long: {tokens} tokens > {s.limit} maximum"
                    fake.record(
                        Logged(self.path, body, "summary" if summary else "turn", "prompt_too_long", tokens, headers, said)
                    )
                    return self._json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": said}})
                if summary:
                    blocks = [{"type": "text", "text": s.summary_text if s.summary_text is not None else SUMMARY}]
                    answer = "summary"
                    with fake._lock:
                        fake.summaries += 1
                else:
                    with fake._lock:  # replies so far in this step: a compaction shortens the request, not the work
                        k = fake.replies
                        fake.replies += 1
                    if k < s.turns and not (s.stop_after_summary and fake.summaries):
                        blocks = [{"type": "text", "text": f"Running step {k + 1}."}]
                        for j in range(max(1, s.parallel)):
                            tool, inp = call_for(s, k * max(1, s.parallel) + j, body)
                            use_id = "toolu_" + uuidlib.uuid4().hex[:24]
                            blocks.append({"type": "tool_use", "id": use_id, "name": tool, "input": inp})
                        answer = "tool_use"
                    else:
                        blocks = [{"type": "text", "text": FINAL_TEXT}]
                        answer = "text"
                    blocks = reasoning(s, body, k) + blocks
                mid = "msg_" + uuidlib.uuid4().hex[:24]
                fake.record(Logged(self.path, body, "summary" if summary else "turn", answer, tokens, headers, reply_id=mid))
                return self._reply(body, blocks, tokens, split=not summary, mid=mid)

            def _reply(
                self, body: dict[str, Any], blocks: list[dict[str, Any]], tokens: int, split: bool = False, mid: str | None = None
            ) -> None:
                s = fake.script
                usage = {
                    "input_tokens": max(1, tokens - s.output_tokens),
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": s.output_tokens,
                }
                if split and s.iterations > 1:  # a turn of the work (not a summary, a side query or a subagent)
                    one = dict(usage)
                    usage = {k: v * s.iterations for k, v in one.items()}
                    usage["iterations"] = [dict(one, type="message") for _ in range(s.iterations)]
                stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
                message = {
                    "id": mid or "msg_" + uuidlib.uuid4().hex[:24],
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "claude"),
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                }
                if body.get("stream"):
                    return self._stream(message)
                return self._json(200, message)

            def _json(self, code: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("request-id", "req_" + uuidlib.uuid4().hex[:24])
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, message: dict[str, Any]) -> None:
                events: list[tuple[str, dict[str, Any]]] = []
                start = dict(message, content=[], stop_reason=None, usage=dict(message["usage"], output_tokens=1))
                events.append(("message_start", {"type": "message_start", "message": start}))
                for i, b in enumerate(message["content"]):
                    if b["type"] == "thinking":
                        events.append(
                            (
                                "content_block_start",
                                {"type": "content_block_start", "index": i, "content_block": dict(b, thinking="", signature="")},
                            )
                        )
                        if b["thinking"]:
                            delta = {"type": "thinking_delta", "thinking": b["thinking"]}
                            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
                        delta = {"type": "signature_delta", "signature": b["signature"]}
                        events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
                    elif b["type"] == "redacted_thinking":
                        events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": b}))
                    elif b["type"] == "text":
                        events.append(
                            (
                                "content_block_start",
                                {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                            )
                        )
                        events.append(
                            (
                                "content_block_delta",
                                {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}},
                            )
                        )
                    else:
                        events.append(
                            (
                                "content_block_start",
                                {
                                    "type": "content_block_start",
                                    "index": i,
                                    "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}},
                                },
                            )
                        )
                        events.append(
                            (
                                "content_block_delta",
                                {
                                    "type": "content_block_delta",
                                    "index": i,
                                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])},
                                },
                            )
                        )
                    events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
                events.append(
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": message["usage"]["output_tokens"]},
                        },
                    )
                )
                events.append(("message_stop", {"type": "message_stop"}))
                data = b"".join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e, d in events)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("request-id", "req_" + uuidlib.uuid4().hex[:24])
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def size(self, body: dict[str, Any]) -> int:
        k = sum(1 for m in body.get("messages") or () if m.get("role") == "assistant")
        return self.script.start + self.script.step * k

    def turn_size(self, body: dict[str, Any]) -> int:
        """The size of a turn's request: by its messages, or with `sizes` the one scripted for the next reply."""
        s = self.script
        if s.sizes is None:
            return self.size(body)
        if self.summaries:
            return s.after
        return s.sizes[min(self.replies, len(s.sizes) - 1)]

    def record(self, item: Logged) -> None:
        with self._lock:
            self.log.append(item)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
