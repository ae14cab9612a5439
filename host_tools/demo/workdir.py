"""Where a demo keeps its key, journal and logs."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

def workdir(given, root="var/demo", now=None) -> Path:
    """Where the demo keeps its key, journal and logs: `given`, or a new folder of its own under
    `root` named by the time (a journal is never reused: its wheel starts again at spin 1)."""
    if given:
        work = Path(given)
        work.mkdir(parents=True, exist_ok=True)
        return work
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.localtime(now))
    for n in range(100):
        work = Path(root) / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            work.mkdir(parents=True)
            return work
        except FileExistsError:
            continue
    return Path(tempfile.mkdtemp(prefix=stamp + "-", dir=root))
