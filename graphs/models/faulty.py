"""A chat model that wraps another and injects provider faults at a fixed rate, reproducibly.

`GRASP_CHAT_MODEL=faulty:RATE:SEED:<inner spec>` (e.g. `faulty:0.3:7:scripted:rules.json`)
makes a fraction RATE of calls fail the way real providers do: a 429, a 500, a time-out, a reply
cut short, a reply that is not JSON, or an empty reply. Whether a call fails depends only on the
seed, the prompt and how often that prompt was asked before, so a run's faults do not depend on
the order concurrent calls happen to take.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections import Counter
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

FAULTY_PREFIX = "faulty:"
#: Every kind of fault injected, in the order a draw picks them.
FAULT_KINDS = ("429", "500", "timeout", "truncated", "invalid_json", "empty")
#: What a reply that is not JSON says (a chatty model ignoring JSON mode).
NOT_JSON = "Sure, here is what I found: nothing that fits the format, sorry."


class InjectedProviderError(RuntimeError):
    """An HTTP error as a provider SDK raises it: a status code and the usage billed (none)."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"Error code: {status_code} - {message} (injected)")
        self.status_code = status_code
        self.usage_metadata = {"input_tokens": 0, "output_tokens": 0}


class InjectedTimeout(TimeoutError):
    """A request that timed out after the provider had read (and billed) the prompt."""

    def __init__(self, input_tokens: int) -> None:
        super().__init__("Request timed out (injected)")
        self.usage_metadata = {"input_tokens": input_tokens, "output_tokens": 0}


def parse_faulty_spec(spec: str) -> tuple[float, int, str]:
    """(rate, seed, inner spec) of `faulty:RATE:SEED:INNER`; ValueError says what is wrong."""
    parts = spec.removeprefix(FAULTY_PREFIX).split(":", 2)
    if len(parts) != 3 or not parts[2]:
        raise ValueError(f"{spec!r}: expected faulty:RATE:SEED:<chat model spec>")
    try:
        rate, seed = float(parts[0]), int(parts[1])
    except ValueError:
        raise ValueError(f"{spec!r}: RATE must be a number and SEED an integer") from None
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"{spec!r}: RATE must lie between 0 and 1")
    return rate, seed, parts[2]


def inner_spec(spec: str) -> str:
    """The model a (possibly nested) faulty spec wraps; any other spec unchanged.

    A malformed faulty spec is returned as it is: its error comes when the model is built.
    """
    while spec.startswith(FAULTY_PREFIX):
        try:
            spec = parse_faulty_spec(spec)[2]
        except ValueError:
            return spec
    return spec


def _prompt_of(messages: list[BaseMessage]) -> str:
    return "\n\n".join(str(message.content) for message in messages)


class FaultyChatModel(BaseChatModel):
    """Passes calls to `inner`, except a seeded fraction `rate` that fail in one of FAULT_KINDS."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    rate: float
    seed: int
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _asked: Counter[str] = PrivateAttr(default_factory=Counter)
    _injected: Counter[str] = PrivateAttr(default_factory=Counter)

    @property
    def injected(self) -> dict[str, int]:
        """How many faults of each kind were injected so far."""
        return dict(self._injected)

    @property
    def _llm_type(self) -> str:
        return "faulty"

    def draw(self, prompt: str) -> str | None:
        """The fault this ask of `prompt` gets (None: a normal call); counts the ask."""
        with self._lock:
            nth = self._asked[prompt]
            self._asked[prompt] += 1
        digest = hashlib.sha256(f"{self.seed}\x00{nth}\x00{prompt}".encode()).digest()
        chance = random.Random(digest)
        if chance.random() >= self.rate:
            return None
        kind = chance.choice(FAULT_KINDS)
        with self._lock:
            self._injected[kind] += 1
        return kind

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = _prompt_of(messages)
        kind = self.draw(prompt)
        if kind == "429":
            raise InjectedProviderError(429, "rate limit reached, retry later")
        if kind == "500":
            raise InjectedProviderError(500, "internal server error")
        if kind == "timeout":
            raise InjectedTimeout(max(1, len(prompt) // 4))
        result = self.inner._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        if kind is None:
            return result
        return self._spoil(result, kind)

    def _spoil(self, result: ChatResult, kind: str) -> ChatResult:
        """The inner reply damaged as `kind` says, still billed for what the provider produced."""
        message = result.generations[0].message
        text = str(message.content)
        usage = dict(getattr(message, "usage_metadata", None) or {})
        tokens_in = int(usage.get("input_tokens", 0))
        tokens_out = int(usage.get("output_tokens", 0))
        if kind == "truncated":
            text, tokens_out = text[: len(text) // 2], tokens_out // 2
        elif kind == "invalid_json":
            text = NOT_JSON
        else:  # empty
            text, tokens_out = "", 0
        spoiled = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
            response_metadata={**message.response_metadata, "injected_fault": kind},
        )
        return ChatResult(generations=[ChatGeneration(message=spoiled)])
