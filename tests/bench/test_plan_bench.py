"""`grasp bench plans`' counting of plans against gold decompositions, and its input checks."""

import json
from pathlib import Path

import pytest

from evals.bench.plans import (
    GoldQuestion,
    Tally,
    compare,
    plan_one,
    read_questions,
    summary,
)
from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from nodes.agent.plan_dag import build_dag
from nodes.llm.client import LlmClient

GOLD = GoldQuestion(
    "How many stores are in the state east of the state where Kora died?",
    ["Where did Kora die?", "Which state borders #1 to the east?", "how many stores are in #2"],
)


def test_a_gold_link_without_a_predicted_dependency_is_broken() -> None:
    tally = Tally()
    line = compare(
        GOLD, build_dag(["Where did Kora die?", "Which state is east of that state?"]), tally
    )
    assert line == "gold 3 / planned 2, links 2: broken 1, missing 1"
    assert (tally.fewer, tally.gold_links, tally.broken, tally.missing, tally.fully_linked) == (
        1,
        2,
        1,
        1,
        0,
    )
    compare(GOLD, build_dag(["Where did Kora die?", "East of #1?", "Stores in #2?"]), tally)
    assert (tally.same_length, tally.broken, tally.fully_linked, tally.with_gold) == (1, 1, 1, 2)
    assert tally.steps == 5 and tally.gold_steps == 6


def test_a_question_without_gold_is_planned_but_not_compared() -> None:
    tally = Tally()
    assert compare(GoldQuestion("Q?", []), build_dag(["Q?"]), tally) == ""
    assert (tally.steps, tally.with_gold, tally.gold_links) == (1, 0, 0)
    table = "\n".join(summary({"linked": tally}))
    assert "plans with every link   0/0" in table


async def test_each_rule_repairs_the_same_reply_its_own_way() -> None:
    gold = GoldQuestion(
        "Are the Alder Bridge and the Birch Bridge in one county?",
        ["In which county is the Alder Bridge?", "In which county is the Birch Bridge?"],
    )
    plan = {
        "plan": "Both counties.",
        "sub_questions": [
            {"needs": [], "question": "In which county is the Alder Bridge?"},
            {"needs": [1], "question": "In which county is the Birch Bridge?"},
        ],
    }
    llm = LlmClient(
        model=ScriptedChatModel(rules=[ScriptedReply(when=["Alder"], reply=json.dumps(plan))]),
        model_name="scripted",
        use_cache=False,
    )
    appended, dropped = Tally(), Tally()
    lines = await plan_one(llm, gold, "append", appended)
    assert "  2. In which county is the Birch Bridge (#1)?  needs [1]" in lines
    lines = await plan_one(llm, gold, "drop", dropped)
    assert "  2. In which county is the Birch Bridge?  needs []" in lines
    assert "  repaired sub-question 2: dropped_need (#1 listed, unused by the text)" in lines
    assert (appended.repairs, dropped.repairs) == ({"appended": 1}, {"dropped_need": 1})


def test_questions_are_read_from_json_and_json_lines(tmp_path: Path) -> None:
    record = {
        "question": GOLD.question,
        "question_decomposition": [{"question": h} for h in GOLD.hops],
    }
    listed = tmp_path / "q.json"
    listed.write_text(json.dumps([record, {"question": "Second?"}]))
    assert read_questions(listed, 5) == [GOLD, GoldQuestion("Second?", [])]
    lines = tmp_path / "q.jsonl"
    lines.write_text(json.dumps(record) + "\n\n" + json.dumps({"question": "Second?"}) + "\n")
    assert read_questions(lines, 1) == [GOLD]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("{not json", "is not JSON or JSON lines"),
        ('[{"text": "no question"}]', "every record needs a 'question' string"),
        ("[]", "holds no questions"),
    ],
)
def test_bad_question_files_stop_with_one_line(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "questions.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit, match=message):
        read_questions(path, 20)
