"""Composition root: state, run configuration, settings, providers, graph builders and the CLI."""
