"""Sensor health (état des capteurs): each signal is "ok", "stuck" (held active) or "silent".

Only transitions matter to the controller: a sensor turning bad raises one fault event, and a
spin in progress that depends on it is void. Signals are kept by index (the controller's signal
order: Z, BALLn, POCKETn, VOID), so the edge path compares no names; names are for the events.
"""

OK = "ok"
STUCK = "stuck"
SILENT = "silent"


class Health:
    def __init__(self, names):
        self.names = names          # the controller's list, not a copy: it is never changed
        self.state = [OK] * len(self.names)
        self._snap = None           # the last snapshot, until a state changes
        self.nbad = 0               # signals not ok (every status asks: no list made for it)

    def set(self, i, state):
        """Record signal i's state; True when it changed."""
        old = self.state[i]
        if old == state:
            return False
        if old == OK:
            self.nbad += 1
        elif state == OK:
            self.nbad -= 1
        self.state[i] = state
        self._snap = None
        return True

    def is_(self, i, state):
        return self.state[i] == state

    def bad(self):
        """Names of the signals not ok, sorted (stable output on every runtime)."""
        return sorted([self.names[i] for i in range(len(self.names)) if self.state[i] != OK])

    def stuck(self):
        """Names of the signals held active, sorted."""
        return sorted([self.names[i] for i in range(len(self.names)) if self.state[i] == STUCK])

    def snapshot(self):
        """{name: state}, in every status (twice a second): made again only after a change, so
        statuses share it (nobody changes an event once emitted)."""
        d = self._snap
        if d is None:
            d = {}
            for i in range(len(self.names)):
                d[self.names[i]] = self.state[i]
            self._snap = d
        return d
