"""Test isolation: never touch the real ~/.claude or ~/.cache; the layer markers; the shared fixtures.

Each folder under tests/ is a layer, marked by its name (`unit`, `app`, `snapshots`, `property`, `realdata`,
`conformance`, `browser`): `make test-fast` runs the unit and conformance layers, `make test` all of them. A test elsewhere
that needs the app or ../shared/realdata carries the marker itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import SAMPLES

LAYERS = ("unit", "app", "snapshots", "property", "realdata", "conformance", "browser")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        layer = Path(str(item.fspath)).parent.name
        if layer in LAYERS:
            item.add_marker(getattr(pytest.mark, layer))


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    """Every test gets its own CLAUDE_CONFIG_DIR, HOME and cache folder."""
    base = tmp_path_factory.mktemp("env")
    (base / "claude").mkdir()
    (base / "home").mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(base / "claude"))
    monkeypatch.setenv("HOME", str(base / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "data"))
    yield base


@pytest.fixture
def workdir(tmp_path):
    """A copy of the bundled samples: anything that writes beside a session works on this."""
    dst = tmp_path / "projects"
    shutil.copytree(SAMPLES, dst)
    return dst


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say once, at the end, how many tests need ../shared/realdata beside the clone and were skipped without it."""
    skipped = terminalreporter.stats.get("skipped", [])
    n = sum(1 for r in skipped if "shared/realdata" in str(getattr(r, "longrepr", "")))
    if n:
        terminalreporter.write_line(
            f"{n} test(s) skipped: they read real transcripts from ../shared/realdata, which is not beside this "
            "clone (see README: Tests)"
        )
