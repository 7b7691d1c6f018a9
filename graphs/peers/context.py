"""What every run's configuration shares: the corpus, the chat model, the passage cut, the budget.

Each peer subclasses PeerContext with its own fields; Studio shows every field's description.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nodes.peers.answer import passage_cut


def at_least(context: object, minimum: int, *names: str) -> None:
    """Refuse any named field below `minimum` (user input reaches a context from Studio and the CLI)."""
    for name in names:
        value = getattr(context, name)
        if value < minimum:
            raise ValueError(f"{name} must be at least {minimum}, not {value}")


@dataclass(kw_only=True)
class PeerContext:
    """The fields every peer run has."""

    corpus: str = field(
        default="default", metadata={"description": "name of the indexed corpus to answer from"}
    )
    chat_model: str | None = field(
        default=None,
        metadata={"description": "chat model spec overriding GRASP_CHAT_MODEL (e.g. 'local')"},
    )
    max_passage_chars: int = field(
        default=1500,
        metadata={"description": "passages shown to the model are cut to this many characters"},
    )
    prompt_chars: int = field(
        default=0,
        metadata={
            "description": "all passages of one prompt fit in this many characters (each cut "
            "shorter when there are many; for small context windows); 0 = no limit"
        },
    )

    max_tokens: int = field(
        default=0,
        metadata={
            "description": "token budget per question: once the run's tally reaches it, no "
            "further search or iteration call is made and the answer is written from what was "
            "found; 0 = no budget"
        },
    )

    def passage_chars(self, count: int) -> int:
        """The cut of each of `count` passages shown in one prompt (max_passage_chars, or less)."""
        return passage_cut(self.max_passage_chars, self.prompt_chars, count)

    def __post_init__(self) -> None:
        at_least(self, 0, "max_passage_chars", "prompt_chars", "max_tokens")
        if not self.corpus.strip():
            raise ValueError("corpus must name an indexed corpus")
