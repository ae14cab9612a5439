"""The Pico's main loop (boucle principale): drain the sensor edges and tick the controller
(`Board.poll`), serve the link, then wait.

`MainLoop(board, read, poll, link, port)`: `read()` returns the link's bytes that arrived (or
None), `poll()` lets the link resend and pace itself, `link` takes them (`feed`), `port` is the
stream the bytes arrive on. `step()` is one turn of the loop; `run()` loops for ever.
"""

import time

LOOP_MS = 5            # the controller wants a tick at least every 10 ms


class MainLoop:
    def __init__(self, board, read, poll, link, port):
        self.board = board
        self._read = read
        self._poll = poll
        self._link = link
        self.port = port
        self.wakes = 0

    def step(self):
        """One turn: edges and tick, the link's bytes and its pacing, then sleep."""
        self.board.poll()
        read = self._read
        data = read()
        while data:
            self._link.feed(data)
            data = read()
        self._poll()
        time.sleep_ms(LOOP_MS)
        self.wakes += 1

    def run(self):
        while True:
            self.step()
