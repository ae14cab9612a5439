"""The Cammegh compatibility output of the simulated board, read as a display's decoder would."""

import re

from cylindre.link.cammegh import CammeghOutput
from host_tools.simwheel import SimulatedBoard

STATUS = re.compile(rb"^\*X;([1-6]);(\d{3});(\d{2});([0-9A-F]{2});(\d{3});([01])\r\n$")
NUMBER = re.compile(rb"^([ \d]\d)\r\n$")


class Sink:
    def __init__(self):
        self.data = b""

    def write(self, data):
        self.data += data

    def read(self):
        return b""


def test_marquee_sees_every_result_and_a_status_every_500_ms():
    out = Sink()
    board = SimulatedBoard(Sink(), bytes(32), "T1", seed=2, speed=15.0, pause=0.2,
                           cammegh=CammeghOutput(out.write))
    board.play(1)
    lines = out.data.split(b"\r\n")
    lines = [l + b"\r\n" for l in lines[:-1]]
    numbers = [int(NUMBER.match(l).group(1)) for l in lines if NUMBER.match(l)]
    status = [STATUS.match(l) for l in lines if l.startswith(b"*X;")]
    assert all(status), [l for l in lines if l.startswith(b"*X;") and not STATUS.match(l)]
    assert len(numbers) + len(status) == len(lines)            # nothing else on the line
    assert numbers == [n for (_s, n) in board.results]
    states = [int(m.group(1)) for m in status]
    assert 3 in states and 5 in states
    assert int(status[-1].group(3)) == board.results[-1][1]    # last number field
    assert int(status[-1].group(2)) == board.results[-1][0] % 1000
