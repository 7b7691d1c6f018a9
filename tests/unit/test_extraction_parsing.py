import json

import pytest

from nodes.indexing.extract import (
    ExtractionJson,
    merge_pieces,
    output_schema,
    render_batch,
    split_long_text,
    to_extraction,
    validator,
)
from nodes.indexing.extraction_types import EntityMention, Extraction, PassageInput
from nodes.llm.client import MalformedOutput, parse_reply
from nodes.llm.reply import extract_json

GOOD = {
    "passages": [
        {
            "id": 1,
            "propositions": ["Ada Lovelace was a mathematician.", "Ada Lovelace was born in 1815."],
            "entities": [
                ["Ada Lovelace", "person", [0, 1, 1]],
                ["1815", "year", [1]],
                ["", "x", [0]],
            ],
        },
        {"id": 2, "propositions": ["Paris is in France."], "entities": []},
    ]
}


def test_well_formed_output_parses_into_extractions() -> None:
    reply = parse_reply("```json\n" + json.dumps(GOOD) + "\n```", ExtractionJson)
    validator(2)(reply)
    extraction = to_extraction(PassageInput(7, "Ada", "..."), reply.passages[0])
    assert extraction == Extraction(
        7,
        ("Ada Lovelace was a mathematician.", "Ada Lovelace was born in 1815."),
        (EntityMention("Ada Lovelace", "person", (0, 1)), EntityMention("1815", "year", (1,))),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no json here", "no JSON object"),
        ('{"passages": [{"id": 1, "propositions": ["a"]', "invalid JSON"),
        ('{"passages": [{"id": 1, "propositions": []}]}', "passages.0.propositions"),
        ('{"passages": [{"id": 1, "propositions": ["a"], "entities": [["A", "t"]]}]}', "entities"),
    ],
)
def test_malformed_output_is_rejected_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(MalformedOutput, match=message) as caught:
        parse_reply(text, ExtractionJson)
    assert caught.value.raw == text


def test_validator_checks_passage_ids_and_indices() -> None:
    reply = ExtractionJson.model_validate(GOOD)
    with pytest.raises(ValueError, match=r"expected passage ids 1..3, got \[1, 2\]"):
        validator(3)(reply)
    stray = ExtractionJson.model_validate(
        {
            "passages": [
                {"id": 1, "propositions": ["a"], "entities": [["A", "t", [0, 4]], ["B", "t", [7]]]}
            ]
        }
    )
    validator(1)(stray)  # one usable link is enough; stray indices are dropped below
    assert to_extraction(PassageInput(3, "T", "a"), stray.passages[0]) == Extraction(
        3, ("a",), (EntityMention("A", "t", (0,)),)
    )
    hopeless = ExtractionJson.model_validate(
        {"passages": [{"id": 1, "propositions": ["a"], "entities": [["A", "t", [4]]]}]}
    )
    with pytest.raises(ValueError, match="passage 1: no entity points at an existing statement"):
        validator(1)(hopeless)


def test_output_schema_fixes_the_passage_count_and_numbers() -> None:
    schema = output_schema(2)
    passages = schema["properties"]["passages"]  # type: ignore[index]
    assert (passages["minItems"], passages["maxItems"]) == (2, 2)
    assert [p["properties"]["id"] for p in passages["prefixItems"]] == [{"const": 1}, {"const": 2}]


def test_render_batch_numbers_passages_from_one() -> None:
    text = render_batch([PassageInput(10, "T1", "a"), PassageInput(11, "T2", "b")])
    assert (
        text
        == "Passage 1\nTitle: T1\na\n\nPassage 2\nTitle: T2\nb\n\nReturn exactly 2 passage object(s)."
    )


def test_oversized_text_is_split_at_sentences_and_merged_back() -> None:
    text = "One two. Three four five. Six."
    assert split_long_text(text, 16) == ["One two.", "Three four five.", "Six."]
    assert split_long_text("x" * 10, 4) == ["xxxx", "xxxx", "xx"]
    merged = merge_pieces(
        5,
        [
            Extraction(0, ("a", "b"), (EntityMention("A", "t", (1,)),)),
            Extraction(1, ("c",), (EntityMention("A", "t", (0,)),)),
        ],
    )
    assert merged == Extraction(
        5, ("a", "b", "c"), (EntityMention("A", "t", (1,)), EntityMention("A", "t", (2,)))
    )


def test_json_nested_beyond_the_parsers_stack_is_malformed_output() -> None:
    with pytest.raises(MalformedOutput, match="nested too deeply"):
        extract_json('{"a":' + "[" * 100_000)
