# Two entry points for a fresh machine:
#   make run    set up (or reuse) .venv and launch the tutor
#   make test   set up (or reuse) .venv and run the test suite
# TORCH_SPEC picks the torch build installed before the project. torch==2.13.0 from PyPI is the
# right build for each platform (CUDA on Linux, MPS on macOS); on the course machines the same
# pin installs a CPU build from local disk in seconds. Override it, e.g.
#   make run TORCH_SPEC="torch --index-url https://download.pytorch.org/whl/cpu"
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test setup bench clean

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

# The suite runs on two pytest-xdist workers, one test file each at a time (--dist loadfile: a
# file's module fixtures, its served tutor and its fixed snapshot folder stay in one process).
# On two quiet cores a clean clone's suite took 14 min 26 s this way (2 December 2026, early; 21 min
# 31 s later that day, when the host was taking CPU from this VM); in one
# process it took 26 min 04 s against 15 min 30 s on two workers (1 December 2026, same tree and
# machine). TEST_WORKERS=0 runs it in one process.
# --no-loadscope-reorder: files go out in collection order, the longest first (LONG_FILES in
# tests/conftest.py), instead of the files with the most tests first.
TEST_WORKERS ?= 2

test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
