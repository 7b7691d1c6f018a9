"""The GRASP run configuration: every value of spec §2–§4, editable in Studio.

Fields come in four groups (retrieval, agent, model, conversation; each field's metadata names
its group and Studio shows its description). The fields every peer has (corpus, chat model,
passage cut) are inherited from PeerContext. Retrieval numbers take their defaults from
RetrievalParams, their one home in the store.

Ten agent settings depend on the model (`MODEL_PROFILES`, in profiles.py): they default to None,
"the profile's choice", and `resolved` turns the profile into explicit values once, before any
node runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, TypeVar, get_args

from graphs.agent.profiles import MODEL_PROFILES
from graphs.peers.context import PeerContext
from nodes.agent.plan_links import UnwrittenNeeds
from store.grasp_retrieval import RetrievalParams

PassageScoring = Literal["rankvote", "uniform"]
EntitySelection = Literal["llm", "off"]
EvidenceKind = Literal["passages", "propositions"]
Retrieval = Literal["grasp", "dense"]
Planner = Literal["on", "off"]
Synthesis = Literal["findings", "reader"]
FirstSearch = Literal["rewrite", "question"]
EvaluatorPrompt = Literal["full", "brief"]
FinalHops = Literal["evaluate", "read"]
InnerHops = Literal["evaluate", "bridge"]
Profile = Literal["auto", "paper", "small"]
Group = Literal["retrieval", "agent", "model", "conversation"]

#: Each choice-valued setting and its choices (a None profile setting is checked once resolved).
CHOICES: dict[str, Any] = {
    "passage_scoring": PassageScoring,
    "entity_selection": EntitySelection,
    "evidence": EvidenceKind,
    "retrieval": Retrieval,
    "planner": Planner,
    "unwritten_needs": UnwrittenNeeds,
    "synthesis": Synthesis,
    "first_search": FirstSearch,
    "evaluator_prompt": EvaluatorPrompt,
    "final_hops": FinalHops,
    "inner_hops": InnerHops,
    "profile": Profile,
}
_AT_LEAST_ONE = (
    "max_iterations",
    "k_props",
    "k_entities",
    "k_entities_unselected",
    "k_passages",
    "adaptive_k_window",
    "reader_passages",
    "prior_passages",
)
_NOT_NEGATIVE = (
    "max_observations",
    "focus_chars",
    "reader_focus_chars",
    "propositions_per_entity",
    "history_turns",
    "history_chars",
    "hit_weight",
    "prior_weight",
    "hit_entities",
    "bridge_weight",
    "page_weight",
)


def setting(default: Any, group: Group, description: str) -> Any:
    """A run setting: its default, its group and the one line Studio shows."""
    return field(default=default, metadata={"group": group, "description": description})


def by_profile(name: str, group: Group, description: str) -> Any:
    """A model-dependent setting: None until `resolved` fills in the profile's value.

    Its metadata keeps the paper's value as the example of its type (for `--set` parsing).
    """
    return field(
        default=None,
        metadata={
            "group": group,
            "description": f"{description} (unset: the profile's choice)",
            "example": MODEL_PROFILES["paper"][name],
        },
    )


R = RetrievalParams
T = TypeVar("T")


def chosen(value: T | None, name: str) -> T:
    """A model setting's value once the profile is resolved (a node never sees it unset)."""
    if value is None:
        raise RuntimeError(f"{name} was read before the run's profile was resolved")
    return value


