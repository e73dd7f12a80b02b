"""Write the generated parts of docs/: the CLI reference in cli.md, from the parsers themselves.

    python docs/generate.py

(The other tables are written by the scripts that measure them, through the same writer
(conformance/docblocks.py): bench/run.py, bench/fidelity.py,
`python -m conformance --readme / --doc / --matrix`.) tests/unit/test_cli.py fails when cli.md is not current.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from conformance.docblocks import write_block  # noqa: E402
from inspector.cli import cli_reference  # noqa: E402


def main() -> int:
    doc = HERE / "cli.md"
    write_block(doc, "cli", cli_reference())
    print(f"wrote {doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
