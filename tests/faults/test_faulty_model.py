"""The fault-injecting wrapper: seeded, order-independent, and building from a model spec."""

import json
from collections import Counter
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from graphs.models.faulty import (
    FAULT_KINDS,
    NOT_JSON,
    FaultyChatModel,
    InjectedProviderError,
    InjectedTimeout,
    inner_spec,
    parse_faulty_spec,
)
from graphs.models.providers import (
    ProviderConfigError,
    lazy_llm_client,
    make_json_chat_model,
    model_name_of,
)
from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply

REPLY = json.dumps({"answer": "Lisbon", "justification": "it says so"})


def wrapped(rate: float, seed: int) -> FaultyChatModel:
    inner = ScriptedChatModel(rules=[ScriptedReply(reply=REPLY, input_tokens=80, output_tokens=20)])
    return FaultyChatModel(inner=inner, rate=rate, seed=seed)


def outcome(model: FaultyChatModel, prompt: str) -> str:
    """What one call gave: ok, the error type, or the damaged reply's kind."""
    try:
        reply = model.invoke([HumanMessage(content=prompt)])
    except InjectedProviderError as exc:
        return str(exc.status_code)
    except InjectedTimeout:
        return "timeout"
    return str(reply.response_metadata.get("injected_fault", "ok"))


PROMPTS = [f"question {n}" for n in range(300)]


def test_faults_depend_on_seed_and_prompt_not_on_call_order() -> None:
    forward = {p: outcome(wrapped(0.3, 7), p) for p in PROMPTS}
    model = wrapped(0.3, 7)
    backward = {p: outcome(model, p) for p in reversed(PROMPTS)}
    assert forward == backward
    other_seed = wrapped(0.3, 8)
    assert {p: outcome(other_seed, p) for p in PROMPTS} != forward


def test_the_rate_and_every_kind_show_up() -> None:
    model = wrapped(0.3, 1)
    counts = Counter(outcome(model, p) for p in PROMPTS)
    faults = sum(n for kind, n in counts.items() if kind != "ok")
    assert 60 <= faults <= 120  # 300 draws at 30 %: 90 expected, 120 is over 3.5 sigma out
    assert set(counts) == {"ok", *FAULT_KINDS}
    assert model.injected == {kind: counts[kind] for kind in FAULT_KINDS}
    assert sum(outcome(wrapped(0.0, 1), p) != "ok" for p in PROMPTS[:50]) == 0
    assert sum(outcome(wrapped(1.0, 1), p) == "ok" for p in PROMPTS[:50]) == 0


def test_a_repeated_prompt_draws_again() -> None:
    model = wrapped(0.5, 3)
    results = [outcome(model, "the same question") for _ in range(40)]
    assert "ok" in results and len(set(results)) > 2


def test_damaged_replies_keep_the_tokens_billed() -> None:
    model = wrapped(1.0, 0)
    seen: dict[str, tuple[str, int, int]] = {}
    for prompt in PROMPTS[:100]:
        try:
            reply = model.invoke([HumanMessage(content=prompt)])
        except (InjectedProviderError, InjectedTimeout):
            continue
        usage = reply.usage_metadata
        assert usage is not None
        kind = reply.response_metadata["injected_fault"]
        seen[kind] = (str(reply.content), usage["input_tokens"], usage["output_tokens"])
    assert seen["truncated"] == (REPLY[: len(REPLY) // 2], 80, 10)
    assert seen["invalid_json"] == (NOT_JSON, 80, 20)
    assert seen["empty"] == ("", 80, 0)


def test_specs_parse_and_build(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"reply": REPLY}]))
    spec = f"faulty:0.1:42:scripted:{rules}"
    assert parse_faulty_spec(spec) == (0.1, 42, f"scripted:{rules}")
    assert inner_spec(f"faulty:0.5:1:{spec}") == f"scripted:{rules}"
    assert model_name_of(spec) == "scripted"
    model = make_json_chat_model(
        spec, temperature=0, api_key=None, model_dir=tmp_path, max_tokens=9
    )
    assert isinstance(model, FaultyChatModel)
    assert (model.rate, model.seed) == (0.1, 42)
    assert isinstance(model.inner, ScriptedChatModel)
    client = lazy_llm_client(
        spec,
        temperature=0,
        api_key=None,
        model_dir=tmp_path,
        engine=None,
        use_cache=False,
        concurrency=3,
    )
    assert client.model_name == "scripted" and client.concurrency == 3


@pytest.mark.parametrize(
    "spec",
    ["faulty:0.1:scripted:x.json", "faulty:abc:1:scripted:x", "faulty:1.5:1:x", "faulty:0.1:2:"],
)
def test_bad_specs_say_what_is_wrong(spec: str, tmp_path: Path) -> None:
    with pytest.raises(ProviderConfigError, match="faulty:"):
        make_json_chat_model(spec, temperature=0, api_key=None, model_dir=tmp_path, max_tokens=9)
