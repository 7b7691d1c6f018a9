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


def test_the_dense_prior_is_at_half_weight_by_default() -> None:
    assert GraspContext().retrieval_params().prior_weight == 0.5


def test_an_unselected_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="k_entities_unselected must be at least 1, not 0"):
        GraspContext(k_entities_unselected=0)
