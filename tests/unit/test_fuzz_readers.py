"""Fuzzing the two readers of untrusted text: corpus files (a user's) and extraction replies (a
model's). Whatever comes in, the answer is data or one clear, typed error, never another exception."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphs.indexing.corpus_files import CorpusFormatError, SourcePassage, read_corpus
from nodes.indexing.extract import ExtractionJson, to_extraction, validator
from nodes.indexing.extraction_types import Extraction, PassageInput
from nodes.llm.reply import MalformedOutput, parse_reply

# Bounded so the whole module runs in a few seconds.
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["title", "text", "id", "x", ""]) | st.text(max_size=8),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
# Shapes near a real corpus, so the fuzzer reaches past "not a list".
passage_like = st.dictionaries(
    st.sampled_from(["title", "text", "extra"]),
    json_scalars | st.lists(st.text(max_size=10), max_size=3),
)
corpus_like = st.lists(passage_like, max_size=4) | st.dictionaries(
    st.text(max_size=10), st.lists(st.text(max_size=10), max_size=3) | json_scalars, max_size=4
)


def read_as(suffix: str, content: bytes) -> list[SourcePassage] | CorpusFormatError:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"corpus{suffix}"
        path.write_bytes(content)
        try:
            passages = read_corpus(path)
        except CorpusFormatError as exc:
            return exc
    return passages


def check_read(outcome: list[SourcePassage] | CorpusFormatError) -> None:
    if isinstance(outcome, CorpusFormatError):
        message = str(outcome)
        assert message and "\n" not in message  # one line for the user
        return
    assert outcome, "an empty corpus must be an error, not an empty list"
    assert all(isinstance(p.title, str) and isinstance(p.text, str) for p in outcome)


@FUZZ
@given(content=st.binary(max_size=300), suffix=st.sampled_from([".json", ".jsonl"]))
def test_random_bytes_read_as_passages_or_one_error(content: bytes, suffix: str) -> None:
    check_read(read_as(suffix, content))


@FUZZ
@given(data=json_values | corpus_like, suffix=st.sampled_from([".json", ".jsonl"]))
def test_random_json_shapes_read_as_passages_or_one_error(data: Any, suffix: str) -> None:
    if suffix == ".jsonl" and isinstance(data, list):
        text = "\n".join(json.dumps(item, ensure_ascii=False) for item in data)
    else:
        text = json.dumps(data, ensure_ascii=False)
    # surrogatepass: lone surrogates in generated text must reach the reader, as in real files.
    check_read(read_as(suffix, text.encode("utf-8", "surrogatepass")))


def test_well_formed_corpora_read_back_exactly() -> None:
    """The fuzz's counterpart: valid input gives its passages (so the checks above can fail)."""
    data = [{"title": "A\u2028B", "text": " alpha "}, {"title": "C", "text": "gamma"}]
    lines = "\n".join(json.dumps(item, ensure_ascii=False) for item in data).encode()
    expected = [SourcePassage("A\u2028B", "alpha"), SourcePassage("C", "gamma")]
    assert read_as(".jsonl", lines) == expected
    assert read_as(".json", json.dumps(data).encode()) == expected


entity = st.tuples(
    st.text(max_size=8), st.text(max_size=8), st.lists(st.integers(-2, 5), max_size=3)
)
passage_reply = st.fixed_dictionaries(
    {"id": st.integers(0, 4), "propositions": st.lists(st.text(max_size=12), max_size=3)},
    optional={"entities": st.lists(entity | json_scalars, max_size=3)},
)
reply_like = st.fixed_dictionaries({"passages": st.lists(passage_reply | json_scalars, max_size=4)})
fences = st.sampled_from(["{}", "```json\n{}\n```", "Here it is: {} Done.", "{}}", "```{}"])


def check_parse(text: str, expected: int) -> None:
    try:
        reply = parse_reply(text, ExtractionJson)
    except MalformedOutput as exc:
        assert exc.raw == text and str(exc)
        return
    try:
        validator(expected)(reply)
    except ValueError as exc:  # the client turns this into MalformedOutput and asks again
        assert str(exc)
        return
    by_id = {p.id: p for p in reply.passages}
    passages = [PassageInput(i, f"T{i}", "text") for i in range(1, expected + 1)]
    for passage in passages:
        extraction = to_extraction(passage, by_id[passage.id])
        assert isinstance(extraction, Extraction)
        count = len(extraction.propositions)
        assert all(0 <= i < count for e in extraction.entities for i in e.propositions)


@FUZZ
@given(text=st.text(max_size=200), expected=st.integers(1, 3))
def test_random_replies_parse_or_are_malformed(text: str, expected: int) -> None:
    check_parse(text, expected)


@FUZZ
@given(data=reply_like | json_values, wrapper=fences, expected=st.integers(1, 3))
def test_reply_shaped_json_parses_or_is_malformed(data: Any, wrapper: str, expected: int) -> None:
    check_parse(wrapper.replace("{}", json.dumps(data), 1), expected)
