# The two commands of the README: `make book` and `make test`.
# Both create the virtualenv .venv/ first if it is missing or out of date.
# `make data` regenerates the five reconstructed data folders (a development tool,
# tools/reconstruct/, outside the benchbook package).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: book test lint strict data bench clean distclean

book: $(STAMP)
	$(BIN)/jupyter-book build book

test: lint
	$(BIN)/python -m pytest

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

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python 3.11 or newer is needed (found: $$($(PYTHON) --version))"; exit 1; }
	@# venv may be missing from a minimal Debian Python; fall back to virtualenv.
	$(PYTHON) -m venv $(VENV) || { $(PYTHON) -m pip install --user virtualenv && $(PYTHON) -m virtualenv $(VENV); }
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[test]'
	touch $(STAMP)

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
