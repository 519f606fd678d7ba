# tracelake: `make demo` runs the pipeline on the bundled sample traces; `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_OUT ?= out/demo

.PHONY: setup demo test bench lint check docs clean

setup: $(VENV)/.installed

# -qq: errors only. setuptools' notes (an editable install through a path finder, which the package-dir
# mapping needs: docs/packaging.md) and pip's would otherwise open a newcomer's first screen.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -qq --upgrade pip
	@echo "Installing tracelake and its dependencies into $(VENV) (a minute or so; errors only)"
	$(BIN)/pip install -qq -e '.[dev,dask,mcp]'
	touch $@

demo: setup
	@rm -rf $(DEMO_OUT)
	$(BIN)/tracelake run tests/data --out $(DEMO_OUT)
	@echo
	@echo "Demo report: $(abspath $(DEMO_OUT)/reports/index.html)"
	@echo "Demo lake:   $(abspath $(DEMO_OUT)/lake)"
	@echo "Query it:  $(BIN)/tracelake sql --lake $(DEMO_OUT)/lake \"SELECT * FROM traces\""
	@echo "      or:  $(BIN)/duckdb $(abspath $(DEMO_OUT)/lake)/tracelake.duckdb"

# Repo tier always; corpus tier when ../shared (or $$TRACELAKE_CORPUS) exists. TEST_WORKERS
# processes (pytest-xdist), each test file in one of them, so that a file's lakes are built once.
TEST_WORKERS ?= 2
test: setup
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=25

bench: setup
	$(BIN)/python -m bench

lint: setup
	$(BIN)/ruff check .

# What CI runs before the tests: ruff, and mypy held to its burn-down list (.ci/typecheck.py; about
# 30 CPU seconds from a cold cache, 2 with a warm one). The SQL module check is a test
# (tests/test_sql_modules.py).
check: lint
	$(BIN)/python .ci/typecheck.py

# The generated references: docs/schema.md, docs/cli.md, docs/views.md (tools/make_docs.py says from what).
docs: setup
	$(BIN)/python tools/make_docs.py

clean:
	rm -rf out .pytest_cache
