"""The same root priced by inspector and by ccusage, session by session: do the totals agree?

    python bench/cost.py [--root PROJECTS] [--work bench/work]

ccusage (installed by bench/run.py into bench/work/peers, or here if missing) runs with --offline (its bundled
prices). A session is compared when both name it (ccusage keys a session by its file name); the totals of those must
agree within 1%. The table goes to bench/results/cost.md and stdout.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from run import CCUSAGE_VERSION, ensure_peers  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE.parent.parent / "shared" / "realdata" / "projects")
    ap.add_argument("--work", type=Path, default=HERE / "work")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    if not root.is_dir():
        print(f"no projects root at {root}", file=sys.stderr)
        return 2
    peers = ensure_peers(args.work)
    if not peers["ccusage"]:
        print("ccusage could not be installed", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as t:
        cfg = Path(t) / "claude"
        cfg.mkdir()
        (cfg / "projects").symlink_to(root)
        env = {"CLAUDE_CONFIG_DIR": str(cfg), "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": t}
        cc = subprocess.run(
            peers["ccusage"] + ["session", "--json", "--offline"], capture_output=True, text=True, env=env, timeout=600
        )
        ours = subprocess.run(
            [sys.executable, "-m", "inspector", "cost", "--json", str(root)],
            capture_output=True,
            text=True,
            env={**env, "XDG_CONFIG_HOME": t},
            timeout=600,
        )
    if cc.returncode or ours.returncode:
        print(cc.stderr[-2000:], ours.stderr[-2000:], file=sys.stderr)
        return 1
    theirs = {s["period"]: s["totalCost"] for s in json.loads(cc.stdout)["session"]}
    mine: dict[str, float] = {}
    for line in ours.stdout.splitlines():
        d = json.loads(line)
        mine[Path(d["path"]).stem] = mine.get(Path(d["path"]).stem, 0.0) + d["cost_usd_priced"]
    both = sorted(set(theirs) & set(mine))
    a, b = sum(mine[k] for k in both), sum(theirs[k] for k in both)
    off = [k for k in both if abs(mine[k] - theirs[k]) > 0.01 * max(theirs[k], 0.01)]
    lines = [
        f"Root {root}: {len(mine)} sessions priced by inspector, {len(theirs)} by ccusage {CCUSAGE_VERSION} (--offline), "
        f"{len(both)} by both.",
        "",
        "| | inspector | ccusage | difference |",
        "|---|---:|---:|---:|",
        f"| the {len(both)} sessions both price | ${a:,.4f} | ${b:,.4f} | {100 * (a - b) / b if b else 0:+.3f}% |",
        f"| every session | ${sum(mine.values()):,.4f} | ${sum(theirs.values()):,.4f} | |",
        "",
        f"Sessions more than 1% apart: {len(off)}" + (" (" + ", ".join(off[:10]) + ")" if off else ""),
        f"Only inspector names: {len(set(mine) - set(theirs))}; only ccusage: {len(set(theirs) - set(mine))} "
        "(a session ccusage keys by a file name that is not a session id).",
    ]
    text = "\n".join(lines) + "\n"
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "cost.md").write_text(text)
    print(text)
    return 0 if b == 0 or abs(a - b) <= 0.01 * b else 1


if __name__ == "__main__":
    raise SystemExit(main())
