"""The command line: `inspector [PATH]` and headless subcommands over the same core.

Errors are one line on stderr and a non-zero exit; a traceback only with --debug. One module per subcommand
(its parser and what it runs); `common` holds what they share.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from inspector import __version__
from inspector.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, Parser, RawDescriptionHelpFormatter


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """A subcommand's function, imported when it is called: `inspector statusline` runs after every message of a
    Claude Code session and imports only what it uses, not every other subcommand's modules."""

    def call(*args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(f"inspector.cli.{module}"), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def _command(module: str, what: str) -> tuple[Callable[[], argparse.ArgumentParser], Callable[..., int], str]:
    return _lazy(module, f"_{module}_parser"), _lazy(module, f"cmd_{module}"), what


# every subcommand: its parser, what runs it, and its line in the root's --help (listed from here)
COMMANDS: dict[str, tuple[Callable[[], argparse.ArgumentParser], Callable[..., int], str]] = {
    "stats": _command("stats", "facts about every session: records, chain, compactions, cost"),
    "tokens": _command("tokens", "the context at every turn against the thresholds; why each compaction fired"),
    "compact": _command("compact", "preview a compaction strategy from a message; save it as a new session"),
    "search": _command("search", "find text in every session, persisted tool results included"),
    "show": _command("show", "a session's timeline, or one record in full, as text or Markdown"),
    "request": _command("request", "the API requests a 2.1.3xx session sent, rebuilt from its transcript"),
    "cost": _command("cost", "what the sessions cost, by session, model, day or project"),
    "export": _command("export", "self-contained HTML pages of the sessions, with an index (no network, no script)"),
    "archive": _command("archive", "copy sessions before Claude Code's cleanup deletes them"),
    "index": _command("index", "build or check the search index"),
    "statusline": _command("statusline", "one line for Claude Code's statusLine: context, distance to compact, cost"),
    "mcp": _command("mcp", "an MCP server for Claude Code: search sessions, token story, what a compaction lost"),
    "hook": _command("hook", "Claude Code's SessionEnd and PreCompact hooks: archive the session as it ends"),
    "cleanup": _command("cleanup", "when Claude Code's cleanup deletes which session, from every settings layer"),
    "history": _command("history", "the sessions whose transcripts cleanup deleted, from Claude Code's prompt history"),
}
cmd_app = _lazy("app", "cmd_app")


def _root_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="inspector",
        description="Look inside Claude Code sessions: records, tokens, compactions.",
        epilog="subcommands:\n"
        + "\n".join(f"  {name:<10} {what}" for name, (_make, _cmd, what) in COMMANDS.items())
        + "\n\n`inspector SUBCOMMAND --help` for each; --debug (tracebacks) goes before or after the subcommand.",
        formatter_class=RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "path",
        nargs="?",
        help="a projects root, a project folder or one .jsonl transcript "
        "(default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects; the bundled samples if that has no sessions)",
    )
    p.add_argument("--version", action="version", version=f"inspector {__version__}")
    p.add_argument("--no-tui", action="store_true", help="print the stats table instead of opening the app")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _help_at(p: argparse.ArgumentParser, width: int) -> str:
    """A parser's --help as a terminal `width` columns wide would show it (argparse keeps two columns free)."""
    cls = p.formatter_class
    p.formatter_class = lambda prog: cls(prog, width=width - 2)
    return p.format_help().rstrip()


def cli_reference(width: int = 100) -> str:
    """Every subcommand's --help, as Markdown: the generated part of docs/cli.md (docs/generate.py writes it; a test
    checks it is current)."""
    parts = [f"## inspector\n\n```text\n{_help_at(_root_parser(), width)}\n```\n"]
    for name, (make, _cmd, what) in COMMANDS.items():
        parts.append(f"## inspector {name}\n\n{what[0].upper() + what[1:]}.\n\n```text\n{_help_at(make(), width)}\n```\n")
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None, out: Any = None, err: Any = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout or open(os.devnull, "w")  # a closed stdout (`inspector stats >&-`) is None
    err = err or sys.stderr or open(os.devnull, "w")
    for stream in (out, err):
        if stream in (sys.stdout, sys.stderr) and hasattr(stream, "reconfigure"):
            try:  # an output encoding that cannot show a character (PYTHONIOENCODING=latin-1) shows it as an escape
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    debug = "--debug" in argv
    if len(argv) > 1 and argv[0] == "--debug" and argv[1] in COMMANDS:  # `inspector --debug index`
        argv = argv[1:]
    try:
        if argv and argv[0] in COMMANDS:
            parser, command, _what = COMMANDS[argv[0]]
            # options may come between positional arguments too: `search TEXT --json PATH`
            return command(parser().parse_intermixed_args(argv[1:]), out, err)
        args = _root_parser().parse_args(argv)
        return cmd_app(args, out, err)
    except SystemExit as exc:  # argparse: --help, --version, usage errors
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        err.write("inspector: interrupted\n")
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    except ValueError as exc:
        if "closed file" in str(exc):  # the output was closed while writing: nobody is left to tell
            return EXIT_ERROR
        return _unexpected(exc, err, debug)
    except Exception as exc:  # noqa: BLE001 - the one place errors become a message
        return _unexpected(exc, err, debug)


def _unexpected(exc: BaseException, err: Any, debug: bool) -> int:
    """An error as one line on stderr (no credential, no terminal escapes); the traceback only with --debug."""
    if debug:
        raise exc
    from inspector.textutil import printable, redact
    from inspector.transcript.discovery import InspectorError

    def say(text: str) -> None:
        try:
            err.write(printable(redact(" ".join(text.split()))) + "\n")
        except (OSError, ValueError):
            pass  # stderr is gone too

    if isinstance(exc, InspectorError):
        say(f"inspector: {exc}")
        return EXIT_USAGE
    if isinstance(exc, OSError):
        say(f"inspector: {exc.strerror or exc}: {exc.filename or ''}")
        return EXIT_ERROR
    from inspector.compact.summarize.base import SummarizerError

    if isinstance(exc, SummarizerError):  # an API's answer (401, 404, 529...) or a network fault: expected, said as such
        say(f"inspector: the summarizer failed: {exc}")
        return EXIT_ERROR
    say(f"inspector: unexpected error: {type(exc).__name__}: {exc} (run with --debug for details)")
    return EXIT_ERROR
