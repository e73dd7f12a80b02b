"""Write the generated parts of docs/: the CLI reference in cli.md, from the parsers themselves.

    python docs/generate.py

(The other tables are written by the scripts that measure them: bench/run.py, bench/fidelity.py,
`python -m conformance --readme / --doc / --matrix`.) tests/test_cli.py fails when cli.md is not current.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from inspector.cli import CLI_END, CLI_START, cli_reference  # noqa: E402


def main() -> int:
    doc = HERE / "cli.md"
    body = doc.read_text()
    head, rest = body.split(CLI_START, 1)
    _, tail = rest.split(CLI_END, 1)
    doc.write_text(head + CLI_START + cli_reference() + CLI_END + tail)
    print(f"wrote {doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
