"""`inspector stats`: output, errors as one line, default root and samples, cache, no writes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import orjson
import pytest
from builders import assistant, user
from helpers import ROOT, SAMPLES, jsonl, sample_session, tree_hashes, write_jsonl
from helpers import run_cli as run

from inspector.library.stats import StatsCache, cache_dir, collect_stats
from inspector.transcript.discovery import resolve_target
from inspector.transcript.session import Session


def test_stats_json_schema_on_samples():
    before = tree_hashes(SAMPLES)
    code, out, err = run("stats", str(SAMPLES), "--json")
    assert code == 0, err
    data = jsonl(out)
    assert len(data) == 4
    for s in data:
        assert set(s) >= {
            "path",
            "session_id",
            "title",
            "model",
            "version",
            "records",
            "chain",
            "compactions",
            "context",
            "persisted_outputs",
            "subagents",
        }
        assert set(s["records"]) >= {"total", "by_type", "malformed"}
        assert set(s["chain"]) >= {"length", "leaf_uuid", "branches"}
        assert set(s["context"]) == {"peak_tokens", "last_tokens"}
        assert set(s["persisted_outputs"]) == {"markers", "files"}
        for c in s["compactions"]:
            assert set(c) >= {"uuid", "kind", "trigger", "pre_tokens", "post_tokens", "tokens_saved"}
            assert c["kind"] in ("compact", "microcompact")
        assert sum(s["records"]["by_type"].values()) == s["records"]["total"]
    assert tree_hashes(SAMPLES) == before  # reading never writes beside the transcripts


def test_table_output_is_readable_and_escapes_control_codes(tmp_path):
    p = write_jsonl(
        tmp_path / "p" / "s1.jsonl",
        [user("u1", None, "make it \x1b[31mred\x1b[0m please \x1b]0;pwned\x07"), assistant("a1", "u1")],
    )
    code, out, _ = run("stats", str(p))
    assert code == 0
    # colour codes are dropped (they only style captured output); any other escape is shown, never obeyed
    assert "\x1b" not in out and "make it red please" in out and "\\x1b]0;pwned\\x07" in out
    assert "1 session(s) in 1 project(s)" in out


@pytest.mark.parametrize(
    "make, expect",
    [
        (lambda d: d / "missing.jsonl", "no such file or directory"),
        (lambda d: (d / "notes.txt").write_text("hello") and d / "notes.txt", "not a JSONL transcript"),
        (lambda d: (d / "bad.jsonl").write_text("hello\nworld\n") and d / "bad.jsonl", "no line of"),
    ],
)
def test_errors_are_one_line_without_traceback(tmp_path, make, expect):
    path = make(tmp_path)
    code, out, err = run("stats", str(path))
    assert code != 0 and out == ""
    assert expect in err and err.count("\n") == 1 and "Traceback" not in err


def test_unreadable_file_is_one_line(tmp_path, monkeypatch):
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u1", None)])

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied", str(p))

    monkeypatch.setattr("inspector.transcript.index.open", denied, raising=False)
    code, _, err = run("stats", str(p), "--no-cache")
    assert code == 1 and "Permission denied" in err and err.count("\n") == 1


def test_subprocess_entry_point_and_module():
    r = subprocess.run([sys.executable, "-m", "inspector", "stats", "/definitely/not/here"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "inspector", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and "inspector" in r.stdout


def test_default_root_falls_back_to_samples_with_notice():
    code, out, err = run("stats")
    assert code == 0
    assert "no Claude Code sessions under" in err and "sample" in err
    assert "Fix forecast crash on empty hourly data" in out


def test_default_root_is_claude_config_dir(isolated_env):
    proj = isolated_env / "claude" / "projects" / "-w-proj"
    write_jsonl(proj / "abc.jsonl", [user("u1", None, "hello from config dir"), assistant("a1", "u1")])
    code, out, err = run("stats", "--json")
    assert code == 0 and err == ""
    [s] = jsonl(out)
    assert s["title"] == "hello from config dir" and s["project"] == "/w/proj"


def test_main_command_without_subcommand_runs_the_main_job(isolated_env):
    code, out, err = run()
    assert code == 0 and "weatherly" in out


def test_cold_stats_in_several_processes_fill_the_cache(tmp_path):
    for k in range(10):
        write_jsonl(tmp_path / "root" / "-w" / f"s{k}.jsonl", [user(f"u{k}", None, f"session {k}"), assistant(f"a{k}", f"u{k}")])
    target = resolve_target(tmp_path / "root")
    c1 = StatsCache(cache_dir())
    first = collect_stats(target, c1, workers=2)  # the workers compute and write the entries
    assert [s["title"] for s in first] == [f"session {k}" for k in range(10)] and (c1.hits, c1.misses) == (0, 10)
    c2 = StatsCache(cache_dir())
    assert collect_stats(target, c2, workers=2) == first and (c2.hits, c2.misses) == (10, 0)


def test_cold_stats_in_several_processes_go_in_batches_and_name_a_session_that_cannot_be_read(tmp_path):
    """The pool gets the sessions in batches (biggest first, up to BATCH_FILES and BATCH_BYTES each); a session that
    cannot be read costs only itself: left out and named (skip_errors), or raised (without)."""
    from inspector.library.stats import BATCH_FILES, _batches, _compute

    paths = []
    for k in range(40):
        p = tmp_path / "root" / "-w" / f"s{k:02}.jsonl"
        write_jsonl(p, [user(f"u{k}", None, f"session {k} " + "x" * (k * 50))])
        paths.append(p)
    gone = tmp_path / "root" / "-w" / "gone.jsonl"  # listed, then deleted before it was read
    todo = [(k, p, [], None) for k, p in enumerate([*paths[:17], gone, *paths[17:]])]
    sizes = {n: p.stat().st_size if p.exists() else 0 for n, p, _, _ in todo}
    order = sorted(todo, key=lambda t: -sizes[t[0]])
    batches = _batches(order, sizes)
    assert [t for b in batches for t in b] == order and max(len(b) for b in batches) == BATCH_FILES and len(batches) == 3
    errors: list[tuple[int, OSError]] = []
    got = dict(_compute(todo, 2, skip_errors=True, errors=errors))
    assert sorted(got) == [n for n, p, _, _ in todo if p != gone] and [n for n, _ in errors] == [17]
    assert all(got[n]["title"].split()[:2] == ["session", str(int(p.stem[1:]))] for n, p, _, _ in todo if p != gone)
    assert isinstance(errors[0][1], FileNotFoundError)
    with pytest.raises(FileNotFoundError):
        dict(_compute(todo, 2))


def test_a_config_folder_given_as_path_means_its_projects(tmp_path):
    cfg = tmp_path / "dotclaude"
    write_jsonl(cfg / "projects" / "-w-proj" / "a.jsonl", [user("u1", None, "typed in a config folder")])
    (cfg / "todos").mkdir()
    target = resolve_target(cfg)
    assert (target.kind, target.path) == ("root", cfg / "projects")
    code, out, err = run("stats", "--json", str(cfg))
    assert code == 0 and [s["title"] for s in jsonl(out)] == ["typed in a config folder"]


def test_cache_hits_and_invalidation(tmp_path):
    proj = tmp_path / "root" / "-w"
    a = write_jsonl(proj / "a.jsonl", [user("u1", None), assistant("a1", "u1")])
    write_jsonl(proj / "b.jsonl", [user("u2", None)])
    target = resolve_target(tmp_path / "root")
    c1 = StatsCache(cache_dir())
    first = collect_stats(target, c1)
    assert (c1.hits, c1.misses) == (0, 2)
    c2 = StatsCache(cache_dir())
    assert collect_stats(target, c2) == first and (c2.hits, c2.misses) == (2, 0)
    with open(a, "ab") as f:
        f.write(orjson.dumps(user("u3", "a1")) + b"\n")
    c3 = StatsCache(cache_dir())
    third = collect_stats(target, c3)
    assert (c3.hits, c3.misses) == (1, 1)
    assert third[0]["records"]["total"] == 3
    assert str(cache_dir()).startswith(os.environ["XDG_CACHE_HOME"])


def test_stats_are_kept_in_the_database_one_row_per_session(tmp_path):
    import sqlite3

    for k in range(3):
        write_jsonl(tmp_path / "root" / "-w" / f"s{k}.jsonl", [user(f"u{k}", None, f"session {k}")])
    old = cache_dir() / "stats-v5"  # what earlier versions wrote: one JSON file per session
    old.mkdir(parents=True)
    (old / "0123.json").write_text("{}")
    c = StatsCache(cache_dir())
    first = collect_stats(resolve_target(tmp_path / "root"), c)
    c.close()
    db = sqlite3.connect(cache_dir() / "index.sqlite")
    rows = dict(db.execute("SELECT path, stats FROM stats"))
    db.close()
    assert sorted(rows) == sorted(os.fsencode(s["path"]) for s in first)
    assert [orjson.loads(rows[os.fsencode(s["path"])])["title"] for s in first] == [s["title"] for s in first]
    assert not old.exists() and not list(cache_dir().rglob("*.json"))


def test_unwritable_cache_is_ignored(tmp_path):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    p = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u1", None)])
    st = collect_stats(resolve_target(p), StatsCache(blocker))
    assert st[0]["records"]["total"] == 1


def test_core_never_imports_textual_or_rich():
    code = (
        "import sys, inspector.transcript, inspector.tokens, inspector.library.stats, inspector.samplegen, inspector.cli,"
        " inspector.library.search, inspector.compact, inspector.edit, inspector.claude.versions;"
        f"from inspector.cli import main; import io; main(['stats', '--json', {str(SAMPLES)!r}], io.StringIO(), io.StringIO());"
        f"main(['search', 'IndexError', {str(SAMPLES)!r}], io.StringIO(), io.StringIO());"
        "bad = [m for m in ('textual', 'rich') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_search_imports_only_what_a_lookup_needs(tmp_path):
    """`inspector search` starts in Python's time and the few libraries a lookup needs (issue 29.5): neither the app's
    (Textual, Rich) nor the token counter's (tiktoken) nor the summarizer's (anthropic) nor the MCP server's, nor
    inspector's compaction and token modules, nor OpenSSL (hashlib's: the index's digests are made without it); with no
    index yet and with one (a second search)."""
    code = (
        "import sys, io; from inspector.cli import main;"
        f"main(['search', 'IndexError', {str(SAMPLES)!r}], io.StringIO(), io.StringIO());"
        "heavy = ('textual', 'rich', 'tiktoken', 'tiktoken_ext', 'anthropic', 'mcp', 'inspector.tui', 'inspector.compact',"
        " 'inspector.tokens', 'multiprocessing', '_hashlib');"
        "bad = [m for m in heavy if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for attempt in ("no index yet", "the index built"):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
        assert r.returncode == 0, f"{attempt}: {r.stdout}{r.stderr}"
    assert (tmp_path / "cache" / "inspector" / "index.sqlite").exists()
    # a word the index knows is nowhere: nothing to read, so no JSON decoder, no record, no stats (the titles); on
    # folders last changed a minute ago (a folder changed in the last 2 s is looked at again)
    root = tmp_path / "projects"
    shutil.copytree(SAMPLES, root)
    when = time.time() - 60
    for d, _dirs, _files in os.walk(root):
        os.utime(d, (when, when))
    absent = (
        code.replace(repr(str(SAMPLES)), repr(str(root)))
        .replace("'IndexError'", "'zq9absentword'")
        .replace(
            "'_hashlib');",
            "'_hashlib', 'orjson', 'inspector.transcript.records', 'inspector.library.stats', 'dataclasses',"
            " 'shutil');",  # (argparse's help formatter imports shutil for the terminal's width: cli.common finds it)
        )
    )
    assert absent.count("zq9absentword") == 1 and absent.count("orjson") == 1 and str(root) in absent
    for attempt in ("indexed", "looked up"):
        r = subprocess.run([sys.executable, "-c", absent], capture_output=True, text=True, cwd=ROOT, env=env)
        assert r.returncode == 0 or attempt == "indexed", f"{attempt}: {r.stdout}{r.stderr}"


def test_show_prints_the_timeline_and_one_record_in_full(workdir, tmp_path):
    path = sample_session("Fix forecast", workdir)
    code, out, err = run("show", str(path))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Fix forecast crash on empty hourly data" and "the conversation; --all for every record" in lines[1]
    chain_rows = [ln for ln in lines[3:] if ln.strip()]
    code, every, _ = run("show", str(path), "--all")
    assert len([ln for ln in every.splitlines()[3:] if ln.strip()]) == len(Session.load(path).records) > len(chain_rows)
    row = next(ln for ln in chain_rows if "[persisted]" in ln)
    line = int(row.split()[0])
    code, out, _ = run("show", str(path), "--line", str(line))
    assert code == 0 and f"line {line}" in out and "── tool result Bash" in out and "(--full-output prints it)" in out
    assert "IndexError" not in out.split("toolUseResult")[0]  # only in the file persisted beside the session, not in the preview
    code, full, _ = run("show", str(path), "--line", str(line), "--full-output")
    assert (
        code == 0 and "── full output toolu_" in full and "IndexError: list index out of range" in full.split("── full output")[1]
    )
    code, raw, _ = run("show", str(path), "--line", str(line), "--raw")
    assert '"tool_use_id"' in raw
    uuid = next(r.uuid for r in Session.load(path).records if r.uuid)
    code, by_uuid, _ = run("show", str(path), "--uuid", uuid)
    assert code == 0 and f"uuid {uuid}" in by_uuid


def test_show_says_why_a_line_has_no_record(tmp_path):
    path = write_jsonl(tmp_path / "p" / "s.jsonl", [user("u1", None, "hi \x1b[2J there"), b"{broken", b"", user("u2", "u1")])
    code, out, _ = run("show", str(path), "--line", "1")
    assert code == 0 and "\x1b" not in out and "hi \\x1b[2J there" in out
    code, _, err = run("show", str(path), "--line", "2")
    assert code == 2 and "no record on line 2" in err and "line 2" in err
    code, _, err = run("show", str(path), "--line", "3")
    assert code == 2 and "blank, or past the end" in err
    code, _, err = run("show", str(path), "--uuid", "nope")
    assert code == 2 and "no record nope: no uuid is or starts with it" in err
    code, _, err = run("show", str(tmp_path / "p"))
    assert code == 2 and "not a folder" in err


def test_show_markdown_exports_the_conversation_safely(tmp_path):
    recs = [
        user("u1", None, "here is code:\n```py\nx = 1\n```\nand \x1b[31mred\x1b[0m", sec=0),
        assistant(
            "a1",
            "u1",
            [
                {"type": "text", "text": "**Done.** <script>alert(1)</script>"},
                {"type": "thinking", "thinking": "line one\nline two", "signature": "s"},
            ],
            sec=1,
        ),
    ]
    path = write_jsonl(tmp_path / "p" / "s.jsonl", recs)
    code, out, err = run("show", str(path), "--markdown")
    assert code == 0, err
    assert out.startswith("# here is code:") and out.count("\n### ") == 2
    fence = next(ln for ln in out.splitlines() if ln.startswith("````"))  # longer than the ``` inside the prompt
    assert fence == "````" and "```py\nx = 1\n```" in out
    assert "**Done.** &lt;script>alert(1)&lt;/script>" in out and "<script>" not in out
    assert "> line one\n> line two" in out and "\x1b" not in out and "and red" in out
    code, one, _ = run("show", str(path), "--markdown", "--line", "2")
    assert code == 0 and one.count("### ") == 1 and "**Done.**" in one


def test_a_session_folder_that_appears_invalidates_its_cached_stats(tmp_path):
    proj = tmp_path / "root" / "-w"
    a = write_jsonl(proj / "a.jsonl", [user("u1", None), assistant("a1", "u1")])
    write_jsonl(proj / "b.jsonl", [user("u2", None)])
    target = resolve_target(tmp_path / "root")
    first = collect_stats(target, StatsCache(cache_dir()))
    assert [s["subagents"] for s in first] == [0, 0]
    write_jsonl(a.with_suffix("") / "subagents" / "agent-x1.jsonl", [user("x1", None, "a subagent")])
    c = StatsCache(cache_dir())
    again = collect_stats(target, c)
    assert (c.hits, c.misses) == (1, 1) and [s["subagents"] for s in again] == [1, 0]


def test_stats_without_worker_processes_are_computed_in_one(tmp_path, monkeypatch):
    import concurrent.futures

    for k in range(10):
        write_jsonl(tmp_path / "root" / "-w" / f"s{k}.jsonl", [user(f"u{k}", None, f"session {k}")])

    def broken(*a, **k):
        raise OSError("no semaphores here")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", broken)
    st = collect_stats(resolve_target(tmp_path / "root"), None, workers=2)
    assert [s["title"] for s in st] == [f"session {k}" for k in range(10)]


@pytest.mark.parametrize("argv", [("stats",), ("tokens",), ("cost",), ("search", "needle"), ("archive", "--to", "ARCHIVE")])
def test_a_project_folder_that_cannot_be_read_is_named_not_skipped_in_silence(tmp_path, monkeypatch, argv):
    """A project folder without read permission (as a user who is not root meets it: simulated, the suite may run as
    root): every command over the root says it could not read it, and goes on with the rest."""
    import os as _os

    from builders import assistant, user

    root = tmp_path / "projects"
    write_jsonl(root / "-ok" / "s.jsonl", [user("u1", None, "a needle"), assistant("a1", "u1")])
    write_jsonl(root / "-locked" / "t.jsonl", [user("v1", None, "hidden needle"), assistant("b1", "v1")])
    locked = str(root / "-locked")
    real = _os.scandir

    def scandir(path="."):
        if _os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real(path)

    monkeypatch.setattr(_os, "scandir", scandir)
    args = [a.replace("ARCHIVE", str(tmp_path / "archive")) for a in argv]
    code, out, err = run(args[0], *args[1:], str(root)) if args[0] != "search" else run("search", args[1], str(root))
    assert "cannot read 1 folder(s)" in err and "-locked: Permission denied" in err, (argv, err)


def test_the_root_help_lists_every_subcommand_and_debug_goes_before_one(tmp_path):
    """`inspector --help` listed 5 of the 9 subcommands; `inspector --debug index` was refused."""
    from inspector.cli import COMMANDS, _root_parser

    listed = _root_parser().format_help().split("subcommands:")[1]
    for name in COMMANDS:
        assert f"\n  {name} " in listed, name
    code, out, err = run("--debug", "index", "--status")
    assert code == 0 and "indexed" in out, err
    for name, (make, _cmd, _what) in COMMANDS.items():  # every subcommand takes --debug as its own option too
        assert "--debug" in make().format_help(), name


def test_the_cli_reference_in_the_docs_is_the_parsers_own():
    """docs/cli.md's options are generated from the parsers (python docs/generate.py), never typed."""
    from conformance.docblocks import read_block
    from inspector.cli import cli_reference

    assert read_block(ROOT / "docs" / "cli.md", "cli") == cli_reference(), "run python docs/generate.py"


