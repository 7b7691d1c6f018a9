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
from collections.abc import Iterator
from pathlib import Path

from evals.loaders import load_questions
from graphs.indexing.corpus_files import join_sentences
from nodes.agent.focus import focused_text
from nodes.agent.plan_dag import substitute
from nodes.citations.text import normalise, states


def musique_steps(path: Path) -> Iterator[tuple[str, str, str, str]]:
    """(sub-question, answer, passage title, passage text) of every gold step whose passage states it.

    The sub-question has the earlier steps' gold answers filled in, as the agent's hops do.
    """
    for example in load_questions(path):
        answers: dict[int, str] = {}
        for k, step in enumerate(example.decomposition, 1):
            sub = substitute(step.question, answers)
            answers[k] = step.answer
            if step.passage is not None and states(step.passage.text, step.answer):
                yield sub, step.answer, step.passage.title, step.passage.text


def hotpot_facts(path: Path) -> Iterator[tuple[str, str, str, str]]:
    """(question, supporting sentence, passage title, passage text) of every supporting fact.

    Read from the raw records: the loader keeps gold passages, not which sentence is the fact.
    """
    for question in json.loads(path.read_text(encoding="utf-8-sig")):
        context = {title: sentences for title, sentences in question["context"]}
        for title, index in question["supporting_facts"]:
            sentences = context.get(title, [])
            if index < len(sentences):
                yield question["question"], sentences[index], title, join_sentences(sentences)


def kept_counts(budget: int, musique: Path, hotpot: Path) -> dict[str, list[int]]:
    """Per set: [facts, kept with the title counted, kept with the title breaking ties]."""
    counts = {"musique": [0, 0, 0], "hotpotqa": [0, 0, 0]}
    for sub, answer, title, text in musique_steps(musique):
        row = counts["musique"]
        row[0] += 1
        row[1] += states(focused_text(text, sub, budget), answer)
        row[2] += states(focused_text(text, sub, budget, title), answer)
    for query, fact, title, text in hotpot_facts(hotpot):
        row = counts["hotpotqa"]
        wanted = normalise(fact.strip())
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
    counts = kept_counts(args.budget, args.musique, args.hotpotqa)
    for name, (facts, counted, ties) in counts.items():
        print(
            f"{name}, budget {args.budget}: {facts} gold facts; kept with the title counted "
            f"{counted}, with the title breaking ties {ties}"
        )


if __name__ == "__main__":
    main()
