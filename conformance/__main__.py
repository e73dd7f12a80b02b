"""python -m conformance [--version V] [--scenario NAME ...] [--out DIR] [--goldens] [--resume] [--readme]

Runs the scenarios with the real Claude Code (installed with npm into a cache folder on first use), compares what
it did with what inspector says, and prints the conformance table. --goldens refreshes the committed goldens under
tests/goldens (the scenarios marked for it); --resume instead takes every committed golden session, saves each
compaction strategy inspector has for it as a new session, resumes that with the real Claude Code and compares the
first request with inspector's preview; --readme writes the table into docs/conformance.md.
--inside runs inspector's statusline, MCP server and hook inside the real binary (conformance/inside.py).
--matrix measures the era matrix (every release of the version table x every model family, from the binaries:
conformance/matrix.py), --bisect finds the release where a rule changed, --repl runs a release's REPL in tmux.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from conformance.compare import compare, table
from conformance.goldens import GOLDENS, expand_golden, pack, pack_requests, prune_shared
from conformance.runner import DEFAULT_VERSION, install, run, save
from conformance.scenarios import BY_NAME, SCENARIOS

ROOT = Path(__file__).resolve().parent.parent


def write_readme(text: str, block: str) -> None:
    """A table of docs/conformance.md (--readme: the tables left the README), by the one writer of generated blocks."""
    from conformance.docblocks import write_block

    write_block(ROOT / "docs" / "conformance.md", block, text)


def resume_main(args: argparse.Namespace) -> int:
    from conformance.resume import run_resume, table as resume_table  # noqa: I001

    binary = install(args.version, log=lambda m: print(m, file=sys.stderr))
    names = args.scenario or sorted(p.name for p in GOLDENS.iterdir() if p.is_dir())
    tmp = Path(tempfile.mkdtemp(prefix="inspector-conformance-resume-"))
    rows = []
    for name in names:
        if not (GOLDENS / name).is_dir():
            print(f"{name}: no golden", file=sys.stderr)
            continue
        got = run_resume(expand_golden(name, tmp), binary)
        for r in got:
            print(f"{name} / {r.case}: {'ok' if r.ok else 'DIFFERENT: ' + r.detail}", file=sys.stderr)
        rows += got
    if not args.scenario:  # sessions older releases wrote (the bundled samples), saved in their own format
        from conformance.resume import run_resume_old

        for sample in sorted((ROOT / "sample_sessions").glob("*/*.jsonl")):
            got = run_resume_old(sample, binary)
            for r in got:
                print(f"{sample.name} / {r.case}: {'ok' if r.ok else 'DIFFERENT: ' + r.detail}", file=sys.stderr)
            rows += got
    text = resume_table(rows, args.version)
    print(text, end="")
    if args.readme:
        write_readme(text, "resume")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if rows and all(r.ok for r in rows) else 1


def write_golden(folder: Path) -> Path:
    """A run as committed for the normal tests: its transcripts, request log and persisted outputs compressed (xz)."""
    dst = GOLDENS / folder.name
    shutil.rmtree(dst, ignore_errors=True)
    for p in sorted(folder.rglob("*")):
        if p.is_dir() or p.parent.name == "home" or "home" in p.relative_to(folder).parts:
            continue
        rel = p.relative_to(folder)
        out = dst / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if p.name == "requests.json":  # its system prompts and tool lists go to the store all goldens share
            out = out.with_name(out.name + ".xz")
            out.write_bytes(pack_requests(p.read_bytes()))
        elif p.suffix in (".jsonl", ".json", ".txt", ".log") and p.name != "run.json":  # transcripts, persisted outputs
            out = out.with_name(out.name + ".xz")
            out.write_bytes(pack(p.read_bytes()))
        else:
            shutil.copyfile(p, out)
    prune_shared()
    return dst


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m conformance", description=__doc__.splitlines()[0])
    ap.add_argument("--version", default=DEFAULT_VERSION, help=f"the Claude Code release to run (default {DEFAULT_VERSION})")
    ap.add_argument("--scenario", action="append", help="run only these (repeatable; with --resume: golden names)")
    ap.add_argument("--out", type=Path, help="keep every run here (default: a temporary folder)")
    ap.add_argument("--goldens", action="store_true", help="refresh tests/goldens from this run")
    ap.add_argument("--resume", action="store_true", help="the round trip on the goldens: save each strategy, resume it, compare")
    ap.add_argument("--readme", action="store_true", help="write the table into docs/conformance.md")
    ap.add_argument(
        "--matrix",
        action="store_true",
        help="measure every release of the era matrix on every model (inspector/claude/era_matrix.json, docs/era-matrix.md)",
    )
    ap.add_argument("--model", action="append", help="with --matrix: only these models (repeatable)")
    ap.add_argument("--release", action="append", help="with --matrix: only these releases (repeatable)")
    ap.add_argument("--jobs", type=int, default=2, help="with --matrix: runs at once (default 2)")
    ap.add_argument(
        "--only",
        choices=("release", "cells", "summarizer", "repl"),
        help="with --matrix: only the cells (release × model), the per-release probes (leaf, re-attached "
        "files, the summary's analysis), the failing-summarizer probe again, or the REPL checks",
    )
    ap.add_argument(
        "--bisect",
        nargs=3,
        metavar=("PROBE", "LO", "HI"),
        help="the first release in (LO, HI] where PROBE's answer changes (probes: blocking, enforce-sonnet-4-5, "
        "enforce-sonnet-4-6, leaf, leaf-order, leaf-named, leaf-thinking, unanswered-call, repair, repair-order, "
        "enforce-sonnet-5, analysis, iterations, settings-auto-compact, settings-window, env-window, "
        "blocking-another-window: "
        "conformance.matrix.PROBES); recorded "
        "in inspector/claude/era_matrix.json",
    )
    ap.add_argument(
        "--catalog",
        action="store_true",
        help="the first release (from 2.1.159) whose code names each model of inspector's catalog, bisected over "
        "npm's releases (conformance/catalog.py); recorded in inspector/claude/first_named.json",
    )
    ap.add_argument("--catalog-up-to", metavar="VERSION", help="with --catalog: the newest release to check")
    ap.add_argument(
        "--random",
        type=int,
        metavar="N",
        help="run N generated scenarios (conformance/generate.py), each "
        "checked whole; a failing seed is kept in conformance/found.json",
    )
    ap.add_argument("--seed", type=int, default=0, help="with --random: the first seed (default 0)")
    ap.add_argument(
        "--random-repl",
        type=int,
        metavar="M",
        help="with --random: M of the generated scenarios typed "
        "into the REPL (in tmux), each ending in a partial compaction from the rewind menu (default N // 8)",
    )
    ap.add_argument(
        "--golden-seeds",
        metavar="S,S,...",
        help="run these generated seeds and commit each as a golden under tests/goldens (gen_<seed>), for the normal suite",
    )
    ap.add_argument("--doc", action="store_true", help="with --random: write the summary table to docs/conformance-generated.md")
    ap.add_argument(
        "--repl",
        nargs=3,
        metavar=("VERSION", "MODEL", "SIZES"),
        help="run VERSION's REPL in tmux on MODEL, the fake reporting SIZES (comma-separated) for its replies: "
        "where does the REPL compact (print mode is what the matrix measures)",
    )
    ap.add_argument(
        "--inside",
        action="store_true",
        help="inspector inside Claude Code: its statusline, MCP server and hook, each run by the real binary "
        "(conformance/inside.py); with --readme the table goes into docs/conformance.md",
    )
    ap.add_argument(
        "--crash-cuts",
        type=Path,
        metavar="RUNS",
        help="cut the transcripts of a folder of kept runs where a killed process leaves a file, resume each with "
        "VERSION and compare where it continued with inspector's answer (conformance/crash.py; --seed, --per-kind)",
    )
    ap.add_argument("--per-kind", type=int, default=4, help="with --crash-cuts: cuts of each shape (default 4)")
    args = ap.parse_args(argv)
    if args.crash_cuts:
        from conformance import crash

        install(args.version, log=lambda m: print(m, file=sys.stderr))
        return crash.main(args.crash_cuts, args.version, args.per_kind, args.seed)
    if args.inside:
        from conformance.inside import run_inside
        from conformance.inside import table as inside_table

        checks = run_inside(
            install(args.version, log=lambda m: print(m, file=sys.stderr)), log=lambda m: print(m, file=sys.stderr)
        )
        text = inside_table(checks, args.version)
        print(text, end="")
        if args.readme:
            write_readme(text, "inside")
        return 0 if checks and all(c.ok for c in checks) else 1
    if args.golden_seeds:
        from conformance import generated
        from conformance.generate import scenario

        claude = install(args.version, log=lambda m: print(m, file=sys.stderr))
        out = args.out or Path(tempfile.mkdtemp(prefix="inspector-conformance-goldens-"))
        bad = 0
        for seed in (int(x) for x in args.golden_seeds.split(",")):
            row = generated.check(scenario(seed), claude, out, round_trips=0)
            print(f"gen_{seed}: {'ok' if row.ok else 'FAILED ' + str(row.error or row.failures)}", file=sys.stderr)
            if row.ok:
                write_golden(out / f"gen_{seed}")
            bad += not row.ok
        return 1 if bad else 0
    if args.random is not None:
        import time

        from conformance import generated

        out = args.out or Path(tempfile.mkdtemp(prefix="inspector-conformance-generated-"))
        t0 = time.monotonic()
        rows = generated.run_generated(args.random, args.seed, args.version, jobs=args.jobs, out=out, repl=args.random_repl)
        kept = sum(1 for r in rows if r.name.startswith("found_"))
        text = generated.table(rows, args.version, args.random, args.seed, time.monotonic() - t0, args.jobs, kept)
        print(text, end="")
        print(f"runs kept in {out}", file=sys.stderr)
        if args.doc:
            generated.write_doc(text)
        return 0 if all(r.ok for r in rows) else 1
    if args.repl:
        from conformance.repl import repl_run

        v, model, sizes = args.repl
        got = repl_run(install(v, log=lambda m: print(m, file=sys.stderr)), model, tuple(int(x) for x in sizes.split(",")))
        print(json.dumps({k: got[k] for k in ("version", "model", "requests", "compacted_after_usage")}))
        return 0
    if args.catalog:
        from conformance import catalog

        catalog.run(args.catalog_up_to, log=lambda m: print(m, file=sys.stderr))
        return 0
    if args.bisect:
        from conformance import matrix

        entry = matrix.bisect_release(*args.bisect, log=lambda m: print(m, file=sys.stderr))
        print(f"{entry['probe']}: first {entry['first']} (before it {entry['before']}): {entry['what']}")
        return 0
    if args.matrix:
        from conformance import matrix

        return matrix.main(
            args.release or list(matrix.RELEASES),
            args.model or list(matrix.MODELS),
            jobs=args.jobs,
            only=args.only,
            probe_versions=None if args.release else list(matrix.PROBE_RELEASES),
            newer=not args.model,
        )
    if args.resume:
        return resume_main(args)
    binary = install(args.version, log=lambda m: print(m, file=sys.stderr))
    out = args.out or Path(tempfile.mkdtemp(prefix="inspector-conformance-runs-"))
    rows = []
    from conformance.generated import load_found

    found = {f.name: f for f in load_found()}
    for sc in [BY_NAME.get(n) or found[n] for n in args.scenario] if args.scenario else SCENARIOS:
        r = run(sc, binary, args.version)
        folder = save(r, out)
        r.close()
        failed = [st for st in r.steps if st.returncode not in (0, 1)]
        row = compare(folder)
        if failed:
            row.notes.append(f"claude exited {failed[0].returncode}: {failed[0].stderr.strip()[-200:]}")
        rows.append(row)
        print(f"{sc.name}: {'match' if row.match else 'DIFFERENT: ' + '; '.join(row.notes)}", file=sys.stderr)
        if args.goldens and sc.golden:
            write_golden(folder)
    text = table(rows, args.version)
    print(text, end="")
    print(f"runs kept in {out}", file=sys.stderr)
    if args.readme:
        write_readme(text, "conformance")
    return 0 if all(r.match for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