def test_the_readme_is_short_and_names_every_subcommand():
    from inspector.cli import COMMANDS

    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= 12 * 1024
    for name in COMMANDS:
        assert f"`inspector {name}`" in readme, name
    for link in (
        "docs/guide.md",
        "docs/cli.md",
        "docs/architecture.md",
        "docs/fidelity.md",
        "docs/conformance.md",
        "docs/benchmarks.md",
        "docs/robustness.md",
    ):
        assert f"]({link})" in readme and (ROOT / link).is_file(), link


@pytest.mark.parametrize("command", ["stats", "tokens", "show", "cost", "request", "compact"])
@pytest.mark.parametrize("body", [bytes(range(256)) * 4, b"hello world\nthis is text\n"])
def test_a_file_that_is_not_jsonl_is_one_rule_for_every_command(tmp_path, command, body):
    """A binary or plain-text file named .jsonl: stats said 'not a JSONL transcript' and exited 2; tokens, show and
    cost treated it as an empty session and exited 0. Every command now says the first."""
    p = tmp_path / "p" / "x.jsonl"
    p.parent.mkdir()
    p.write_bytes(body)
    code, out, err = run(command, str(p))
    assert code == 2 and err.count("\n") == 1 and "not a JSONL transcript: no line of" in err, (command, err)
    assert p.read_bytes() == body


