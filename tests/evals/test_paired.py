import math
from pathlib import Path
from typing import Any

import pytest

from evals.paired import Pair, main, paired, paired_group
from evals.results import write_jsonl


def _line(qid: str, hops: int, em: float, tokens: int) -> dict[str, Any]:
    return {"id": qid, "hops": hops, "em": em, "judge_strict": None, "tokens": tokens}


def test_identical_methods_tie_in_every_resample() -> None:
    lines = [_line("a", 2, 1.0, 800), _line("b", 2, 0.0, 900), _line("c", 3, 1.0, 1200)]
    p = {"a": 0.25, "b": 0.5, "c": 0.125}

    overall, two, three = paired(lines, lines, p, resamples=500)

    assert [g.group for g in (overall, two, three)] == ["all", "2hop", "3hop"]
    assert [g.n for g in (overall, two, three)] == [3, 2, 1]
    # 2,900 tokens over 2 + 3 bits.
    assert overall.se_a == overall.se_b == 2900 / 5
    assert overall.ratio == 1.0
    assert overall.a_cheaper == 0.0
    # A resample of only "b" solves nothing for either: a tie whose ratio is undefined.
    assert overall.tied == 1.0
    assert (overall.ratio_low, overall.ratio_high) == (1.0, 1.0)
    assert overall.defined < overall.resamples
    assert (overall.correct_diff, overall.diff_low, overall.diff_high) == (0, 0, 0)


def test_half_the_tokens_for_the_same_answers_is_cheaper_in_every_resample() -> None:
    a = [_line("x", 2, 1.0, 500), _line("y", 2, 1.0, 700)]
    b = [_line("y", 2, 1.0, 1400), _line("x", 2, 1.0, 1000)]

    overall, two = paired(a, b, {"x": 0.5, "y": 0.25}, resamples=300)

    assert overall.ratio == 0.5
    assert (overall.ratio_low, overall.ratio_high) == (0.5, 0.5)
    assert (overall.a_cheaper, overall.tied, overall.defined) == (1.0, 0.0, 300)
    assert two.n == 2


def test_an_answer_only_a_solves_counts_in_the_difference_and_the_interval() -> None:
    pairs = [Pair(tokens_a=100, tokens_b=100, correct_a=1, correct_b=0, p=0.5)]

    group = paired_group("all", pairs, resamples=50, seed=3)

    assert (group.correct_diff, group.diff_low, group.diff_high) == (1, 1, 1)
    assert group.se_a == 100.0 and math.isinf(group.se_b)
    # B solved nothing: A's SE over B's is 0 in every resample.
    assert (group.ratio, group.ratio_low, group.ratio_high) == (0.0, 0.0, 0.0)
    assert group.a_cheaper == 1.0


def test_a_mixed_pair_gives_an_interval_around_the_point() -> None:
    a = [_line(str(i), 2, float(i % 2), 1000) for i in range(40)]
    b = [_line(str(i), 2, float(i % 3 == 0), 1000) for i in range(40)]
    p = {str(i): 0.5 for i in range(40)}

    overall, _ = paired(a, b, p, resamples=2000, seed=1)

    # A solves 20 questions, B 14 (ids 0, 3, … 39); 7 are solved by both.
    assert overall.correct_diff == 6
    assert overall.ratio == pytest.approx(14 / 20)
    assert overall.ratio_low < overall.ratio < overall.ratio_high
    assert overall.diff_low < 6 < overall.diff_high
    assert 0.5 < overall.a_cheaper < 1.0


def test_the_same_seed_gives_the_same_interval() -> None:
    a = [_line(str(i), 2, float(i % 2), 900 + i) for i in range(30)]
    b = [_line(str(i), 2, float(i % 3 == 0), 800) for i in range(30)]
    p = {str(i): 0.3 for i in range(30)}

    assert paired(a, b, p, resamples=200, seed=7) == paired(a, b, p, resamples=200, seed=7)


def test_other_questions_or_missing_estimates_are_refused() -> None:
    a = [_line("x", 2, 1.0, 500)]
    with pytest.raises(ValueError, match="different questions"):
        paired(a, [_line("z", 2, 1.0, 500)], {"x": 0.5, "z": 0.5})
    with pytest.raises(ValueError, match="closed-book estimate"):
        paired(a, a, {})
    with pytest.raises(ValueError, match="twice"):
        paired(a + a, a, {"x": 0.5})
    with pytest.raises(ValueError, match=r"probabilities must lie in \(0, 1\]"):
        paired(a, a, {"x": 0.0})


def _run(folder: Path, name: str, lines: list[dict[str, Any]], p: dict[str, float]) -> Path:
    (folder / "cache").mkdir(parents=True, exist_ok=True)
    write_jsonl(
        folder / "cache" / "closed_book.jsonl",
        [{"model": "m.gguf", "question_id": q, "samples": 5, "p": v} for q, v in p.items()],
    )
    path = folder / f"{name}.jsonl"
    write_jsonl(path, lines)
    return path


def test_the_command_pools_sets_and_prints_one_row_a_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    musique, hotpot = tmp_path / "musique", tmp_path / "hotpot"
    p_m, p_h = {"m1": 0.25, "m2": 0.5}, {"h1": 0.5}
    a = [
        _run(musique, "fast", [_line("m1", 2, 1.0, 400), _line("m2", 3, 0.0, 600)], p_m),
        _run(hotpot, "fast", [_line("h1", 2, 1.0, 500)], p_h),
    ]
    b = [
        _run(musique, "slow", [_line("m1", 2, 1.0, 800), _line("m2", 3, 1.0, 1200)], p_m),
        _run(hotpot, "slow", [_line("h1", 2, 0.0, 1000)], p_h),
    ]

    code = main(["--a", *map(str, a), "--b", *map(str, b), "--resamples", "100"])

    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert lines[0] == "A = fast, B = slow"
    overall = lines[2].split()
    # A: 1,500 tokens over m1's 2 bits and h1's 1; B: 3,000 over m1's 2 and m2's 1.
    assert overall[:5] == ["all", "3", "500.0", "1,000.0", "0.500"]
    assert overall[-3] == "+0"
    assert [line.split()[0] for line in lines[2:] if not line.startswith(" ")] == [
        "all",
        "2hop",
        "3hop",
    ]


def test_the_command_refuses_lines_without_estimates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "set" / "a.jsonl"
    path.parent.mkdir()
    write_jsonl(path, [_line("x", 2, 1.0, 500)])

    assert main(["--a", str(path), "--b", str(path)]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: no closed-book estimate for 1 question(s), e.g. x"
    )
