"""`grasp bench concurrency` end to end, and the scripted model's per-call latency."""

import asyncio
import re

import pytest
from langchain_core.runnables import RunnableConfig
from sqlalchemy import Engine

from evals.bench.concurrency_spans import SpanRecorder
from graphs.cli.main import main
from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply


def recorded(recorder: SpanRecorder) -> RunnableConfig:
    return {"callbacks": [recorder]}


async def test_latency_is_waited_per_call_and_concurrent_calls_wait_together() -> None:
    model = ScriptedChatModel(rules=[ScriptedReply(reply="pong")], latency_s=0.3)
    together = SpanRecorder()
    replies = await asyncio.gather(
        model.ainvoke("ping", recorded(together)), model.ainvoke("ping", recorded(together))
    )
    assert [reply.content for reply in replies] == ["pong", "pong"]
    assert (together.llm_calls, together.max_in_flight, together.in_flight) == (2, 2, 0)

    one_by_one = SpanRecorder()
    for _ in range(2):
        await model.ainvoke("ping", recorded(one_by_one))
    assert (one_by_one.llm_calls, one_by_one.max_in_flight) == (2, 1)


async def test_the_streamed_and_the_sync_paths_answer_with_latency_set() -> None:
    model = ScriptedChatModel(rules=[ScriptedReply(reply="a longer pong")], latency_s=0.05)
    pieces = [chunk.content async for chunk in model.astream("ping")]
    assert pieces == ["a longer", " pong", ""]  # LangChain closes a stream with an empty chunk
    assert "".join(str(chunk.content) for chunk in model.stream("ping")) == "a longer pong"
    assert model.invoke("ping").content == "a longer pong"
    assert len(model.prompts) == 3


ROW = re.compile(
    r"^(on|off) +([\d.]+) +([\d.]+) +(\d+) +(\d+) +([\d.]+) of ([\d.]+) +([\d.]+) of ([\d.]+)"
    r" +([\d.]+) of ([\d.]+) +(\S+)$"
)


def test_the_bench_runs_both_modes_and_only_concurrent_hops_overlap(
    engine: Engine,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.delenv("GRASP_ALLOWED_CORPORA", raising=False)
    args = ["bench", "concurrency", "--questions", "2", "--firms", "6", "--latency", "0.1"]
    assert main([*args, "--corpus", "bench-concurrency-test"]) == 0
    out = capsys.readouterr().out.splitlines()

    assert out[0].startswith("grasp bench concurrency — corpus 'bench-concurrency-test' (built in")
    assert out[1].startswith("hardware: ") and "load average" in out[1]
    assert out[2] == "model: scripted, 0.10 s latency per call, 2 search round(s) per hop"
    rows = {m.group(1): m.groups() for line in out if (m := ROW.match(line))}
    assert sorted(rows) == ["off", "on"]
    for mode in ("on", "off"):
        # plan, 2 hops × (rewrite + 2 × (select + evaluate)), synthesis; for both questions
        assert rows[mode][3] == str(2 * 12)
        assert rows[mode][11] == "2/2"  # the scripted answers came out
        # search and gather_evidence call no LLM: 2 hops × 2 rounds of them ran, in some time
        assert float(rows[mode][10]) > 0
    # Concurrent hops wait on the model together; with max_concurrency=1 never.
    assert (rows["on"][4], rows["off"][4]) == ("2", "1")
    assert float(rows["on"][5]) > 0
    assert (rows["off"][5], rows["off"][7], rows["off"][9]) == ("0.00", "0.000", "0.000")
    assert any(line.startswith("speed-up (off / on, mean wall per question): ") for line in out)
    assert out[-1] == "ideal for this script (LLM calls in a row, off / on): 12 / 7 = 1.71×"
    # The script selects only entities the graph offers.
    assert not [r.message for r in caplog.records if "not offered" in r.message]

    # A second run reuses the corpus it built.
    assert main([*args, "--corpus", "bench-concurrency-test", "--questions", "1"]) == 0
    assert "(reused)" in capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--questions", "0"], "error: --questions must be at least 1"),
        (["--firms", "3"], "error: --firms must be at least twice --questions"),
        (["--latency", "-1"], "error: --latency must not be negative"),
        (["--rounds", "9"], "error: --rounds must be between 1 and 5"),
    ],
)
def test_bad_arguments_fail_in_one_line(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "concurrency", *extra])
    assert exit_info.value.code != 0
    assert message in str(exit_info.value.code) + capsys.readouterr().err
