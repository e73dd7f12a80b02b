"""The partial index's chunked pass (memmem from hit to hit) reads a file as the line-by-line pass does.

A partial index (`Transcript.load(..., only=needles)`, the cost's lines) searches a whole chunk for its needles and
only counts the lines between hits. Whatever the file holds (lines longer than a chunk, a needle across a chunk's
end, carriage returns, a byte order mark, blank and broken lines, lines too long to read, a last line without its
newline, a file that grows between passes), its records, problems, line numbers and offsets must be those of the
line-by-line pass it replaces.
"""

from __future__ import annotations

import os

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import inspector.transcript.index as index_mod
from inspector.library.cost import COST_LINES
from inspector.transcript.index import Transcript

SETTINGS = settings(
    max_examples=int(os.environ.get("INSPECTOR_FUZZ_EXAMPLES", "150")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


def _record(draw_kind: str, n: int, pad: int) -> bytes:
    filler = "x" * pad
    if draw_kind == "usage":
        obj = {
            "type": "assistant",
            "uuid": f"u{n}",
            "message": {"id": f"m{n}", "content": [{"type": "text", "text": filler}], "usage": {"input_tokens": n}},
        }
    elif draw_kind == "copy":
        obj = {"type": "user", "uuid": f"u{n}", "forkedFrom": {"sessionId": "s"}, "message": {"content": filler}}
    elif draw_kind == "late":  # the needle after a long text: across a chunk's end
        obj = {"type": "assistant", "uuid": f"u{n}", "message": {"content": filler, "usage": {"output_tokens": 1}}}
    else:
        obj = {"type": "user", "uuid": f"u{n}", "message": {"content": filler}}
    return orjson.dumps(obj)


LINE = st.one_of(
    st.tuples(st.sampled_from(["usage", "copy", "late", "plain", "plain", "plain"]), st.integers(0, 300)),
    st.sampled_from(
        [
            b"",
            b"   ",
            b"not json",
            b'{"broken": "usage"',
            b'["a list", "usage"]',
            b'{"type":"assistant","message":{"usage":{"input_tokens":1}}}\r',
            b'{"type":"user"}\r',
            b"\x00\xff usage",
        ]
    ),
)


def _file(lines: list, bom: bool, tail: bytes | None) -> bytes:
    out = [b"\xef\xbb\xbf"] if bom else []
    for i, ln in enumerate(lines):
        out.append((ln if isinstance(ln, bytes) else _record(ln[0], i, ln[1])) + b"\n")
    if tail is not None:
        out.append(tail)
    return b"".join(out)


def _facts(t: Transcript) -> tuple:
    return (
        [(r.line, r.offset, r.length, r.type, r.uuid, r.usage) for r in t.records],
        [(p.line, p.offset, p.reason, p.skipped) for p in t.problems],
        t.scanned_to,
        t.next_line,
        t.replacements,
    )


def _noop(done: int, total: int) -> None:
    pass


def _both(path, monkeypatch, grow: bytes | None = None) -> tuple[tuple, tuple]:
    """The facts of the chunked pass and of the line-by-line one (which a progress callback takes: it reports as it
    reads), and that the chunked pass ran when there was something to read."""
    got = []
    runs = []
    real = Transcript._update_marked

    def spy(self, *a, **k):
        runs.append(1)
        return real(self, *a, **k)

    for fast in (True, False):
        with monkeypatch.context() as m:
            m.setattr(Transcript, "_update_marked", spy)
            progress = None if fast else _noop
            t = Transcript.load(path, progress=progress, only=COST_LINES)
            if grow is not None:
                with open(path, "ab") as f:
                    f.write(grow)
                t.update(progress=progress)
            got.append(_facts(t))
            t.close()
        if grow is not None:  # the same start for the other pass
            with open(path, "r+b") as f:
                f.truncate(os.path.getsize(path) - len(grow))
        if fast:
            assert runs or not path.stat().st_size, "the chunked pass did not run"
            runs.clear()
    assert not runs, "the line-by-line pass ran the chunked one"
    return got[0], got[1]


@SETTINGS
@given(
    lines=st.lists(LINE, max_size=25),
    bom=st.booleans(),
    tail=st.sampled_from([None, b'{"type":"assistant","message":{"usage":{}}}', b'{"type":"user"', b'{"usa', b"{}"]),
    chunk=st.sampled_from([16, 64, 200, 4 << 20]),
    cap=st.sampled_from([40, 150, 64 << 20]),
    grow=st.sampled_from([None, b'ge":{}}}\n{"type":"user"}\n', b"\n"]),
)
def test_the_chunked_pass_reads_as_the_line_by_line_pass(tmp_path, monkeypatch, lines, bom, tail, chunk, cap, grow):
    monkeypatch.setattr(index_mod, "MARKED_CHUNK", chunk)
    monkeypatch.setattr(index_mod, "MAX_LINE", cap)
    path = tmp_path / "t.jsonl"
    path.write_bytes(_file(lines, bom, tail))
    fast, slow = _both(path, monkeypatch, grow)
    assert fast == slow


def test_a_line_being_written_without_its_usage_yet_is_read_again_when_whole(tmp_path):
    """A partial index of a live file (the cost's lines) leaves a last line that is not whole yet for the next pass:
    its usage may be in the part not written yet (the line-by-line pass used to skip it for good)."""
    path = tmp_path / "t.jsonl"
    msg = {"id": "m", "content": "hi", "usage": {"input_tokens": 5}}
    whole = orjson.dumps({"type": "assistant", "uuid": "a", "message": msg})
    cut = whole.index(b'"usage"')
    path.write_bytes(b'{"type":"user","uuid":"u"}\n' + whole[:cut])
    t = Transcript.load(path, only=COST_LINES)
    assert t.records == [] and t.scanned_to == len(b'{"type":"user","uuid":"u"}\n')
    with open(path, "ab") as f:
        f.write(whole[cut:] + b"\n")
    new = t.update()
    assert [(r.uuid, r.usage is not None, r.line) for r in new] == [("a", True, 2)]
    assert not t.problems and t.complete


@pytest.mark.parametrize("size", [5 << 20, (4 << 20) - 3])
def test_a_hit_in_a_line_longer_than_a_chunk(tmp_path, size):
    """A line longer than the chunk (a big tool result) is read on to its end, and decoded when it holds a needle:
    here its usage lies past the first chunk."""
    path = tmp_path / "t.jsonl"
    big = orjson.dumps({"type": "assistant", "uuid": "b", "message": {"content": "y" * size, "usage": {"input_tokens": 7}}})
    path.write_bytes(b'{"type":"user"}\n' + big + b"\n" + b'{"type":"user"}\n' * 3)
    t = Transcript.load(path, only=COST_LINES)
    assert [(r.uuid, r.line, r.offset, r.length) for r in t.records] == [("b", 2, 16, len(big))]
    assert t.next_line == 6 and t.complete and not t.problems
