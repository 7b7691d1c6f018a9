"""Indexing: the index graph and the corpus file readers."""
