"""The small formatters the stats table and the browser share."""

from __future__ import annotations

import pytest

from inspector.textutil import human_duration, human_size, human_span, human_tokens, human_when, printable


@pytest.mark.parametrize(
    "first, last, expect",
    [
        ("2026-01-01T10:00:00Z", "2026-01-01T10:12:00Z", "12m"),
        ("2026-01-01T10:00:00Z", "2026-01-01T11:30:00Z", "1.5h"),
        ("2026-01-01T10:00:00Z", "2026-01-02T20:00:00Z", "34.0h"),
        ("2025-08-16T01:00:00Z", "2025-12-16T01:00:00Z", "122d"),  # resumed months later: not "2928.0h"
        ("2026-01-01T10:00:00Z", "not a time", None),
        (None, "2026-01-01T10:00:00Z", None),
    ],
)
def test_human_duration(first, last, expect):
    assert human_duration(first, last) == expect


def test_other_formatters():
    assert [human_size(n) for n in (None, 117, 2048, 5 << 20, 3 << 40)] == ["-", "117 B", "2.0 KB", "5.0 MB", "3072.0 GB"]
    assert [human_tokens(n) for n in (None, 999, 167_000)] == ["-", "999", "167.0k"]
    assert human_when("2026-02-10T22:57:03.123Z") == "2026-02-10 22:57" and human_when("yesterday") is None
    assert printable("a\x1b[31mred\x07\nb") == "ared\\x07 b"  # a colour code dropped, the bell shown
    assert printable("\x1b[2mdim\x1b[0m \x1b]0;title\x07 \x1b[2J") == "dim \\x1b]0;title\\x07 \\x1b[2J"
    assert human_span(40) == "40 s" and human_span(12 * 60) == "12 min" and human_span(3.5 * 3600) == "3.5 h"
    assert human_span(419_967 * 60) == "292 days"


def test_json_that_survives_paths_which_are_not_utf8():
    from inspector.textutil import json_dumps, json_loads

    plain = {"path": "/home/ann/a.jsonl", "n": 3}
    assert json_dumps(plain) == b'{"path":"/home/ann/a.jsonl","n":3}' and json_loads(json_dumps(plain)) == plain
    odd = ["/tmp/proj\udcff/s.jsonl"]  # how Python names a byte that is not UTF-8
    assert json_dumps(odd) == b'["/tmp/proj\\udcff/s.jsonl"]' and json_loads(json_dumps(odd)) == odd
    assert json_dumps(odd, indent=True).startswith(b'[\n  "') and json_loads(json_dumps(odd, indent=True)) == odd


def test_blake2b_is_hashlib_s():
    """The digests the cache keeps (a transcript's head, a response's key) are hashlib's blake2b, whichever module
    makes them: an index or a statusline state written before stays valid."""
    import hashlib

    from inspector.textutil import blake2b

    for data in (b"", b"x", bytes(range(256)) * 40):
        for size in (8, 16):
            assert blake2b(data, size).digest() == hashlib.blake2b(data, digest_size=size).digest()
