"""Indexing steps: extraction (LLM, spaCy, synthetic), one batch's indexing."""
