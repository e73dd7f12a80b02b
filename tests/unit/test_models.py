"""The model registry (inspector/claude/models.json): one table of models, read by every part that needs one."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from inspector.claude import models
from inspector.library.cost import PriceTable
from inspector.tokens.thresholds import Settings, max_output_limits, thresholds

PACKAGE = Path(models.__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("name", "key", "mid"),
    [
        ("claude-sonnet-4-5-20250929", "sonnet-4-5", "claude-sonnet-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "sonnet-4-5", "claude-sonnet-4-5"),
        ("claude-opus-4-1@20250805", "opus-4-1", "claude-opus-4-1"),
        ("claude-opus-4-6[1m]", "opus-4-6", "claude-opus-4-6"),
        ("vertex_ai/claude-haiku-4-5", "haiku-4-5", "claude-haiku-4-5"),
        ("claude-3-5-sonnet-20241022", "sonnet-3-5", "claude-3-5-sonnet"),
        ("claude-opus-4-20250514", "opus-4-0", "claude-opus-4-0"),  # an alias
        ("claude-sonnet-4", "sonnet-4-0", "claude-sonnet-4-0"),
        ("claude-3-opus-20240229", "opus-3", "claude-3-opus"),
        ("opus[1m]", "opus", None),  # a model setting names no model
        ("sonnet-4-5", "sonnet-4-5", None),  # no "claude-": not a model id
        ("claude-someday-9", "someday-9", None),
        ("gpt-5", "gpt-5", None),
    ],
)
def test_names(name: str, key: str, mid: str | None) -> None:
    assert models.price_key(name) == key
    assert models.price_key(key) == key  # a key is its own key
    assert models.model_id(name) == mid


def test_data_file_is_consistent() -> None:
    data = orjson.loads(models.DATA.read_bytes())
    keys = [models.price_key(mid) for mid in data["models"]]
    assert len(keys) == len(set(keys)), "two entries share a price key"
    for mid, e in data["models"].items():
        assert mid.startswith("claude-") and models.model_id(mid) == mid
        rows = e.get("prices", [])
        days = [r["since"] for r in rows]
        assert days[:1] in ([], [None]), f"{mid}: the first row must apply from the start"
        assert days[1:] == sorted(d for d in days[1:] if d), f"{mid}: rows must be in date order"
        for r in rows:
            assert r["source"].startswith("https://"), f"{mid}: every price row names its source"
        for alias in e.get("aliases", []):
            assert models.model_id(alias) == mid


def test_catalog_and_prices_come_from_the_registry() -> None:
    # the 2.1.328 catalog and the prices read the same entry
    cm = models.catalog("claude-sonnet-4-5-20250929")
    assert cm is not None and (cm.window, cm.max_output, cm.max_output_upper) == (200_000, 32_000, 64_000)
    assert models.catalog("claude-3-opus") is None  # priced, not in the catalog
    fable = PriceTable.load({"INSPECTOR_PRICES": "/nonexistent"}).rates_for("claude-fable-5-2")
    assert fable is not None and (fable.input, fable.output, fable.cache_read) == (8, 40, 0.2)
    # dated rows: Sonnet 5.5's cache reads were cut on 2026-10-07
    table = PriceTable.load({"INSPECTOR_PRICES": "/nonexistent"})
    before = table.rates_for("claude-sonnet-5-5", "2026-10-06")
    after = table.rates_for("claude-sonnet-5-5", "2026-10-07")
    assert before is not None and after is not None and (before.cache_read, after.cache_read) == (0.20, 0.10)


def test_max_output_rules_and_catalog_agree_for_every_catalog_model() -> None:
    """The two max-output sources are two releases' rules; where both know a model the reference release's
    substring rule gives the catalog's numbers, except the models the catalog lists that 2.1.88 did not know."""
    differing = []
    for mid in models.catalog_ids():
        cm = models.catalog(mid)
        assert cm is not None
        if max_output_limits(mid) != (cm.max_output, cm.max_output_upper):
            differing.append(mid)
    # the catalog's newer models (all natively 1M): 2.1.88 did not know them
    assert differing and all(models.catalog(m).native_1m for m in differing), differing  # type: ignore[union-attr]


def test_a_new_model_is_one_entry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    data = orjson.loads(models.DATA.read_bytes())
    data["models"]["claude-newt-6"] = {
        "catalog": {"window": 400_000, "max_output": 64_000, "max_output_upper": 128_000},
        "prices": [
            {
                "since": None,
                "input": 1,
                "output": 2,
                "cache_write_5m": 3,
                "cache_write_1h": 4,
                "cache_read": 0.5,
                "source": "https://example.invalid/prices",
            }
        ],
    }
    f = tmp_path / "models.json"
    f.write_bytes(orjson.dumps(data))
    monkeypatch.setattr(models, "DATA", f)
    models.registry.cache_clear()
    try:
        th = thresholds(Settings(model="claude-newt-6-20270101"), version="2.1.328")
        assert th.context_window == 400_000 and th.max_output_tokens == 64_000
        r = PriceTable({k: rows[-1].rates for k, rows in models.price_rows().items()}).rates_for("claude-newt-6")
        assert r is not None and r.output == 2
    finally:
        models.registry.cache_clear()


def test_no_other_model_table_in_the_package() -> None:
    """A model's facts live in models.json: no module keeps its own list of model names."""
    name = re.compile(r"""["'](?:claude-)?(?:opus|sonnet|haiku|fable|mythos)-\d[\w-]*["']""")
    allowed = {"inspector/samplegen.py", "inspector/compact/summarize/anthropic_api.py"}  # made-up sessions; a default
    found = {}
    for f in PACKAGE.rglob("*.py"):
        rel = f.relative_to(PACKAGE.parent).as_posix()
        if rel in allowed:
            continue
        hits = [
            m.group(0)
            for line in f.read_text().splitlines()
            if not line.lstrip().startswith("#")
            for m in name.finditer(line)
            if '"""' not in line
        ]
        if len(hits) > 2:  # a docstring's example or two is not a table
            found[rel] = hits
    assert not found, found


