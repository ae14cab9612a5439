"""The Pico's main loop (boucle principale): it wakes for work, not for time.

One turn (`step`): empty the edges' wake-up signal, hand the ring's edges and the timer's speed
samples to the controller and tick it when due (`Board.poll`), take the link's bytes, let the
link resend and pace itself, then wait in `select.poll` until a sensor turns active (the pin
interrupt writes a byte to `Board.wake`, a `micropython.RingIO` that `select` asks in C; without
one, `EdgeWake`), a byte arrives on the link's port, or the next deadline (`Board.due`): the
controller's next work (`Controller.next_due`: the status and the checks every 500 ms, rien ne
va plus and the drop in a spin, every 100 ms while a launch's group is open). The LED rides on
those turns. The watchdog is fed at every turn, so at least once a second (`MAX_WAIT_MS`).

The speed samples (every 200 ms, by a hard timer interrupt), the index's edges and the
sensors' releases do not wake the loop: they wait in the ring for its next turn, and the
controller takes them in time order with the edges that woke it. The CPU it takes is measured
on the emulated chip (`make bench ARGS=rp2`, docs/wheel/emulated-chip.md).
"""

import io
import select

MAX_WAIT_MS = 1000      # a turn at least this often whatever happens (the watchdog's 8 s)
DRAIN = 16              # the wake-up signal's bytes taken at once: all of it (shell.WAKE)


class EdgeWake(io.IOBase):
    """Pollable by `select.poll` where there is no RingIO (CPython, stand-ins): readable once an
    edge came since `Board.poll` began its drain (the ring's `wake`, which the pin interrupt
    sets for the edges that wake the loop). The core wakes from its wait on any interrupt and
    asks again: `select` calls this Python `ioctl` at each of those wakes (~36 us on the Pico's
    core, `make bench ARGS=rp2prof`)."""

    def __init__(self, ring):
        self.ring = ring

    def ioctl(self, req, arg):
        if req == 3:                    # MP_STREAM_POLL
            r = self.ring
            return (arg & 1) if r.wake else 0
        return -1


class MainLoop:
    """`read()` returns the link's bytes that arrived (or None), `poll()` lets the link resend
    and pace itself, `link.feed` takes the bytes, `port` is the stream they arrive on (None: no
    link to wait on). `step()` is one turn; `run()` loops for ever."""

    def __init__(self, board, read, poll, link, port):
        self.board = board
        self._read = read
        self._poll = poll
        self._link = link
        self.port = port
        self.wakes = 0
        self._poller = select.poll()
        wake = board.wake
        if wake is None:
            self._poller.register(EdgeWake(board.ring), select.POLLIN)
            self._drain = _nothing
        else:
            self._poller.register(wake, select.POLLIN)      # asked in C
            self._drain = wake.readinto
        self._drained = bytearray(DRAIN)
        if port is not None:
            self._poller.register(port, select.POLLIN)

    def step(self):
        """One turn: edges and tick, the link's bytes and its pacing, then wait for work.

        The signal is emptied before `Board.poll` reads its clock and drains the ring up to it:
        an edge the interrupt stamps after that reading (left for the next turn) has its byte
        written after the emptying, so the wait below ends at once for it."""
        self._drain(self._drained)
        b = self.board
        now = b.poll()
        read = self._read
        data = read()
        if data:
            b.invalidate()
        while data:
            self._link.feed(data)
            data = read()
        self._poll()
        wait = b.due() - now
        if wait > 0:
            wait = (wait + 999) // 1000
            self._poller.ipoll(wait if wait < MAX_WAIT_MS else MAX_WAIT_MS)   # allocates nothing
        self.wakes += 1

    def run(self):
        while True:
            self.step()


def _nothing(buf):
    """No signal to empty: `Board.poll` clears the ring's flag, which `EdgeWake` reads."""
