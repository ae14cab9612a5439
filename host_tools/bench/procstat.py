"""What a process has used, read from Linux's /proc: its CPU time and its resident set (None
where /proc does not say). The benches measure the daemon by it, whatever share of the cores it
was given."""

from __future__ import annotations

import os
from pathlib import Path


def cpu_s(pid):
    """CPU seconds (user + system) process `pid` has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def children(pid) -> list[int]:
    """The live children of process `pid` (those of every one of its threads)."""
    out = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                out += [int(c) for c in (task / "children").read_text().split()]
            except (OSError, ValueError):
                pass
    except OSError:
        pass
    return out


def cpu_s_with_children(pid):
    """CPU seconds of `pid` and of its live children (a daemon's HTTP fronts); None if `pid` is gone."""
    own = cpu_s(pid)
    if own is None:
        return None
    return own + sum(cpu_s(c) or 0.0 for c in children(pid))


def rss_bytes(pid):
    """Process `pid`'s resident set, in bytes."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None
