# The dev loop. `make check` is what CI runs before the tests; `make test-fast` skips the slow layers.
PY ?= python
SRC := inspector tests conformance bench docs

.PHONY: check fmt test test-fast snapshots bench fuzz conformance docs

check:
	ruff check $(SRC)
	ruff format --check $(SRC)
	lint-imports --no-cache
	mypy inspector/transcript inspector/claude inspector/tokens inspector/library inspector/compact inspector/edit

fmt:
	ruff format $(SRC)
	ruff check --fix $(SRC)

test: check
	$(PY) -m pytest -q

test-fast:
	$(PY) -m pytest -q -x -n auto -m "not app and not snapshots and not property and not realdata and not browser"

snapshots:
	$(PY) -m pytest -q tests/snapshots --snapshot-update

bench:
	$(PY) bench/run.py

fuzz:
	$(PY) bench/fuzz.py --files 1300

conformance:
	$(PY) -m conformance

docs:
	$(PY) docs/generate.py
