# The two commands of the README: `make book` and `make test`.
# Both create the virtualenv .venv/ first if it is missing or out of date, installing the exact
# versions of requirements.lock (with their hashes); `make lock` regenerates that file.
# `make data` regenerates the five reconstructed data folders (a development tool,
# tools/reconstruct/, outside the benchbook package).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCK := requirements.lock
UV := uv==0.13.8

.PHONY: book test test-fast lint strict data bench clean distclean lock lock-upgrade marks

book: $(STAMP)
	$(BIN)/jupyter-book build book

# Tests run on every CPU (pytest-xdist; JOBS=1 for one process); the tests that share a build or
# an executed chapter run in one worker, so it is made once (tests/worker_groups.py).
JOBS ?= auto
PYTEST := $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup

test: lint
	$(PYTEST)

# The inner loop, under two minutes: no book builds, browsers or chapter executions (the
# markers build, browser and slow); `make test` runs everything.
test-fast: lint
	$(PYTEST) -m "not build and not browser and not slow"

# pyflakes, pycodestyle, isort, pyupgrade and a complexity budget of 15 (pyproject.toml)
lint: $(STAMP)
	$(BIN)/ruff check .

# What CI runs for the site: warnings are errors.
strict: $(STAMP)
	$(BIN)/jupyter-book build book -W -n --keep-going

# The same seed gives the same bytes: `git diff data/` after this shows what a generator change did.
data: $(STAMP)
	$(BIN)/python -m tools.reconstruct h100 data/h100-dense-vs-moe-mtp
	$(BIN)/python -m tools.reconstruct strix data/strix-halo-baseline
	$(BIN)/python -m tools.reconstruct dense-sparse data/3090-dense-vs-sparse
	$(BIN)/python -m tools.reconstruct power-sweep data/power-sweep
	$(BIN)/python -m tools.reconstruct gb10 data/gb10-mtp

# Marks proven by perturbation: each generator choice moved, one at a time; every page place that
# moves must carry its mark, and none that does not (tools/marks_check.py). ARGS: --folder F
# --choice ID (repeatable) to run a part, --write to record where each choice lands (then make data).
marks: $(STAMP)
	$(BIN)/python -m tools.marks_check $(ARGS)

$(STAMP): pyproject.toml $(LOCK)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python 3.11 or newer is needed (found: $$($(PYTHON) --version))"; exit 1; }
	@# venv may be missing from a minimal Debian Python; fall back to virtualenv.
	$(PYTHON) -m venv $(VENV) || { $(PYTHON) -m pip install --user virtualenv && $(PYTHON) -m virtualenv $(VENV); }
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --no-deps -e .
	touch $(STAMP)

# requirements.lock: every package of pyproject.toml (with the test extra) at one version, with
# hashes, for every platform and Python >= 3.11. `make lock` keeps the versions already locked
# where pyproject.toml still allows them; `make lock-upgrade` moves everything to the newest.
lock: $(STAMP)
	$(BIN)/python -m pip install -q '$(UV)'
	$(BIN)/uv pip compile pyproject.toml --extra test --universal --python-version 3.11 --generate-hashes \
		--quiet -o $(LOCK)

lock-upgrade: $(STAMP)
	$(BIN)/python -m pip install -q '$(UV)'
	$(BIN)/uv pip compile pyproject.toml --extra test --universal --python-version 3.11 --generate-hashes \
		--quiet --upgrade -o $(LOCK)

clean:
	rm -rf book/_build book/studies/*.ipynb book/studies/*.run.json book/studies/*/

distclean: clean
	rm -rf $(VENV)

# Speed and memory figures (not part of the tests). SIZE_MB sets the generated log sizes.
SIZE_MB ?= 300 1000
bench: $(STAMP)
	$(BIN)/python benchmarks/log_ingest.py --size-mb $(SIZE_MB) --variants
	$(BIN)/python benchmarks/bench_json_ingest.py
	$(BIN)/python benchmarks/build_times.py
