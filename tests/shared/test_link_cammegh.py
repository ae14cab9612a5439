"""The Cammegh compatibility output, line for line as an SS2 reader prints it (docs/integrators/cammegh-output.md):
a reference session written from the documented behaviour, byte for byte."""

from cylindre.link.cammegh import CammeghOutput, number_line, status_line


class Wire:
    """The UART: what the output wrote, line by line (CR LF kept), and a table system's bytes."""

    def __init__(self):
        self.lines = []
        self.inbox = []

    def write(self, data):
        self.lines.append(data)

    def read(self):
        return self.inbox.pop(0) if self.inbox else None

    def take(self):
        out, self.lines = [l.decode() for l in self.lines], []
        return out


def status(t, rpm=152, rdir=1, last=16, open_=True, sensors=None):
    return {"ev": "status", "t": t, "state": "idle", "spin": 12, "rotor_rpm_x10": rpm, "rotor_dir": rdir,
            "sensors": sensors or {"ball_a": "ok", "pocket_a": "ok"}, "last": last, "table_open": open_}


def launch(spin, rdir=-1, rpm=141, violations=()):
    return {"ev": "launch", "spin": spin, "ball_dir": 1, "rotor_dir": rdir, "rotor_rpm_x10": rpm,
            "lap_us": 700000, "violations": list(violations)}


def test_the_bare_number_is_two_characters_space_padded():
    assert number_line(0) == b" 0\r\n"
    assert number_line(7) == b" 7\r\n"
    assert number_line(36) == b"36\r\n"
    for bad in (-1, 37, None, "5", True):
        try:
            number_line(bad)
        except ValueError:
            continue
        assert False, bad


def test_status_line_fields():
    assert status_line(5, 13, 7, 0, 168, -1) == b"*X;5;013; 7;0;168;1\r\n"
    assert status_line(2, 1014, 0, 8 | 2, 1500, 1) == b"*X;2;014; 0;A;999;0\r\n"
    assert status_line(2, 1, None, 0, 0, 1) == b"*X;2;001;  ;0;000;0\r\n"     # no result yet: blank


def test_a_reference_session():
    w = Wire()
    c = CammeghOutput(w.write, hold_ms=1000, read=w.read, power=lambda on: True)
    c.event({"ev": "boot", "spin": 12, "reset_cause": "power", "interrupted": None}, 0)
    c.poll(0)
    assert w.take() == ["*X;1;013;  ;0;000;0\r\n"]            # power-up, before the controller speaks
    c.event(status(100), 100)
    assert w.take() == ["*X;2;013;16;0;152;0\r\n"]            # at once: the table is open, game 13
    c.poll(400)
    assert w.take() == []
    c.poll(500)
    assert w.take() == ["*X;2;013;16;0;152;0\r\n"]            # every 500 ms
    c.event(launch(13), 900)
    assert w.take() == ["*X;3;013;16;0;141;1\r\n"]            # the ball is launched, rotor reversed
    c.poll(1000)
    c.event({"ev": "rnvp", "spin": 13}, 1200)
    c.event(status(1300, rpm=170, rdir=-1), 1300)
    c.poll(1500)
    assert w.take() == ["*X;3;013;16;0;141;1\r\n", "*X;4;013;16;0;141;1\r\n", "*X;4;013;16;0;170;1\r\n"]
    c.event({"ev": "drop", "spin": 13}, 1600)
    c.event({"ev": "result", "spin": 13, "number": 7}, 1700)
    assert w.take() == [" 7\r\n", "*X;5;013; 7;0;170;1\r\n"]  # the number, then state 5 at once
    c.poll(2000)
    c.poll(2500)
    assert w.take() == ["*X;5;013; 7;0;170;1\r\n"] * 2
    c.poll(2700)                                             # held hold_ms: the next game's bets
    assert w.take() == ["*X;2;014; 7;0;170;1\r\n"]
    c.poll(2999)
    assert w.take() == []                                    # the 500 ms grid goes on from 0
    c.poll(3000)
    assert w.take() == ["*X;2;014; 7;0;170;1\r\n"]


