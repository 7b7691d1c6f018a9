"""The faults tests' marker: `slow` runs the whole small bench (minutes), off unless asked for."""

import os
from pathlib import Path

import pytest

SLOW_ENV = "GRASP_SLOW_TESTS"
HERE = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"slow: runs for minutes; set {SLOW_ENV}=1 to include it in a test run"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if os.environ.get(SLOW_ENV) == "1":
        return
    skip = pytest.mark.skip(reason=f"slow: set {SLOW_ENV}=1 to run")
    for item in items:  # this hook sees the whole session's items: skip only ours
        if "slow" in item.keywords and item.path.is_relative_to(HERE):
            item.add_marker(skip)
