"""One registry of actions: each declares its key, footer label, help text and palette entry once.

Screens take their BINDINGS from here, the help screen lists it, and the command palette offers
it, so the three never drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True, slots=True)
class ActionSpec:
    action: str  # the Textual action name (without "action_")
    key: str  # key(s), comma separated
    label: str  # footer text
    help: str  # one line for the help screen and the command palette
    scope: str  # "app", "browser", "session" or "workbench"
    footer: bool = True
    palette: bool = True
    title: str = ""  # the command palette's name for it, when the footer's label is too short to say it

    @property
    def name(self) -> str:
        return self.title or self.label


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("help", "question_mark,f1", "Help", "Show every key and what it does", "app"),
    ActionSpec("back", "escape", "Back", "Go back to the previous screen", "app", footer=True, palette=False),
    ActionSpec("quit", "q,ctrl+q", "Quit", "Quit inspector", "app"),
    # session browser
    ActionSpec("open", "enter", "Open", "Open the selected session", "browser"),
    ActionSpec("focus_filter", "slash", "Filter", "Filter the sessions as you type (title, project, folder name, id)", "browser"),
    ActionSpec(
        "search_all", "ctrl+f", "Search all", "Search the text of every session, its subagents and persisted outputs", "browser"
    ),
    ActionSpec(
        "sort", "s", "Sort", "Sort by the next column (when, size, peak, compactions, title, project, duration, model)", "browser"
    ),
    ActionSpec(
        "reverse_sort",
        "S",
        "Reverse",
        "Reverse the order of the sort (a second click on a header does too)",
        "browser",
        footer=False,
        title="Reverse the sort",
    ),
    ActionSpec("refresh", "r", "Refresh", "Look for new and changed sessions", "browser"),
    ActionSpec(
        "columns",
        "v",
        "Columns",
        "Show the next set of columns: every one, the token columns (peak, compactions, model), or cost and size",
        "browser",
        footer=False,
    ),
    ActionSpec(
        "archive",
        "A",
        "Archive…",
        "Copy the sessions listed (with their folders) into an archive folder, before Claude Code's cleanup deletes them",
        "browser",
        footer=False,
        title="Archive the sessions listed",
    ),
    ActionSpec(
        "blocks",
        "b",
        "Blocks",
        "The 5-hour billing blocks of the sessions here: each one's cost, the active block's burn rate and projection",
        "browser",
        footer=False,
        title="Billing blocks",
    ),
    # session screen
    ActionSpec("search", "slash", "Search", "Search this session's text (persisted outputs included)", "session"),
    ActionSpec("next_match", "n", "Next match", "Jump to the next search match", "session", footer=False),
    ActionSpec("prev_match", "N", "Prev match", "Jump to the previous search match", "session", footer=False),
    ActionSpec(
        "next_compaction", "c", "Compaction", "Jump to the next compaction or microcompaction", "session", title="Next compaction"
    ),
    ActionSpec(
        "next_crossing",
        "t",
        "Crossing",
        "Jump to the next response that crosses a threshold",
        "session",
        title="Next threshold crossing",
    ),
    ActionSpec("toggle_filter('user')", "1", "Users", "Show or hide user messages", "session", footer=False),
    ActionSpec("toggle_filter('assistant')", "2", "Replies", "Show or hide assistant text", "session", footer=False),
    ActionSpec("toggle_filter('tool_calls')", "3", "Tools", "Show or hide tool calls and results", "session", footer=False),
    ActionSpec("toggle_filter('thinking')", "4", "Thinking", "Show or hide thinking", "session", footer=False),
    ActionSpec(
        "toggle_filter('system')", "5", "System", "Show or hide system records, attachments and progress", "session", footer=False
    ),
    ActionSpec("toggle_filter('metadata')", "6", "Metadata", "Show or hide metadata records", "session", footer=False),
    ActionSpec(
        "toggle_scope",
        "a",
        "All records",
        "Show every record of the file (branches, sidechains, metadata) or only the chain",
        "session",
    ),
    ActionSpec(
        "goto",
        "colon",
        "Go to",
        "Go to a record by its line (as the why pane lists what a compaction lost) or its uuid",
        "session",
        footer=False,
        title="Go to a line",
    ),
    ActionSpec("toggle_raw", "r", "Raw JSON", "Show the selected record as raw JSON", "session"),
    ActionSpec("full_output", "f", "Full output", "Load the persisted full output of the selected tool result", "session"),
    ActionSpec("open_subagent", "o", "Subagent", "Open the subagent transcript of the selected Agent call", "session"),
    ActionSpec(
        "what_if",
        "s",
        "What if…",
        "Change the settings that move the thresholds (model, window, auto-compact, overrides) and see the session again",
        "session",
    ),
    ActionSpec(
        "workbench",
        "w",
        "Compact…",
        "Open the compaction workbench (partial compaction pivots on the selected message)",
        "session",
    ),
    ActionSpec(
        "why",
        "y",
        "Why",
        "Explain the selected compaction, or what fills the context at the selected message (y again: the record)",
        "session",
        title="Why / context",
    ),
    ActionSpec(
        "export",
        "e",
        "Export",
        "Export the conversation (or, with a, every record) as Markdown, or as an HTML page for a name ending .html: a "
        "dialog shows the new file's path to keep or change",
        "session",
        footer=False,
    ),
    ActionSpec("reload", "ctrl+r", "Reload", "Reload the session from disk", "session", footer=False),
    ActionSpec(
        "focus_pane('timeline')",
        "left_square_bracket",
        "Timeline",
        "Focus the timeline (the left pane)",
        "session",
        footer=False,
        title="Focus the timeline",
    ),
    ActionSpec(
        "focus_pane('detail')",
        "right_square_bracket",
        "Detail",
        "Focus the record / why pane (the right pane)",
        "session",
        footer=False,
        title="Focus the detail pane",
    ),
    # workbench
    ActionSpec(
        "preview", "f5,ctrl+r", "Preview", "Recompute the preview (it also follows every change of the form)", "workbench"
    ),
    ActionSpec(
        "anthropic", "ctrl+a", "Anthropic…", "Summarize with the Anthropic API (asks first, shows tokens and cost)", "workbench"
    ),
    ActionSpec(
        "exact_count",
        "ctrl+t",
        "Exact count…",
        "Count the request a resume sends with the API's token-counting endpoint (asks first)",
        "workbench",
    ),
    ActionSpec("cancel_job", "ctrl+c", "Cancel", "Cancel a running summary", "workbench", footer=False),
    ActionSpec("save", "ctrl+s", "Save", "Save the result as a new session (never touches the original)", "workbench"),
)


def bindings(scope: str) -> list[Binding]:
    out = []
    for a in ACTIONS:
        if a.scope == scope:
            out.append(Binding(a.key, a.action, a.label, show=a.footer))
    if scope in ("browser", "session"):  # esc closes what is open inside the screen before the screen itself
        out.append(Binding("escape", "back", "Back"))
    return out