def test_a_misspin_shows_flag_8_and_the_same_game_is_played_again():
    w = Wire()
    c = CammeghOutput(w.write, hold_ms=1000)
    c.event(status(0, last=7), 0)
    c.event(launch(13, rdir=1, violations=["same_direction"]), 100)
    c.event({"ev": "void", "spin": 13, "reason": "same_direction", "detail": ""}, 100)
    assert w.take() == ["*X;2;013; 7;0;152;0\r\n", "*X;3;013; 7;2;141;0\r\n", "*X;2;013; 7;A;141;0\r\n"]
    c.event(launch(14), 2000)                                # the relaunch clears the flags
    c.event({"ev": "rnvp", "spin": 14}, 2100)
    c.event({"ev": "void", "spin": 14, "reason": "ball_off_wheel", "detail": ""}, 2200)
    assert w.take() == ["*X;3;013; 7;0;141;1\r\n", "*X;4;013; 7;0;141;1\r\n", "*X;2;013; 7;9;141;1\r\n"]
    c.event(launch(15, rdir=1), 4000)
    c.event({"ev": "rnvp", "spin": 15}, 4100)
    c.event({"ev": "result", "spin": 15, "number": 0}, 4200)
    assert w.take()[-3:] == ["*X;4;013; 7;0;141;0\r\n", " 0\r\n", "*X;5;013; 0;0;141;0\r\n"]


def test_every_void_reason_maps_to_one_hex_digit():
    expect = {"same_direction": "A", "no_result": "9", "ball_off_wheel": "9", "sensor_fault": "C",
              "encoder_mismatch": "C", "few_laps": "8", "rotor_not_reversed": "8", "rotor_not_actuated": "8", "rotor_slow": "8",
              "launch_slow": "8", "void_button": "8", "restart": "8", "outbox_full": "8",
              "table_closed": "8"}
    for reason in expect:
        w = Wire()
        c = CammeghOutput(w.write)
        c.event(status(0), 0)
        c.event(launch(13), 10)
        c.event({"ev": "void", "spin": 13, "reason": reason, "detail": ""}, 20)
        assert w.take()[-1] == "*X;2;013;16;%s;141;1\r\n" % expect[reason], reason


def test_a_sensor_fault_shows_flag_4_while_the_sensor_is_bad():
    w = Wire()
    c = CammeghOutput(w.write)
    c.event(status(0), 0)
    c.event({"ev": "fault", "code": "watchdog_reset", "detail": "", "signal": None}, 10)
    c.event({"ev": "fault", "code": "store_failed", "detail": "", "signal": None}, 10)
    assert w.take() == ["*X;2;013;16;0;152;0\r\n"]           # not a sensor: no warning on the line
    c.event({"ev": "fault", "code": "sensor_stuck", "detail": "", "signal": "ball_a"}, 20)
    c.event(status(30, sensors={"ball_a": "stuck"}), 30)
    c.poll(500)
    assert w.take() == ["*X;2;013;16;4;152;0\r\n"] * 2
    c.event(launch(13), 600)                                 # latched flags clear; the sensor is still bad
    c.event(status(700), 700)                                # ... and now it is ok
    c.poll(1000)
    assert w.take() == ["*X;3;013;16;4;141;1\r\n", "*X;3;013;16;0;152;0\r\n"]


