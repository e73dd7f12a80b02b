"""The scenarios: runs of the real Claude Code against the fake API that show how it manages context.

They are those of Appendix A of format-2.1.3xx.md, as data: the model, the environment, the settings files,
and for each step the prompt, how the session is continued, and how the fake API behaves. `doc` says what the
document observed on 2.1.328; the harness compares what Claude Code does now with what inspector says, not with
the document (the binary is the authority).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from conformance.fake_api import Script


@dataclass(frozen=True)
class Step:
    prompt: str
    script: Script
    # "resume": --resume <the session>; "continue": --continue; "fork": --resume <the session> --fork-session (a new
    # session holding a copy of its records; the steps after it go on in the first one)
    resume: str | None = None
    args: tuple[str, ...] = ()
    shift_hours: float = 0.0  # move the transcript's timestamps back before this step (an idle gap)
    model: str | None = None  # this step's --model (a /model switch mid-session), else the scenario's
    # a partial compaction in the REPL instead of a print-mode prompt: (rows above "(current)" in the rewind menu,
    # "from" or "up_to", the context typed into the option); then one prompt ("go on") and quit
    rewind: tuple[int, str, str] | None = None
    # the REPL shows a question (the fake's AskUserQuestion call): it is answered with its first option (Enter)
    answer: bool = False


@dataclass(frozen=True)
class Scenario:
    name: str
    model: str
    steps: tuple[Step, ...]
    env: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] | None = None  # ~/.claude/settings.json
    config: dict[str, Any] | None = None  # ~/.claude.json (the global config: its autoCompactEnabled is read by every release)
    files: dict[str, str] = field(default_factory=dict)  # files in the working folder before the run
    tool: str = "Bash"
    doc: str = ""  # what the 2.1.328 binary was observed to do (docs/format-2.1.3xx.md, Appendix A)
    golden: bool = False  # committed under tests/goldens for the normal test suite
    version: str | None = None  # the release it is run with when kept (a generated scenario found failing)
    repl: bool = False  # every step typed into one interactive session in tmux (print mode otherwise)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scenario:
        steps = []
        for st in d["steps"]:
            sc = dict(st["script"])
            for key in ("sizes", "calls"):
                if sc.get(key) is not None:
                    sc[key] = tuple(tuple(x) if isinstance(x, list) else x for x in sc[key])
            rewind = tuple(st["rewind"]) if st.get("rewind") else None
            steps.append(Step(**{**st, "script": Script(**sc), "args": tuple(st.get("args") or ()), "rewind": rewind}))
        return cls(**{**d, "steps": tuple(steps)})


def _ptl(turns: int = 14, start: int = 20_000, step: int = 15_000, ptl_at: int | None = 200_000, **kw: Any) -> Script:
    return Script(turns=turns, start=start, step=step, ptl_at=ptl_at, **kw)


RUN = "run the checks"
S45 = "claude-sonnet-4-5"


def _model(name: str, model: str, doc: str, golden: bool = False, **kw: Any) -> Scenario:
    return Scenario(name, model, (Step(RUN, _ptl(**kw)),), doc=doc, golden=golden)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "reactive_ptl_sonnet45",
        S45,
        (Step(RUN, _ptl()), Step("continue", Script(turns=1, start=20_000, step=15_000), resume="resume")),
        doc="no proactive compaction; the API refuses at 200k, reactive compaction (preTokens 185,075), 7 rounds kept",
        golden=True,
    ),
    Scenario(
        "reactive_ptl_gap_1",
        S45,
        (Step(RUN, _ptl(limit=199_999)),),
        doc="(not in the document's table) the refusal says 200,000 > 199,999: a gap of 1 token sizes the kept tail",
        golden=True,
    ),
    Scenario(
        "reactive_ptl_gap_60k",
        S45,
        (Step(RUN, _ptl(limit=140_000)),),
        doc="(not in the document's table) the refusal says 200,000 > 140,000: a gap of 60,000 tokens sizes the kept tail",
    ),
    Scenario(
        "reactive_ptl_ladder",
        S45,
        (Step(RUN, _ptl(summary_ptl_above=5)),),
        doc="the summarize request itself refused: more rounds move to the kept tail and it retries",
    ),
    Scenario(
        "threshold_env_window_100k",
        S45,
        (Step(RUN, _ptl(turns=10, ptl_at=None)), Step("continue", Script(turns=1), resume="continue")),
        env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"},
        doc="window source env: threshold 67,000, fired at 80,190 twice",
        golden=True,
    ),
    Scenario(
        "pct50_only_sonnet45",
        S45,
        (Step(RUN, _ptl()),),
        env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"},
        doc="the percent override alone does not make compaction proactive: PTL at 185,075",
    ),
    Scenario(
        "pct50_plus_env200k_sonnet45",
        S45,
        (Step(RUN, _ptl()),),
        env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50", "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"},
        doc="with a window the override applies: threshold 90,000, fired at 95,075",
    ),
    _model("model_opus46", "claude-opus-4-6", "model-default: threshold 167,000, fired at 170,075"),
    _model("model_sonnet46", "claude-sonnet-4-6", "model-default: threshold 167,000, fired at 170,075"),
    _model("model_haiku45", "claude-haiku-4-5", "source auto: reactive only (185,075)"),
    _model("model_opus45", "claude-opus-4-5", "source auto: reactive only (185,075)"),
    _model(
        "model_opus47_threshold",
        "claude-opus-4-7",
        "native 1M: threshold 967,000, fired at 970,190",
        turns=22,
        step=50_000,
        ptl_at=3_000_000,
        golden=True,
    ),
    _model(
        "model_opus47_ptl_first",
        "claude-opus-4-7",
        "native 1M, but the API refused at 1M first (920,190)",
        turns=12,
        step=100_000,
        ptl_at=1_000_000,
    ),
    _model(
        "model_sonnet5_threshold",
        "claude-sonnet-5",
        "native 1M: threshold 967,000, fired at 970,075",
        turns=22,
        step=50_000,
        ptl_at=3_000_000,
        golden=True,
    ),
    Scenario(
        "model_opus47_disable_1m",
        "claude-opus-4-7",
        (Step(RUN, _ptl()),),
        env={"CLAUDE_CODE_DISABLE_1M_CONTEXT": "1"},
        doc="DISABLE_1M on a native-1M model: 200k, threshold 167,000",
    ),
    _model(
        "model_sonnet45_suffix_1m",
        "claude-sonnet-4-5[1m]",
        "[1m] suffix: 1M window but source auto: PTL only (920,190)",
        turns=12,
        step=100_000,
        ptl_at=1_000_000,
    ),
    _model(
        "model_opus46_suffix_1m",
        "claude-opus-4-6[1m]",
        "[1m] suffix: 1M window but source auto: PTL only (920,190)",
        turns=12,
        step=100_000,
        ptl_at=1_000_000,
    ),
    _model(
        "model_unknown",
        "claude-foo-1",
        "unknown model: 1M, enforced; PTL at 1M first",
        turns=12,
        step=100_000,
        ptl_at=1_000_000,
        golden=True,
    ),
    Scenario(
        "model_unknown_max_context_150k",
        "claude-foo-1",
        (Step(RUN, _ptl()),),
        env={"CLAUDE_CODE_MAX_CONTEXT_TOKENS": "150000"},
        doc="MAX_CONTEXT_TOKENS sizes an unknown model: threshold 117,000, fired at 125,053",
    ),
    Scenario(
        "model_unknown_no_enforcement",
        "claude-foo-1",
        (Step(RUN, _ptl(turns=12, step=100_000, ptl_at=1_000_000)),),
        env={"CLAUDE_CODE_DISABLE_UNKNOWN_MODEL_WINDOW_ENFORCEMENT": "1"},
        doc="unknown model, enforcement off: PTL only",
    ),
    Scenario(
        "disable_auto_compact",
        S45,
        (Step(RUN, _ptl()),),
        env={"DISABLE_AUTO_COMPACT": "1"},
        doc="auto-compact off: no compaction at all; the PTL ends the turn",
    ),
    Scenario(
        "disable_auto_compact_with_env_window",
        S45,
        (Step(RUN, _ptl()),),
        env={"DISABLE_AUTO_COMPACT": "1", "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"},
        doc="same, with an env window",
    ),
    Scenario(
        "settings_autoCompactWindow_120k",
        S45,
        (Step(RUN, _ptl()),),
        settings={"autoCompactWindow": 120_000},
        doc="settings window: threshold 87,000, fired at 95,075",
    ),
    Scenario(
        "settings_modelSettings_150k",
        S45,
        (Step(RUN, _ptl()),),
        settings={"modelSettings": {S45: {"autoCompactWindow": 150_000}}},
        doc="per-model setting: threshold 117,000, fired at 125,075",
    ),
    Scenario(
        "settings_env_block",
        S45,
        (Step(RUN, _ptl()),),
        settings={"env": {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}},
        doc="an env block in settings.json is honoured: fired at 80,190",
    ),
    Scenario(
        "settings_autoCompactEnabled_false",
        S45,
        (Step(RUN, _ptl()),),
        settings={"autoCompactEnabled": False, "autoCompactWindow": 100_000},
        doc="autoCompactEnabled false: no compaction at all",
    ),
    Scenario(
        "autocompact_command_150k",
        S45,
        (Step("/autocompact 150k", Script(turns=0)), Step(RUN, _ptl())),
        doc="/autocompact writes modelSettings.<model>.autoCompactWindow: fired at 125,075",
    ),
    Scenario(
        "manual_compact_resume",
        S45,
        (
            Step(RUN, Script(turns=6, start=20_000, step=15_000)),
            Step("/compact keep the step numbers", Script(turns=0), resume="resume"),
            Step("continue", Script(turns=2), resume="resume"),
        ),
        doc="manual /compact: preTokens 110,000, the last round kept, instructions appended",
        golden=True,
    ),
    Scenario(
        "persisted_bash_output",
        S45,
        (Step(RUN, Script(turns=2, cmd="seq 1 {k}0000")),),
        doc="Bash output over 30,000 characters: tool-results/<task>.txt and a <persisted-output> block",
        golden=True,
    ),
    Scenario(
        "post_compact_file_restore_4",
        S45,
        (Step("read the files", Script(turns=8, start=20_000, step=15_000, tool="Read", cmd="{work}/f{k}.txt")),),
        env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"},
        tool="Read",
        files={f"f{k}.txt": "".join(f"file {k} line {n}\n" for n in range(1, 21)) for k in range(1, 10)},
        doc="threshold compaction after 5 reads: 4 file attachments re-inject the files read before (f4..f1)",
        golden=True,
    ),
    Scenario(
        "manual_compact_file_restore",
        S45,
        (
            Step("read the files", Script(turns=4, start=20_000, step=15_000, tool="Read", cmd="{work}/f{k}.txt")),
            Step("/compact", Script(turns=0), resume="resume"),
            Step("continue", Script(turns=1), resume="resume"),
        ),
        tool="Read",
        files={f"f{k}.txt": "".join(f"file {k} line {n}\n" for n in range(1, 21)) for k in range(1, 10)},
        doc="(not in the document) manual /compact after reads: where the re-attached files go",
        golden=True,
    ),
)

BY_NAME = {s.name: s for s in SCENARIOS}
