"""The GRASP run configuration: every value of spec §2–§4, editable in Studio.

Retrieval numbers take their defaults from RetrievalParams, their one home in the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, get_args

from nodes.agent.evaluate import EvaluatorStyle
from nodes.agent.plan import PlanFormat
from nodes.agent.plan_links import UnwrittenNeeds
from store.grasp_retrieval import RetrievalParams

PassageScoring = Literal["rankvote", "uniform"]
EntitySelection = Literal["llm", "off"]
EvidenceKind = Literal["passages", "propositions"]
Retrieval = Literal["grasp", "dense"]
Planner = Literal["on", "off"]
Synthesis = Literal["findings", "reader"]
HopRounds = Literal["last", "all"]
ReaderFocus = Literal["even", "final"]
Profile = Literal["auto", "paper", "small"]
#: What profile=small changes, and to what: measured better with the offline 1.5B model (README).
SMALL_MODEL_DEFAULTS: dict[str, Any] = {
    "entity_selection": "off",
    "synthesis": "reader",
    "bounded_replies": True,
    "unwritten_needs": "drop",
    "bridge_check": True,
}
SWITCHES = {
    "passage_scoring": PassageScoring,
    "entity_selection": EntitySelection,
    "evidence": EvidenceKind,
    "retrieval": Retrieval,
    "planner": Planner,
    "plan_format": PlanFormat,
    "unwritten_needs": UnwrittenNeeds,
    "evaluator": EvaluatorStyle,
    "synthesis": Synthesis,
    "hop_rounds": HopRounds,
    "reader_focus": ReaderFocus,
    "profile": Profile,
}


@dataclass(kw_only=True)
class GraspContext:
    """One run's configuration; LangGraph Studio shows each field with its description."""

    corpus: str = field(
        default="default", metadata={"description": "name of the indexed corpus to answer from"}
    )
    chat_model: str | None = field(
        default=None,
        metadata={"description": "chat model spec overriding GRASP_CHAT_MODEL (e.g. 'local')"},
    )
    max_iterations: int = field(
        default=3,
        metadata={"description": "search rounds a sub-agent may take before it must answer"},
    )
    k_props: int = field(
        default=RetrievalParams.k_props,
        metadata={"description": "propositions kept by the hybrid search"},
    )
    lexical_weight: float = field(
        default=RetrievalParams.lexical_weight,
        metadata={"description": "λ: weight of the max-normalised BM25 term in s(p)"},
    )
    entity_damping: float = field(
        default=RetrievalParams.entity_damping,
        metadata={"description": "α: entity scores are divided by degree^α"},
    )
    k_entities: int = field(
        default=RetrievalParams.k_entities,
        metadata={"description": "unvisited entities offered to entity selection"},
    )
    k_entities_unselected: int = field(
        default=RetrievalParams.k_entities_unselected,
        metadata={
            "description": "entities traversed when no LLM selects (entity_selection=off, and "
            "LLM-free retrieval in grasp eval-retrieval): no prompt to pay for, so more"
        },
    )
    k_passages: int = field(
        default=RetrievalParams.k_passages,
        metadata={"description": "passages RankVote returns as new evidence"},
    )
    vote_weight: float = field(
        default=RetrievalParams.vote_weight,
        metadata={"description": "w: the vote of one proposition in RankVote"},
    )
    vote_offset: float = field(
        default=RetrievalParams.vote_offset,
        metadata={"description": "c: RankVote scores a rank r with w / (r + c)"},
    )
    max_observations: int = field(
        default=12, metadata={"description": "cap of a sub-agent's observation list"}
    )
    hit_weight: float = field(
        default=RetrievalParams.hit_weight,
        metadata={
            "description": "weight of a passage's own best search hit s(p) added to its "
            "(max-scaled) RankVote score; 0 = the paper's RankVote"
        },
    )
    prior_weight: float = field(
        default=RetrievalParams.prior_weight,
        metadata={
            "description": "weight of the passage's own cosine to the search statement added to "
            "its vote (a dense prior); 0 = the paper's RankVote"
        },
    )
    prior_passages: int = field(
        default=RetrievalParams.prior_passages,
        metadata={"description": "how many top dense passages get the prior"},
    )
    propositions_per_entity: int = field(
        default=RetrievalParams.propositions_per_entity,
        metadata={"description": "top propositions shown beside each candidate entity"},
    )
    max_passage_chars: int = field(
        default=1500,
        metadata={"description": "evidence passages are cut to this many characters"},
    )
    passage_scoring: PassageScoring = field(
        default="rankvote",
        metadata={"description": "ablation: rankvote (w / (r + c)) or uniform (every vote w)"},
    )
    entity_selection: EntitySelection = field(
        default="llm",
        metadata={"description": "ablation: llm picks entities, or off (traverse all candidates)"},
    )
    evidence: EvidenceKind = field(
        default="passages",
        metadata={
            "description": "ablation: passages (RankVote) or propositions (adaptive-k, largest "
            f"score gap among the top {RetrievalParams.adaptive_k_window})"
        },
    )
    adaptive_k_window: int = field(
        default=RetrievalParams.adaptive_k_window,
        metadata={"description": "propositions evidence: the cut is sought among this many best"},
    )
    retrieval: Retrieval = field(
        default="grasp",
        metadata={
            "description": "ablation: grasp (graph search) or dense (plain dense passage "
            "retrieval; needs passage embeddings)"
        },
    )
    planner: Planner = field(
        default="on",
        metadata={"description": "ablation: on, or off (one sub-agent answers the whole question)"},
    )
    plan_format: PlanFormat = field(
        default="linked",
        metadata={
            "description": "planner reply: linked (each sub-question lists the earlier steps it "
            "needs, schema-constrained, links repaired), chain (the linked reply, the planner "
            "first tracing the question's relations one arrow per step) or free (plain strings "
            "with #k, the original format)"
        },
    )
    # The paper has no repair; append is the faithful one. profile=small drops (README).
    unwritten_needs: UnwrittenNeeds = field(
        default="append",
        metadata={
            "description": "plan_format=linked or chain: a need a sub-question lists but "
            'whose text has no place for the earlier answer is appended as "(#k)" (append) or '
            "dropped, the text standing alone (drop)"
        },
    )
    evaluator: EvaluatorStyle = field(
        default="free",
        metadata={
            "description": "evaluator reply: free (the model says DONE or QUERY_AGAIN), quote "
            "(it must copy the evidence sentence its answer comes from; DONE only when that "
            "sentence is found in the evidence) or guess (a short reply: an answer always, a "
            "best guess if need be, and whether the evidence states it; DONE when it does)"
        },
    )
    synthesis: Synthesis = field(
        default="findings",
        metadata={
            "description": "final answer: findings (from the hop answers, as in the paper; see "
            "synthesis_passages) or reader (the peers' reader, which never refuses, reads the "
            "hops' best passages; see reader_notes)"
        },
    )
    reader_passages: int = field(
        default=5,
        metadata={
            "description": "synthesis=reader: passages it reads, taken in turn from each hop's "
            "best (the dense peer reads 5)"
        },
    )
    # Even by default: on the first 20 MuSiQue questions with the offline model, "final" changed
    # six answers and won none (F1 0.236 against 0.243; README).
    reader_focus: ReaderFocus = field(
        default="even",
        metadata={
            "description": "synthesis=reader: which hops' passages fill its reader_passages: "
            "even (in turn from each hop) or final (each bridge hop's best passage, the rest "
            "from the hops no other hop builds on, whose passages hold the answer)"
        },
    )
    # Off by default: with the offline 1.5B model, notes made the reader copy wrong hop answers
    # (MuSiQue F1 0.267 with them, 0.343 without; README).
    reader_notes: bool = field(
        default=False,
        metadata={
            "description": "synthesis=reader: the hop answers go in as notes (off: it reads the "
            "passages alone, as the dense peer does)"
        },
    )
    # A hop that searched again may drift away from its first round's passages, and with "last"
    # the final answer never sees them again. Off by default: on the first 20 MuSiQue questions
    # with the offline model "all" changed no answer (README).
    hop_rounds: HopRounds = field(
        default="last",
        metadata={
            "description": "passages a hop hands to the final answer (synthesis=reader or "
            "synthesis_passages): last (the round its answer came from) or all (that round's "
            "best, then each earlier round's, in turn)"
        },
    )
    # Off for the paper's profile; profile=small turns it on (measured, README).
    bridge_check: bool = field(
        default=False,
        metadata={
            "description": "when the final answer is only the answer of a hop a later hop builds "
            "on (the bridge entity) and the plan is a chain whose last hop found an answer, give "
            "that last hop's answer instead"
        },
    )
    # Off: on the offline model it won answers on two question sets and lost on a third (README).
    chain_answer: bool = field(
        default=False,
        metadata={
            "description": "when the plan is a chain (one last hop, which builds on one other) "
            "and its last hop found an answer, that answer is the final one and no final call "
            "is made; other plans are answered by the synthesis"
        },
    )
    synthesis_passages: int = field(
        default=0,
        metadata={
            "description": "passages per hop the final answer also reads (the ones the hop's "
            "answer came from); 0: it reads only the hop answers, as in the paper"
        },
    )
    echo_check: bool = field(
        default=False,
        metadata={
            "description": "ask the evaluator once more when its answer only repeats words of the "
            'sub-question ("Which state borders Florida?" answered "Florida")'
        },
    )
    # Off for the paper's profile; profile=small turns it on (measured, README).
    bounded_replies: bool = field(
        default=False,
        metadata={
            "description": "hold the evaluator's JSON reply to a schema whose strings and lists "
            "are bounded (the local model's grammar; other providers get it as the reply "
            "schema), so a reply cannot run on inside a string to the output cap and be lost"
        },
    )
    profile: Profile = field(
        default="auto",
        metadata={
            "description": "defaults for the model: paper (the paper's), small (entity selection "
            "off, synthesis=reader, bounded_replies, unwritten_needs=drop and bridge_check, "
            "measured better with the offline 1.5B model) or auto "
            "(small for the offline llama.cpp model, paper for any other); a setting given a "
            "value other than its paper default always keeps it"
        },
    )
    history_turns: int = field(
        default=3,
        metadata={
            "description": "conversation threads: earlier turns (question and final answer) the "
            "planner sees to resolve references such as 'she'; 0 = none"
        },
    )
    history_chars: int = field(
        default=400,
        metadata={"description": "each earlier question and answer is cut to this many characters"},
    )

    def __post_init__(self) -> None:
        # Studio and the CLI pass user input here; a bad value must fail before any LLM call.
        at_least_one = (
            "max_iterations",
            "k_props",
            "k_entities",
            "k_entities_unselected",
            "k_passages",
            "adaptive_k_window",
            "reader_passages",
        )
        for name in (*at_least_one, "prior_passages"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        never_negative = (
            "max_observations",
            "propositions_per_entity",
            "max_passage_chars",
            "history_turns",
            "history_chars",
        )
        for name in (*never_negative, "hit_weight", "prior_weight"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, not {getattr(self, name)}")
        for name, kind in SWITCHES.items():
            if getattr(self, name) not in get_args(kind):
                choices = " | ".join(get_args(kind))
                raise ValueError(f"{name} must be one of {choices}, not {getattr(self, name)!r}")
        if self.synthesis == "reader" and self.evidence != "passages":
            raise ValueError("synthesis=reader reads passages: it needs evidence=passages")

    def settled(self, local_model: bool) -> GraspContext:
        """The context a run uses: the profile's defaults applied (`local_model`: llama.cpp's).

        Only fields still at their paper default change, so a value the user chose wins; to run
        the paper's values on the local model, ask for profile=paper.
        """
        if self.profile == "paper" or (self.profile == "auto" and not local_model):
            return self
        paper = {f.name: f.default for f in fields(self)}
        changes: dict[str, Any] = {
            name: value
            for name, value in SMALL_MODEL_DEFAULTS.items()
            if getattr(self, name) == paper[name]
        }
        return replace(self, **changes)

    def retrieval_params(self) -> RetrievalParams:
        """The store's retrieval numbers for this run."""
        return RetrievalParams(
            k_props=self.k_props,
            lexical_weight=self.lexical_weight,
            entity_damping=self.entity_damping,
            k_entities=self.k_entities
            if self.entity_selection == "llm"
            else self.k_entities_unselected,
            k_entities_unselected=self.k_entities_unselected,
            k_passages=self.k_passages,
            vote_weight=self.vote_weight,
            vote_offset=self.vote_offset,
            uniform_vote=self.passage_scoring == "uniform",
            propositions_per_entity=self.propositions_per_entity,
            adaptive_k_window=self.adaptive_k_window,
            hit_weight=self.hit_weight,
            prior_weight=self.prior_weight,
            prior_passages=self.prior_passages,
        )
