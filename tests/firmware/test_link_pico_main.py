"""firmware/main.py's wiring (cylindre.board.wiring) of the link and of the Cammegh output, run on CPython with stand-ins
for MicroPython's `machine` and `micropython` modules: a board with a "cammegh" key gets the
compatibility output on its own UART at 9600 8N1, a board without one gets none."""

import builtins
import json
import sys
import types
from pathlib import Path

import pytest

from cylindre.link.cammegh import table_power

ROOT = Path(__file__).resolve().parents[2]


class FakeUART:
    made = []

    def __init__(self, n, **kw):
        self.n = n
        self.kw = kw
        self.out = bytearray()
        self.inbox = []
        FakeUART.made.append(self)

    def write(self, data):
        self.out.extend(data)
        return len(data)

    def read(self):
        return self.inbox.pop(0) if self.inbox else None


@pytest.fixture
def pico(monkeypatch, tmp_path):
    """The wiring's functions (not its loop), with `/wheel.key` served from tmp_path when asked;
    main.py only runs `cylindre.board.wiring.main()` (builds, then runs its loop)."""
    FakeUART.made = []
    machine = types.ModuleType("machine")
    machine.UART = FakeUART
    machine.Pin = lambda n, *a, **k: ("GP", n)
    upy = types.ModuleType("micropython")
    upy.alloc_emergency_exception_buf = lambda n: None
    upy.kbd_intr = lambda c: None
    monkeypatch.setitem(sys.modules, "machine", machine)
    monkeypatch.setitem(sys.modules, "micropython", upy)
    src = (ROOT / "firmware" / "main.py").read_text()
    assert "from cylindre.board.wiring import main\n" in src
    assert '\nif __name__ == "__main__":\n    try:\n        loop = main(run=False)\n' in src
    monkeypatch.delitem(sys.modules, "cylindre.board.wiring", raising=False)
    files = {}

    def fake_open(path, *a, **k):
        if path in files:
            return builtins.open(files[path], *a, **k)
        if path == "/wheel.key":
            raise OSError("no key")
        return builtins.open(path, *a, **k)

    import cylindre.board.wiring as wiring

    monkeypatch.setattr(wiring, "open", fake_open, raising=False)
    g = dict(vars(wiring))
    g["files"] = files
    return g


def _board(name):
    return json.loads((ROOT / "boards" / name).read_text())


def test_the_3_pocket_board_writes_the_cammegh_output_on_uart1_at_9600_8n1(pico, tmp_path):
    key = tmp_path / "wheel.key"
    key.write_text("ab" * 32)
    pico["files"]["/wheel.key"] = str(key)
    emit, read, poll, link, port = pico["make_link"](_board("pico2-3pockets.json"), lambda: 5000)
    uarts = {u.n: u for u in FakeUART.made}
    assert set(uarts) == {0, 1}
    assert uarts[1].kw == {"baudrate": 9600, "bits": 8, "parity": None, "stop": 1, "tx": ("GP", 4), "rx": ("GP", 5)}
    assert uarts[0].kw["baudrate"] == 115200 and link is not None and link.cammegh is not None
    emit({"ev": "status", "t": 1, "state": "idle", "spin": 7, "rotor_rpm_x10": 201, "rotor_dir": -1,
          "sensors": {}, "last": None, "table_open": True})
    poll()
    emit({"ev": "launch", "t": 2, "spin": 8, "ball_dir": 1, "rotor_dir": 1, "rotor_rpm_x10": 199,
          "lap_us": 700000, "violations": []})
    emit({"ev": "rnvp", "t": 3, "spin": 8})
    emit({"ev": "result", "t": 4, "spin": 8, "number": 5, "rest_t": 1, "sightings": [], "laps": 15})
    out = bytes(uarts[1].out)
    assert out == (b"*X;2;008;  ;0;201;1\r\n*X;3;008;  ;0;199;0\r\n*X;4;008;  ;0;199;0\r\n"
                   b" 5\r\n*X;5;008; 5;0;199;0\r\n")
    assert b"*X" not in bytes(uarts[0].out)             # the link's port carries only frames
    assert link.outbox_len() == 3                       # the events wait there for the host's ack


