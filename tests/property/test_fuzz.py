"""Fuzzing: mutated generated and real transcripts never break the loader, the commands or the app.

The examples are derandomized (a fixed seed) so CI is repeatable; set INSPECTOR_FUZZ_EXAMPLES to run
longer (e.g. 2000). Cases that once failed are kept in tests/corpus/ and replayed by every run.
"""

from __future__ import annotations

import asyncio
import io
import os
import random
import sys
from pathlib import Path

import orjson
import pytest
from helpers import CORPUS, REAL_PROJECTS, SAMPLES, jsonl, real_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.cli import main
from inspector.library.stats import session_stats
from inspector.transcript.index import Transcript
from inspector.transcript.session import Session

EXAMPLES = int(os.environ.get("INSPECTOR_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


def base_files() -> list[Path]:
    """Small transcripts to mutate: the samples' short sessions and the small real ones."""
    out = [p for p in SAMPLES.rglob("*.jsonl") if p.stat().st_size < 64_000]
    out += [p for p in real_files() if 0 < p.stat().st_size < 64_000]
    return sorted(out)


BASES = [p.read_bytes() for p in base_files()]

WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.just(1e308),
    st.just(-1),
    st.just("../../etc/passwd"),
    st.just("\x1b[31m[bold]x[/bold]"),
)
FIELDS = [
    "type",
    "uuid",
    "parentUuid",
    "timestamp",
    "message",
    "content",
    "subtype",
    "isSidechain",
    "sessionId",
    "usage",
    "compactMetadata",
    "microcompactMetadata",
    "toolUseResult",
    "logicalParentUuid",
    "id",
    "model",
    "input_tokens",
    "tool_use_id",
    "name",
    "text",
    "attachment",
    "data",
    "agentId",
    "isCompactSummary",
    "preservedSegment",
]


def set_field(obj, key, value, depth=0):
    """Set `key` to `value` wherever it occurs first (top level, message, content blocks, usage)."""
    if isinstance(obj, dict):
        if key in obj:
            obj[key] = value
            return True
        return any(set_field(v, key, value, depth + 1) for v in list(obj.values()) if depth < 6)
    if isinstance(obj, list):
        return any(set_field(v, key, value, depth + 1) for v in obj if depth < 6)
    return False


@st.composite
def mutated(draw):
    data = draw(st.sampled_from(BASES))
    lines = data.split(b"\n")
    for _ in range(draw(st.integers(1, 6))):
        op = draw(
            st.sampled_from(
                [
                    "truncate",
                    "flip",
                    "delete",
                    "duplicate",
                    "swap",
                    "wrong",
                    "deep",
                    "huge",
                    "cycle",
                    "self",
                    "dupuuid",
                    "nul",
                    "utf8",
                    "surrogate",
                    "blank",
                ]
            )
        )
        n = len(lines)
        i = draw(st.integers(0, max(0, n - 1)))
        if op == "truncate":
            blob = b"\n".join(lines)
            cut = draw(st.integers(0, len(blob)))
            lines = blob[:cut].split(b"\n")
        elif op == "flip" and lines[i]:
            k = draw(st.integers(0, len(lines[i]) - 1))
            b = bytearray(lines[i])
            b[k] ^= draw(st.integers(1, 255))
            lines[i] = bytes(b)
        elif op == "delete" and n > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap" and n > 1:
            j = draw(st.integers(0, n - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op in ("wrong", "cycle", "self", "dupuuid"):
            try:
                obj = orjson.loads(lines[i])
            except orjson.JSONDecodeError:
                continue
            if op == "wrong":
                set_field(obj, draw(st.sampled_from(FIELDS)), draw(WRONG))
            elif op == "self" and isinstance(obj, dict):
                obj["parentUuid"] = obj.get("uuid")
            elif op in ("cycle", "dupuuid") and isinstance(obj, dict):
                other = draw(st.sampled_from(lines))
                try:
                    o2 = orjson.loads(other)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(o2, dict):
                    obj["parentUuid" if op == "cycle" else "uuid"] = o2.get("uuid")
            try:
                lines[i] = orjson.dumps(obj)
            except TypeError:
                continue
        elif op == "deep":
            d = draw(st.integers(100, 5000))
            lines.insert(i, b'{"type":"user","uuid":"deep","message":' + b'{"a":' * d + b"1" + b"}" * d + b"}")
        elif op == "huge":
            lines.insert(
                i,
                b'{"type":"assistant","uuid":"h","message":{"id":"m","usage":{"input_tokens":'
                + b"9" * 400
                + b',"output_tokens":1e308},"content":[]}}',
            )
        elif op == "nul":
            lines[i] = lines[i][: len(lines[i]) // 2] + b"\x00" + lines[i][len(lines[i]) // 2 :]
        elif op == "utf8":
            lines[i] = lines[i][: len(lines[i]) // 2] + b"\xff\xfe\xc3" + lines[i][len(lines[i]) // 2 :]
        elif op == "surrogate":
            lines.insert(i, b'{"type":"user","uuid":"s","message":{"role":"user","content":"a\\ud800b\\udfffc"}}')
        elif op == "blank":
            lines.insert(i, b"   ")
    return b"\n".join(lines)


def check_file(path: Path) -> None:
    """The invariants every hostile file must keep."""
    t = Transcript.load(path)
    raw_lines = path.read_bytes().split(b"\n")
    nonblank = [k + 1 for k, line in enumerate(raw_lines) if line.strip()]
    seen = {r.line for r in t.records} | {p.line for p in t.problems if p.skipped}
    assert set(nonblank) <= seen, f"lines neither loaded nor reported: {sorted(set(nonblank) - seen)[:5]}"
    s = Session.load(path)
    d = session_stats(s)
    orjson.dumps(d)  # encodable: no lone surrogates left anywhere
    for argv in (
        ["stats", str(path)],
        ["stats", "--json", str(path)],
        ["tokens", "--json", str(path)],
        ["compact", str(path), "--strategy", "full"],
        ["compact", str(path), "--strategy", "microcompact", "--force"],
        ["compact", str(path), "--strategy", "session-memory"],
    ):
        out, err = io.StringIO(), io.StringIO()
        code = main(argv, out, err)
        assert "unexpected error" not in err.getvalue(), (argv, err.getvalue())
        assert code in (0, 2), (argv, code, err.getvalue())
        if code:
            assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue()
    # search and show read the same hostile lines: matches or not, never a crash, never an escape printed
    for argv, ok in (
        (["search", "a", str(path)], (0, 1)),
        (["search", '"\n\\', str(path), "--json"], (0, 1)),
        (["show", str(path), "--all"], (0, 2)),  # 2: no line could be read ("not a JSONL transcript"), one line
        (["show", str(path), "--all", "--markdown"], (0, 2)),
        (["show", str(path), "--line", "1"], (0, 2)),
        (["show", str(path), "--line", "2", "--raw"], (0, 2)),
    ):
        out, err = io.StringIO(), io.StringIO()
        code = main(argv, out, err)
        assert "unexpected error" not in err.getvalue(), (argv, err.getvalue())
        assert code in ok, (argv, code, err.getvalue())
        assert "\x1b" not in out.getvalue(), argv


@FUZZ
@given(mutated())
def test_mutated_transcripts(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("fz") / "proj" / "s.jsonl"
    p.parent.mkdir()
    p.write_bytes(data)
    try:
        check_file(p)
    except Exception:
        CORPUS.mkdir(exist_ok=True)
        name = f"case-{abs(hash(data)) % 10**10}.jsonl"
        (CORPUS / name).write_bytes(data)  # keep it: replayed by test_corpus from now on
        raise


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpus(tmp_path, path):
    p = tmp_path / "proj" / path.name
    p.parent.mkdir()
    p.write_bytes(path.read_bytes())
    check_file(p)


def test_ten_million_character_line(tmp_path):
    p = tmp_path / "proj" / "big-line.jsonl"
    p.parent.mkdir()
    big = "x" * 10_000_000
    p.write_bytes(
        orjson.dumps(
            {
                "type": "user",
                "uuid": "u1",
                "parentUuid": None,
                "timestamp": "2026-01-01T00:00:00Z",
                "message": {"role": "user", "content": big},
            }
        )
        + b"\n"
        + orjson.dumps(
            {
                "type": "assistant",
                "uuid": "a1",
                "parentUuid": "u1",
                "timestamp": "2026-01-01T00:00:01Z",
                "message": {
                    "id": "m",
                    "model": "claude-sonnet-4-6",
                    "content": [{"type": "text", "text": "ok"}],
                    "usage": {"input_tokens": 5, "output_tokens": 1},
                },
            }
        )
        + b"\n"
    )
    check_file(p)
    s = Session.load(p)
    assert s.records[0].content_chars == 10_000_000


@pytest.mark.parametrize("nest", [300, 700, 1000])
def test_a_kept_record_nested_deep_or_with_a_huge_integer_is_saved_as_it_was(tmp_path, nest):
    """`compact --write` of a session whose kept records nest 254+ deep (orjson's limit when writing), 600+ (a deep
    copy's), or hold a 30-digit integer: 'unexpected error' before; now saved, the record's value unchanged."""
    import json

    deep: object = "leaf"
    for _ in range(nest):
        deep = [deep]
    for version, strategy in (("2.1.88", "full"), ("2.1.332", "compact")):
        recs, parent = [], None
        for k in range(6):
            u = {
                "type": "user",
                "uuid": f"u{k}",
                "parentUuid": parent,
                "timestamp": f"2026-01-01T00:0{k}:00Z",
                "sessionId": "S",
                "version": version,
                "cwd": "/w",
                "message": {"role": "user", "content": f"task {k} " + "x" * 4000},
            }
            a = {
                "type": "assistant",
                "uuid": f"a{k}",
                "parentUuid": f"u{k}",
                "timestamp": f"2026-01-01T00:0{k}:30Z",
                "sessionId": "S",
                "version": version,
                "message": {
                    "id": f"m{k}",
                    "model": "claude-sonnet-4-6",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "done"}],
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                },
            }
            recs += [u, a]
            parent = f"a{k}"
        recs[-2]["toolUseResult"] = deep
        recs[-2]["message"]["content"] = [{"type": "text", "text": "task 5"}, {"type": "text", "text": "n", "extra": deep}]
        recs[-2]["bigNumber"] = int("9" * 30)
        p = tmp_path / version / "proj" / "s.jsonl"
        p.parent.mkdir(parents=True)
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(5000)
        try:
            p.write_text("".join(json.dumps(r) + "\n" for r in recs))
        finally:
            sys.setrecursionlimit(old)
        before = p.read_bytes()
        target = tmp_path / version / "out" / "saved.jsonl"
        target.parent.mkdir()
        out, err = io.StringIO(), io.StringIO()
        code = main(["compact", str(p), "--strategy", strategy, "--write", "--out", str(target)], out, err)
        assert code == 0 and "unexpected" not in err.getvalue(), err.getvalue()
        saved = Session.load(target)
        kept = [saved.body(i) for i, r in enumerate(saved.records) if r.uuid == "u5"]
        original = Session.load(p)
        assert (
            kept
            and kept[0]["bigNumber"]
            == next(original.body(i) for i, r in enumerate(original.records) if r.uuid == "u5")["bigNumber"]
        )  # as read (as JavaScript reads it)
        v: object = kept[0]["toolUseResult"]
        depth = 0
        while isinstance(v, list):
            v, depth = v[0], depth + 1
        assert (depth, v) == (nest, "leaf")
        assert p.read_bytes() == before


def test_tui_opens_hostile_files(tmp_path):
    """A handful of mutated files, each opened in the app (Pilot)."""
    from inspector.transcript.discovery import Target
    from inspector.tui.app import InspectorApp
    from inspector.tui.screens.session import SessionScreen

    rng = random.Random(7)
    cases = []
    for k in range(6):
        data = BASES[k % len(BASES)]
        b = bytearray(data)
        for _ in range(20):
            b[rng.randrange(len(b))] = rng.randrange(256)
        cases.append(bytes(b))
    cases.append(b'{"type":"user","uuid":"u","message":{"role":"user","content":"\\u001b]52;c;SGVsbG8=\\u0007 [red]x[/red]"}}\n')
    cases.append(b"\x00\x00\x00\n{\n")

    async def go(path: Path) -> None:
        app = InspectorApp(Target("file", path))
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(4):
                await app.workers.wait_for_complete()
                await pilot.pause()
            assert isinstance(app.screen, SessionScreen)
            await pilot.press("down", "down", "r", "y", "end", "a")
            await pilot.pause()

    for k, data in enumerate(cases):
        p = tmp_path / f"p{k}" / "s.jsonl"
        p.parent.mkdir()
        p.write_bytes(data)
        asyncio.run(go(p))


_ = REAL_PROJECTS


# -- hostile trees: links, unreadable files, deep folders, over-long lines ---------------------------

TREE_SECRET = "TREE-SECRET-77"
LEVELS = ["session", "tool-results", "subagents", "session-memory", "subagents/nested", "tool-results/file", "subagents/file"]


@st.composite
def tree_mutations(draw):
    muts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["link", "unreadable", "deep", "longline"]))
        muts.append((kind, draw(st.sampled_from(LEVELS)), draw(st.integers(0, 5))))
    return muts


class _Blocked:
    """Files made unreadable for the duration (as chmod 000 would be for a user that is not root)."""

    def __init__(self, paths):
        import builtins

        self.paths = {os.path.realpath(p) for p in paths}
        self.builtins = builtins

    def __enter__(self):
        import io as iomod

        real_open, real_os_open = self.builtins.open, os.open
        blocked = self.paths

        def check(p):
            if not isinstance(p, int) and os.path.realpath(os.fspath(p)) in blocked:
                raise PermissionError(13, "Permission denied", os.fspath(p))

        def fake_open(f, *a, **k):
            check(f)
            return real_open(f, *a, **k)

        def fake_os_open(p, *a, **k):
            if k.get("dir_fd") is None:
                check(p)
            return real_os_open(p, *a, **k)

        self.saved = (real_open, real_os_open, iomod.open)
        self.builtins.open, os.open, iomod.open = fake_open, fake_os_open, fake_open
        return self

    def __exit__(self, *exc):
        import io as iomod

        self.builtins.open, os.open, iomod.open = self.saved[0], self.saved[1], self.saved[2]


def _apply(root: Path, src: Path, muts, secret_dir: Path) -> list[Path]:
    """Mutate the copied session's folder; returns the files to make unreadable."""
    import shutil

    sdir = src.with_suffix("")
    blocked: list[Path] = []
    for kind, level, k in muts:
        if level == "session":
            target = sdir
        elif level.endswith("/file"):
            folder = sdir / level.split("/")[0]
            files = (
                sorted(p for p in folder.iterdir() if p.is_file() and not p.is_symlink())
                if folder.is_dir() and not folder.is_symlink()
                else []
            )
            target = files[k % len(files)] if files else None
        elif level == "subagents/nested":
            target = sdir / "subagents" / "workflows" / f"wf{k}"
        else:
            target = sdir / level
        if target is None:
            continue
        if kind == "link":
            if target.is_symlink() or not target.parent.is_dir() or target.parent.is_symlink():
                continue
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
            target.symlink_to(secret_dir, target_is_directory=True) if not level.endswith("/file") else target.symlink_to(
                secret_dir / "toolu_x.txt"
            )
        elif kind == "unreadable":
            blocked += [
                p
                for p in (
                    [target]
                    if target.is_file()
                    else list(target.rglob("*"))
                    if target.is_dir() and not target.is_symlink()
                    else []
                )
                if p.is_file()
            ]
            if level == "session":
                blocked.append(src)
        elif kind == "deep" and target.is_dir() and not target.is_symlink():
            d = target
            for n in range(40):
                d = d / "d"
            d.mkdir(parents=True, exist_ok=True)
            (d / "agent-deep.jsonl").write_text(f'{{"type":"user","uuid":"dd","message":{{"content":"{TREE_SECRET}"}}}}\n')
        elif kind == "longline":
            with open(src, "ab") as f:
                f.write(b'{"type":"user","uuid":"long","message":{"content":"' + b"y" * (5_000 + 1000 * k) + b'"}}\n')
    return blocked


@FUZZ
@given(tree_mutations())
def test_hostile_trees(tmp_path_factory, muts):
    """A sample session whose folder has links, unreadable files, deep folders and over-long lines at random
    places: every command ends with 0, 1 or 2 and one line of error at most, never reads through a link, never
    prints an escape, and never changes an original."""
    import shutil

    from helpers import tree_hashes

    import inspector.transcript.index as index_mod

    base = tmp_path_factory.mktemp("tree")
    root = base / "projects"
    shutil.copytree(SAMPLES, root)
    secret = base / "secret"
    secret.mkdir()
    (secret / "toolu_x.txt").write_text(TREE_SECRET)
    (secret / "summary.md").write_text(f"# Current State\n{TREE_SECRET}\n")
    (secret / "agent-s.jsonl").write_text(f'{{"type":"user","uuid":"s1","message":{{"content":"{TREE_SECRET}"}}}}\n')
    src = next(p for p in (root / "-home-ann-work-weatherly").glob("*.jsonl") if (p.with_suffix("") / "session-memory").is_dir())
    blocked = _apply(root, src, muts, secret)
    before = tree_hashes(root)
    saved = index_mod.MAX_LINE  # (search reads it from there when it reads a file)
    index_mod.MAX_LINE = 4_000
    try:
        with _Blocked(blocked):
            for argv in (
                ["stats", "--json", "--no-cache", str(root)],
                ["tokens", "--json", str(root)],
                ["search", TREE_SECRET, str(root), "--json"],
                ["show", str(src), "--line", "19", "--full-output"],
                ["show", str(src), "--all"],
                [
                    "compact",
                    str(src),
                    "--strategy",
                    "session-memory",
                    "--min-tokens",
                    "1000",
                    "--max-tokens",
                    "3000",
                    "--write",
                    "--out",
                    str(base / "out" / "new.jsonl"),
                ],
            ):
                out, err = io.StringIO(), io.StringIO()
                code = main(argv, out, err)
                assert code in (0, 1, 2), (argv, code, err.getvalue())
                assert "unexpected error" not in err.getvalue() and "Traceback" not in err.getvalue(), (argv, err.getvalue())
                assert TREE_SECRET not in out.getvalue() or argv[0] == "search" and not jsonl(out.getvalue()), argv
                assert "\x1b" not in out.getvalue() + err.getvalue()
    finally:
        index_mod.MAX_LINE = saved
    for p in (base / "out").rglob("*") if (base / "out").exists() else ():
        if p.is_file():
            assert TREE_SECRET not in p.read_text(errors="replace")
    assert tree_hashes(root) == before