def test_closed_table_is_state_6_and_the_table_system_opens_it():
    w = Wire()
    calls = []

    def power(on):
        calls.append(on)
        return True

    c = CammeghOutput(w.write, hold_ms=1000, read=w.read, power=power)
    c.poll(0)
    c.event(status(10, open_=False), 10)
    assert w.take() == ["*X;1;001;  ;0;000;0\r\n", "*X;6;013;16;0;152;0\r\n"]   # 1 only at power-up
    w.inbox.append(b"*P 1\r")
    w.inbox.append(b"\n")
    c.poll(100)
    assert calls == [True] and w.take() == ["*P OK\r\n"]
    c.event(status(110), 110)
    assert w.take() == ["*X;2;013;16;0;152;0\r\n"]
    c.event(launch(13), 200)
    c.event({"ev": "rnvp", "spin": 13}, 300)
    c.event({"ev": "result", "spin": 13, "number": 36}, 400)
    w.take()
    c.event(status(500, last=36, open_=False), 500)         # closed during the hold: game one up
    assert w.take() == ["*X;6;014;36;0;152;0\r\n"]
    c.poll(2000)
    assert w.take() == ["*X;6;014;36;0;152;0\r\n"]


def test_the_next_launch_within_the_hold_still_shows_2_with_the_new_game():
    w = Wire()
    c = CammeghOutput(w.write, hold_ms=3000)
    c.event({"ev": "boot", "spin": 0}, 0)                      # a new wheel: no result ever
    c.event(status(0, last=None), 0)
    assert w.take() == ["*X;2;001;  ;0;152;0\r\n"]
    c.event(launch(1), 100)
    c.event({"ev": "rnvp", "spin": 1}, 200)
    c.event({"ev": "result", "spin": 1, "number": 5}, 300)
    c.event(launch(2, rdir=1), 400)
    assert w.take()[-4:] == [" 5\r\n", "*X;5;001; 5;0;141;1\r\n", "*X;2;002; 5;0;141;1\r\n",
                             "*X;3;002; 5;0;141;0\r\n"]


def test_commands_answered_on_their_own_line():
    w = Wire()
    refused = CammeghOutput(w.write, read=w.read, power=lambda on: False)
    w.inbox.append(b"*P 0\r\n*u 1\r\n*P1\n")
    refused.poll(0)
    assert [l for l in w.take() if not l.startswith("*X")] == ["*P NO\r\n", "*u OK\r\n", "*P NO\r\n"]
    none = CammeghOutput(w.write, read=w.read)                # nothing to open: refused
    w.inbox.append(b"garbage\x00\xff\r\n*P" + b"x" * 40 + b"\r\n*Q 1\r\n*P 1")
    none.poll(0)
    assert [l for l in w.take() if not l.startswith("*X")] == []   # noise, too long, unknown, unended
    w.inbox.append(b"\r\n")
    none.poll(10)
    assert w.take() == ["*P NO\r\n"]

    def broken(on):
        raise OSError("controller busy")
    c = CammeghOutput(w.write, power=broken)
    c.feed(b"*P 1\r\n", 0)
    assert w.take() == ["*P NO\r\n"]


def test_a_display_unplugged_does_not_disturb_the_wheel():
    def write(data):
        raise OSError("UART")

    def read():
        raise OSError("UART")
    c = CammeghOutput(write, read=read)
    c.poll(0)
    c.event({"ev": "result", "spin": 1, "number": 5}, 10)


def test_game_number_wraps_at_1000():
    w = Wire()
    c = CammeghOutput(w.write, hold_ms=0)
    c.event({"ev": "boot", "spin": 998}, 0)
    c.event(status(0), 0)
    c.event(launch(999), 10)
    c.event({"ev": "rnvp", "spin": 999}, 20)
    c.event({"ev": "result", "spin": 999, "number": 3}, 30)
    c.poll(40)
    assert w.take()[-3:] == [" 3\r\n", "*X;5;999; 3;0;141;1\r\n", "*X;2;000; 3;0;141;1\r\n"]


def test_status_every_500_ms_without_drift():
    w = Wire()
    c = CammeghOutput(w.write)
    for t in range(0, 10001, 10):
        c.poll(t)
    assert len(w.lines) == 21
    late = CammeghOutput(w.write)
    w.take()
    for t in (0, 510, 1003, 2700, 3000):                      # a stalled loop: no burst after it
        late.poll(t)
    assert len(w.lines) == 4
