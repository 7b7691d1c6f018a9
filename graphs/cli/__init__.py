"""The `grasp` command line: one module per command group, benchmarks beside them."""

from graphs.cli.main import main

__all__ = ["main"]
