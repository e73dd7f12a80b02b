"""The summarization prompt, written for inspector (§8.2 describes the structure it follows):
no tools, an <analysis> block, then a <summary> block with nine numbered sections.
"""

from __future__ import annotations

SYSTEM = "You are a careful engineer who writes hand-over summaries of coding sessions for another engineer."

SECTIONS = (
    ("Primary Request and Intent", "every explicit request and goal of the user, in detail"),
    ("Key Technical Concepts", "technologies, frameworks, libraries and patterns that matter"),
    (
        "Files and Code Sections",
        "each file read, changed or created, why it matters, with the important code snippets and the last change made",
    ),
    ("Errors and fixes", "each error met, how it was fixed, and any correction the user gave"),
    ("Problem Solving", "problems solved and investigations still open"),
    ("All user messages", "every message the user wrote that is not a tool result, in order, quoted verbatim where short"),
    ("Pending Tasks", "what the user asked for that is not done yet"),
    ("Current Work", "exactly what was being worked on in the last messages, with file names and snippets"),
    (
        "Optional Next Step",
        "the next step that follows directly from the most recent request, quoting the latest messages verbatim; "
        "leave it out if the last request was completed",
    ),
)
UP_TO_SECTIONS = SECTIONS[:7] + (
    ("Work Completed", "what was finished in this part of the conversation"),
    ("Context for Continuing Work", "what the newer messages that follow this summary will need to know"),
)

PREAMBLE = (
    "IMPORTANT: reply with plain text only. Do not call any tool: you have a single turn, and a tool call would be rejected "
    "and waste it. Your whole reply must be an <analysis> block followed by a <summary> block.\n\n"
)
TRAILER = "\n\nRemember: no tools, plain text only, first <analysis> then <summary>."


def _body(scope: str, sections: tuple[tuple[str, str], ...], placement: str) -> str:
    lines = [
        f"Write a detailed summary of {scope}. It will replace those messages: {placement} "
        "Keep every technical detail another engineer needs to carry on without asking questions: file paths, "
        "function names, commands, error messages, decisions and the user's own words.",
        "",
        "First, inside <analysis> tags, go through the messages in order and note for each part: what the user asked, "
        "what was done, the decisions taken, the files and code involved, the errors and how they were resolved, and any "
        "feedback from the user. Then check your notes for accuracy and completeness.",
        "",
        "Then, inside <summary> tags, write these numbered sections:",
    ]
    for k, (name, what) in enumerate(sections, 1):
        lines.append(f"{k}. {name}: {what}.")
    lines += [
        "",
        "Shape of the reply:",
        "<analysis>",
        "[your chronological notes]",
        "</analysis>",
        "<summary>",
    ]
    lines += [f"{k}. {name}:\n   [...]" for k, (name, _) in enumerate(sections, 1)]
    lines += ["</summary>"]
    return "\n".join(lines)


def build_prompt(kind: str, instructions: str | None = None) -> str:
    if kind == "partial_from":
        body = _body(
            "the recent messages that follow the earlier part of this conversation (which is kept as it is)",
            SECTIONS,
            "the earlier messages stay in place and your summary follows them.",
        )
    elif kind == "partial_up_to":
        body = _body(
            "this conversation so far",
            UP_TO_SECTIONS,
            "it will be placed at the start of a continuing session and newer messages will follow it.",
        )
    elif kind == "session_memory_notes":
        from inspector.compact.session_memory import TEMPLATE_SECTIONS

        heads = "\n".join(f"# {t}\n_{d}_\n" for t, d in TEMPLATE_SECTIONS)
        return (
            PREAMBLE.replace("an <analysis> block followed by a <summary> block", "the notes file")
            + "Write session notes for this conversation in exactly this markdown template. Keep every header and italic "
            "description line as it is and write the content under each; keep each section under about 2,000 tokens "
            "and always fill 'Current State'.\n\n" + heads
        )
    else:
        body = _body("the conversation so far", SECTIONS, "the conversation continues from your summary alone.")
    if instructions and instructions.strip():
        body += "\n\nAdditional instructions:\n" + instructions.strip()
    return PREAMBLE + body + TRAILER
