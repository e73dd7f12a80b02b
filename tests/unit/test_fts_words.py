"""The search index by words (issue 29.4): FTS5's `ascii` tokenizer, a vocabulary looked up by trigram for fragments
of words, and the same hits as the scan for any substring."""

from __future__ import annotations

import random
import shutil

import pytest
from builders import user
from helpers import REAL_PROJECTS, SAMPLES, requires_realdata, tree_hashes, write_jsonl

import inspector.library.shards as shards
from inspector.library.fts import SearchIndex, conditions
from inspector.library.search import Query, list_transcripts, search_file
from inspector.transcript.discovery import resolve_target


def every(idx, sql):
    return [row for k in range(idx.shards) for row in idx.db.execute(sql.format(f"t{k}."))]


def vocabulary(idx):
    """The index's own words (FTS5's), as bytes."""
    return {bytes(t) for (t,) in every(idx, "SELECT CAST(term AS BLOB) FROM {}vocab")}


def kept_words(idx):
    return set(every(idx, "SELECT word, long FROM {}words"))


EDGE_TEXTS = [
    "Hello World, naïve café_bar; x=1.5e-3 (foo-bar) BAZ123 über/ÜBER",
    "ab" * 20000 + "XYZ tail",  # one word longer than FTS5 keeps
    "é" * 20000 + " after",
    "日本語のテキスト mixed with ASCII and emoji 🙂 in between: a🙂b",
    "tabs\tand\nnew lines\r\nand NUL-free punctuation!!! ... --help -h a.b.c",
]


def _index_of(tmp_path, texts, name="s"):
    p = write_jsonl(tmp_path / "p" / f"{name}.jsonl", [user(f"u{n}", f"u{n - 1}" if n else None, t) for n, t in enumerate(texts)])
    idx = SearchIndex(tmp_path / f"{name}.sqlite")
    idx.update(p)
    return p, idx


def test_conditions_say_which_words_a_text_must_hold():
    assert conditions("forecast crash") == [("suffix", "forecast"), ("prefix", "crash")]
    assert conditions("ourl") == [("part", "ourl")]
    assert conditions(" ourl") == [("prefix", "ourl")]
    assert conditions("ourl ") == [("suffix", "ourl")]
    assert conditions("--help") == [("prefix", "help")]
    assert conditions("a.b.c") == [("suffix", "a"), ("word", "b"), ("prefix", "c")]
    assert conditions("def ") == [("suffix", "def")]
    assert conditions('"') is None and conditions("100%") == [("suffix", "100")]
    assert conditions("é") is None and conditions("café") is None  # FTS5 folds ASCII only: scanned


def test_the_words_found_here_are_the_words_fts5_keeps(tmp_path):
    """The small write's vocabulary (found in Python) is the index's own, long words and all beyond ASCII included."""
    _, idx = _index_of(tmp_path, EDGE_TEXTS)
    assert shards.text_words(EDGE_TEXTS) == vocabulary(idx)
    longs = {w for w, long in kept_words(idx) if long}
    assert longs == {"ab" * 128, "é" * 128}  # kept by their first 256 bytes, flagged


def test_a_large_write_completes_the_vocabulary_from_the_index(tmp_path, monkeypatch):
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    files, _ = list_transcripts(resolve_target(root))
    small = SearchIndex(tmp_path / "small.sqlite")
    small.refresh([f for f, _ in files], workers=1)
    monkeypatch.setattr(shards, "WORDS_INLINE", 0)  # every write is "large": left behind, then synced
    large = SearchIndex(tmp_path / "large.sqlite")
    large.refresh([f for f, _ in files], workers=1)
    assert kept_words(large) == kept_words(small) and len(kept_words(small)) > 500
    assert all(b == 0 for (b,) in every(large, "SELECT behind FROM {}wordstate"))


def test_a_vocabulary_left_behind_sends_fragments_to_the_scan_and_whole_words_to_the_index(tmp_path):
    p, idx = _index_of(tmp_path, ["the hourly forecast", "nothing here"])
    for k in range(idx.shards):
        idx.db.execute(f"UPDATE t{k}.wordstate SET behind=1")  # a writer that crashed before its sync
    assert idx.candidates(p, Query("ourl")) is None  # a fragment needs the vocabulary: the caller scans
    # "hourly" ends a word (it needs the vocabulary: not asked), "fore" starts one (FTS5's prefix query)
    assert [c[5] for c in idx.candidates(p, Query("hourly fore"))] == ["the hourly forecast"]
    assert [c[5] for c in idx.candidates(p, Query(" hourly "))] == ["the hourly forecast"]


def test_a_fragment_picks_only_the_texts_holding_a_word_with_it(tmp_path):
    p, idx = _index_of(tmp_path, ["the hourly forecast", "nothing here", "yearly", "HOURLY!"])
    assert [c[5] for c in idx.candidates(p, Query("ourl"))] == ["the hourly forecast", "HOURLY!"]
    assert idx.candidates(p, Query("zzqq")) == []
    assert [c[5] for c in idx.candidates(p, Query("ly fore"))] == ["the hourly forecast"]


def _hits(path, term, idx=None):
    return [h.as_dict() for h in search_file(path, Query(term), index=idx)]


ALPHABET = "abcdefghij ABC0123-_./:é日🙂\n\t\"'"


@pytest.mark.parametrize("seed", range(4))
def test_any_substring_is_found_as_the_scan_finds_it(tmp_path, seed):
    """Random texts (words, punctuation, letters beyond ASCII, a long word), queries cut anywhere in them: the index's
    hits are the scan's, and for a query with a letter or a digit the index picked (it did not leave it to the scan)."""
    rng = random.Random(seed)
    texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 80))) for _ in range(60)]
    texts.append("q" * 33000 + "needle" + "q" * 10)  # a fragment past FTS5's cut of a long word
    p, idx = _index_of(tmp_path, texts)
    before = tree_hashes(tmp_path / "p")
    picked = 0
    queries = ["qneedleq", "needle"]
    for _ in range(150):
        t = rng.choice(texts[:-1])
        a = rng.randrange(len(t))
        queries.append(t[a : a + rng.randint(1, 12)])
    for q in queries:
        assert _hits(p, q, idx) == _hits(p, q), repr(q)
        if idx.candidates(p, Query(q)) is not None:
            picked += 1
    assert picked > len(queries) // 3  # the index did the picking for many of them
    assert tree_hashes(tmp_path / "p") == before


@pytest.mark.realdata
@requires_realdata
def test_the_words_found_here_are_the_words_fts5_keeps_on_real_sessions(tmp_path):
    from inspector.library.shards import read_texts

    files, _ = list_transcripts(resolve_target(REAL_PROJECTS))
    idx = SearchIndex(tmp_path / "i.sqlite")
    idx.refresh([f for f, _ in files], workers=1)
    texts = [r[0] for f, _ in files for b in read_texts(str(f), 0, 0) if isinstance(b, list) for r in b if r is not None]
    assert shards.text_words(texts) == vocabulary(idx)
    assert kept_words(idx) == {shards._word_row(w) for w in vocabulary(idx)}
