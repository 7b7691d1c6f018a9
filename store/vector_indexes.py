"""Bulk loads without per-row HNSW upkeep: drop the unit and passage vector indexes, build after.

Inserting one row into an HNSW index costs about a millisecond (a graph search per row); building
the index once over the loaded rows costs a fraction of that. A large load therefore drops the two
big vector indexes first and builds them when its rows are in. Until then searches stay correct
(an exact scan) but slow, and an interrupted load leaves them missing: the next index run sees that
and builds them (see `missing_vector_indexes`).
"""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import Engine, Index, text
from sqlalchemy.schema import CreateIndex, DropIndex

from store.engine import transaction
from store.models import Base

#: Memory for one build: ≈ 1.7 KB per 384-d vector with its links (600k need ≈ 1 GB); a graph that
#: outgrows this memory falls back to inserting row by row.
BUILD_MEMORY = "2GB"
#: Workers besides the leader for a build that has the machine to itself: on two cores, 2 built the
#: 58k-unit index in 15 s, 1 in 18 s, 0 in 37 s. A build beside the embedder takes none (see
#: `build_vector_indexes`).
BUILD_WORKERS = 2

UNIT_INDEX = "ix_propositions_embedding_hnsw"
PASSAGE_INDEX = "ix_passages_embedding_hnsw"
LIST_INDEXES = text("SELECT indexname FROM pg_indexes WHERE indexname = ANY(:names)")
COUNT_PASSAGES = text("SELECT count(*) FROM passages")
BUILD_MEMORY_SETTING = text(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
BUILD_WORKERS_SETTING = text(
    "SELECT set_config('max_parallel_maintenance_workers', :workers, true)"
)


def _schema_index(table: str, name: str) -> Index:
    return next(index for index in Base.metadata.tables[table].indexes if index.name == name)


#: The indexes a bulk load drops, exactly as the schema defines them.
BULK_INDEXES = (
    _schema_index("propositions", UNIT_INDEX),
    _schema_index("passages", PASSAGE_INDEX),
)


def missing_vector_indexes(engine: Engine) -> list[str]:
    """Names of the bulk-dropped indexes that do not exist now (an interrupted bulk load)."""
    names = [str(index.name) for index in BULK_INDEXES]
    with transaction(engine) as session:
        present = set(session.execute(LIST_INDEXES, {"names": names}).scalars())
    return [name for name in names if name not in present]


def stored_passages(engine: Engine) -> int:
    """Passages in the whole store (every corpus shares the vector indexes)."""
    with transaction(engine) as session:
        return int(session.execute(COUNT_PASSAGES).scalar_one())


def drop_vector_indexes(engine: Engine) -> None:
    """Drop the unit and passage HNSW indexes before a bulk load (searches fall back to a scan)."""
    with transaction(engine) as session:
        for index in BULK_INDEXES:
            session.execute(DropIndex(index, if_exists=True))


def build_vector_indexes(
    engine: Engine, only: Collection[str] | None = None, workers: int = BUILD_WORKERS
) -> list[str]:
    """Build whichever of the indexes (of `only`, if given) is missing; returns the names built.

    `workers`: parallel workers besides the leader; a build beside a busy local embedder takes 0
    (see the index graph's `build_unit_index`).
    """
    built = []
    for name in missing_vector_indexes(engine):
        if only is not None and name not in only:
            continue
        index = next(i for i in BULK_INDEXES if i.name == name)
        with transaction(engine) as session:
            session.execute(BUILD_MEMORY_SETTING)
            session.execute(BUILD_WORKERS_SETTING, {"workers": str(workers)})
            session.execute(CreateIndex(index, if_not_exists=True))
        built.append(name)
    return built


def start_bulk_load(engine: Engine, pending: int, min_passages: int) -> bool:
    """Drop the vector indexes if this load is big next to the store; True while they are down.

    A load of at least `min_passages` passages that is at least a third of all stored passages
    (so at least half of what was there before) is cheaper to index in one build than row by row;
    a rebuild covers every corpus's rows, so a small addition to a big store keeps the indexes.
    Indexes already missing (an interrupted bulk load) count as a bulk load too.
    """
    if missing_vector_indexes(engine):
        return True
    if min_passages <= 0 or pending < min_passages or 3 * pending < stored_passages(engine):
        return False
    drop_vector_indexes(engine)
    return True
