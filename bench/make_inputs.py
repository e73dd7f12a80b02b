"""Benchmark inputs, made with the sample generator scaled up (deterministic).

- `big/`: a projects root holding one long session of about 200 MB and 100k records: thinking,
  parallel tool calls, 100 KB tool results, hook progress records, a 1 MB image line, Agent
  subagents and an automatic compaction (with its acompact sidechain) every time the context
  crosses the threshold;
- `small/`: a projects root with one short session of about 10 KB;
- `root/`: a projects root of 2,000 sessions (about 2 GB) across 50 projects, copied from the
  generator's sessions with fresh session ids.
"""

from __future__ import annotations

import argparse
import base64
import random
import shutil
import sys
import uuid as uuidlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector.samplegen import (  # noqa: E402
    AUTO_THRESHOLD,
    MODULES,
    PROJECT_CWD,
    START,
    SUMMARY_TEXT,
    Writer,
    generate,
    module_source,
    numbered,
    pytest_log,
)


class StreamWriter(Writer):
    """A Writer that streams lines to a file instead of keeping them."""

    def __init__(self, out: Any, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.out = out
        self.count = 0

    def emit(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.out.write(orjson.dumps(obj) + b"\n")
        self.count += 1
        return obj


def big_session(folder: Path, target_bytes: int = 200 << 20, seed: int = 11) -> Path:
    rng = random.Random(seed)
    sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    proj = folder / "-home-ann-work-weatherly"
    proj.mkdir(parents=True, exist_ok=True)
    sdir = proj / sid
    path = proj / f"{sid}.jsonl"
    big_text = [numbered(module_source(p, rng, 40)) for p in list(MODULES)[:4]]  # ~100 KB each
    small_text = [numbered(module_source(p, rng, 1)) for p in MODULES]
    logs = [pytest_log(rng, 60, []) for _ in range(4)]
    image = base64.b64encode(rng.randbytes(750_000)).decode()  # a ~1 MB line
    with open(path, "wb") as f:
        w = StreamWriter(f, rng, session_id=sid, cwd=PROJECT_CWD, version="2.1.88", start=START)
        w.user("Refactor the weatherly API client into smaller modules and keep every test green.", promptId="p-0")
        cycle = 0
        while f.tell() < target_bytes:
            cycle += 1
            w.user(
                f"Step {cycle}: continue with the next module and run the tests."
                if cycle % 7
                else [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}},
                    {"type": "text", "text": "This is the failure I see."},
                ]
                if cycle == 7
                else "Keep going.",
                promptId=f"p-{cycle}",
            )
            w.response(
                [
                    {
                        "type": "thinking",
                        "thinking": "Plan: " + " ".join(rng.choice(small_text)[:1500].split()),
                        "signature": "c2ln",
                    },
                    {"type": "text", "text": f"Working on step {cycle}: reading the modules involved."},
                ]
            )
            for k in range(8):
                text = big_text[(cycle + k) % len(big_text)] if (k == 0 and cycle % 3 == 0) else rng.choice(small_text)[:2500]
                name = "Read" if k % 3 else "Bash"
                inp = (
                    {"file_path": f"{PROJECT_CWD}/{list(MODULES)[k % len(MODULES)]}"}
                    if name == "Read"
                    else {"command": "uv run pytest -q"}
                )
                tid, src = w.call(name, inp, text if name == "Read" else rng.choice(logs))
                for _ in range(2):  # hook progress records, in the chain (legacy shape)
                    prog = w.envelope(
                        "progress",
                        data={"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:" + name},
                        toolUseID=tid,
                        parentToolUseID=tid,
                    )
                    w.emit(prog)
                    w.last = prog["uuid"]
            if cycle % 50 == 0:
                aid = "a" + w.hexid(16)
                tid = w.tool_id()
                src = w.response(
                    [
                        {
                            "type": "tool_use",
                            "id": tid,
                            "name": "Agent",
                            "input": {"description": "Explore", "prompt": "Look around."},
                        }
                    ],
                    stop="tool_use",
                )[-1]
                sub_path = sdir / "subagents" / f"agent-{aid}.jsonl"
                sub_path.parent.mkdir(parents=True, exist_ok=True)
                with open(sub_path, "wb") as sf:
                    sub = StreamWriter(
                        sf,
                        random.Random(cycle),
                        session_id=sid,
                        cwd=PROJECT_CWD,
                        version="2.1.88",
                        start=w.t,
                        sidechain=True,
                        agent_id=aid,
                    )
                    sub.user("Look around.", parent=None)
                    for _ in range(5):
                        sub.call("Read", {"file_path": f"{PROJECT_CWD}/weatherly/api.py"}, rng.choice(small_text))
                    sub.response([{"type": "text", "text": "Done looking."}])
                w.tool_result(src, tid, [{"type": "text", "text": "Done looking."}], {"status": "completed", "agentId": aid})
            if w.last_usage_total + 40 >= AUTO_THRESHOLD:
                logical = w.last
                cid = "acompact-" + w.hexid(16)
                cp = sdir / "subagents" / f"agent-{cid}.jsonl"
                cp.parent.mkdir(parents=True, exist_ok=True)
                with open(cp, "wb") as cf:
                    comp = StreamWriter(
                        cf,
                        random.Random(cycle + 1),
                        session_id=sid,
                        cwd=PROJECT_CWD,
                        version="2.1.88",
                        start=w.t,
                        sidechain=True,
                        agent_id=cid,
                    )
                    comp.ctx, comp.last_usage_total = w.ctx, w.last_usage_total
                    comp.user("Summarize the conversation so far.", parent=logical)
                    comp.response(
                        [{"type": "text", "text": "<analysis>notes</analysis>\n<summary>\n" + SUMMARY_TEXT + "\n</summary>"}]
                    )
                w.t += timedelta(seconds=60)
                b = w.system(
                    "compact_boundary",
                    parent=None,
                    content="Conversation compacted",
                    level="info",
                    compactMetadata={"trigger": "auto", "preTokens": w.last_usage_total + 40},
                    logicalParentUuid=logical,
                )
                w.ctx, w.last_usage_total = 2_000, 0
                w.user(
                    "This session is being continued from a previous conversation that ran out of context. The summary below "
                    "covers "
                    "the earlier portion of the conversation.\n\nSummary:\n" + SUMMARY_TEXT,
                    parent=b,
                    isVisibleInTranscriptOnly=True,
                    isCompactSummary=True,
                )
        w.response([{"type": "text", "text": "All modules are split and the suite passes."}])
        w.meta("ai-title", sessionId=sid, aiTitle="Split the weatherly API client (benchmark session)")
        records = w.count
    print(f"big session: {path} ({path.stat().st_size / 2**20:.0f} MB, {records:,} records)", file=sys.stderr)
    return path