@pytest.mark.parametrize(
    ("name", "at_212", "at_328", "at_332"),
    [  # read from each release's code: the catalog's lean_prompt capability, else its own fallback list
        ("claude-opus-5[1m]", None, True, True),  # the capability, from the release whose catalog names it (2.1.219)
        ("claude-mythos-5-1", None, True, True),  # (2.1.257: before, unknown, left to the flag)
        ("claude-opus-4-6", False, False, False),  # named by every fallback
        ("claude-sonnet-5", False, False, False),
        ("claude-3-5-haiku-20241022", False, False, False),
        ("claude-haiku-4-5-20251001", False, False, False),
        # in the catalog without the capability, named by no fallback; 2.1.200-2.1.290 name it lean first
        ("claude-mythos-5", True, True, True),
        ("claude-foo-1", None, True, True),  # unknown: 2.1.200-2.1.290 leave it to a feature flag
        ("claude-sonnet-4-7", False, False, True),  # to 2.1.328: any "sonnet"; 2.1.332: ten exact ids
    ],
)
def test_lean_prompt_by_release(name: str, at_212: bool | None, at_328: bool, at_332: bool) -> None:
    assert models.lean_prompt(name, (2, 1, 328)) is at_328
    assert models.lean_prompt(name, (2, 1, 332)) is at_332
    assert models.lean_prompt(name, (2, 1, 333)) is at_332
    assert models.lean_prompt(name, (2, 1, 212)) is at_212  # between 2.1.200 and 2.1.238, read alike
    assert models.lean_prompt(name, (2, 1, 150)) is None  # before the first release read
    # between the two releases read, an answer only where both say the same
    assert models.lean_prompt(name, (2, 1, 330)) is (at_328 if at_328 == at_332 else None)


def test_the_capability_counts_from_the_release_whose_catalog_names_the_model() -> None:
    """A model newer than a release is an unknown one to it (first_named.json): its catalog capability does not
    apply, the release's fallback does (claude-haiku-5-5, named from 2.1.293: its name holds "haiku")."""
    assert models.lean_prompt("claude-opus-5", (2, 1, 218)) is None and models.lean_prompt("claude-opus-5", (2, 1, 230))
    assert models.lean_prompt("claude-haiku-5-5", (2, 1, 270)) is False
    assert models.lean_prompt("claude-haiku-5-5", (2, 1, 300)) is True


@pytest.mark.parametrize(
    ("name", "gets"),
    [  # read from 2.1.328's and 2.1.332's code (mce): the canonical name in the release's list of Claude 3.x and 4.x
        ("claude-sonnet-4-5-20250929", True),
        ("claude-haiku-4-5", True),
        ("claude-3-5-sonnet-20241022", True),
        ("claude-opus-4-7[1m]", True),
        ("claude-opus-4-8", False),
        ("claude-opus-5[1m]", False),
        ("claude-sonnet-5", False),
        ("claude-foo-1", False),  # a model the catalog does not know
        ("us.anthropic.application-inference-profile/abc", True),
    ],
)
def test_the_task_tools_by_model(name: str, gets: bool) -> None:
    for release in ((2, 1, 328), (2, 1, 330), (2, 1, 332), (2, 1, 340)):
        assert models.task_tools(name, release) is gets
    assert models.task_tools(name, (2, 1, 212)) is None  # not read


def test_subagent_nudges_follow_the_prompt_bundle() -> None:
    assert models.subagent_nudges("claude-opus-5[1m]", (2, 1, 332)) is False
    assert models.subagent_nudges("claude-opus-5", (2, 1, 328)) is False
    for name in ("claude-opus-4-6", "claude-opus-5-5", "claude-foo-1", "claude-sonnet-5"):
        assert models.subagent_nudges(name, (2, 1, 332)) is True
    # the model floor is 2.1.219's (bisected): before it every model is nudged; from it a model the release does not
    # know yet has no capability (claude-opus-5 is first named in 2.1.219)
    assert models.subagent_nudges("claude-opus-5", (2, 1, 152)) is True
    assert models.subagent_nudges("claude-opus-5", (2, 1, 218)) is True
    assert models.subagent_nudges("claude-opus-5", (2, 1, 219)) is False
    assert models.subagent_nudges("claude-opus-5", (2, 1, 285)) is False
    assert models.subagent_nudges("claude-opus-5", None) is None


def test_a_retired_opus_is_run_as_opus_5_5_by_the_releases_that_do_so():
    """2.1.328 and 2.1.332 sent every request of a process started with --model claude-opus-4-0 or claude-opus-4-1 as
    claude-opus-5-5 (generated runs on each, both releases)."""
    from inspector.claude.models import run_as

    assert run_as("claude-opus-4-1", (2, 1, 332)) == "claude-opus-5-5"
    assert run_as("claude-opus-4-0", (2, 1, 328)) == "claude-opus-5-5"
    assert run_as("claude-opus-4-1-20250805[1m]", (2, 1, 330)) == "claude-opus-5-5[1m]"
    assert run_as("claude-opus-4-5", (2, 1, 332)) == "claude-opus-4-5"
    assert run_as("claude-opus-4-1", (2, 1, 200)) == "claude-opus-4-1"  # not measured there
    assert run_as("claude-opus-4-1", None) == "claude-opus-4-1"
