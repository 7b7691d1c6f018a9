"""Evaluation: dataset loaders, metrics, runners, reports and plots."""
