"""The bridge term of the fused vote: one step through the graph from the best search hit.

The best hit's passage names the entities a multi-hop question turns on ("directed by Rod
Amateau"); the next hop is a passage about one of them, which RankVote ranks by its units' cosine
to the question and so often out-votes (issue 34's loss table). The bridge spreads that hit's
score evenly over the units of every traversed entity found in the hit's passage, and sums it
per passage:

    bridge(d) = s(best) · Σ_{e ∈ T ∩ E(origin)} units(e, d) / units(e),   d ≠ origin

with T the traversed entities, E(x) the entities of passage x, units(e, d) the units of d that
name e and units(e) all of them (its degree). A hub's share is spread so thin it lifts nothing; a
passage about e, which names it in most of its units, gets most of e's share. It is the second
step of a walk from the best hit, read from the containment edges.

The page term follows the same step to the passages *about* an entity the best hit's passage
names, whether it was traversed or not: in a corpus of titled articles (Wikipedia's, which every
benchmark here is) the passage titled "Edward Sloman" is the next hop of "a film directed by
Edward Sloman", and no vote reaches it when the director's damped score is below the cast's.
A corpus whose titles are file names matches no entity and gets no term.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from store.driver_rows import fetch_rows, id_list

#: An entity named in more units than this bridges nothing: its share of any passage is at most
#: units(e, d) / units(e), too thin to move a ranking, and reading its thousands of containment
#: rows cost more than the rest of the step (≈40 ms for a 6,000-unit hub on the bench corpus).
BRIDGE_MAX_DEGREE = 500

BRIDGE_SHARES = text("""
SELECT ep.passage_id, sum(ep.n_units::float8 / e.degree)
FROM entities e JOIN entity_passages ep ON ep.entity_id = e.id
WHERE e.id = ANY(:entities) AND e.degree BETWEEN 1 AND :max_degree
  AND EXISTS (SELECT 1 FROM entity_passages o WHERE o.entity_id = e.id AND o.passage_id = :origin)
  AND ep.passage_id <> :origin AND NOT (ep.passage_id = ANY(:exclude))
GROUP BY ep.passage_id
""")


PAGE_PASSAGES = text("""
SELECT DISTINCT p.id
FROM entity_passages o JOIN entities e ON e.id = o.entity_id
JOIN passages p ON p.corpus_id = :corpus AND lower(p.title) = lower(e.name)
WHERE o.passage_id = :origin AND p.id <> :origin AND NOT (p.id = ANY(:exclude))
""")


def bridge_shares(
    session: Session,
    entities: Sequence[int],
    origin: int,
    exclude: Sequence[int] = (),
    max_degree: int = BRIDGE_MAX_DEGREE,
) -> dict[int, float]:
    """Σ units(e, d) / units(e) per passage d over the `entities` found in passage `origin`.

    The origin and `exclude` are left out, and so is an entity named in more than `max_degree`
    units; the best hit's score scales the result.
    """
    if not entities:
        return {}
    rows = fetch_rows(
        session,
        BRIDGE_SHARES,
        {
            "entities": id_list(entities),
            "origin": int(origin),
            "exclude": id_list(exclude),
            "max_degree": max_degree,
        },
    )
    return {int(r[0]): float(r[1]) for r in rows}


def page_passages(
    session: Session, corpus: int, origin: int, exclude: Sequence[int] = ()
) -> list[int]:
    """The passages (other than `origin` and `exclude`) titled by an entity `origin` names."""
    rows = fetch_rows(
        session,
        PAGE_PASSAGES,
        {"corpus": int(corpus), "origin": int(origin), "exclude": id_list(exclude)},
    )
    return sorted(int(r[0]) for r in rows)