def small_session(folder: Path) -> Path:
    rng = random.Random(5)
    sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    path = folder / "-home-ann-work-weatherly" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        w = StreamWriter(f, rng, session_id=sid, cwd=PROJECT_CWD, version="2.1.88", start=START)
        w.user("What does fetch_hourly return for an empty response?")
        w.call("Read", {"file_path": f"{PROJECT_CWD}/weatherly/api.py"}, numbered(module_source("weatherly/api.py", rng))[:6000])
        w.response([{"type": "text", "text": "An empty list: `points` is built from `zip(times, temps)`, both empty."}])
    return path


def projects_root(folder: Path, sessions: int = 2000, projects: int = 50, seed: int = 3) -> int:
    """A projects root of `sessions` sessions, copied from generated templates with fresh ids."""
    tmpl = folder.parent / "templates"
    if tmpl.exists():
        shutil.rmtree(tmpl)
    files: list[Path] = []
    for k in range(4):
        files += generate(tmpl / f"s{k}", seed=seed + k, scale=4 + k % 3)
    files = [f for f in files if f.stat().st_size > 0]
    blobs = [(f, f.read_bytes(), f.with_suffix("")) for f in files]
    rng = random.Random(seed)
    total = 0
    for n in range(sessions):
        f, data, beside = blobs[n % len(blobs)]
        old = f.stem.encode()
        new_id = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
        proj = folder / f"-home-dev-project-{n % projects:02d}"
        proj.mkdir(parents=True, exist_ok=True)
        dst = proj / f"{new_id}.jsonl"
        dst.write_bytes(data.replace(old, new_id.encode()))
        total += len(data)
        if beside.is_dir():
            shutil.copytree(beside, proj / new_id)
    shutil.rmtree(tmpl)
    print(f"projects root: {folder} ({sessions:,} sessions, {total / 2**30:.2f} GB)", file=sys.stderr)
    return total


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--big-mb", type=int, default=200)
    p.add_argument("--sessions", type=int, default=2000)
    args = p.parse_args(argv)
    if args.out.exists():
        shutil.rmtree(args.out)
    big_session(args.out / "big" / "projects", args.big_mb << 20)
    small_session(args.out / "small" / "projects")
    projects_root(args.out / "root" / "projects", args.sessions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
