"""A recorded session of a Cammegh reader (its lines, as captured off the cable) played again:
`cylindre wheel --cammegh-replay FILE`, and the recorded-session tests.

A capture has no timestamps; a reader prints a status line every 500 ms, so each status line
(`*X;...`) starts a new 500 ms slot and every other line (the bare number, an answer, noise) goes
out in the slot of the status line before it. `timed_lines` gives each line its reader instant;
`play` sends them at those instants (`speed` times real time), paced at 9600 baud, and answers
nothing (a recording cannot: the host's commands are read and dropped).
"""

from __future__ import annotations

import re

from .reader_sim import PERIOD_MS, Pacer

_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$")


def timed_lines(data: bytes, period_ms=PERIOD_MS):
    """[(reader ms, line bytes with its end of line as captured)]; a line `#...` is a comment."""
    out = []
    t = -period_ms
    for m in _LINE.finditer(data):
        line = m.group(0)
        if not line or line.startswith(b"#"):
            continue
        if line.startswith(b"*X;"):
            t += period_ms
        out.append((max(t, 0), line))
    return out


def play(port, timed, speed=1.0, clock=None, sleep=None, stop=None):
    """Write `timed` lines on `port` at their instants, then two silent periods; returns the
    number of bytes written."""
    import time
    clock = clock or time.monotonic
    sleep = sleep or time.sleep
    pacer = Pacer()
    real0 = clock()
    i, sent = 0, 0
    end = (timed[-1][0] if timed else 0) + 2 * PERIOD_MS
    while not (stop and stop()):
        now = (clock() - real0) * 1000 * speed
        port.read()
        while i < len(timed) and timed[i][0] <= now:
            pacer.put(timed[i][1])
            i += 1
        out = pacer.take(now)
        if out:
            port.write(out)
            sent += len(out)
        if i == len(timed) and not pacer._queue and now >= end:
            break
        sleep(0.002)
    return sent
