"""An embedded server of a test's own, in a data directory outside pytest's temp tree."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from store.embedded import stop_embedded_server

#: Starts the server over argv[1] in a process of its own and prints its URI; the server
#: outlives the process, as after a grasp command.
START = (
    "import sys; from pathlib import Path; from store.embedded import start_embedded_server as s;"
    " print(s(Path(sys.argv[1])))"
)


def own_data_dir(prefix: str) -> Iterator[Path]:
    """Yield a fresh data directory; stop whatever server ran there and delete it afterwards.

    Outside pytest's 0700 temp tree: postgres runs as another OS user when we are root.
    """
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root / "pgdata"
    finally:
        stop_embedded_server(root / "pgdata", force=True)
        shutil.rmtree(root, ignore_errors=True)
