"""What `grasp ask` and `grasp show` print: one-line summaries of node writes, sub-agent rounds.

Pure functions of a node's name and its write (the dict the node returned), so the same text is
printed live while a run streams and later when it is read back from its checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphs.agent.chat_messages import given_question
from graphs.agent.hop_end import shown_answer
from graphs.cli.sources import markers, source_lines
from nodes.agent.plan_dag import substitute

MAX_LIST = 6


def short(text: str, limit: int = 100) -> str:
    """One line, at most `limit` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def listing(items: list[str]) -> str:
    """A comma-separated list, cut after MAX_LIST items."""
    if not items:
        return "(none)"
    more = f" … +{len(items) - MAX_LIST}" if len(items) > MAX_LIST else ""
    return ", ".join(items[:MAX_LIST]) + more


def tokens_text(tally: dict[str, Any] | None) -> str:
    """'in/out tokens, N calls' of a token tally."""
    tally = tally or {}
    return (
        f"{tally.get('input_tokens', 0)}/{tally.get('output_tokens', 0)} tokens, "
        f"{calls_text(tally.get('calls', 0))}"
    )


def plan_lines(values: dict[str, Any]) -> list[str]:
    """The plan and its sub-questions (with their dependencies) as printable lines."""
    lines = [f"plan: {values.get('plan') or '(none: the question is answered as one hop)'}"]
    for sq in values.get("sub_questions", []):
        needs = (
            f"  (needs {', '.join(f'#{k}' for k in sq['depends_on'])})" if sq["depends_on"] else ""
        )
        lines.append(f"  {sq['index']}. {sq['text']}{needs}")
    if values.get("error"):
        lines.append(f"note: {values['error']}")
    return lines


def summarize(node: str, write: Any, names: dict[int, str] | None = None) -> str:
    """A one-line summary of what `node` wrote; `names` maps entity ids to names."""
    if not isinstance(write, dict):
        return ""
    names = names or {}
    if node == "__start__":
        return f"question: {short(given_question(write))}"
    if node == "plan":
        count = len(write.get("sub_questions", []))
        return (
            f"{count} sub-question{'' if count == 1 else 's'}: {short(write.get('plan', ''), 80)}"
        )
    if node == "review_plan":
        log = write.get("plan_review") or []
        if not log:
            return "waiting for a reviewer"
        last = log[-1]
        return str(last["action"]) + (f": {short(last['note'], 90)}" if last["note"] else "")
    if node == "schedule":
        return write.get("error") or "scheduled the next step"
    if node == "sub_agent":
        answers = write.get("answers", {})
        return "; ".join(f"sq{k} → {short(v, 60)}" for k, v in answers.items()) or "no answer"
    if node == "synthesize":
        return f"answer: {short(write.get('final_answer', ''))}"
    if node == "rewrite":
        return (
            f'search "{short(write.get("search_statement", ""), 70)}" '
            f"keywords [{listing(write.get('keywords', []))}]"
        )
    if node == "search":
        found = [c["name"] for c in write.get("candidates", [])]
        return f"{len(found)} candidate entities: {listing(found)}"
    if node == "select_entities":
        chosen = [names.get(i, f"#{i}") for i in write.get("selected", [])]
        return f"entities chosen: {listing(chosen)}"
    if node == "gather_evidence":
        return f"passages: {listing([e['title'] for e in write.get('evidence', [])])}"
    if node == "evaluate":
        decision = write.get("decision", "?")
        if decision == "DONE":
            return f"DONE → {short(write.get('answer', ''), 80)}"
        return f'{decision}: next search "{short(write.get("search_statement", ""), 70)}"'
    return short(str({k: v for k, v in write.items() if k != "tokens"}), 80)


@dataclass
class Round:
    """One search round of a sub-agent."""

    iteration: int
    search_statement: str
    keywords: list[str]
    entities: list[str] = field(default_factory=list)
    passages: list[str] = field(default_factory=list)
    decision: str = ""
    answer: str = ""
    # The evidence items' ids beside their titles: passage ids (proposition ids under the
    # propositions-evidence ablation), so an eval can tell two passages of one title apart.
    evidence_ids: list[int] = field(default_factory=list)