@dataclass(kw_only=True)
class GraspContext(PeerContext):
    """One run's configuration; LangGraph Studio shows each field with its description."""

    # — retrieval —
    k_props: int = setting(R.k_props, "retrieval", "propositions kept by the hybrid search")
    lexical_weight: float = setting(R.lexical_weight, "retrieval", "λ: BM25's weight in s(p)")
    entity_damping: float = setting(
        R.entity_damping, "retrieval", "α: entity scores are divided by degree^α"
    )
    k_entities: int = setting(R.k_entities, "retrieval", "entities offered to entity selection")
    k_entities_unselected: int = setting(
        R.k_entities_unselected, "retrieval", "entities traversed when no LLM selects them"
    )
    k_passages: int = setting(R.k_passages, "retrieval", "passages RankVote returns per round")
    vote_weight: float = setting(R.vote_weight, "retrieval", "w: one proposition's vote")
    vote_offset: float = setting(R.vote_offset, "retrieval", "c: a rank r votes w / (r + c)")
    hit_weight: float = setting(
        R.hit_weight, "retrieval", "weight of a passage's best search hit; 0 = paper's RankVote"
    )
    prior_weight: float = setting(
        R.prior_weight, "retrieval", "weight of a passage's dense cosine; 0 = paper's RankVote"
    )
    prior_passages: int = setting(R.prior_passages, "retrieval", "top dense passages given a prior")
    hit_entities: int = setting(
        R.hit_entities, "retrieval", "no LLM selects: the best hits whose entities are traversed"
    )
    bridge_weight: float = setting(
        R.bridge_weight, "retrieval", "weight of a passage's share of the best hit; 0 = none"
    )
    page_weight: float = setting(
        R.page_weight, "retrieval", "weight of the pages of entities the best hit names; 0 = none"
    )
    propositions_per_entity: int = setting(
        R.propositions_per_entity, "retrieval", "propositions shown beside each candidate entity"
    )
    adaptive_k_window: int = setting(
        R.adaptive_k_window, "retrieval", "evidence=propositions: the cut's window"
    )
    passage_scoring: PassageScoring = setting(
        "rankvote", "retrieval", "ablation: rankvote (w / (r + c)) or uniform (every vote w)"
    )
    evidence: EvidenceKind = setting(
        "passages", "retrieval", "ablation: passages (RankVote) or propositions (adaptive-k)"
    )
    retrieval: Retrieval = setting(
        "grasp", "retrieval", "ablation: grasp (graph search) or dense (dense passages)"
    )
    # — agent —
    planner: Planner = setting("on", "agent", "ablation: on, or off (one hop for the question)")
    max_iterations: int = setting(3, "agent", "search rounds a hop may take before it answers")
    max_observations: int = setting(12, "agent", "cap of a hop's observation list")
    reader_passages: int = setting(4, "agent", "synthesis=reader: passages it reads")
    final_hops: FinalHops | None = by_profile(
        "final_hops", "agent", "synthesis=reader: a final hop's evaluator answers it, or the reader"
    )
    inner_hops: InnerHops | None = by_profile(
        "inner_hops",
        "agent",
        "a hop others build on: its evaluator answers, or its best unit's entity",
    )
    first_search: FirstSearch | None = by_profile(
        "first_search", "agent", "a hop's first search: a rewrite call's, or the sub-question"
    )
    focus_chars: int | None = by_profile(
        "focus_chars", "agent", "evaluate reads each passage's sentences nearest the search, ≤ N"
    )
    evaluator_prompt: EvaluatorPrompt | None = by_profile(
        "evaluator_prompt", "agent", "the evaluator's instructions: full, or brief (half as long)"
    )
    reader_focus_chars: int | None = by_profile(
        "reader_focus_chars", "agent", "the reader reads each passage's sentences nearest the hops"
    )
    entity_selection: EntitySelection | None = by_profile(
        "entity_selection", "agent", "ablation: llm picks entities, or off (all candidates)"
    )
    synthesis: Synthesis | None = by_profile(
        "synthesis",
        "agent",
        "final answer from the hop answers (findings) or the hops' passages (reader)",
    )
    unwritten_needs: UnwrittenNeeds | None = by_profile(
        "unwritten_needs",
        "agent",
        "a need a step's text has no place for: appended as (#k), or dropped",
    )
    bridge_check: bool | None = by_profile(
        "bridge_check",
        "agent",
        "a chain's final answer naming a bridge hop's answer takes the last hop's",
    )
    review_plan: bool = setting(
        False, "agent", "pause after the planner for a person to accept, edit or answer the plan"
    )
    # — model —
    profile: Profile = setting(
        "auto", "model", "paper, small (offline 1.5B model) or auto (small for llama.cpp)"
    )
    bounded_replies: bool | None = by_profile(
        "bounded_replies",
        "model",
        "hold the evaluator's JSON reply to a schema with bounded strings and lists",
    )
    # — conversation —
    history_turns: int = setting(3, "conversation", "earlier turns the planner sees; 0 = none")
    history_chars: int = setting(400, "conversation", "each earlier turn is cut to this length")

    def __post_init__(self) -> None:
        # Studio and the CLI pass user input here; a bad value must fail before any LLM call.
        super().__post_init__()
        for name in _AT_LEAST_ONE:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        for name in _NOT_NEGATIVE:
            if (getattr(self, name) or 0) < 0:
                raise ValueError(f"{name} must not be negative, not {getattr(self, name)}")
        for name, kind in CHOICES.items():
            value = getattr(self, name)
            if value is not None and value not in get_args(kind):
                choices = " | ".join(get_args(kind))
                raise ValueError(f"{name} must be one of {choices}, not {value!r}")
        for name in ("bridge_check", "bounded_replies", "review_plan"):
            if getattr(self, name) not in (None, True, False):
                raise ValueError(f"{name} is true or false, not {getattr(self, name)!r}")
        if self.synthesis == "reader" and self.evidence != "passages":
            raise ValueError("synthesis=reader reads passages: it needs evidence=passages")

    def resolved(self, local_model: bool) -> GraspContext:
        """The context with its profile chosen and every unset model setting taken from it.

        `local_model`: the run's chat model is llama.cpp's (what `auto` decides on). A value the
        user set is kept; only unset (None) settings are filled. Resolving twice changes nothing.
        """
        chosen = self.profile
        if chosen == "auto":
            chosen = "small" if local_model else "paper"
        unset = {
            name: value
            for name, value in MODEL_PROFILES[chosen].items()
            if getattr(self, name) is None
        }
        return replace(self, profile=chosen, **unset)

    @property
    def is_resolved(self) -> bool:
        """Whether every model setting has a value (what nodes may rely on)."""
        return all(getattr(self, name) is not None for name in MODEL_PROFILES["paper"])

    def retrieval_params(self) -> RetrievalParams:
        """The store's retrieval numbers for this run (each field of the same name, and three)."""
        same = {f.name: getattr(self, f.name) for f in fields(R) if f.name != "uniform_vote"}
        unselected = self.entity_selection == "off"
        return R(
            **same
            | {
                # Unset reads as the paper's "llm"; eval-retrieval, which has no LLM, sets "off".
                "k_entities": self.k_entities_unselected if unselected else self.k_entities,
                "uniform_vote": self.passage_scoring == "uniform",
                # Like the unselected count: the LLM's candidates stay the k_entities best.
                "hit_entities": self.hit_entities if unselected else 0,
            }
        )


def setting_groups() -> dict[str, list[str]]:
    """Every setting's name by group, inherited ones under "model" and "retrieval"."""
    inherited: dict[str, Group] = {
        "corpus": "retrieval",
        "chat_model": "model",
        "max_passage_chars": "agent",
        "prompt_chars": "agent",
    }
    groups: dict[str, list[str]] = {"retrieval": [], "agent": [], "model": [], "conversation": []}
    for item in fields(GraspContext):
        groups[item.metadata.get("group", inherited.get(item.name, "agent"))].append(item.name)
    return groups
