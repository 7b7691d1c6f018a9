# Everyday commands (as in the LangGraph templates); .ci/run is the same, from a fresh install.
PY := .venv/bin

.PHONY: install test lint bench

install:  ## the virtual environment with every extra and the offline models
	bash scripts/install.sh

test:  ## the whole test suite (minutes; tests/bench alone: make test TESTS=tests/bench)
	$(PY)/python -m pytest -q $(TESTS)

lint:  ## what CI checks before the tests
	$(PY)/ruff check .
	$(PY)/ruff format --check .
	$(PY)/mypy

bench:  ## the benchmark commands (they live in evals/bench/, beside the product)
	$(PY)/grasp bench --help
