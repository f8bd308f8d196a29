# The README's two commands: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench mutation clean

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

# Every benchmark of docs/benchmarks.md in turn, niced; one whose tool is missing is
# skipped with a line saying what is missing and how to get it, and the others still run.
NICE := nice -n 10
bench: $(STAMP)
	$(NICE) $(BIN)/python bench/core.py
	$(NICE) $(BIN)/python bench/verify.py
	$(NICE) $(BIN)/python bench/calls.py
	$(NICE) $(BIN)/python bench/verify_many.py
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null; then \
	$(NICE) $(BIN)/python bench/population.py --agents 1000; \
	else echo "SKIPPED bench/population.py: PostgreSQL's binaries are not installed (apt-get install postgresql)"; fi
	@if command -v wrk >/dev/null; then $(NICE) $(BIN)/python bench/serve.py; \
	else echo "SKIPPED bench/serve.py: its load generator wrk is not on PATH (apt-get install wrk)"; fi
	@if command -v redis-server >/dev/null; then $(NICE) $(BIN)/python bench/load.py; \
	else echo "bench/load.py without its Redis rows: redis-server is not on PATH (apt-get install redis-server)"; \
	$(NICE) $(BIN)/python bench/load.py --no-redis; fi
	$(NICE) $(BIN)/python bench/attack.py
	$(NICE) $(BIN)/python bench/verifier_bomb.py
	@if [ -z "$$A2A_INTERVIEW_BENCH_PG" ]; then echo "bench/ledger.py without its PostgreSQL row: set A2A_INTERVIEW_BENCH_PG=postgresql://... to measure one"; fi
	$(NICE) $(BIN)/python bench/ledger.py 2000
	$(NICE) $(BIN)/python bench/ledger_web.py
	rm -f build/bench-scale.db; mkdir -p build; $(NICE) $(BIN)/python bench/ledger_scale.py --store build/bench-scale.db   # 100,000 agents: about 10 minutes
	$(NICE) $(BIN)/python bench/ledger_search.py build/bench-scale.db   # search by URL or name, on that store

# Mutation testing (docs/benchmarks.md): hours on two cores, so apart from `make bench`.
mutation: $(STAMP)
	nice -n 19 $(BIN)/python bench/mutation.py

clean:
	rm -rf $(VENV) build src/*.egg-info
	rm -rf tests/interop/js/node_modules tests/interop/.venv-a2a03   # the interop suite's installs
