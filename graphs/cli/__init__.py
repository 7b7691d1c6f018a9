"""The `grasp` command line: one module per command group (`grasp bench …` lives in evals/bench)."""

from graphs.cli.main import main

__all__ = ["main"]
