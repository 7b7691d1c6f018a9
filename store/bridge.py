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
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from store.driver_rows import fetch_rows, id_list

BRIDGE_SHARES = text("""
WITH spread AS (
    SELECT entity_id, 1.0 / sum(n_units) AS share
    FROM entity_passages
    WHERE entity_id = ANY(:entities)
    GROUP BY entity_id
    HAVING bool_or(passage_id = :origin)
)
SELECT ep.passage_id, sum(spread.share * ep.n_units)
FROM entity_passages ep JOIN spread ON spread.entity_id = ep.entity_id
WHERE ep.passage_id <> :origin AND NOT (ep.passage_id = ANY(:exclude))
GROUP BY ep.passage_id
""")


def bridge_shares(
    session: Session, entities: Sequence[int], origin: int, exclude: Sequence[int] = ()
) -> dict[int, float]:
    """Σ units(e, d) / units(e) per passage d over the `entities` found in passage `origin`.

    The origin and `exclude` are left out; the best hit's score scales the result.
    """
    if not entities:
        return {}
    rows = fetch_rows(
        session,
        BRIDGE_SHARES,
        {"entities": id_list(entities), "origin": int(origin), "exclude": id_list(exclude)},
    )
    return {int(r[0]): float(r[1]) for r in rows}
