"""Reply schemas with bounded strings and lists, for models that turn a schema into a grammar."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

#: A note, an answer or a search statement is one sentence, and the prompts ask for at most three
#: notes and a few keywords.
REPLY_STRING_CHARS = 300
REPLY_LIST_ITEMS = 5


def bounded_schema(reply_type: type[BaseModel]) -> dict[str, Any]:
    """The reply's JSON schema with every string and list bounded and every field required.

    Given to the local model, llama.cpp makes it a grammar: a reply then always closes its
    strings and its object. Unbounded, the 1.5B model sometimes ran on inside a string until the
    768-token output cap (8 of 77 evaluator replies on the first 20 HotpotQA questions): the cut
    reply is invalid JSON and asked again, and when the second runs on too the hop is lost.
    """
    properties: dict[str, Any] = {}
    for name, spec in reply_type.model_json_schema()["properties"].items():
        bounded = {key: value for key, value in spec.items() if key in ("type", "enum")}
        if bounded.get("type") == "string" and "enum" not in bounded:
            bounded["maxLength"] = REPLY_STRING_CHARS
        if bounded.get("type") == "array":
            bounded["items"] = {"type": "string", "maxLength": REPLY_STRING_CHARS}
            bounded["maxItems"] = REPLY_LIST_ITEMS
        properties[name] = bounded
    return {"type": "object", "properties": properties, "required": list(properties)}


def with_fields(schema: dict[str, Any], **fields: dict[str, Any]) -> dict[str, Any]:
    """A copy of an object schema with the named properties' schemas replaced."""
    return {**schema, "properties": {**schema["properties"], **fields}}
