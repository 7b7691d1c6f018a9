"""Models by name: chat providers, embedders, the local llama.cpp model and its GGUF, scripted models."""