@dataclass
class AgentTrace:
    """A sub-agent's rounds, rebuilt from its nodes' writes in the order they happened."""

    index: int
    sub_question: str = ""
    rounds: list[Round] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)
    tokens: dict[str, Any] = field(default_factory=dict)

    def record(self, node: str, write: Any) -> None:
        """Fold one node's write into the rounds."""
        if not isinstance(write, dict):
            return
        if node == "rewrite":
            self.rounds.append(
                Round(write.get("iteration", 1), write["search_statement"], write["keywords"])
            )
        elif not self.rounds:
            return  # a write before the first rewrite was seen (nothing to attach it to)
        current = self.rounds[-1]
        if node == "search":
            self.names.update({c["id"]: c["name"] for c in write.get("candidates", [])})
        elif node == "select_entities":
            current.entities = [self.names.get(i, f"#{i}") for i in write.get("selected", [])]
        elif node == "gather_evidence":
            current.passages = [e["title"] for e in write.get("evidence", [])]
            current.evidence_ids = [e["id"] for e in write.get("evidence", [])]
        elif node == "evaluate":
            current.decision = write.get("decision", "")
            current.answer = write.get("answer", "")
            if current.decision != "DONE" and "iteration" in write:
                self.rounds.append(
                    Round(
                        write["iteration"],
                        write.get("search_statement", current.search_statement),
                        write.get("keywords", current.keywords),
                    )
                )

    def lines(self) -> list[str]:
        """The rounds as printable lines (a round the run never reached is left out)."""
        out = [f"sub-agent sq{self.index}: {self.sub_question}"]
        for r in self.rounds:
            if not (r.decision or r.entities or r.passages):
                continue
            out.append(
                f'  round {r.iteration}: search "{short(r.search_statement, 80)}" '
                f"keywords [{listing(r.keywords)}]"
            )
            out.append(f"    entities chosen: {listing(r.entities)}")
            out.append(f"    passages: {listing(r.passages)}")
            verdict = (
                f"DONE → {shown_answer(r.answer)}"
                if r.decision == "DONE"
                else r.decision or "(unfinished)"
            )
            out.append(f"    decision: {verdict}")
        if self.tokens:
            out.append(f"  cost: {tokens_text(self.tokens)}")
        return out


def resolved_sub_question(values: dict[str, Any], index: int) -> str:
    """Sub-question `index` with the answers it depends on filled in."""
    answers = {int(k): v for k, v in values.get("answers", {}).items()}
    for sq in values.get("sub_questions", []):
        if sq["index"] == index:
            return substitute(sq["text"], answers)
    return ""


#: What `grasp ask` prints when the token budget ended the search.
BUDGET_LINE = "budget: max_tokens reached; the search stopped and the answer is from what was found"


def calls_text(calls: int) -> str:
    """'1 call', '3 calls'."""
    return f"{calls} call{'' if calls == 1 else 's'}"


def summary_lines(values: dict[str, Any], wall_s: float | None, wall_note: str = "") -> list[str]:
    """Answer, tokens (total and per node), calls and wall time of a finished run."""
    tokens = values.get("tokens", {})
    records = tokens.get("records", [])
    cached = sum(1 for r in records if r.get("cached"))
    citations = values.get("citations")
    lines = [
        f"answer: {values.get('final_answer') or '(none)'}{markers(citations or [])}",
        f"justification: {values.get('justification') or '(none)'}",
        *source_lines(citations),
    ]
    if values.get("error"):
        lines.append(f"error: {values['error']}")
    if values.get("budget_stopped"):
        lines.append(BUDGET_LINE)
    lines.append(
        f"tokens: {tokens.get('input_tokens', 0)} in / {tokens.get('output_tokens', 0)} out"
    )
    for node, usage in tokens.get("by_node", {}).items():
        lines.append(
            f"  {node}: {usage['input']} in / {usage['output']} out, {calls_text(usage['calls'])}"
        )
    lines.append(f"LLM calls: {tokens.get('calls', 0)} ({cached} from cache)")
    if wall_s is not None:
        lines.append(f"wall time: {wall_s:.1f} s{wall_note}")
    return lines
