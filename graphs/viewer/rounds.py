"""A GRASP sub-agent's search rounds, folded from its nodes' writes in the order they ran."""

from __future__ import annotations

from typing import Any

from graphs.viewer.model import CandidateView, PassageView, RoundView


def fold_round(rounds: list[RoundView], node: str, write: Any) -> None:
    """Add one sub-agent node's write to the rounds (a new round starts at each new search)."""
    if not isinstance(write, dict):
        return
    if node == "rewrite":
        rounds.append(
            RoundView(
                int(write.get("iteration", 1)),
                str(write.get("search_statement", "")),
                list(write.get("keywords", [])),
            )
        )
        return
    if not rounds:
        return  # nothing to attach a write to before the first rewrite
    current = rounds[-1]
    if node == "search":
        current.candidates = [
            CandidateView(int(c["id"]), str(c["name"]), str(c.get("type", "")), float(c["score"]))
            for c in write.get("candidates", [])
        ]
    elif node == "select_entities":
        current.chosen = [int(i) for i in write.get("selected", [])]
        chosen = set(current.chosen)
        for candidate in current.candidates:
            candidate.chosen = candidate.id in chosen
    elif node == "gather_evidence":
        current.passages = [
            PassageView(int(e["id"]), str(e["title"]), str(e["text"]), float(e["score"]))
            for e in write.get("evidence", [])
        ]
    elif node == "evaluate":
        items = write.get("observations", {}).get("items", [])
        current.observations = [str(o["text"]) for o in items]
        current.decision = str(write.get("decision", ""))
        current.answer = str(write.get("answer", ""))
        if current.decision != "DONE" and "iteration" in write:
            # The evaluator wrote the next round's search; it starts here.
            rounds.append(
                RoundView(
                    int(write["iteration"]),
                    str(write.get("search_statement", current.statement)),
                    list(write.get("keywords", current.keywords)),
                )
            )
