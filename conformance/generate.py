"""Generated scenarios: a seeded walk over what a session can do, for the questions nobody wrote a scenario for.

`scenario(seed)` is a pure function of the seed: the model (the release's catalog, [1m] settings and an unknown id), the context's
start and growth, where (and with which named limit) the API refuses, the tools the model calls (Bash, a Bash
output large enough to be persisted, Read, Grep, Glob, Write, Edit, an Agent subagent), the window settings
(environment, settings.json, per-model settings, percent override, auto-compact off, the earlier-messages
experiment), then 0-3 more steps: `--resume` or `--continue` with more work, `/compact` with or without
instructions, a `/model` switch (the next step on another model), an idle gap, a summarizer that fails.

Partial compaction ("summarize from / up to here") is a menu of the REPL, not of print mode: `repl_scenario(seed)`
types 2-4 prompts (and sometimes a `/compact`) into one interactive session in tmux, then opens the rewind menu
(Esc Esc), picks a row and "Summarize from here" or "up to here", with or without context, and sends one prompt
after it. The round trip also saves inspector's partial strategies and resumes them with the binary.
"""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

from conformance.fake_api import Script
from conformance.scenarios import Scenario, Step

# the catalog of the releases under test (2.1.328-2.1.332: every model inspector/claude/models.json gives a window;
# a test keeps the two lists the same), the [1m] setting on models that take it and on one that has it natively, and
# a model no release knows. Written out, not read from inspector's data: a seed's scenario changes only when this does.
CATALOG = (
    "claude-3-5-haiku",
    "claude-3-5-sonnet",
    "claude-3-7-sonnet",
    "claude-haiku-4-5",
    "claude-sonnet-4-0",
    "claude-sonnet-4-5",
    "claude-sonnet-4-6",
    "claude-opus-4-0",
    "claude-opus-4-1",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-opus-5",
    "claude-opus-5-5",
    "claude-sonnet-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
    "claude-fable-5",
    "claude-fable-5-1",
    "claude-fable-5-2",
    "claude-mythos-5",
    "claude-mythos-5-1",
    "claude-mythos-5-2",
)
MODELS = (
    *CATALOG,
    "claude-sonnet-4-0[1m]",
    "claude-sonnet-4-5[1m]",
    "claude-opus-4-6[1m]",
    "claude-opus-5[1m]",
    "claude-foo-1",
)
# the models whose window is a million tokens (natively, or by the [1m] setting), and the unknown one: their runs may
# grow in bigger steps
NATIVE_1M = frozenset(
    {"claude-opus-4-7", "claude-opus-4-8", "claude-opus-5", "claude-opus-5-5", "claude-sonnet-5", "claude-sonnet-5-5"}
    | {"claude-haiku-5-5", "claude-fable-5", "claude-fable-5-1", "claude-fable-5-2"}
    | {"claude-mythos-5", "claude-mythos-5-1", "claude-mythos-5-2"}
)
ONE_MILLION = NATIVE_1M | {m for m in MODELS if m.endswith("[1m]")} | {"claude-foo-1"}
TOOLS = "Bash,Read,Write,Edit,Grep,Glob,Agent,Task"
FILES = {f"f{k}.txt": "".join(f"file {k} line {n}\n" for n in range(1, 41)) for k in range(1, 7)}


def _j(obj: dict[str, Any]) -> str:
    return json.dumps(obj)


CALLS: dict[str, tuple[str, str]] = {
    "bash": ("Bash", _j({"command": "echo step {k}", "description": "Run step {k}"})),
    "bash_large": ("Bash", _j({"command": "seq 1 {k}0000", "description": "Count to {k}0000"})),
    "read": ("Read", _j({"file_path": "{work}/f{k}.txt"})),
    "read_one": ("Read", _j({"file_path": "{work}/f1.txt"})),
    "grep": ("Grep", _j({"pattern": "line {k}", "path": "{work}"})),
    "glob": ("Glob", _j({"pattern": "*.txt", "path": "{work}"})),
    "write": ("Write", _j({"file_path": "{work}/out{k}.txt", "content": "written at step {k}\n"})),
    "edit": (
        "Edit",
        _j({"file_path": "{work}/f1.txt", "old_string": "file 1 line {k}\n", "new_string": "file 1 line {k} (edited)\n"}),
    ),
    "agent": (
        "Agent",
        _j(
            {
                "description": "Look around {k}",
                "prompt": "SUBAGENT TASK: look around (step {k})",
                "subagent_type": "general-purpose",
            }
        ),
    ),
}


