"""LLM steps of the peer systems (PRISM, IRCoT, SA-RAG + CoT, Self-Ask, readers), prompts beside them."""
