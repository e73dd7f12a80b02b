"""The fidelity table: every compaction in ../shared/realdata, what Claude Code recorded and what inspector says.

    python bench/fidelity.py [ROOT] [--no-readme]

For each compact and microcompact boundary of every real session (subagent transcripts aside): the session,
the Claude Code release that wrote it, the trigger, preTokens, the threshold inspector used and the rules that
gave it, the margin, the last API usage before and the first after, the predicted size after and its error.
Writes bench/results/fidelity.md and the table of docs/fidelity.md between its markers; prints the summary numbers
(median and 90th-percentile error of the predictions) that the tests hold.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector.tokens.explain import analyze  # noqa: E402
from inspector.transcript.session import Session  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "realdata" / "projects"


def n(x: int | None) -> str:
    return "—" if x is None else f"{x:,}"


def rows(data: Path) -> list[dict]:
    out = []
    for p in sorted(data.rglob("*.jsonl")):
        if "subagents" in p.parts:
            continue
        s = Session.load(p)
        rep = analyze(s)
        for e in rep.compactions:
            version = s.records[e.index].version or s.version
            err = None
            if e.first_usage_after and e.predicted_post_tokens is not None:
                err = (e.predicted_post_tokens - e.first_usage_after) / e.first_usage_after
            era = (
                ""
                if e.kind == "microcompact"
                else e.rules_of + ("" if s.records[e.index].version and "[" not in version else ", version not recorded")
            )
            out.append(
                {
                    "session": f"{p.parent.name[:28]}/{p.stem[:8]}",
                    "version": version,
                    "kind": e.kind,
                    "pre": e.pre_tokens,
                    "threshold": e.threshold,
                    "why": era,
                    "margin": e.margin if e.kind != "microcompact" else None,
                    "before": e.last_usage_before,
                    "after": e.first_usage_after,
                    "predicted": e.predicted_post_tokens,
                    "error": err,
                }
            )
    return out


def table(rs: list[dict]) -> str:
    lines = [
        "| session | Claude Code | trigger | preTokens | threshold (rules of) | margin | last usage before | first usage after "
        "| predicted | error |",
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rs:
        th = (
            "—"
            if r["kind"] == "microcompact"
            else (f"{n(r['threshold'])} ({r['why']})" if r["threshold"] is not None else f"none in force ({r['why']})")
        )
        err = "—" if r["error"] is None else f"{r['error'] * 100:+.1f}%"
        lines.append(
            f"| `{r['session']}` | {r['version']} | {r['kind']} | {n(r['pre'])} | {th} | {n(r['margin'])} | {n(r['before'])} | "
            f"{n(r['after'])} | {n(r['predicted'])} | {err} |"
        )
    errs = sorted(abs(r["error"]) for r in rs if r["error"] is not None)
    if errs:
        p90 = errs[max(0, math.ceil(0.9 * len(errs)) - 1)]
        lines.append("")
        lines.append(
            f"{len(rs)} boundaries; {len(errs)} followed by an API response, all predicted: median error "
            f"{statistics.median(errs) * 100:.1f}%, 90th percentile {p90 * 100:.1f}%, largest {errs[-1] * 100:.1f}%."
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default=str(DEFAULT_DATA))
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite the table of docs/fidelity.md")
    args = ap.parse_args(argv)
    data = Path(args.root)
    if not data.is_dir():
        print(f"fidelity: {data} is not a folder", file=sys.stderr)
        return 2
    text = table(rows(data))
    out = ROOT / "bench" / "results" / "fidelity.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text, end="")
    if not args.no_readme:
        from conformance.docblocks import write_block

        write_block(ROOT / "docs" / "fidelity.md", "fidelity", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
