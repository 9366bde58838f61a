# rubriclib: `make run` sets up and runs the main job, `make test` runs the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run test lint e2e bench clean

$(BIN)/rubriclib: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

install: $(BIN)/rubriclib

# The main job: validate the built-in library and list every resolvable rubric.
run: install
	$(BIN)/rubriclib validate $(sort $(wildcard rubrics/*.md))
	$(BIN)/rubriclib list

lint: install
	$(BIN)/ruff check rubriclib tests benchmarks
	$(BIN)/ruff format --check rubriclib tests benchmarks
	$(BIN)/mypy rubriclib

test: lint
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .e2e dist build .pytest_cache .mypy_cache .ruff_cache .hypothesis
