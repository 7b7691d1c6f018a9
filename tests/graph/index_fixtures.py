"""Scripted extraction replies for the three passages of shared/data/sample_corpus.json."""

import json

from graphs.scripted_model import ScriptedReply

SUDHOF = {
    "propositions": [
        "Thomas C. Sudhof was born on December 22, 1955.",
        "Thomas C. Sudhof is a German-American biochemist who studies synaptic transmission.",
        "Thomas C. Sudhof is a professor at Stanford University.",
    ],
    "entities": [
        ["Thomas C. Sudhof", "person", [0, 1, 2]],
        ["Stanford University", "university", [2]],
    ],
}
EAGLEMAN = {
    "propositions": [
        "David Eagleman is an American neuroscientist.",
        "David Eagleman teaches neuroscience at Stanford University.",
    ],
    "entities": [
        ["David Eagleman", "person", [0, 1]],
        ["Stanford University", "university", [1]],
    ],
}
DEISSEROTH = {
    "propositions": ["Karl Deisseroth developed optogenetics at Stanford University."],
    "entities": [
        ["Karl Deisseroth", "person", [0]],
        ["stanford university", "school", [0]],
        ["optogenetics", "technology", [0]],
    ],
}


def reply(*passages: dict) -> str:
    return json.dumps({"passages": [{"id": i, **p} for i, p in enumerate(passages, 1)]})


def single(title: str, body: dict, **extra: object) -> ScriptedReply:
    return ScriptedReply(
        when=[f"Passage 1\nTitle: {title}", "Return exactly 1 passage"],
        reply=reply(body),
        input_tokens=200,
        output_tokens=60,
        **extra,
    )


BATCH = ScriptedReply(
    when=["Title: Thomas C. Sudhof", "Title: David Eagleman", "Title: Karl Deisseroth"],
    reply=reply(SUDHOF, EAGLEMAN, DEISSEROTH),
    input_tokens=700,
    output_tokens=250,
)
