"""The whole schema on one metadata, for migrations and checks.

A table module puts its tables on `Base.metadata` when it is imported, so `Base.metadata` from one
module holds only the tables imported so far; `metadata` here holds them all.
"""

from __future__ import annotations

from sqlalchemy import MetaData

from store import ledger_models, posting_models  # noqa: F401  (imported for their tables)
from store.models import Base

#: Every GRASP table (the LangGraph checkpointer's own tables are not among them).
metadata: MetaData = Base.metadata
