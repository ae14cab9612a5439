"""A full outbox with the real controller: the wheel stops starting spins, loses nothing, and
resumes once a host has drained it."""

from cylindre.link.host import HostLink
from host_tools.sim.ptywheel import SimulatedBoard

KEY = bytes(range(32))


class Line:
    def __init__(self):
        self.to_host = bytearray()
        self.to_wheel = bytearray()
        self.plugged = False

    def write(self, data):            # the board's side
        if self.plugged:
            self.to_host.extend(data)

    def read(self):
        data = bytes(self.to_wheel)
        del self.to_wheel[:]
        return data


def test_full_outbox_stops_spins_then_everything_arrives():
    line = Line()
    board = SimulatedBoard(line, KEY, "T1", seed=9, speed=200.0, pause=0.0, capacity=24)
    ctl = board.replay.ctl
    board.play(spins=10, stop=lambda: not ctl.accepting)
    assert not ctl.accepting and board.link.outbox_len() >= 24 - 16
    held = board.spins
    assert held < 10
    board.idle(0.2)
    assert not board.ready()                                  # the croupier may not launch
    results = list(board.results)
    # a host arrives: every event comes out, in order, and the wheel accepts spins again
    line.plugged = True
    host = HostLink(line.to_wheel.extend, board._ms, KEY, wheel="T1")
    got = []
    for _ in range(400):
        for rec in host.feed(bytes(line.to_host)) + host.poll():
            if rec["kind"] == "event":
                got.append(rec["event"])
                host.acknowledge(rec["seq"])
        line.to_host.clear()
        board.service()
        board.idle(0.005)
        if board.link.outbox_len() == 0:
            break
    assert board.link.outbox_len() == 0 and ctl.accepting
    kinds = [e["ev"] for e in got]
    assert [(e["spin"], e["number"]) for e in got if e["ev"] == "result"] == results
    assert "fault" in kinds and any(e.get("code") == "outbox_full" for e in got)
    assert "evicted" not in kinds
    # the spin running when the outbox filled was allowed to finish on the reserve
    assert not [e for e in got if e["ev"] == "void" and e.get("reason") == "outbox_full"]
