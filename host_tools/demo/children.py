"""What a demo starts, and how it stops it all: each simulated table's pseudo-terminal made and
locked before anything else can see it, and every process the demo starts ended with it, whatever
ends the demo (Ctrl-C, SIGTERM, a closed terminal, the demo itself killed).

A pty's number (/dev/pts/N) is reused as soon as it is freed, and any program still opening
/dev/pts/N (a daemon left from an earlier run whose wheel is gone) takes a new table's pty if it
gets there first: the demo makes the pty itself and locks its host end at once (flock, as the
daemon's own exclusive open would); the daemon inherits that locked descriptor (`--port-fd`) and
keeps it for its life, the simulated wheel the other end (`--pty-fd`). No window is left between
the pty's birth and its daemon.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import tty

_libc = None
if sys.platform.startswith("linux"):
    try:
        import ctypes
        _libc = ctypes.CDLL(None, use_errno=True)
    except OSError:                                 # pragma: no cover - no libc to ask
        _libc = None


def die_with_parent():
    """In the child, before it runs: SIGTERM when the demo ends, even by SIGKILL (Linux's
    PR_SET_PDEATHSIG), so nothing it started goes on alone."""
    if _libc is not None:
        _libc.prctl(1, signal.SIGTERM)              # PR_SET_PDEATHSIG = 1


def spawn(cmd, **kw) -> subprocess.Popen:
    """A child of the demo that dies with it."""
    return subprocess.Popen(cmd, preexec_fn=die_with_parent, **kw)


class TablePty:
    """One simulated table's pseudo-terminal: `master` for the wheel, `slave` (locked) for the daemon."""

    def __init__(self, tries=5):
        for _ in range(tries):
            master, slave = os.openpty()
            try:
                fcntl.flock(slave, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:                 # taken in the microseconds since its birth: another
                os.close(master)
                os.close(slave)
                continue
            tty.setraw(slave)
            tty.setraw(master)
            self.master, self.slave, self.path = master, slave, os.ttyname(slave)
            return
        raise OSError("aucun pseudo-terminal n'a pu être verrouillé (%d essais)" % tries)

    def handed_over(self):
        """Both ends are the children's now (they inherited them): the demo lets go of its copies."""
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


def stop_all(procs, timeout=5.0):
    """SIGTERM to each process still running, newest first; SIGKILL to one that does not stop in
    `timeout` s. Ctrl-C pressed again meanwhile does not cut this short."""
    old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