class FakeController:
    def __init__(self):
        self.calls = []

    def open_table(self, t_us):
        self.calls.append(("open", t_us))

    def close_table(self, t_us):
        self.calls.append(("close", t_us))


class FakeLink:
    in_session = False


def test_the_table_system_opens_and_closes_the_table_unless_a_cylindre_host_is_in_session(pico):
    ctl, link = FakeController(), FakeLink()
    emit, read, poll, _, _ = pico["make_link"](_board("pico2-3pockets.json"), lambda: 7,
                                            lambda on: table_power(ctl, link, on, 7000))
    cam = [u for u in FakeUART.made if u.n == 1][0]
    cam.inbox += [b"*P 0\r\n", b"*P 1\r\n"]
    poll()
    poll()
    assert ctl.calls == [("close", 7000), ("open", 7000)]
    link.in_session = True                              # the daemon owns the table now
    cam.inbox.append(b"*P 0\r\n")
    poll()
    assert ctl.calls == [("close", 7000), ("open", 7000)]
    answers = [l for l in bytes(cam.out).split(b"\r\n") if not l.startswith(b"*X")]
    assert answers == [b"*P OK", b"*P OK", b"*P NO", b""]
    assert table_power(None, None, True, 0) is False                # before the controller exists


def test_a_cammegh_port_without_rx_reads_nothing(pico):
    b = _board("pico2-3pockets.json")
    del b["cammegh"]["rx"]
    out = pico["make_cammegh"](b, lambda on: True)
    assert "rx" not in FakeUART.made[0].kw and out._read is None


def test_the_default_board_has_no_cammegh_output(pico):
    assert pico["make_cammegh"](_board("pico.json")) is None
    assert FakeUART.made == []


def test_without_a_key_the_events_are_printed_and_the_cammegh_output_still_runs(pico, capsys):
    emit, read, poll, link, port = pico["make_link"](_board("pico2-3pockets.json"), lambda: 0)
    assert link is None
    emit({"ev": "result", "t": 2, "spin": 1, "number": 17, "rest_t": 1, "sightings": [], "laps": 15})
    poll()
    assert json.loads(capsys.readouterr().out)["number"] == 17
    cam = [u for u in FakeUART.made if u.n == 1][0]
    assert bytes(cam.out).startswith(b"17\r\n*X;5;001;17;")


@pytest.mark.parametrize("cfg,err", [
    ({"uart": 1, "tx": 4, "rx": 5}, None),
    ({"uart": 1, "tx": 4}, None),                                   # a display needs no RX
    (None, None),
    ({"uart": 0, "tx": 4}, "UART0 already carries the link"),
    ({"uart": 2, "tx": 4}, "cammegh.uart: 0 or 1"),
    ({"uart": 1, "tx": 1}, "GPIO 1 is already link.rx"),
    ({"uart": 1, "tx": 13}, "GPIO 13 is already ball"),
    ({"uart": 1, "tx": 4, "rx": 4}, "GPIO 4 is already cammegh.tx"),
    ({"uart": 1, "tx": "GP4"}, "not a GPIO number"),
    ({"uart": 1, "tx": 4, "baud": 9600.5}, "cammegh.baud"),
    ({"uart": 1, "tx": 4, "parity": "E"}, "unknown key"),
    ("on", "an object"),
])
def test_the_board_check_knows_the_cammegh_key(cfg, err):
    from cylindre.board.boardfile import check
    b = _board("pico2-3pockets.json")
    b["cammegh"] = cfg
    got = check(b)
    assert (got is None) if err is None else (got is not None and err in got), got
    b = _board("pico.json")                                          # a USB link: UART0 is free
    b["cammegh"] = {"uart": 0, "tx": 0, "rx": 1}
    assert check(b) is None
