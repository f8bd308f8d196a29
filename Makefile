# The README's two commands: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/a2a-interview demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

# The interop suite (tests/interop) installs its own pinned parts on first use, once:
# npm ci into tests/interop/js/node_modules and the a2a-sdk 0.3 venv tests/interop/.venv-a2a03.
test: $(STAMP) lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/core.py
	$(BIN)/python bench/verify.py
	$(BIN)/python bench/serve.py    # needs Debian's wrk: apt-get install wrk
	$(BIN)/python bench/ledger_web.py

clean:
	rm -rf $(VENV) build src/*.egg-info
	rm -rf tests/interop/js/node_modules tests/interop/.venv-a2a03   # the interop suite's installs