def _window_setup(rng: random.Random, model: str) -> tuple[dict[str, str], dict[str, Any] | None, str]:
    """The environment and settings.json of a run, and a word for the table."""
    k = rng.random()
    window = rng.choice((60_000, 80_000, 100_000, 120_000, 150_000, 200_000))
    if k < 0.35:
        return {}, None, "defaults"
    if k < 0.50:
        return {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(window)}, None, f"env window {window:,}"
    if k < 0.58:
        pct = rng.choice((50, 70, 85))
        env = {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": str(pct)}
        if rng.random() < 0.6:
            env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = str(window)
        return env, None, f"pct {pct}" + (f" + env window {window:,}" if len(env) > 1 else "")
    if k < 0.68:
        return {}, {"autoCompactWindow": window}, f"settings window {window:,}"
    if k < 0.74:
        return {}, {"modelSettings": {model: {"autoCompactWindow": window}}}, f"per-model window {window:,}"
    if k < 0.79:
        return {"DISABLE_AUTO_COMPACT": "1"}, None, "auto-compact off"
    if k < 0.84 and model == "claude-foo-1":
        return {"CLAUDE_CODE_MAX_CONTEXT_TOKENS": str(window)}, None, f"max context {window:,}"
    if k < 0.92:
        mode = rng.choice(("messages", "messages_and_replies"))
        return {"CLAUDE_CODE_ELEGANT_MIST": mode}, None, f"earlier messages ({mode})"
    return (
        {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(window)},
        {"autoCompactEnabled": rng.random() < 0.5},
        "env window + autoCompactEnabled",
    )


def _work(
    rng: random.Random, big: bool, calls: tuple[tuple[str, str], ...], turns: int | None = None, base: Script | None = None
) -> Script:
    """A step's work: its tool calls and the context's size (a later step grows as the first did: the size is a
    function of the conversation, `start + step × replies in the request`)."""
    start = base.start if base else rng.randrange(5_000, 50_000, 1_000)
    step = base.step if base else rng.randrange(4_000, 36_000, 1_000) * (rng.choice((3, 6)) if big else 1)
    turns = turns if turns is not None else rng.randint(3, 14)
    ptl_at = limit = None
    if rng.random() < 0.5:
        ptl_at = start + step * rng.randint(2, turns + 2 + (2 * base.turns if base else 0))
        limit = max(1_000, ptl_at - rng.choice((1, 1, 1_000, 25_000)))
    kw: dict[str, Any] = {}
    if rng.random() < 0.1:
        kw["summary_status"] = 400  # a 5xx is retried 10 times with backoff: minutes a run
    elif rng.random() < 0.08:
        kw["summary_ptl_above"] = rng.randint(4, 12)
    return Script(turns=turns, start=start, step=step, ptl_at=ptl_at, limit=limit or 200_000, calls=calls, **kw)


# calls that fail (their results are errors: a file that is not there, a command that exits 3), added to a run's
# calls by the shape's generator
FAILING: dict[str, tuple[str, str]] = {
    "read_missing": ("Read", _j({"file_path": "{work}/missing{k}.txt"})),
    "bash_fail": ("Bash", _j({"command": "echo step {k} failed >&2; exit 3", "description": "Fail at step {k}"})),
}
FAILING_SHARE = 0.25
# a screenshot in the working folder that a quarter of the runs read (Read answers with an image block)
IMAGE_FILE = "shot.png"
IMAGE_PNG = (  # an 8x8 PNG (zlib and struct made it)
    "base64:iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAbUlEQVR42hXOUREAUQhCUaMYhShEMcqNQhSi7Fs/OQzjzLCDBg83MGToMLPsosXLLSxZ"
    "ug/ECgmLE4iI6oFZI2NzBhNTPzj20OHjDo4cvQf/7Bt41Rf+F+h7YsIGBYfLHyc0D8oWFZfrX05p+QDeqGABtJu0bQAAAABJRU5ErkJggg=="
)
IMAGE_SHARE = 0.25
READ_IMAGE = ("Read", _j({"file_path": "{work}/" + IMAGE_FILE}))
THINKING = (("thinking", 0.5), ("redacted", 0.1))  # the share of runs whose replies open with each kind of reasoning
PARALLEL_SHARE = 0.25  # runs whose tool-call replies make two or three calls at once


def _reply_shape(name: str, steps: list[Step]) -> tuple[list[Step], list[str]]:
    """The replies' shape, drawn by a generator of its own (the other draws of a seed are as they were): whether they
    open with reasoning (a thinking or redacted_thinking block, as models that think send them) and how many tool
    calls each makes at once, whether one of its calls fails and whether one reads an image; the same for every step
    of the work (not the question a step asks)."""
    rng = random.Random(f"inspector-conformance-shape-{name}")
    k, thinking, acc = rng.random(), None, 0.0
    for kind, share in THINKING:
        acc += share
        if thinking is None and k < acc:
            thinking = kind
    parallel = rng.choice((2, 3)) if rng.random() < PARALLEL_SHARE else 1
    failing = rng.choice(sorted(FAILING)) if rng.random() < FAILING_SHARE else None
    image = rng.random() < IMAGE_SHARE

    def shaped(sc: Script) -> Script:
        calls = sc.calls + (FAILING[failing],) if failing and sc.calls else sc.calls
        calls = calls + (READ_IMAGE,) if image and calls else calls
        return dataclasses.replace(sc, thinking=thinking, parallel=parallel, calls=calls)

    out = [st if st.answer else dataclasses.replace(st, script=shaped(st.script)) for st in steps]
    what = ([f"{thinking} replies"] if thinking else []) + ([f"{parallel} calls a reply"] if parallel > 1 else [])
    return out, what + ([f"{failing} errors"] if failing else []) + (["an image read"] if image else [])


HOOKS_SHARE = 0.25  # runs whose settings.json has hooks that add context (as many users' do)
# not PreCompact: what it prints is in no record (it goes to the summarizer, and to /compact's output, which inspector
# can take only from an earlier /compact's: 2.1.332 seed 83009), so a preview cannot show it
HOOKS: dict[str, dict[str, Any]] = {
    "SessionStart": {"hooks": [{"type": "command", "command": "echo 'Project notes: run make check before you commit.'"}]},
    "UserPromptSubmit": {"hooks": [{"type": "command", "command": "echo 'Reminder from a hook: keep the steps short.'"}]},
}


def _files(steps: list[Step]) -> dict[str, str]:
    """The working folder's files: the text files, and the screenshot where a step reads it."""
    reads = any(READ_IMAGE in st.script.calls for st in steps)
    return {**FILES, IMAGE_FILE: IMAGE_PNG} if reads else dict(FILES)


def _with_hooks(name: str, settings: dict[str, Any] | None) -> tuple[dict[str, Any] | None, list[str]]:
    """Hooks in settings.json that print text Claude Code adds to the conversation (a session's start, each prompt),
    drawn by a generator of their own: one or both, or none."""
    rng = random.Random(f"inspector-conformance-hooks-{name}")
    if rng.random() >= HOOKS_SHARE:
        return settings, []
    events = rng.sample(sorted(HOOKS), rng.randint(1, len(HOOKS)))
    hooks = {e: [HOOKS[e]] for e in events}
    return {**(settings or {}), "hooks": hooks}, [f"{'+'.join(events)} hooks"]


FORK_SHARE = 0.15  # print-mode runs that go on once in a fork of the session (--fork-session)


def _with_fork(name: str, steps: list[Step]) -> tuple[list[Step], list[str]]:
    """A fork after one of the steps (a new session starting with a copy of the records so far, worked in for a few
    replies), drawn by a generator of its own; a later --resume goes on in the first session, a --continue in the
    latest (the fork)."""
    rng = random.Random(f"inspector-conformance-fork-{name}")
    if rng.random() >= FORK_SHARE:
        return steps, []
    at = rng.randint(1, len(steps))
    base = steps[0].script
    fork = Step("go on in a fork", dataclasses.replace(base, turns=rng.randint(1, 4)), resume="fork")
    return steps[:at] + [fork] + steps[at:], [f"a fork after step {at}"]


def scenario(seed: int) -> Scenario:
    """The scenario of a seed (the same seed gives the same scenario, on every machine)."""
    rng = random.Random(f"inspector-conformance-{seed}")
    model = rng.choice(MODELS)
    big = model in ONE_MILLION and rng.random() < 0.5
    kinds = rng.sample(sorted(CALLS), rng.randint(1, 4))
    if rng.random() < 0.5 and "bash" not in kinds:
        kinds = ["bash", *kinds]
    calls = tuple(CALLS[k] for k in kinds)
    env, settings, words = _window_setup(rng, model)
    first = _work(rng, big, calls)
    steps = [Step("run the checks", first)]
    what = [f"{'+'.join(kinds)}"]
    for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
        k = rng.random()
        if k < 0.3:
            steps.append(
                Step("continue", _work(rng, big, calls, rng.randint(1, 5), first), resume=rng.choice(("resume", "continue")))
            )
            what.append(f"--{steps[-1].resume}")
        elif k < 0.55:
            instr = rng.choice(("", " keep the step numbers", " focus on the files"))
            steps.append(
                Step("/compact" + instr, Script(turns=0, summary_status=400 if rng.random() < 0.1 else None), resume="resume")
            )
            what.append("/compact" + (" with instructions" if instr else ""))
        elif k < 0.8:
            other = rng.choice([m for m in MODELS if m != model])
            steps.append(Step("continue", _work(rng, big, calls, rng.randint(1, 5), first), resume="resume", model=other))
            what.append(f"/model {other}")
        else:
            steps.append(
                Step(
                    "continue",
                    _work(rng, big, calls, rng.randint(1, 4), first),
                    resume="resume",
                    shift_hours=rng.choice((0.5, 2.0, 8.0)),
                )
            )
            what.append(f"idle {steps[-1].shift_hours:g} h")
    steps, shape = _reply_shape(f"gen_{seed}", steps)
    settings, hooked = _with_hooks(f"gen_{seed}", settings)
    steps, forked = _with_fork(f"gen_{seed}", steps)
    what += shape + hooked + forked
    return Scenario(
        f"gen_{seed}",
        model,
        tuple(steps),
        env=env,
        settings=settings,
        files=_files(steps),
        tool=TOOLS,
        doc=f"generated (seed {seed}): {model}, {words}; {', '.join(what)}",
    )


def scenarios(n: int, seed: int) -> list[Scenario]:
    return [scenario(seed + k) for k in range(n)]


QUESTION_SHARE = 0.4  # REPL scenarios that ask the user a question (answered with its first option)


def _question(rng: random.Random) -> dict[str, Any]:
    """An AskUserQuestion input: one question, two to four options (the REPL's first is the one answered)."""
    topic = rng.choice(("Which database should the store use?", "Which file should change first?", "Keep the old API?"))
    labels = rng.sample(["sqlite", "postgres", "f1.txt", "f2.txt", "yes", "no", "later", "both"], rng.randint(2, 4))
    return {
        "questions": [
            {
                "question": topic,
                "header": topic.split()[1][:12],
                "options": [{"label": lab, "description": f"choose {lab}"} for lab in labels],
                "multiSelect": False,
            }
        ]
    }


def repl_scenario(seed: int) -> Scenario:
    """A generated REPL scenario ending in a partial compaction from the rewind menu (a pure function of the seed)."""
    rng = random.Random(f"inspector-conformance-repl-{seed}")
    model = rng.choice(MODELS)
    big = model in ONE_MILLION and rng.random() < 0.5
    kinds = rng.sample(sorted(CALLS), rng.randint(1, 3))
    calls = tuple(CALLS[k] for k in kinds)
    env, settings, words = _window_setup(rng, model)
    base = _work(rng, big, calls, rng.randint(1, 4))
    prompts = rng.randint(2, 4)
    steps = [Step("run the checks", base)]
    steps += [Step(f"now task {n + 2}", _work(rng, big, calls, rng.randint(1, 4), base)) for n in range(prompts - 1)]
    what = [f"{'+'.join(kinds)}", f"{prompts} prompts"]
    if rng.random() < 0.25:
        at = rng.randint(1, len(steps))
        steps.insert(at, Step("/compact", Script(turns=0, start=base.start, step=base.step)))
        what.append(f"/compact after prompt {at}")
    # a question asked and answered (AskUserQuestion), from a generator of its own: the seeds before it keep their runs
    tools = TOOLS
    qrng = random.Random(f"inspector-conformance-repl-question-{seed}")
    if qrng.random() < QUESTION_SHARE:
        at = qrng.randint(1, len(steps))
        ask = Script(turns=1, start=base.start, step=base.step, calls=(("AskUserQuestion", json.dumps(_question(qrng))),))
        steps.insert(at, Step("which way should it go?", ask, answer=True))
        tools += ",AskUserQuestion"
        what.append(f"a question after prompt {at}")
        if "CLAUDE_CODE_ELEGANT_MIST" not in env and qrng.random() < 0.75:
            mode = qrng.choice(("messages", "messages_and_replies"))
            env = {**env, "CLAUDE_CODE_ELEGANT_MIST": mode}
            words += f", earlier messages ({mode})"
    steps, shape = _reply_shape(f"gen_repl_{seed}", steps)
    settings, hooked = _with_hooks(f"gen_repl_{seed}", settings)
    what += shape + hooked
    direction = rng.choice(("from", "up_to"))
    ups = rng.randint(1, prompts)
    context = rng.choice(("", "", "keep the file names"))
    steps.append(Step("(rewind)", Script(turns=0, start=base.start, step=base.step), rewind=(ups, direction, context)))
    what.append(f"summarize {direction.replace('_', ' ')} row {ups}" + (" with context" if context else ""))
    return Scenario(
        f"gen_repl_{seed}",
        model,
        tuple(steps),
        env=env,
        settings=settings,
        files=_files(steps),
        tool=tools,
        repl=True,
        doc=f"generated REPL (seed {seed}): {model}, {words}; {', '.join(what)}",
    )
