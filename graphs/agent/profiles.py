"""The model profiles: the settings whose best value depends on the chat model."""

from __future__ import annotations

from typing import Any

#: The model-dependent settings of each profile: the paper's, and those measured better with the
#: offline 1.5B model (docs/experiments.md). `auto` is small for llama.cpp, paper for any other.
MODEL_PROFILES: dict[str, dict[str, Any]] = {
    "paper": {
        "entity_selection": "llm",
        "synthesis": "findings",
        "bounded_replies": False,
        "unwritten_needs": "append",
        "bridge_check": False,
        "first_search": "rewrite",
        "focus_chars": 0,
        "evaluator_prompt": "full",
        "reader_focus_chars": 0,
        "final_hops": "evaluate",
        "inner_hops": "evaluate",
    },
    "small": {
        "entity_selection": "off",
        "synthesis": "reader",
        "bounded_replies": True,
        "unwritten_needs": "drop",
        "bridge_check": True,
        "first_search": "question",
        "focus_chars": 200,
        "evaluator_prompt": "brief",
        "reader_focus_chars": 250,
        "final_hops": "read",
        "inner_hops": "bridge",
    },
}
