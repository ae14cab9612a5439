"""Sensor health (état des capteurs): each signal is "ok", "stuck" (held active) or "silent".

Only transitions matter to the controller: a sensor turning bad raises one fault event, and a
spin in progress that depends on it is void.
"""

OK = "ok"
STUCK = "stuck"
SILENT = "silent"


class Health:
    def __init__(self, names):
        self.names = list(names)
        self.state = {}
        for n in self.names:
            self.state[n] = OK

    def set(self, name, state):
        """Record a state; True when it changed."""
        if self.state.get(name) == state:
            return False
        self.state[name] = state
        return True

    def bad(self):
        """Names of the signals not ok, sorted (stable output on every runtime)."""
        return sorted([n for n in self.names if self.state[n] != OK])

    def snapshot(self):
        d = {}
        for n in self.names:
            d[n] = self.state[n]
        return d
