"""The Cammegh output of the simulated board (the firmware's own controller and CammeghOutput),
read in real time by a decoder written from docs/integrators/cammegh-output.md alone: every result dealt,
every void seen, no parse error, no false alarm; `*P 0` / `*P 1` close and open the table."""

import time

from cylindre.link.cammegh import CammeghOutput, table_power
from host_tools.cammegh.decoder import NUMBER, STATUS, CammeghDecoder
from host_tools.sim.ptywheel import SimulatedBoard


class Wire:
    """The display's cable: bytes with the time they left, and the table system's commands."""

    def __init__(self):
        self.chunks = []
        self.inbox = []

    def write(self, data):
        self.chunks.append((time.monotonic(), data))

    def read(self):
        return self.inbox.pop(0) if self.inbox else None


class Sink:
    def write(self, data):
        pass

    def read(self):
        return b""


def _decode(wire):
    # late lines are judged on a 1.5 s bound here: the simulated board shares a busy test machine
    # (the 500 ms grid itself is tested on an exact clock in tests/shared/test_link_cammegh.py)
    dec = CammeghDecoder(late_us=1_500_000)
    events = []
    for t, data in wire.chunks:
        events += dec.feed(data, int(t * 1e6))
    return events


def test_a_table_system_reads_every_result_and_void_of_the_simulated_board():
    wire = Wire()
    board = SimulatedBoard(Sink(), bytes(32), "T1", seed=3, speed=60.0, pause=0.1, void_rate=0.3,
                           cammegh=CammeghOutput(wire.write))
    board.play(6)
    board.idle(0.6)
    data = b"".join(d for _, d in wire.chunks)
    lines = data.split(b"\r\n")
    assert lines[-1] == b""
    for line in lines[:-1]:                                     # the documented format, every line
        text = line.decode()
        assert STATUS.match(text) or NUMBER.match(text), text
    events = _decode(wire)
    results = [(e["spin"], e["number"]) for e in events if e["ev"] == "result"]
    voids = [e for e in events if e["ev"] == "void"]
    assert [n for _, n in results] == [n for _, n in board.results]
    assert len(voids) == board.spins - len(board.results) >= 1
    assert [e for e in events if e["ev"] == "fault"] == []     # no false alarm, no line missing
    # the game number steps once a game is dealt, not at a void
    games = [e["game"] for e in events if e["ev"] == "result"]
    assert games == list(range(games[0], games[0] + len(games)))


def test_star_p_closes_and_opens_the_board_without_a_cylindre_host():
    wire = Wire()
    boards = []

    def power(on):
        b = boards[0]
        return table_power(b.replay.ctl, b.link, on, b.replay.now_us(b.t_us))

    out = CammeghOutput(wire.write, read=wire.read, power=power)
    board = SimulatedBoard(Sink(), bytes(32), "T1", seed=4, speed=60.0, pause=0.1, cammegh=out)
    boards.append(board)
    board.play(1)
    wire.inbox.append(b"*P 0\r\n")
    board.idle(0.7)
    assert not board.replay.ctl.table_open
    wire.inbox.append(b"*P 1\r\n")
    board.idle(0.7)
    assert board.replay.ctl.table_open
    board.play(2)
    events = _decode(wire)
    assert [e["ok"] for e in events if e["ev"] == "answer"] == [True, True]
    states = [e["reader_state"] for e in events if e["ev"] == "status"]
    assert states.index(6) < len(states) - 1 and 2 in states[states.index(6):]
    assert [e["number"] for e in events if e["ev"] == "result"] == [n for _, n in board.results]
