"""The bridge term of the fused vote: one step through the graph from the best search hit.

The best hit's passage names the entities a multi-hop question turns on ("directed by Rod
Amateau"); the next hop is a passage about one of them, which RankVote ranks by its units' cosine
to the question and so often out-votes (issue 34's loss table). The bridge gives every other
passage of a traversed entity found in the best hit's passage an equal share of that hit's score:

    bridge(d) = s(best) · Σ_{e ∈ T ∩ E(origin) ∩ E(d)} 1 / |D(e)|,   d ≠ origin

with T the traversed entities, E(x) the entities of passage x, D(e) the passages of e. A hub's
share is spread over its many passages, so it lifts none of them; a name found in three
passages lifts each by a third. It is the walk's second step, read from the containment edges.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from store.driver_rows import fetch_rows, id_list

BRIDGE_SHARES = text("""
WITH spread AS (
    SELECT entity_id, 1.0 / count(*) AS share
    FROM entity_passages
    WHERE entity_id = ANY(:entities)
    GROUP BY entity_id
    HAVING bool_or(passage_id = :origin)
)
SELECT ep.passage_id, sum(spread.share)
FROM entity_passages ep JOIN spread ON spread.entity_id = ep.entity_id
WHERE ep.passage_id <> :origin AND NOT (ep.passage_id = ANY(:exclude))
GROUP BY ep.passage_id
""")


def bridge_shares(
    session: Session, entities: Sequence[int], origin: int, exclude: Sequence[int] = ()
) -> dict[int, float]:
    """Σ 1/|D(e)| per passage over the `entities` found in passage `origin`.

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
