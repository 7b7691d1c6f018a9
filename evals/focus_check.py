"""Zero-token check of focused evidence: how many gold facts survive the cut to a budget.

`python -m evals.focus_check MUSIQUE.json HOTPOTQA.json --budget 200` counts, on MuSiQue, the
gold steps whose supporting passage states the step's answer and whose focused text still does
(the sub-question, earlier gold answers filled in, as the query), and on HotpotQA the supporting
sentences kept when the passage is focused on the question. Each count is printed with the
title's words counted like any other (`title=""`) and with them only breaking ties (the title
passed, as the agent does), so a change to the focus is measured without a model call.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nodes.agent.focus import focused_text
from nodes.citations.text import normalise, states

_PLACEHOLDER = re.compile(r"#(\d+)")


def filled(sub_question: str, answers: dict[int, str]) -> str:
    """A MuSiQue sub-question with its "#k" placeholders replaced by the earlier gold answers."""
    return _PLACEHOLDER.sub(lambda m: answers.get(int(m.group(1)), ""), sub_question)


def musique_steps(questions: list[dict[str, Any]]) -> Iterator[tuple[str, str, str, str]]:
    """(sub-question, answer, passage title, passage text) of every gold step whose passage states it."""
    for question in questions:
        answers: dict[int, str] = {}
        for k, step in enumerate(question["question_decomposition"], 1):
            sub = filled(step["question"], answers)
            answers[k] = step["answer"]
            index = step.get("paragraph_support_idx")
            if index is None:
                continue
            passage = question["paragraphs"][index]
            if states(passage["paragraph_text"], step["answer"]):
                yield sub, step["answer"], passage["title"], passage["paragraph_text"]


def hotpot_facts(questions: list[dict[str, Any]]) -> Iterator[tuple[str, str, str, str]]:
    """(question, supporting sentence, passage title, passage text) of every supporting fact."""
    for question in questions:
        context = {title: sentences for title, sentences in question["context"]}
        for title, index in question["supporting_facts"]:
            sentences = context.get(title, [])
            if index < len(sentences):
                yield question["question"], sentences[index], title, "".join(sentences)


def kept_counts(budget: int, musique: list[Any], hotpot: list[Any]) -> dict[str, list[int]]:
    """Per set: [facts, kept with the title counted, kept with the title breaking ties]."""
    counts = {"musique": [0, 0, 0], "hotpotqa": [0, 0, 0]}
    for sub, answer, title, text in musique_steps(musique):
        row = counts["musique"]
        row[0] += 1
        row[1] += states(focused_text(text, sub, budget), answer)
        row[2] += states(focused_text(text, sub, budget, title), answer)
    for query, fact, title, text in hotpot_facts(hotpot):
        row = counts["hotpotqa"]
        wanted = normalise(fact)
        row[0] += 1
        row[1] += wanted in normalise(focused_text(text, query, budget))
        row[2] += wanted in normalise(focused_text(text, query, budget, title))
    return counts


def main() -> None:
    """Print each set's counts for one budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("musique", type=Path)
    parser.add_argument("hotpotqa", type=Path)
    parser.add_argument("--budget", type=int, default=200)
    args = parser.parse_args()
    counts = kept_counts(
        args.budget,
        json.loads(args.musique.read_text()),
        json.loads(args.hotpotqa.read_text()),
    )
    for name, (facts, counted, ties) in counts.items():
        print(
            f"{name}, budget {args.budget}: {facts} gold facts; kept with the title counted "
            f"{counted}, with the title breaking ties {ties}"
        )


if __name__ == "__main__":
    main()