HEAVY = ("textual", "rich", "tiktoken", "anthropic", "mcp", "httpx", "pydantic")


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "IndexError"],
        ["search", "no-such-word-anywhere"],
        ["stats", "--no-cache"],
        ["cost", "--by", "day"],
        ["cleanup"],
        ["show", "--line", "3"],
    ],
)
def test_a_command_imports_only_what_it_uses(argv, tmp_path):
    """Start-up is most of a short command's time (issue 29.5): the commands a person or a script runs often never
    import the app's toolkit, the tokenizer, the API client or the MCP server. Measured by the interpreter's own
    import log of a real run."""
    target = str(sample_session("Fix forecast", SAMPLES)) if argv[0] == "show" else str(SAMPLES)
    full = [*argv, target] if argv[0] != "show" else ["show", target, *argv[1:]]
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "inspector", *full],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    assert r.returncode in (0, 1), r.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert loaded, "no import log"
    assert sorted(m for m in HEAVY if m in loaded) == []


@pytest.mark.parametrize("columns", ["60", "140"])
def test_help_fits_the_terminal_width_found_without_shutil(columns):
    """--help wraps at the terminal's width ($COLUMNS first, as shutil.get_terminal_size reads it), found without
    importing shutil."""
    env = {**os.environ, "COLUMNS": columns}
    r = subprocess.run([sys.executable, "-m", "inspector", "search", "--help"], capture_output=True, text=True, cwd=ROOT, env=env)
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and max(map(len, lines)) <= int(columns)
    assert max(map(len, lines)) > int(columns) - 20  # the width is used, not a narrower default
