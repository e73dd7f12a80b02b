"""A local fake of the Anthropic Messages API on 127.0.0.1, for tests of the real SDK path.

Each request takes the next scripted behaviour: "ok" (a streamed reply), ("status", code,
{"retry-after-ms": "5"}), "ptl" (400 prompt too long), "401", "echo" (a 502 whose body repeats the request's
headers, key included, as a careless proxy might), ("hang", seconds),
"reset" (the connection dropped mid-stream). Requests are recorded for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = (
    "<analysis>\nThe user asked to fix a crash; it was fixed and tested.\n</analysis>\n\n<summary>\n"
    "1. Primary Request and Intent:\n   Fix the crash.\n2. Key Technical Concepts:\n   - Python\n3. Files and Code Sections:\n"
    "   - weatherly/api.py\n4. Errors and fixes:\n   - IndexError fixed.\n5. Problem Solving:\n   Done.\n"
    "6. All user messages:\n   - Fix it.\n7. Pending Tasks:\n   - None.\n8. Current Work:\n   Finished.\n"
    "9. Optional Next Step:\n   None.\n</summary>"
)


class FakeAnthropic:
    def __init__(self, script: list[Any] | None = None, reply: str = REPLY) -> None:
        self.script = list(script or [])
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                fake.requests.append({"path": self.path, "body": body})
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path.startswith("/v1/messages/count_tokens"):
                    text = json.dumps(body.get("messages", [])) + json.dumps(body.get("system", ""))
                    return self._json(200, {"input_tokens": len(text) // 4})
                step = fake.script.pop(0) if fake.script else "ok"
                if step == "ok":
                    return self._stream()
                if isinstance(step, tuple) and step[0] == "slow":
                    return self._stream(delay=step[1])
                if step == "ptl":
                    return self._json(
                        400,
                        {
                            "type": "error",
                            "error": {
                                "type": "invalid_request_error",
                                "message": "prompt is too long: 210000 tokens > 200000 maximum",
                            },
                        },
                    )
                if step == "echo":  # a proxy that echoes the request's headers in its error body
                    seen = {k: v for k, v in self.headers.items()}
                    return self._json(
                        502, {"type": "error", "error": {"type": "api_error", "message": f"bad gateway; request headers: {seen}"}}
                    )
                if isinstance(step, tuple) and step[0] == "text":  # a non-JSON error body, as a proxy may send
                    data = step[2].encode()
                    self.send_response(step[1])
                    self.send_header("content-type", "text/plain")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return None
                if step == "401":
                    return self._json(
                        401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
                    )
                if step == "reset":
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("content-length", "100000")
                    self.end_headers()
                    self.wfile.write(b'event: message_start\ndata: {"type":"message_start","message":')
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return None
                if isinstance(step, tuple) and step[0] == "hang":
                    time.sleep(step[1])
                    return self._json(500, {"type": "error", "error": {"type": "api_error", "message": "late"}})
                if isinstance(step, tuple) and step[0] == "status":
                    code, headers = step[1], step[2] if len(step) > 2 else {}
                    kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(code, "api_error")
                    return self._json(code, {"type": "error", "error": {"type": kind, "message": kind}}, headers)
                raise AssertionError(f"unknown step {step!r}")

            def _json(self, code: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def _stream(self, delay: float = 0.0) -> None:
                model = fake.requests[-1]["body"].get("model", "claude")
                events = [
                    (
                        "message_start",
                        {
                            "type": "message_start",
                            "message": {
                                "id": "msg_fake",
                                "type": "message",
                                "role": "assistant",
                                "model": model,
                                "content": [],
                                "stop_reason": None,
                                "stop_sequence": None,
                                "usage": {"input_tokens": 1234, "output_tokens": 1},
                            },
                        },
                    ),
                    (
                        "content_block_start",
                        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                    ),
                ]
                text = fake.reply
                for k in range(0, len(text), 80):
                    events.append(
                        (
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": 0,
                                "delta": {"type": "text_delta", "text": text[k : k + 80]},
                            },
                        )
                    )
                events += [
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                            "usage": {"output_tokens": 321},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ]
                chunks = [f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e, d in events]
                data = b"".join(chunks)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                try:
                    for c in chunks:
                        self.wfile.write(c)
                        self.wfile.flush()
                        if delay:
                            time.sleep(delay)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client cancelled

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeAnthropic:
        self.thread.start()
        return self

    def __exit__(self, *a: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def message_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].startswith("/v1/messages") and "count_tokens" not in r["path"]]
