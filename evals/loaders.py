"""Loading QA datasets (MuSiQue, 2Wiki, HotpotQA, LongBench) and locating their gold passages."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from graphs.indexing.corpus_files import (
    SourcePassage,
    iter_json_lines,
    join_sentences,
    passage_match_key,
)

_HOPS_PREFIX = re.compile(r"^(\d+)hop")
_PLACEHOLDER = re.compile(r"#(\d+)")
_LONGBENCH_HEADER = re.compile(r"(?:^|\n)Passage (\d+):\n")
Key = TypeVar("Key")
_2WIKI_TYPES = frozenset({"comparison", "inference", "compositional", "bridge_comparison"})


@dataclass(frozen=True)
class GoldPassage:
    """A passage that supports the answer, identified by title and text."""

    title: str
    text: str


@dataclass(frozen=True)
class SubQuestion:
    """One step of a gold decomposition; its question may refer to earlier answers as #k.

    `passage` is the supporting paragraph the step's answer comes from, where the record says.
    """

    question: str
    answer: str
    passage: GoldPassage | None = None


@dataclass(frozen=True)
class QAExample:
    """A multi-hop question with its answers (answer first, then aliases) and gold passages."""

    id: str
    question: str
    answers: list[str]
    gold_passages: list[GoldPassage]
    decomposition: list[SubQuestion]
    hops: int | None
    dataset: str


@dataclass(frozen=True)
class LongBenchSample:
    """A LongBench question with the passages of its own long context."""

    id: str
    question: str
    answers: list[str]
    passages: list[SourcePassage]
    length: int
    dataset: str


class QuestionFormatError(ValueError):
    """A question file whose records match none of the supported formats."""


class GoldPassageMissing(LookupError):
    """A gold passage of a question that the corpus does not contain."""


def _unique(values: Iterable[str]) -> list[str]:
    # Order matters: the first answer is the canonical one shown in reports.
    return list(dict.fromkeys(v.strip() for v in values if v.strip()))


def _field(record: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(record, dict):
        raise QuestionFormatError(f"{where}: expected an object, got {type(record).__name__}")
    if key not in record:
        raise QuestionFormatError(f"{where}: missing {key!r}")
    value = record[key]
    if not isinstance(value, kind):
        names = [k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,))]
        raise QuestionFormatError(f"{where}: {key!r} must be {' or '.join(names)}")
    return value


def _answers(record: Mapping[str, Any], where: str) -> list[str]:
    answer = record.get("answer")
    # HippoRAG's toy sample.json gives the answer as a list.
    first = answer if isinstance(answer, list) else [answer]
    aliases = record.get("answer_aliases") or []
    values = [*first, *aliases]
    if not values or not all(isinstance(v, str) for v in values):
        raise QuestionFormatError(f"{where}: 'answer' and 'answer_aliases' must be strings")
    answers = _unique(values)
    if not answers:
        raise QuestionFormatError(f"{where}: empty answer")
    return answers


def _paragraphs_example(record: Mapping[str, Any], where: str, dataset: str) -> QAExample:
    """MuSiQue-style record: paragraphs flagged is_supporting, optional question_decomposition."""
    qid = str(_field(record, "id", (str, int), where))
    where = f"{where} ({qid})"
    supporting: dict[int, GoldPassage] = {}
    for position, paragraph in enumerate(_field(record, "paragraphs", list, where)):
        title = _field(paragraph, "title", str, f"{where} paragraph {position}")
        if not paragraph.get("is_supporting"):
            continue
        text = paragraph.get("paragraph_text", paragraph.get("text"))
        if not isinstance(text, str):
            raise QuestionFormatError(f"{where}: paragraph {position} has no text")
        supporting[paragraph.get("idx", position)] = GoldPassage(title, text)
    steps = record.get("question_decomposition") or []
    decomposition = [
        SubQuestion(
            _field(s, "question", str, where),
            _field(s, "answer", str, where),
            supporting.get(s.get("paragraph_support_idx")),
        )
        for s in steps
    ]
    # Hop order (the decomposition's support indices) first, so gold passage k serves step k.
    support_indices = dict.fromkeys(s.get("paragraph_support_idx") for s in steps)
    order = [i for i in support_indices if i in supporting]
    order += [i for i in supporting if i not in order]
    prefix = _HOPS_PREFIX.match(qid)
    hops = int(prefix.group(1)) if prefix else (len(decomposition) or None)
    return QAExample(
        id=qid,
        question=_field(record, "question", str, where),
        answers=_answers(record, where),
        gold_passages=[supporting[i] for i in order],
        decomposition=decomposition,
        hops=hops,
        dataset=dataset,
    )


def _context_example(record: Mapping[str, Any], where: str, dataset: str) -> QAExample:
    """2Wiki/HotpotQA record: context [title, sentences] pairs and [title, sentence] facts."""
    qid = str(record.get("_id", record.get("id", "")))
    where = f"{where} ({qid})"
    context: dict[str, str] = {}
    for entry in _field(record, "context", list, where):
        if not (
            isinstance(entry, list)
            and len(entry) == 2
            and isinstance(entry[0], str)
            and isinstance(entry[1], list)
        ):
            raise QuestionFormatError(f"{where}: context entries must be [title, sentences]")
        # A title repeated in the context keeps its first passage, as supporting facts name
        # titles only.
        context.setdefault(entry[0], join_sentences(entry[1]))
    titles = _unique(str(fact[0]) for fact in _field(record, "supporting_facts", list, where))
    missing = [t for t in titles if t not in context]
    if missing:
        raise QuestionFormatError(f"{where}: supporting fact titles not in context: {missing}")
    return QAExample(
        id=qid,
        question=_field(record, "question", str, where),
        answers=_answers(record, where),
        gold_passages=[GoldPassage(t, context[t]) for t in titles],
        decomposition=[],
        # Every HotpotQA question is two-hop by construction; 2Wiki mixes kinds, so no count.
        hops=2 if dataset == "hotpotqa" else None,
        dataset=dataset,
    )


def _dataset_name(record: Mapping[str, Any], path: Path) -> str:
    if "question_decomposition" in record:
        return "musique"
    if "level" in record:
        return "hotpotqa"
    if "evidences" in record or record.get("type") in _2WIKI_TYPES:
        return "2wikimultihopqa"
    return path.stem


def load_questions(path: Path, dataset: str | None = None) -> list[QAExample]:
    """Read a HippoRAG-format question file (MuSiQue, 2Wiki or HotpotQA records)."""
    path = Path(path)
    try:
        records = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise QuestionFormatError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(records, list):
        raise QuestionFormatError(f"{path}: expected a list of question records")
    examples: list[QAExample] = []
    for i, record in enumerate(records):
        where = f"{path}: record {i}"
        if not isinstance(record, dict):
            raise QuestionFormatError(f"{where}: expected an object")
        name = dataset or _dataset_name(record, path)
        if "paragraphs" in record:
            examples.append(_paragraphs_example(record, where, name))
        elif "context" in record:
            examples.append(_context_example(record, where, name))
        else:
            raise QuestionFormatError(f"{where}: neither 'paragraphs' nor 'context' present")
    return examples


def split_longbench_context(context: str) -> list[SourcePassage]:
    """Split a LongBench context ("Passage 1:\\nTitle\\ntext\\nPassage 2:...") into passages."""
    # Only the next number in sequence starts a passage, so a passage quoting "Passage 7:"
    # in its own text is not cut in two.
    starts: list[tuple[int, int]] = []
    for match in _LONGBENCH_HEADER.finditer(context):
        if int(match.group(1)) == len(starts) + 1:
            starts.append((match.start(), match.end()))
    if not starts or context[: starts[0][0]].strip():
        raise ValueError("context does not start with 'Passage 1:'")
    passages = []
    for n, (_, body_start) in enumerate(starts):
        body_end = starts[n + 1][0] if n + 1 < len(starts) else len(context)
        title, _, text = context[body_start:body_end].partition("\n")
        passages.append(SourcePassage(title=title.strip(), text=text.strip()))
    return passages


def load_longbench(path: Path, dataset: str | None = None) -> list[LongBenchSample]:
    """Read a LongBench JSON-lines file (input, context, answers, _id, length)."""
    path = Path(path)
    samples: list[LongBenchSample] = []
    for where, record in iter_json_lines(path, QuestionFormatError):
        if not isinstance(record, dict):
            raise QuestionFormatError(f"{where}: expected an object")
        answers = _field(record, "answers", list, where)
        if not answers or not all(isinstance(a, str) for a in answers):
            raise QuestionFormatError(f"{where}: 'answers' must be a non-empty list of strings")
        try:
            passages = split_longbench_context(_field(record, "context", str, where))
        except ValueError as exc:
            raise QuestionFormatError(f"{where}: {exc}") from exc
        samples.append(
            LongBenchSample(
                id=str(_field(record, "_id", str, where)),
                question=_field(record, "input", str, where),
                answers=_unique(answers),
                passages=passages,
                length=int(_field(record, "length", int, where)),
                dataset=dataset or str(record.get("dataset") or path.stem),
            )
        )
    return samples


def resolve_gold_passages(
    example: QAExample, corpus_index: Mapping[tuple[str, str], Key]
) -> list[Key]:
    """Map the example's gold passages to passage keys; index keys are `passage_match_key`s."""
    keys: list[Key] = []
    for gold in example.gold_passages:
        key = corpus_index.get(passage_match_key(gold.title, gold.text))
        if key is None:
            raise GoldPassageMissing(
                f"question {example.id}: gold passage {gold.title!r} is not in the corpus"
            )
        keys.append(key)
    return keys


def step_links(question: str) -> tuple[int, ...]:
    """The earlier steps a decomposition step refers to as #k, sorted and without repeats."""
    return tuple(sorted({int(k) for k in _PLACEHOLDER.findall(question)}))


def substitute_placeholders(decomposition: Sequence[SubQuestion]) -> list[str]:
    """Sub-questions with each #k replaced by the gold answer of sub-question k (1-based)."""

    def answer_for(match: re.Match[str]) -> str:
        k = int(match.group(1))
        if not 1 <= k <= len(decomposition):
            raise ValueError(f"placeholder {match.group(0)} refers to no sub-question")
        return decomposition[k - 1].answer

    return [_PLACEHOLDER.sub(answer_for, step.question) for step in decomposition]
