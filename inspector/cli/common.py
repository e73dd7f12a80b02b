"""What every subcommand shares: exit codes, the report and JSON writers, argument types, the what-if settings from
flags, the notices of unreadable folders, the consent to send."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NoReturn

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _report(lines: list[str]) -> str:
    """A report's lines as printed: transcript text in them (titles, models, times, paths) never acts on
    the terminal. Every report goes through here, whatever each field already did."""
    from inspector.textutil import printable

    return "".join(printable(line) + "\n" for line in lines)


def json_text(obj: Any) -> str:
    """One JSON value on one line, for the --json outputs (paths that are not UTF-8 included), with nothing in it a
    terminal would act on or hide (C1 controls, bidi overrides, zero-width characters are \\u escapes)."""
    from inspector.textutil import json_dumps, json_safe_text

    return json_safe_text(json_dumps(obj).decode()) + "\n"


def json_lines(objs: Any) -> str:
    """JSON Lines: one object per line, what `jq` and scripts read as a stream (stats, tokens, search, request)."""
    return "".join(json_text(o) for o in objs)


def _positive(text: str) -> int:
    """An argument that must be a whole number above zero (a window, a limit, a count of tokens)."""
    try:
        n = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, not {n}")
    return n


def _window_arg(text: str) -> int:
    """A number of tokens, with an optional k or m suffix ("200k")."""
    from inspector.tokens.thresholds import window_value

    n = window_value(text)
    if n is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of tokens above 0 (200000, 200k, 1m)")
    return n


def _non_negative(text: str) -> int:
    try:
        n = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {n}")
    return n


def _non_negative_float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (x >= 0) or x == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number, 0 or more, not {text}")
    return x


def settings_from_args(args: argparse.Namespace) -> Any:
    """Claude Code's settings from the environment and config, then the user's overrides (the what-if table)."""
    from inspector.tokens.thresholds import Settings
    from inspector.tokens.whatif import InvalidSetting, from_args
    from inspector.transcript.discovery import InspectorError

    try:
        return from_args(Settings.from_environment(), args)
    except InvalidSetting as exc:
        raise InspectorError(str(exc)) from None


class JsonArray:
    """JSON Lines written one object at a time, as each session is done (memory stays flat over many sessions)."""

    def __init__(self, out: Any) -> None:
        self.out, self.n = out, 0

    def add(self, obj: Any) -> None:
        self.out.write(json_text(obj))
        self.n += 1

    def close(self) -> None:
        pass


def _report_paths(head: str, items: list[tuple[Path, str]], err: Any) -> None:
    """A heading, then each path with why (50 at most, the rest counted)."""
    from inspector.textutil import printable

    if items:
        err.write(head + "\n")
        for p, why in items[:50]:
            err.write(printable(f"  {p}: {why}") + "\n")
        if len(items) > 50:
            err.write(f"  … and {len(items) - 50} more\n")


def report_unreadable(target: Any, err: Any) -> None:
    """Name the folders under a target that could not be read: their sessions are left out of what follows."""
    from inspector.transcript.discovery import unreadable_folders

    bad = unreadable_folders(target)
    _report_paths(f"inspector: cannot read {len(bad)} folder(s); their sessions are left out:", bad, err)


def report_skipped(skipped: list[tuple[Path, str]], err: Any) -> None:
    """Name the files a command could not read and went on without."""
    _report_paths(f"inspector: skipped {len(skipped)} file(s) it could not read:", skipped, err)


def _confirm(args: argparse.Namespace, err: Any, what: str, *, write: bool = False) -> None:
    """Say what would leave the machine (or, `write`, what would be written); go on only with --yes or a yes typed
    at a terminal."""
    from inspector.transcript.discovery import InspectorError

    verb, done = ("Write", "written") if write else ("Send", "sent")
    err.write(f"inspector: {what}\n")
    if args.yes:
        return
    if not (hasattr(sys.stdin, "isatty") and sys.stdin.isatty()):
        raise InspectorError(f"nothing was {done}: re-run with --yes to {verb.lower()} it")
    err.write(f"{verb} it? [y/N] ")
    err.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise InspectorError(f"nothing was {done}")


def _confirm_send(summ: Any, req: Any, args: argparse.Namespace, err: Any) -> None:
    """Show what the Anthropic summarizer would send and what it costs; send only with consent."""
    est = summ.estimate(req)
    _confirm(args, err, f"the Anthropic summarizer would send {est.describe()}")


def _default_path(err: Any) -> Path:
    """The projects root, or the bundled samples (with a notice) when it has no sessions."""
    from inspector.transcript.discovery import default_projects_root, resolve_target, samples_root, session_files

    root = default_projects_root()
    if root.is_dir():
        try:
            if session_files(resolve_target(root)):
                return root
        except Exception:
            pass
    samples = samples_root()
    if samples is None:
        return root
    print(
        f"inspector: no Claude Code sessions under {root}; showing the bundled sample sessions ({samples})",
        file=err,
    )
    return samples


def target_of(args: argparse.Namespace, err: Any) -> tuple[Path, Any]:
    """The PATH a command was given (the projects root, or the bundled samples, when none) and what it names; the
    files under it that cannot be read are said on stderr."""
    from inspector.transcript.discovery import resolve_target

    path = Path(args.path) if args.path else _default_path(err)
    target = resolve_target(path)
    report_unreadable(target, err)
    return path, target


def not_jsonl(path: Any, first: tuple[int, str] | None) -> Exception:
    """The one error for a file no line of which could be read (a binary or plain-text file named .jsonl): every
    command on it says so and exits 2, instead of some treating it as an empty session. `first`: the first bad
    line's number and reason."""
    from inspector.transcript.discovery import InspectorError

    why = f" (line {first[0]}: {first[1]})" if first else ""
    return InspectorError(f"not a JSONL transcript: no line of {path} could be read{why}")


