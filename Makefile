# The dev loop. `make check` is what CI runs before the tests; `make test-fast` skips the slow layers.
PY ?= python
SRC := inspector tests conformance bench docs

.PHONY: check fmt test test-fast snapshots bench fuzz conformance docs

check:
	ruff check $(SRC)
	ruff format --check $(SRC)
	lint-imports --no-cache
	mypy inspector/transcript

fmt:
	ruff format $(SRC)
	ruff check --fix $(SRC)

test: check
	$(PY) -m pytest -q

test-fast:
	$(PY) -m pytest -q -x --deselect tests/test_realdata.py --deselect tests/test_realdata_compact.py \
		--deselect tests/test_fuzz.py --deselect tests/test_tui.py --deselect tests/test_snapshots.py

snapshots:
	$(PY) -m pytest -q tests/test_snapshots.py --snapshot-update

bench:
	$(PY) bench/run.py

fuzz:
	$(PY) bench/fuzz.py --files 1300

conformance:
	$(PY) -m conformance

docs:
	$(PY) docs/generate.py
