"""Consistency checks of one corpus: orphans, dangling or misplaced edges, drifted counters.

Each check counts the rows that break one invariant, so a healthy corpus answers zero everywhere.
`grasp corpus check` prints them, and the delete/update tests assert them after every step.
"""

from __future__ import annotations

from sqlalchemy import Engine, TextClause, text

from store.engine import transaction

#: Invariant name → a statement counting the rows of corpus :corpus that break it.
CHECKS: dict[str, TextClause] = {
    # Entities exist only through the units that mention them.
    "entities without a unit": text("""
        SELECT count(*) FROM entities e
        WHERE e.corpus_id = :corpus
          AND NOT EXISTS (SELECT 1 FROM entity_propositions ep WHERE ep.entity_id = e.id)
    """),
    # Retrieval damps entity scores by the stored degree; it must be the entity's edge count.
    "entity degrees that differ from their edges": text("""
        SELECT count(*) FROM entities e
        WHERE e.corpus_id = :corpus
          AND e.degree <> (SELECT count(*) FROM entity_propositions ep WHERE ep.entity_id = e.id)
    """),
    "entity–unit edges to a missing or foreign row": text("""
        SELECT count(*) FROM entity_propositions ep
        LEFT JOIN entities e ON e.id = ep.entity_id
        LEFT JOIN propositions p ON p.id = ep.proposition_id
        WHERE (e.corpus_id = :corpus OR p.corpus_id = :corpus)
          AND (e.id IS NULL OR p.id IS NULL OR e.corpus_id <> p.corpus_id)
    """),
    "units of a missing, foreign or unfinished passage": text("""
        SELECT count(*) FROM propositions u
        LEFT JOIN passages p ON p.id = u.passage_id
        WHERE u.corpus_id = :corpus
          AND (p.id IS NULL OR p.corpus_id <> u.corpus_id OR p.status <> 'done')
    """),
    "finished passages without a unit": text("""
        SELECT count(*) FROM passages p
        WHERE p.corpus_id = :corpus AND p.status = 'done'
          AND NOT EXISTS (SELECT 1 FROM propositions u WHERE u.passage_id = p.id)
    """),
    # A co-occurrence row must be exactly a pair of entities sharing the unit.
    "co-occurrence rows that differ from the shared units": text("""
        WITH actual AS (
            SELECT a.entity_id AS a, b.entity_id AS b, u.id AS unit
            FROM propositions u
            JOIN entity_propositions a ON a.proposition_id = u.id
            JOIN entity_propositions b ON b.proposition_id = u.id AND a.entity_id < b.entity_id
            WHERE u.corpus_id = :corpus
        ),
        stored AS (
            SELECT entity_a AS a, entity_b AS b, proposition_id AS unit FROM entity_cooccurrences
            WHERE corpus_id = :corpus
        )
        SELECT count(*) FROM actual FULL JOIN stored USING (a, b, unit)
        WHERE actual.a IS NULL OR stored.a IS NULL
    """),
    "containment rows that differ from the units": text("""
        WITH actual AS (
            SELECT ep.entity_id, u.passage_id, count(*) AS n_units
            FROM propositions u JOIN entity_propositions ep ON ep.proposition_id = u.id
            WHERE u.corpus_id = :corpus
            GROUP BY ep.entity_id, u.passage_id
        ),
        stored AS (
            SELECT entity_id, passage_id, n_units FROM entity_passages WHERE corpus_id = :corpus
        )
        SELECT count(*) FROM actual FULL JOIN stored USING (entity_id, passage_id)
        WHERE actual.n_units IS DISTINCT FROM stored.n_units
    """),
    "synonymy edges to a missing or foreign entity": text("""
        SELECT count(*) FROM entity_synonyms s
        LEFT JOIN entities a ON a.id = s.entity_a
        LEFT JOIN entities b ON b.id = s.entity_b
        WHERE s.corpus_id = :corpus
          AND (a.id IS NULL OR b.id IS NULL OR a.corpus_id <> s.corpus_id
               OR b.corpus_id <> s.corpus_id)
    """),
    "source links to a missing or foreign passage": text("""
        SELECT count(*) FROM passage_sources s
        LEFT JOIN passages p ON p.id = s.passage_id
        WHERE s.corpus_id = :corpus AND (p.id IS NULL OR p.corpus_id <> s.corpus_id)
    """),
    # BM25's N and average length come from these counters; each must equal its recount.
    "BM25 counters that differ from a recount": text("""
        SELECT (c.n_passages <> p.n)::int + (c.n_passage_lexemes <> p.lexemes)::int
             + (c.n_propositions <> u.n)::int + (c.n_proposition_lexemes <> u.lexemes)::int
        FROM corpora c,
             (SELECT count(*) AS n, coalesce(sum(n_lexemes), 0) AS lexemes
              FROM passages WHERE corpus_id = :corpus) AS p,
             (SELECT count(*) AS n, coalesce(sum(n_lexemes), 0) AS lexemes
              FROM propositions WHERE corpus_id = :corpus) AS u
        WHERE c.id = :corpus
    """),
    # BM25 scores from the postings: each (row, lexeme) must be posted once, with the lexeme's
    # position count and the row's length, for both document kinds; nothing else may be posted.
    "BM25 postings that differ from a recount of the stored tsv": text("""
        WITH unit_actual AS (
            SELECT u.id, t.lexeme, cardinality(t.positions) AS tf, u.n_lexemes
            FROM propositions u, unnest(u.tsv) AS t WHERE u.corpus_id = :corpus
        ),
        unit_stored AS (
            SELECT proposition_id AS id, lexeme, tf, n_lexemes
            FROM proposition_postings WHERE corpus_id = :corpus
        ),
        passage_actual AS (
            SELECT p.id, t.lexeme, cardinality(t.positions) AS tf, p.n_lexemes
            FROM passages p, unnest(p.tsv) AS t WHERE p.corpus_id = :corpus
        ),
        passage_stored AS (
            SELECT passage_id AS id, lexeme, tf, n_lexemes
            FROM passage_postings WHERE corpus_id = :corpus
        )
        SELECT (SELECT count(*) FROM unit_actual a FULL JOIN unit_stored s USING (id, lexeme)
                WHERE (a.tf, a.n_lexemes) IS DISTINCT FROM (s.tf, s.n_lexemes))
             + (SELECT count(*) FROM passage_actual a FULL JOIN passage_stored s USING (id, lexeme)
                WHERE (a.tf, a.n_lexemes) IS DISTINCT FROM (s.tf, s.n_lexemes))
    """),
    # The units' BM25 df is read from its table: each lexeme's count must equal its postings'.
    "BM25 unit document frequencies that differ from a recount of the postings": text("""
        SELECT count(*) FROM
            (SELECT lexeme, count(*) AS df FROM proposition_postings
             WHERE corpus_id = :corpus GROUP BY lexeme) AS counted
        FULL JOIN
            (SELECT lexeme, df FROM unit_lexeme_frequencies WHERE corpus_id = :corpus) AS stored
        USING (lexeme)
        WHERE counted.df IS DISTINCT FROM stored.df
    """),
}


def integrity_problems(engine: Engine, corpus: int) -> dict[str, int]:
    """Every check's count of offending rows for the corpus (all zero when it is consistent)."""
    with transaction(engine) as session:
        return {
            name: int(session.execute(check, {"corpus": corpus}).scalar_one())
            for name, check in CHECKS.items()
        }
