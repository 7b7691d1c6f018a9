"""LLM-free graph retrieval over the entity–passage graph: PPR, PropRAG and spreading activation.

Everything here is a plain synchronous function of in-memory inputs (no database access), so the
store layer decides how the graph and the per-query rows are fetched and cached.
"""

from nodes.retrieval.beam import PropositionLike, ScoredPath
from nodes.retrieval.entity_graph import EntityGraph, build_entity_graph
from nodes.retrieval.ppr import entity_seeds, personalized_pagerank, ppr_rank
from nodes.retrieval.proprag import (
    PropositionDetail,
    PropRagParams,
    PropRagResult,
    proprag_retrieve,
)
from nodes.retrieval.spreading_activation import (
    SpreadingParams,
    SpreadingResult,
    neighbour_map,
    spreading_activation_retrieve,
)
from nodes.retrieval.walk import Transition, transition_matrix

__all__ = [
    "EntityGraph",
    "PropRagParams",
    "PropRagResult",
    "PropositionDetail",
    "PropositionLike",
    "ScoredPath",
    "SpreadingParams",
    "SpreadingResult",
    "Transition",
    "build_entity_graph",
    "entity_seeds",
    "neighbour_map",
    "personalized_pagerank",
    "ppr_rank",
    "proprag_retrieve",
    "spreading_activation_retrieve",
    "transition_matrix",
]
