"""One daemon per journal (un journal, un démon). The journal is the table's source of truth: two
daemons on one file would both take the wheel's events, both answer bets, both settle.

The daemon holds an exclusive `flock` on `JOURNAL.lock` for its whole life. The kernel releases it
when the process ends, however it ends (Ctrl-C, a crash, `kill -9`, a power cut): a lock left by a
dead daemon never blocks a restart, there is nothing to clean up by hand. The file itself only says
who holds it (pid, machine, the API's address, since when), so that a second daemon refuses to start
naming the first. Readers (`cylindre stats`, `token`, `settle`, `--dump-statuses`) take no lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path


class JournalBusy(RuntimeError):
    """Another process holds the journal; `holder` is what it wrote about itself ({} if unreadable)."""

    def __init__(self, path, holder: dict):
        self.path, self.holder = str(path), holder
        super().__init__(busy_message(path, holder))


def lock_path(journal) -> Path:
    return Path(str(journal) + ".lock")


class JournalLock:
    """The exclusive hold of one journal; `acquire()` or JournalBusy, `tell(http=...)` once the
    address is known, `release()` (or the process's end) lets the next daemon in."""

    def __init__(self, journal):
        self.journal = str(journal)
        self.path = lock_path(journal)
        self.fd = None
        self.about = {}

    def acquire(self, **about) -> "JournalLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            raise JournalBusy(self.journal, holder) from None
        except OSError:
            os.close(fd)
            raise
        self.fd = fd
        self.about = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(), "journal": self.journal}
        self.tell(**about)
        return self

    def tell(self, **about):
        """Say more about the holder (the API's address once it is bound)."""
        if self.fd is None:
            return
        self.about.update({k: v for k, v in about.items() if v is not None})
        data = json.dumps(self.about, ensure_ascii=False).encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)

    def release(self):
        if self.fd is not None:
            try:
                os.ftruncate(self.fd, 0)            # no holder any more: nothing stale to read
            except OSError:
                pass
            os.close(self.fd)                       # closing drops the flock
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def _read(fd) -> dict:
    try:
        raw = os.pread(fd, 4096, 0)
        holder = json.loads(raw.decode("utf-8")) if raw else {}
        return holder if isinstance(holder, dict) else {}
    except (OSError, ValueError):
        return {}                                   # being written at this instant, or not ours


def busy_message(journal, holder: dict) -> str:
    """What a second daemon says, in French, naming the first."""
    who = []
    if holder.get("pid"):
        who.append(f"pid {holder['pid']}" + (f" sur {holder['host']}" if holder.get("host") else ""))
    if holder.get("http"):
        who.append(f"API {holder['http']}")
    if isinstance(holder.get("since"), (int, float)):
        who.append("depuis le " + time.strftime("%d/%m/%Y à %H:%M:%S", time.localtime(holder["since"])))
    first = f" ({', '.join(who)})" if who else ""
    return (f"le journal {journal} est déjà tenu par un autre démon{first} : un journal n'a qu'un démon. "
            f"Arrêtez l'autre démon d'abord, ou donnez un autre --journal.")
