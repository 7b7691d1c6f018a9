"""A reviewer's edit of a plan, checked like the planner's own, and the record of each decision.

An edit gives the plan's sentence and its sub-questions as texts where `#k` marks the answer of
sub-question k; `build_dag` turns them into steps or says in one line why it cannot (a `#k`
naming no sub-question, a step needing its own answer, a cycle, no steps).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from typing_extensions import TypedDict

from nodes.agent.plan_dag import PlanError, SubQuestion, build_dag, placeholders

ReviewAction = Literal["accept", "edit", "response", "refused"]


class PlanReview(TypedDict):
    """One decision of a plan review, as the run's state keeps it.

    `action`: accept, edit, response (re-planned with `note` as guidance) or refused (an edit or a
    reply that could not be used; `note` says why). `before` and `after` are the sub-questions'
    texts (with `#k`) before and after the decision; `plan` is the plan's sentence after it.
    """

    action: ReviewAction
    note: str
    before: list[str]
    after: list[str]
    plan: str


def review_args(plan: str, sub_questions: list[SubQuestion]) -> dict[str, Any]:
    """What a reviewer is shown and edits: the plan's sentence and its sub-questions' texts."""
    return {"plan": plan, "sub_questions": [sq["text"] for sq in sub_questions]}


def _steps_of(value: Any) -> list[Any]:
    """The edited sub-questions: a list, JSON text of one, or one sub-question per line."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return [line for line in value.splitlines() if line.strip()]
    if not isinstance(value, list):
        raise PlanError("an edit gives sub_questions as a list of texts")
    return value


def _numbers(position: int, needs: Any) -> list[int] | None:
    """A step's listed needs as sorted step numbers (None: it lists none)."""
    if needs is None:
        return None
    try:
        return sorted({int(str(k).lstrip("#")) for k in needs})
    except (TypeError, ValueError):
        raise PlanError(f"sub-question {position} lists needs that are not numbers") from None


def _step_text(position: int, item: Any) -> str:
    """One edited sub-question's text; a dict's listed needs must match the text's `#k`."""
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        text = item.get("text", item.get("question"))
        if not isinstance(text, str):
            raise PlanError(f"sub-question {position} has no text")
        needs = _numbers(position, item.get("needs", item.get("depends_on")))
        if needs is not None and needs != placeholders(text):
            written = ", ".join(f"#{k}" for k in placeholders(text)) or "none"
            raise PlanError(
                f"sub-question {position} lists needs {needs} but its text links "
                f"{written}: write #k where the answer of sub-question k belongs"
            )
        return text
    raise PlanError(f"sub-question {position} is not a text: {item!r}")


def edited_plan(args: Any, plan: str) -> tuple[str, list[SubQuestion]]:
    """The plan's sentence and validated steps of an edit; PlanError says what is wrong.

    `args` is {"plan": …, "sub_questions": [...]}, or an Agent Inbox ActionRequest holding it
    ({"action": …, "args": {…}}); a missing "plan" keeps `plan`.
    """
    if isinstance(args, Mapping) and "action" in args and isinstance(args.get("args"), Mapping):
        args = args["args"]
    if not isinstance(args, Mapping) or "sub_questions" not in args:
        raise PlanError('an edit gives {"plan": "…", "sub_questions": ["…", "… #1 …"]}')
    texts = [_step_text(n, item) for n, item in enumerate(_steps_of(args["sub_questions"]), 1)]
    sentence = args.get("plan", plan)
    if not isinstance(sentence, str):
        raise PlanError("the plan's sentence must be a text")
    return sentence.strip(), build_dag(texts)
