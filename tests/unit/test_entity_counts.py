"""How many entities GRASP traverses: the LLM's list, or the wider unselected count."""

import pytest

from graphs.agent.context import GraspContext


def test_the_llm_is_offered_k_entities_and_no_selection_traverses_more() -> None:
    assert GraspContext().retrieval_params().k_entities == 10
    assert GraspContext(entity_selection="off").retrieval_params().k_entities == 15
    assert (
        GraspContext(entity_selection="off", k_entities_unselected=7).retrieval_params().k_entities
        == 7
    )
    assert GraspContext(k_entities=4, k_entities_unselected=7).retrieval_params().k_entities == 4


def test_the_fused_vote_defaults_are_issue_34s() -> None:
    params = GraspContext(entity_selection="off").retrieval_params()
    assert (params.hit_weight, params.prior_weight, params.bridge_weight) == (1.0, 1.0, 3.0)
    assert params.hit_entities == 5


def test_the_best_hits_entities_join_only_where_no_llm_selects() -> None:
    # The LLM is offered the k_entities best, as the paper has it; without it they are traversed.
    assert GraspContext(entity_selection="llm").retrieval_params().hit_entities == 0
    assert GraspContext().retrieval_params().hit_entities == 0  # unset reads as the paper's llm
    assert GraspContext(entity_selection="off", hit_entities=2).retrieval_params().hit_entities == 2


def test_an_unselected_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="k_entities_unselected must be at least 1, not 0"):
        GraspContext(k_entities_unselected=0)
