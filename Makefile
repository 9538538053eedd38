# Two entry points for a fresh machine:
#   make run    set up (or reuse) .venv and launch the tutor
#   make test   set up (or reuse) .venv and run the test suite (default tier; make soak: the soak tier)
# TORCH_SPEC picks the torch build installed before the project. torch==2.13.0 from PyPI is the
# right build for each platform (CUDA on Linux, MPS on macOS); on the course machines the same
# pin installs a CPU build from local disk in seconds. Override it, e.g.
#   make run TORCH_SPEC="torch --index-url https://download.pytorch.org/whl/cpu"
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test soak setup bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install -q $(TORCH_SPEC)
	$(BIN)/python -m pip install -q -e ".[test]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/minigpt

# Two tiers (DEVELOPING.md, "Tests"): `make test` runs the default tier, every behaviour checked once;
# `make soak` runs the repetitions (more seeds, more kill points, colour modes, hypothesis at 600
# examples). .ci/run runs both. On three pytest-xdist workers, test by test (--dist loadgroup): only
# the tests that share one server, browser or fixed folder carry an xdist_group and stay together.
# TEST_WORKERS=0 runs in one process. Three workers on two cores: each worker waits ~40% of its
# time on subprocesses and timers, so a third keeps both cores busy (the same tree, quiet: 10 min 0 s
# on 3 workers against 11 min 45 s on 2, 3 December 2026).
TEST_WORKERS ?= 3
PYTEST := $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

test: $(STAMP)
	$(PYTEST)

soak: $(STAMP)
	$(PYTEST) -m "soak or hypothesis" --hypothesis-profile=soak

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
