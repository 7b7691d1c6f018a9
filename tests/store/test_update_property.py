"""Property: any sequence of file (re-)indexes, edits and deletions leaves the store equal to a
fresh index of the final document set, with no orphans, and never touches another corpus.

Documents are drawn from a small vocabulary so passages share entities and some names are
synonyms, which is where deletions go wrong: an entity still mentioned elsewhere must stay, one
mentioned nowhere must go with its edges. The search is derandomized, so CI runs the same 20
sequences every time (126 changes after 40 first file writes, at the time of writing).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select

from graphs.indexing.context import IndexContext
from graphs.indexing.graph import IndexGraph, build_index_graph
from graphs.indexing.state import IndexState
from graphs.models.scripted_model import ScriptedChatModel
from store.corpora import corpus_id, delete_corpus
from store.deletion import delete_passage_id, delete_titled, prune_source
from store.engine import transaction
from store.entity_graph import graph_version
from store.models import Passage
from tests.graph.test_index_graph import services
from tests.store.corpus_snapshot import Doc, assert_consistent, snapshot, sources

#: Paris, Doha and Dakar share one hashing-embedder vector, as do Porto and Cuito: synonyms.
NAMES = ("Paris", "Doha", "Dakar", "Porto", "Cuito", "Rome", "Oslo")
FILLER = ("is", "near", "the", "old", "river")
TITLES = ("Alpha", "Beta", "Gamma")
SOURCES = ("/docs/a.json", "/docs/b.json")

#: Bounds of the search: sequences tried and steps per sequence (each step is one index run or
#: one deletion), so the whole property stays well under a minute.
EXAMPLES = 20
MIN_STEPS = 4
MAX_STEPS = 10

sentence = st.lists(st.sampled_from(NAMES + FILLER), min_size=1, max_size=4).map(
    lambda words: " ".join(words) + "."
)
passage_text = st.lists(sentence, min_size=1, max_size=3).map(" ".join)
doc = st.tuples(st.sampled_from(TITLES), passage_text)
files = st.lists(doc, min_size=1, max_size=4)
write = st.tuples(st.just("write"), st.sampled_from(SOURCES), files)
edit = st.tuples(st.just("edit"), st.sampled_from(SOURCES), st.integers(0, 5), passage_text)
# Writes and edits are drawn as often as all deletions together, so corpora rarely end empty.
step = st.one_of(
    write,
    edit,
    st.tuples(st.just("drop"), st.sampled_from(SOURCES), st.integers(0, 5)),
    write,
    edit,
    st.tuples(st.just("delete_title"), st.sampled_from(TITLES)),
    st.tuples(st.just("delete_id"), st.integers(0, 10)),
    st.tuples(st.just("delete_source"), st.sampled_from(SOURCES)),
)


class Scenario:
    """One corpus under random changes, and the documents it should hold per source."""

    def __init__(self, engine: Engine, graph: IndexGraph, corpus: str) -> None:
        self.engine, self.graph, self.corpus = engine, graph, corpus
        self.files: dict[str, list[Doc]] = {source: [] for source in SOURCES}
        self.held: dict[str, set[Doc]] = {source: set() for source in SOURCES}

    async def index(self, source: str | None, docs: list[Doc], corpus: str | None = None) -> None:
        state: IndexState = {
            "corpus": corpus or self.corpus,
            "passages": [{"title": t, "text": x} for t, x in docs],
        }
        if source is not None:
            state["source"] = source
        await self.graph.ainvoke(state, context=IndexContext(extractor="synthetic"))

    async def write(self, source: str, docs: list[Doc]) -> None:
        self.files[source] = docs
        await self.index(source, docs)
        self.held[source] = set(docs)

    def forget(self, gone: Doc) -> None:
        for held in self.held.values():
            held.discard(gone)

    async def apply(self, change: tuple[Any, ...]) -> None:
        kind, *args = change
        cid = corpus_id(self.engine, self.corpus)
        if kind == "write":
            await self.write(args[0], list(args[1]))
        elif kind in {"edit", "drop"} and self.files[args[0]]:
            docs = list(self.files[args[0]])
            at = args[1] % len(docs)
            if kind == "edit":
                docs[at] = (docs[at][0], args[2])
            else:
                del docs[at]
            await self.write(args[0], docs)
        elif kind == "delete_title":
            delete_titled(self.engine, cid, args[0])
            for held in self.held.values():
                held.difference_update({d for d in held if d[0] == args[0]})
        elif kind == "delete_id":
            stored = passages(self.engine, cid)
            if stored:
                pid, title, text = stored[args[0] % len(stored)]
                assert delete_passage_id(self.engine, cid, pid).passages == 1
                self.forget((title, text))
        elif kind == "delete_source":
            prune_source(self.engine, cid, args[0])
            self.held[args[0]] = set()

    def expected(self) -> list[Doc]:
        return sorted(set().union(*self.held.values()))


def passages(engine: Engine, corpus: int) -> list[tuple[int, str, str]]:
    with transaction(engine) as session:
        rows = session.execute(
            select(Passage.id, Passage.title, Passage.text)
            .where(Passage.corpus_id == corpus)
            .order_by(Passage.id)
        ).all()
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


BYSTANDER: list[Doc] = [("Alpha", "Paris is near Rome."), ("Beta", "Oslo is old. Lima.")]


def test_random_changes_match_a_fresh_index_with_no_orphans(
    engine: Engine, database_url: str
) -> None:
    graph = build_index_graph(services(engine, database_url, ScriptedChatModel(rules=[])))
    names = itertools.count()
    bystander = Scenario(engine, graph, "bystander")
    for source in SOURCES:
        asyncio.run(bystander.write(source, BYSTANDER))
    untouched = snapshot(engine, "bystander")
    version = graph_version(engine, corpus_id(engine, "bystander"))

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None)
    @given(
        start=st.fixed_dictionaries(
            {source: st.lists(doc, min_size=1, max_size=3) for source in SOURCES}
        ),
        changes=st.lists(step, min_size=MIN_STEPS, max_size=MAX_STEPS),
    )
    def check(start: dict[str, list[Doc]], changes: list[tuple[Any, ...]]) -> None:
        n = next(names)
        scenario = Scenario(engine, graph, f"changed-{n}")

        async def play() -> None:
            for source, docs in start.items():
                await scenario.write(source, docs)
            for change in changes:
                await scenario.apply(change)
                assert_consistent(engine, scenario.corpus)
                assert sources(engine, scenario.corpus) == {
                    (source, *d) for source, held in scenario.held.items() for d in held
                }
            await scenario.index(None, scenario.expected(), corpus=f"fresh-{n}")

        asyncio.run(play())
        try:
            assert snapshot(engine, scenario.corpus) == snapshot(engine, f"fresh-{n}")
        finally:
            delete_corpus(engine, scenario.corpus)
            delete_corpus(engine, f"fresh-{n}")

    check()
    assert snapshot(engine, "bystander") == untouched
    assert graph_version(engine, corpus_id(engine, "bystander")) == version
