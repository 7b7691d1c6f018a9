"""Peer systems as LangGraph graphs over the same store, one module each."""