def refuse_unreadable(s: Any, path: Any) -> None:
    """A loaded session none of whose lines could be read is refused (`not_jsonl`)."""
    t = s.transcript
    if not t.records and t.problems:
        raise not_jsonl(path, (t.problems[0].line, t.problems[0].reason))


def one_session(path: Any, folder_refused: str) -> Any:
    """The session of a command that takes one transcript: a folder refused with `folder_refused`, a file that is
    not JSONL with `not_jsonl`."""
    from inspector.transcript.discovery import InspectorError, resolve_target
    from inspector.transcript.session import Session

    target = resolve_target(path)
    if target.kind != "file":
        raise InspectorError(folder_refused.format(kind=target.kind, path=path))
    s = Session.load(target.path)
    refuse_unreadable(s, target.path)
    return s


STDIN_LIMIT = 1 << 20  # bytes of stdin read by the commands Claude Code pipes JSON to (its input is a few hundred)


def stdin_json(stdin: Any, command: str, what: str) -> dict[str, Any]:
    """The JSON object Claude Code pipes to a command (`statusline`, `hook`): one clear error when stdin is not one."""
    from inspector.textutil import json_loads
    from inspector.transcript.discovery import InspectorError

    raw = stdin.buffer.read(STDIN_LIMIT + 1) if hasattr(stdin, "buffer") else stdin.read(STDIN_LIMIT + 1)
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    if len(raw) > STDIN_LIMIT:
        raise InspectorError(f"{command}: stdin is over 1 MB, not {what}")
    try:
        data = json_loads(raw) if raw.strip() else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise InspectorError(f"{command}: stdin is not {what} (an object with transcript_path)")
    return data


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` finds it ($COLUMNS, then the terminal, else 80), without
    importing shutil (and the compression modules it imports): argparse asks for it at every `add_argument`, and a
    `search` starts in the time of the few libraries a lookup needs (issue 29.5)."""
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's, its width found without shutil (`_columns`)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, width if width is not None else _columns() - 2)


class RawDescriptionHelpFormatter(HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """argparse's RawDescriptionHelpFormatter, its width found without shutil."""


class Parser(argparse.ArgumentParser):
    """Every command's parser: a bad flag or value is one line and a hint, not the whole usage block."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n(`{self.prog} --help` lists its options)\n")


def own_command(subcommand: str) -> str:
    """How Claude Code should run this inspector's `subcommand` (its statusLine, its hooks): the `inspector` script
    that started this process, else the one on PATH, else this Python with -m."""
    import shlex
    import shutil

    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "inspector" and script.is_file():
        return f"{shlex.quote(str(script))} {subcommand}"
    found = shutil.which("inspector")
    if found:
        return f"{shlex.quote(str(Path(found).resolve()))} {subcommand}"
    return f"{shlex.quote(sys.executable)} -m inspector {subcommand}"


WHEN_WORDS = "a date (2026-11-02), a UTC time (2026-11-02T14:00) or a span back from now (7d, 12h)"


def add_window_flags(p: argparse.ArgumentParser, what: str) -> None:
    """--since and --until, for the `what` (records, responses, sessions with a record) of a time window."""
    p.add_argument("--since", metavar="WHEN", help=f"only {what} from then on: {WHEN_WORDS}")
    p.add_argument("--until", metavar="WHEN", help=f"only {what} before then (as --since)")


def when_arg(text: str | None, flag: str) -> str | None:
    """A --since / --until value as the ISO prefix timestamps are compared with (library.search.parse_since)."""
    from inspector.library.search import parse_since
    from inspector.transcript.discovery import InspectorError

    if text is None:
        return None
    try:
        return parse_since(text)
    except ValueError as exc:
        raise InspectorError(str(exc).replace("--since", flag)) from None


def add_install_flags(p: argparse.ArgumentParser, install_help: str) -> None:
    """--install (one setting of Claude Code's settings.json, shown and asked) and --yes."""
    p.add_argument("--install", action="store_true", help=install_help)
    p.add_argument("--yes", action="store_true", help="with --install: write without asking")


def install_setting(
    args: argparse.Namespace, out: Any, err: Any, key: str, value: Any, *, already: str, done: str, after: str
) -> int:
    """Set `key` of the user's Claude Code settings.json to `value` (or a function of its value now, edit.settings):
    nothing when it already is, else the change shown and asked (--yes), a backup kept, and one line saying so."""
    from inspector.edit.settings import apply, plan_setting, settings_path
    from inspector.textutil import printable

    change = plan_setting(settings_path(), key, value)
    if not change.needed:
        out.write(f"{already} in {printable(str(change.path))}\n")
        return EXIT_OK
    _confirm(args, err, printable(change.describe()), write=True)
    backup = apply(change)
    out.write(
        f"{done} in {printable(str(change.path))}"
        + (f" (the file as it was: {printable(str(backup))})" if backup else "")
        + f"; {after}\n"
    )
    return EXIT_OK
