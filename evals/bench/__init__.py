"""`grasp bench …`: benchmarks beside the product, one module per sub-command.

The CLI loads `evals.bench.commands` by name, so `graphs/` never imports this package.
"""
