"""The Cammegh compatibility output: bare number lines and the *X status line every 500 ms."""

from cylindre.link.cammegh import CammeghOutput, number_line, status_line


def _parse(line):
    """A display's reading of a status line, field by field, as WHEEL.md defines it."""
    assert line.endswith(b"\r\n")
    f = line[:-2].decode().split(";")
    assert f[0] == "*X" and len(f) == 7
    assert len(f[2]) == 3 and len(f[5]) == 3
    return (int(f[1]), int(f[2]), int(f[3]), int(f[4], 16), int(f[5]), int(f[6]))


def test_number_line_is_two_characters_and_crlf():
    assert number_line(5) == b" 5\r\n"
    assert number_line(0) == b" 0\r\n"
    assert number_line(36) == b"36\r\n"
    for bad in (-1, 37, None, "5"):
        try:
            number_line(bad)
        except ValueError:
            continue
        assert False, bad


def test_status_line_fields():
    assert status_line(5, 1234, 17, 0, 153, 1) == b"*X;5;234;17;00;153;0\r\n"
    assert status_line(2, 7, None, 8 | 2, 1500, -1) == b"*X;2;007;00;0A;999;1\r\n"


class Out:
    def __init__(self):
        self.lines = []

    def __call__(self, data):
        self.lines.append(data)


def test_a_game_on_the_compatibility_output():
    out = Out()
    c = CammeghOutput(out)
    t = 0
    c.poll(t)
    assert _parse(out.lines[-1])[0] == 1                 # start: table not yet opened
    c.event({"ev": "status", "state": "idle", "spin": 41, "rotor_rpm_x10": 160, "rotor_dir": 1,
             "last": None, "table_open": True}, t)
    t += 500
    c.poll(t)
    assert _parse(out.lines[-1]) == (2, 41, 0, 0, 160, 0)
    c.event({"ev": "launch", "spin": 42, "rotor_dir": -1, "ball_dir": 1, "rotor_rpm_x10": 155}, t)
    t += 500
    c.poll(t)
    assert _parse(out.lines[-1]) == (3, 42, 0, 0, 155, 1)
    c.event({"ev": "rnvp", "spin": 42}, t)
    t += 500
    c.poll(t)
    assert _parse(out.lines[-1])[0] == 4
    c.event({"ev": "result", "spin": 42, "number": 5}, t)
    assert out.lines[-1] == b" 5\r\n"
    c.event({"ev": "status", "state": "idle", "spin": 42, "rotor_rpm_x10": 150, "rotor_dir": -1,
             "last": 5, "table_open": True}, t + 100)
    t += 500
    c.poll(t)
    assert _parse(out.lines[-1])[:4] == (5, 42, 5, 0)    # the number is held on the marquee
    t += 5000
    c.event({"ev": "status", "state": "idle", "spin": 42, "rotor_rpm_x10": 150, "rotor_dir": -1,
             "last": 5, "table_open": True}, t)
    c.poll(t)
    assert _parse(out.lines[-1])[:4] == (2, 42, 5, 0)
    c.event({"ev": "launch", "spin": 43, "rotor_dir": 1, "ball_dir": 1, "rotor_rpm_x10": 150}, t)
    c.event({"ev": "void", "spin": 43, "reason": "same_direction", "detail": ""}, t)
    t += 500
    c.poll(t)
    assert _parse(out.lines[-1])[3] == 8 | 2
    c.event({"ev": "status", "state": "idle", "spin": 43, "rotor_rpm_x10": 0, "rotor_dir": 1,
             "last": 5, "table_open": False}, t)
    t += 500
    c.poll(t)
    assert _parse(out.lines[-1])[0] == 6


def test_status_every_500_ms_without_drift():
    out = Out()
    c = CammeghOutput(out)
    for t in range(0, 10001, 10):
        c.poll(t)
    assert len([l for l in out.lines if l.startswith(b"*X;")]) == 21
