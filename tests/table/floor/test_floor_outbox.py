"""The floor outbox's core: rows to messages, the cursor on acknowledgements, backoff, the link told."""

from host_tools.table.floor import outbox as O


class FakeClock:
    def __init__(self, t=1_800_000_000.0):
        self.t = t

    def __call__(self):
        return self.t


def test_result_carries_the_coups_evidence():
    evidence = {"boot": "b7", "launch": {"ev": "launch", "rotor_dir": -1, "ball_dir": 1, "rotor_rpm_x10": 245},
                "drop": {"ev": "drop", "laps": 14, "drop_angle_x10": 1235}}
    kind, body = O.to_message("wheel", {"ev": "result", "spin": 9, "number": 32}, 5.0, evidence, "Léa", "E661")
    assert kind == "result"
    assert body == {"spin": 9, "number": 32, "boot": "b7", "epoch": None, "serial": "E661", "rotor_dir": "ccw", "ball_dir": "cw",
                    "rotor_rpm_x10": 245, "laps": 14, "drop_angle_x10": 1235, "croupier": "Léa", "at": 5.0}
    kind, body = O.to_message("wheel", {"ev": "void", "spin": 10, "reason": "few_laps", "detail": "3"}, 6.0,
                              {"boot": "b7", "launch": {"rotor_dir": 1, "ball_dir": 0}}, None, None)
    assert kind == "void" and body["reason"] == "few_laps" and body["rotor_dir"] == "cw" and body["ball_dir"] is None
    assert O.wants_evidence("wheel", {"ev": "result", "spin": 9}) == 9
    assert O.wants_evidence("wheel", {"ev": "launch", "spin": 9}) is None
    assert O.to_message("wheel", {"ev": "launch", "spin": 9}, 1.0) is None
    assert O.to_message("wheel", {"ev": "result", "spin": 9, "number": None}, 1.0) is None    # not played
    assert O.to_message("bet", {"id": "b1"}, 1.0) is None and O.to_message("announce", {}, 1.0) is None


def test_settlement_alert_audit_table():
    kind, body = O.to_message("settlement", {"spin": 3, "number": 0, "totals": {"staked": 12500, "paid": 3600},
                                             "bets": 7}, 2.0)
    assert (kind, body["result"], body["bets"]) == ("settlement", 8900, 7)
    kind, body = O.to_message("alert", {"id": 4, "code": "link_down", "message": "m", "level": "critical",
                                        "raised_at": 1.0, "acked_at": None, "acked_by": None, "comment": None,
                                        "extra": 1}, 2.0)
    assert kind == "alert" and set(body) == set(O.ALERT_FIELDS)
    kind, body = O.to_message("audit", {"id": 1, "at": 1.0, "who": "floor:marie", "role": "chef",
                                        "action": "table_open", "target": None, "spin": None, "before": {},
                                        "after": {}, "done": True, "answer": None}, 1.0)
    assert kind == "audit" and body["who"] == "floor:marie"
    assert O.to_message("table", {"what": "open", "before": "closed", "after": "betting", "who": "x", "role": "chef",
                                  "at": 1.0}, 1.0)[0] == "table"
    assert O.to_message("settlement", "not a dict", 1.0) is None


def test_cursor_moves_only_over_acknowledged_rows_in_order():
    assert O.advance(10, [11, 12, 13], {11, 12, 13}) == 13
    assert O.advance(10, [11, 12, 13], {11, 13}) == 11          # 12 unacknowledged: 13 waits behind it
    assert O.advance(10, [11, 12, 13], {12, 13}) == 10
    assert O.advance(10, [], set(), covered_to=40) == 40          # nothing wanted up to 40
    assert O.advance(10, [11, 15], {11, 15}, covered_to=40) == 40
    assert O.advance(10, [11, 15], {11}, covered_to=40) == 11
    assert O.advance(10, [11, 15], {11, 15}, covered_to=None) == 15     # a full batch: more may follow


def test_backoff_doubles_to_its_cap_and_resets():
    b = O.Backoff(first=0.2, cap=1.0)
    assert [b.failed() for _ in range(5)] == [0.2, 0.4, 0.8, 1.0, 1.0]
    b.ok()
    assert b.failed() == 0.2


def test_link_watch_tells_since_when():
    clock = FakeClock()
    w = O.LinkWatch(clock)
    assert w.warning(0).startswith("floor: broker unreachable since")
    w.connected()
    assert w.warning(5) is None and w.state() == "up"
    clock.t += 60
    w.lost("disconnected from the broker")
    clock.t += 30
    w.lost("publishing failed: TimeoutError")
    assert w.since == 1_800_000_060.0                               # since the first loss, not the last
    msg = w.warning(42)
    assert "2027-01-15 08:01:00 UTC" in msg and "42 events waiting" in msg
    assert w.state() == "down: publishing failed: TimeoutError"


def test_state_compare_ignores_last_heard():
    a = O.table_state("S", "T1", None, "betting", [1, 2], "up", "Léa", {}, 0, 1.0, 0.5)
    assert O.same_state(a, dict(a, last_heard=2.0))
    assert not O.same_state(a, dict(a, phase="closed"))
    assert not O.same_state(None, a)
