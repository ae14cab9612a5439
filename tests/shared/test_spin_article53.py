"""Article 53: the rotor reverses every spin (remembered across power loss), the ball goes against it."""

from test_spin_kit import Wheel, Log, board, make, valid_spin as _valid_spin
from cylindre.spin.controller import Controller, MemoryStore


def test_rotor_must_reverse_from_the_previous_spin_across_a_power_loss():
    store = MemoryStore()
    _valid_spin(rpm=20.0, ball_dir=-1, store=store)
    assert store.record["dir"] == 1 and store.record["in_spin"] is None
    # Power back: same rotor direction again is a violation (Article 53).
    w, ctl, log, drop, rest = _valid_spin(rpm=20.0, ball_dir=-1, store=store)
    v = log.of("void")
    assert [e["reason"] for e in v] == ["rotor_not_reversed"], log.events
    assert log.of("launch")[0]["violations"] == ["rotor_not_reversed"]
    assert log.of("launch")[0]["spin"] == 2
    assert not log.of("result")
    # Reversed: valid, spin 3.
    w, ctl, log, drop, rest = _valid_spin(rpm=-20.0, ball_dir=1, store=store)
    assert log.of("result")[0]["spin"] == 3
    assert store.record["dir"] == -1


def test_rotor_not_reversed_can_be_report_only():
    store = MemoryStore({"v": 1, "spin": 7, "dir": 1, "in_spin": None, "last": 3, "hist": []})
    s = board(void_rotor_not_reversed=0)
    w, ctl, log, drop, rest = _valid_spin(store=store, settings=s)
    assert log.of("launch")[0]["violations"] == ["rotor_not_reversed"]
    assert log.of("result")[0]["spin"] == 8


def test_ball_same_way_as_rotor_is_void():
    w, ctl, log, drop, rest = _valid_spin(rpm=20.0, ball_dir=1)
    assert [e["reason"] for e in log.of("void")] == ["same_direction"]
    assert not log.of("result") and not log.of("rnvp")
