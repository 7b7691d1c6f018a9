"""Sampling temperature and output cap of each model role (agent steps, extraction, judge), in one place."""

from __future__ import annotations

#: The agent's steps (plan, entity selection, evaluation, synthesis).
GENERATOR_TEMPERATURE = 0.2
#: Joint proposition and entity extraction while indexing.
EXTRACTOR_TEMPERATURE = 0.1
#: The answer judge of the evals: the same pair must always get the same verdict.
JUDGE_TEMPERATURE = 0.0

#: Output caps for the local model: room for a five-passage extraction reply (≈250 tokens a
#: passage), and a tighter cap for agent steps, whose JSON replies are short, so a reply that
#: starts repeating itself costs seconds instead of minutes on a CPU.
LOCAL_MAX_TOKENS = 3072
AGENT_MAX_TOKENS = 768
