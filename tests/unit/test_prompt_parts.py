"""A prompt's anatomy: each line billed to its part, and the shares adding up exactly."""

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from evals.token_anatomy import anatomy_of, mean_anatomy
from nodes.llm.prompt_parts import prompt_chars, token_split


def test_each_section_of_a_prompt_is_billed_to_its_part() -> None:
    user = (
        "Question: Where was X born?\n"
        "Answers found so far:\n- Who is X? → Ann\n"
        "Sub-question: Where was Ann born?\n"
        "Notes so far:\n- Ann lived in Rome.\n"
        "New evidence:\n[1] Ann: Ann was born in Oslo."
    )
    chars = prompt_chars([SystemMessage("rules"), HumanMessage(user), AIMessage("{}")])
    assert chars == {
        "instructions": len("rules"),
        "question": len("Question: Where was X born?\n")
        + len("Sub-question: Where was Ann born?\n"),
        "history": len("Answers found so far:\n- Who is X? → Ann\n")
        + len("Notes so far:\n- Ann lived in Rome.\n")
        + len("{}"),
        "evidence": len("New evidence:\n[1] Ann: Ann was born in Oslo.\n"),
    }


def test_the_split_adds_up_to_the_reported_count() -> None:
    chars = {"instructions": 300, "evidence": 500, "history": 100, "question": 101}
    shares = token_split(chars, 250)
    assert sum(shares.values()) == 250
    assert shares["evidence"] == max(shares.values())
    assert token_split(chars, 0) == dict.fromkeys(chars, 0)
    assert token_split({}, 10) == {"instructions": 0, "evidence": 0, "history": 0, "question": 0}


def test_anatomy_sums_calls_by_node_and_averages_over_questions() -> None:
    parts = {"instructions": 6, "evidence": 2, "history": 1, "question": 1}
    run = anatomy_of(
        [
            {"node": "plan", "input": 10, "output": 4, "parts": parts},
            {"node": "evaluate", "input": 10, "output": 2, "parts": parts},
            {"node": "evaluate", "input": 10, "output": 2},
        ]
    )
    assert run["evaluate"] == {
        "calls": 2,
        "input": 20,
        "output": 4,
        "instructions": 6,
        "evidence": 2,
        "history": 1,
        "question": 1,
    }
    means = mean_anatomy([{"anatomy": run}, {"anatomy": {}}, {"note": "no anatomy line"}])
    assert means["plan"]["calls"] == 0.5 and means["evaluate"]["input"] == 10.0
    assert means["all"]["input"] == 15.0 and means["all"]["output"] == 4.0
