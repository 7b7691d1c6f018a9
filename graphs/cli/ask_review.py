"""`grasp ask --review`: the paused plan shown in the terminal, and the reviewer's decision.

"a" (or an empty line) accepts; "e" opens $VISUAL / $EDITOR (else vi) on the plan as text:

    plan: Find who directed Blue Harbor, then where that person was born.
    1. Who directed Blue Harbor?
    2. Where was #1 born?

(or on a JSON object {"plan", "sub_questions"}, if the file starts with "{"); anything else typed
is a comment the planner plans again with. The graph checks an edit; a refused one comes back as
the next review, with the reason on top.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.types import StateSnapshot

from graphs.agent.plan_review import ACTION
from graphs.runtime.run_history import say

PROMPT = "[a]ccept, [e]dit in $EDITOR, or type a comment to plan again: "
EDIT_HELP = """\
# Edit the plan, save and close. One sub-question per line, numbered 1, 2, 3 … in order;
# #k stands for the answer of sub-question k. Lines starting with "# " are ignored.
"""
_NUMBERED = re.compile(r"^(\d+)\s*[.)]\s*(.*)$")


class ReviewPending(RuntimeError):
    """The run waits for its plan review and no decision could be read (input ended)."""


def pending_review(snapshot: StateSnapshot) -> dict[str, Any] | None:
    """The plan review a paused run waits on (its HumanInterrupt), or None."""
    for pending in snapshot.interrupts:
        value = pending.value
        request = value[0] if isinstance(value, list) and value else value
        if isinstance(request, dict) and request.get("action_request", {}).get("action") == ACTION:
            return request
    return None


def plan_as_text(args: dict[str, Any]) -> str:
    """The plan as the editor shows it."""
    steps = [f"{n}. {text}" for n, text in enumerate(args.get("sub_questions", []), start=1)]
    return EDIT_HELP + f"plan: {args.get('plan', '')}\n" + "\n".join(steps) + "\n"


def text_as_plan(text: str) -> dict[str, Any]:
    """An edited plan text (or JSON object) as an edit's args; ValueError says what is wrong."""
    if text.lstrip().startswith("{"):
        edited = json.loads(text)
        if not isinstance(edited, dict):
            raise ValueError("the JSON form is an object with plan and sub_questions")
        return edited
    plan, steps = "", list[str]()
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped == "#" or stripped.startswith("# "):
            continue
        if stripped.lower().startswith("plan:"):
            plan = stripped[5:].strip()
            continue
        numbered = _NUMBERED.match(stripped)
        if numbered is None:
            raise ValueError(f"{stripped!r} is neither 'plan: …' nor a numbered sub-question")
        if int(numbered[1]) != len(steps) + 1:
            raise ValueError(
                f"number the sub-questions 1, 2, 3 … in order (#k names that number); "
                f"{numbered[1]} came after {len(steps)}"
            )
        steps.append(numbered[2].strip())
    return {"plan": plan, "sub_questions": steps}


def edit_in_editor(args: dict[str, Any]) -> dict[str, Any]:
    """Open the plan in the user's editor; the edited plan as an edit's args."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.NamedTemporaryFile("w", suffix=".plan.txt", delete=False) as handle:
        handle.write(plan_as_text(args))
    path = Path(handle.name)
    try:
        subprocess.run([*shlex.split(editor), str(path)], check=True)
        return text_as_plan(path.read_text(encoding="utf-8"))
    finally:
        path.unlink(missing_ok=True)


def ask_reviewer(request: dict[str, Any], read: Callable[[str], str] = input) -> dict[str, Any]:
    """Show the paused plan and read the decision, as an Agent Inbox HumanResponse."""
    say("plan review: the run waits for your decision")
    for line in str(request.get("description", "")).splitlines():
        say(f"  {line}" if line else "")
    while True:
        try:
            answer = read(PROMPT).strip()
        except EOFError:
            raise ReviewPending("the run waits for its plan review; no decision was read") from None
        if answer.lower() in ("", "a", "accept"):
            return {"type": "accept"}
        if answer.lower() not in ("e", "edit"):
            return {"type": "response", "args": answer}
        try:
            return {"type": "edit", "args": edit_in_editor(request["action_request"]["args"])}
        except (ValueError, OSError, subprocess.CalledProcessError) as exc:
            say(f"not used: {exc}")
