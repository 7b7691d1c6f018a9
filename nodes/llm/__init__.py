"""Every LLM call: the client (cache, retries, ledger) and reply parsing."""
