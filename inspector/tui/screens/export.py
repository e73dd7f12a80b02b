"""The export dialog: where the export goes (Markdown, or an HTML page for a name ending .html), shown and editable
before anything is written."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from inspector.textutil import printable


def free_name(folder: Path, name: str) -> Path:
    """`folder/name`, or the first `name-2`, `name-3`... that does not exist yet."""
    target = folder / name
    stem, suffix = Path(name).stem, Path(name).suffix
    n = 2
    while target.exists() and n < 10_000:
        target = folder / f"{stem}-{n}{suffix}"
        n += 1
    return target


def check_target(text: str) -> tuple[Path | None, str | None]:
    """The path typed, or why it cannot be written: a new file in a folder that exists, never over a file."""
    raw = text.strip()
    if not raw:
        return None, "Type where the export goes."
    p = Path(raw).expanduser()
    if not p.is_absolute():
        try:
            p = Path.cwd() / p
        except OSError:
            p = Path.home() / p
    if p.is_dir():
        return None, f"{p} is a folder: add a file name."
    if p.exists() or p.is_symlink():
        return None, f"{p.name} exists already: inspector never writes over a file. Choose another name."
    if not p.parent.is_dir():
        return None, f"No folder {p.parent}."
    import inspector

    pkg = Path(inspector.__file__).resolve().parent
    try:
        p.parent.resolve().relative_to(pkg)
        return None, "Not inside inspector's own package: choose another folder."
    except ValueError:
        pass
    return p, None


class ExportScreen(ModalScreen[Path | None]):
    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, default: Path, what: str) -> None:
        super().__init__()
        self.default = default
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box"):
            yield Static(Text("Export as Markdown or HTML", style="bold"))
            yield Static(
                Text(
                    printable(
                        f"{self.what}, every record in full, to a new file (never over an existing one). A name "
                        "ending .html writes one self-contained page with the token chart and the compactions. "
                        "Enter exports, esc cancels."
                    )
                )
            )
            yield Input(str(self.default), id="export-path")
            yield Static("", id="export-error")
            with Horizontal(id="export-buttons"):
                yield Button("Export", variant="primary", id="export-yes")
                yield Button("Cancel", id="export-no")

    def on_mount(self) -> None:
        box = self.query_one("#export-path", Input)
        box.focus()
        box.cursor_position = len(box.value)

    @on(Input.Submitted)
    @on(Button.Pressed, "#export-yes")
    def confirm(self) -> None:
        path, error = check_target(self.query_one("#export-path", Input).value)
        if error is not None:
            self.query_one("#export-error", Static).update(Text(printable(error), style="bold red"))
            return
        self.dismiss(path)

    @on(Button.Pressed, "#export-no")
    def cancel(self) -> None:
        self.dismiss(None)
