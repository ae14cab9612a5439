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


def rss_bytes(pid):
    """Process `pid`'s resident set, in bytes."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None
