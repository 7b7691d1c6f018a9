"""The bridge check: a final answer naming a bridge hop's answer is given the final hop's."""

from nodes.agent.bridge_check import BridgeSlip, ChainEnd, bridge_slip, chain_end, same_answer
from nodes.agent.plan_dag import SubQuestion


def step(index: int, *needs: int) -> SubQuestion:
    return SubQuestion(index=index, text=f"step {index}", depends_on=list(needs))


CHAIN = [step(1), step(2, 1)]
CHAIN_ANSWERS = {1: "Zimbabwe", 2: "Victoria Falls"}


def test_the_bridge_answer_is_replaced_by_the_final_hops() -> None:
    slip = bridge_slip("zimbabwe.", CHAIN, CHAIN_ANSWERS)
    assert slip == BridgeSlip(bridge=1, final=2, answer="Victoria Falls")
    assert slip.why() == (
        "the reader answered step 1's answer, which a later step builds on; "
        "step 2's answer is given instead"
    )


def test_a_three_hop_chain_checks_every_bridge() -> None:
    steps = [step(1), step(2, 1), step(3, 2)]
    answers = {1: "Johann Strauss II", 2: "Austria", 3: "Karl Renner"}
    assert bridge_slip("Austria", steps, answers) == BridgeSlip(2, 3, "Karl Renner")
    assert bridge_slip("Johann Strauss II", steps, answers) == BridgeSlip(1, 3, "Karl Renner")


def test_answers_that_are_no_slip_stand() -> None:
    # The final hop's own answer, or any answer that is no hop's.
    assert bridge_slip("Victoria Falls", CHAIN, CHAIN_ANSWERS) is None
    assert bridge_slip("Kariba Dam", CHAIN, CHAIN_ANSWERS) is None
    # Bridge and final hop agree ("Brand" → Norway; Norway's citizens → Norway): nothing to fix.
    assert bridge_slip("Norway", CHAIN, {1: "Norway", 2: "Norway"}) is None


def test_no_replacement_without_one_answered_final_hop() -> None:
    # The final hop found nothing: the reader's answer is the best there is.
    assert bridge_slip("Zimbabwe", CHAIN, {1: "Zimbabwe", 2: "unknown"}) is None
    assert bridge_slip("Zimbabwe", CHAIN, {1: "Zimbabwe"}) is None
    # A comparison ends in two hops: either answer may be the right one.
    assert bridge_slip("Orvel", [step(1), step(2)], {1: "Orvel", 2: "Tesk"}) is None
    # A last step that combines two answers is no chain end: the question asks which of them.
    steps = [step(1), step(2), step(3, 1, 2)]
    answers = {1: "Mark King", 2: "Nick Hexum", 3: "Yes"}
    assert bridge_slip("Nick Hexum", steps, answers) is None
    # A single-hop plan has no bridge.
    assert bridge_slip("Lisbon", [step(1)], {1: "Porto"}) is None


def test_same_answer_ignores_case_and_punctuation_only() -> None:
    assert same_answer("St. Louis", "st louis")
    assert not same_answer("Louis", "St. Louis")


def test_a_chain_end_is_its_last_hop_and_that_hops_answer_without_an_aside() -> None:
    assert chain_end(CHAIN, CHAIN_ANSWERS) == ChainEnd(final=2, answer="Victoria Falls")
    steps = [step(1), step(2, 1), step(3, 2)]
    answers = {1: "Rakoto", 2: "Lake Itasy", 3: "43.8 inches (1,110 mm)"}
    assert chain_end(steps, answers) == ChainEnd(final=3, answer="43.8 inches")


def test_no_chain_end_where_the_plan_is_no_chain_or_its_end_found_nothing() -> None:
    assert chain_end(CHAIN, {1: "Zimbabwe", 2: "unknown"}) is None
    assert chain_end(CHAIN, {1: "Zimbabwe"}) is None
    assert chain_end([step(1), step(2)], {1: "Orvel", 2: "Tesk"}) is None  # two ends
    assert chain_end([step(1), step(2), step(3, 1, 2)], {1: "a", 2: "b", 3: "Yes"}) is None
    assert chain_end([step(1)], {1: "Porto"}) is None  # a single hop builds on nothing
