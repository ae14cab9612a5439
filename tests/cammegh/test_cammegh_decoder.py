"""The Cammegh line decoder: what a reader prints becomes the wheel's events, and every garbled,
torn, missing or silent line is caught (docs/integrators/cammegh-output.md, docs/integrators/cammegh-reader.md)."""

from host_tools.cammegh.decoder import CammeghDecoder

MS = 1000


def play(lines, dec=None, step_ms=500, start_ms=0, eol=b"\r\n"):
    """Feed lines 500 ms apart (a bare number 5 ms before the next line); the events, no statuses."""
    dec = dec or CammeghDecoder()
    t = start_ms * MS
    events = []
    for line in lines:
        if isinstance(line, str):
            line = line.encode()
        t += 5 * MS if not line.startswith(b"*X") else step_ms * MS
        events += dec.feed(line + eol, t)
    return [e for e in events if e["ev"] != "status"], dec


def kinds(events):
    out = []
    for e in events:
        if e["ev"] == "fault":
            out.append("fault:" + e["code"])
        elif e["ev"] == "result":
            out.append("result:%d" % e["number"])
        elif e["ev"] == "void":
            out.append("void:" + e["reason"])
        else:
            out.append(e["ev"])
    return out


# the game of ../shared/WHEEL.md, as a reader in service prints it
WHEEL_MD_GAME = ["*X;2;013;16;0;152;0", "*X;2;013;16;0;150;0", "*X;3;013;16;0;141;1", "*X;3;013;16;0;150;1",
                 "*X;4;013;16;0;170;1", "*X;4;013;16;0;170;1", " 7", "*X;5;013; 7;0;168;1",
                 "*X;5;013; 7;0;168;1", "*X;2;014; 7;0;166;1"]


def test_the_wheel_md_game_is_one_launch_one_call_one_result():
    events, dec = play(WHEEL_MD_GAME)
    assert kinds(events) == ["launch", "rnvp", "result:7"]
    launch, rnvp, result = events
    assert launch["spin"] == rnvp["spin"] == result["spin"] == 1 and result["game"] == 13
    assert launch["rotor_dir"] == -1 and launch["rotor_rpm_x10"] == 141
    assert rnvp["t"] == 2500 * MS and rnvp["since"] == 2000 * MS     # called between these two lines
    assert result["confirmed_by"] == "number+status" and result["t"] == 3505 * MS
    assert dec.game == 14 and dec.done is None and not dec.counts


def test_statuses_carry_the_table_and_the_reader_state():
    dec = CammeghDecoder()
    st = dec.feed(b"*X;6;013;  ;0;000;1\r\n", 0)[0]
    assert st == {"ev": "status", "t": 0, "state": "idle", "spin": 0, "game": 13, "rotor_rpm_x10": 0,
                  "rotor_dir": -1, "flags": 0, "reader_state": 6, "sensors": {"reader": "ok"},
                  "last": None, "table_open": False}
    st = dec.feed(b"*X;2;013; 0;4;152;0\r\n", 500 * MS)[0]
    assert st["table_open"] and st["last"] == 0 and st["sensors"] == {"reader": "fault"}


def test_every_end_of_line_and_any_split_of_the_bytes():
    data = "".join(l + "\r\n" for l in WHEEL_MD_GAME).encode()
    for eol in (b"\r\n", b"\n", b"\r", b"\n\r"):
        events, _ = play(WHEEL_MD_GAME, eol=eol)
        assert kinds(events) == ["launch", "rnvp", "result:7"], eol
    for size in (1, 3, 7, 64):
        dec = CammeghDecoder()
        events = []
        for i in range(0, len(data), size):
            events += dec.feed(data[i:i + size], i * MS)
        assert kinds([e for e in events if e["ev"] != "status"]) == ["launch", "rnvp", "result:7"], size


def test_garbage_and_a_torn_line_are_reported_and_the_game_goes_on():
    lines = WHEEL_MD_GAME[:4] + ["\x00\xffnoise", "*X;4;01", "*X;4;013;16;0;170;1"] + WHEEL_MD_GAME[6:]
    events, dec = play(lines)
    assert kinds(events) == ["launch", "fault:garbled", "fault:garbled", "fault:line_missing", "rnvp",
                             "result:7"]                      # the torn status line is a line missing
    # a line cut short runs into the next one: the next one still counts
    events, dec = play(WHEEL_MD_GAME[:4] + ["*X;4;0*X;4;013;16;0;170;1"] + WHEEL_MD_GAME[5:])
    assert kinds(events) == ["launch", "fault:garbled", "rnvp", "result:7"]
    events, dec = play(["x" * 300, "*X;2;013;16;0;152;0"], eol=b"")
    assert kinds(events) == ["fault:garbled"]


def test_a_number_not_confirmed_by_the_state_5_line_waits_for_two_that_agree():
    lines = WHEEL_MD_GAME[:6] + ["17", "*X;5;013; 7;0;168;1", "*X;5;013; 7;0;168;1", "*X;2;014; 7;0;166;1"]
    events, _ = play(lines)
    assert kinds(events) == ["launch", "rnvp", "fault:result_mismatch", "result:7"]
    assert events[-1]["confirmed_by"] == "status x2"


def test_a_lost_number_line_is_made_up_by_two_state_5_lines():
    lines = WHEEL_MD_GAME[:6] + WHEEL_MD_GAME[7:]
    events, _ = play(lines)
    assert kinds(events) == ["launch", "rnvp", "fault:number_missing", "result:7"]
    # one state-5 line alone, then the next game: the number is not known, the bets are held
    events, _ = play(WHEEL_MD_GAME[:6] + ["*X;5;013; 7;0;168;1", "*X;2;014; 7;0;166;1",
                                          "*X;2;014; 7;0;166;1"])
    assert kinds(events) == ["launch", "rnvp", "fault:garbled", "fault:result_lost"]
    assert events[-1]["spin"] == 1


def test_a_garbled_game_number_on_one_line_is_not_believed():
    lines = list(WHEEL_MD_GAME)
    lines[3] = "*X;3;018;16;0;150;1"
    events, dec = play(lines)
    assert kinds(events) == ["launch", "fault:garbled", "rnvp", "result:7"]
    assert dec.game == 14


def test_a_game_number_jump_on_two_lines_is_a_jump_and_the_game_in_play_is_lost():
    lines = WHEEL_MD_GAME[:5] + ["*X;4;021;16;0;170;1", "*X;4;021;16;0;170;1"]
    events, dec = play(lines)
    assert kinds(events) == ["launch", "rnvp", "fault:garbled", "fault:result_lost", "fault:game_jump",
                             "fault:sequence", "launch", "rnvp"]   # game 21 is already past its call
    assert events[3]["spin"] == 1 and events[6]["spin"] == 2 and dec.game == 21


def test_a_misspin_voids_on_the_second_line_with_flag_8():
    lines = ["*X;2;013;16;0;152;0", "*X;3;013;16;0;141;1", "*X;2;013;16;A;141;1", "*X;2;013;16;A;120;1",
             "*X;2;013;16;A;100;1", "*X;3;013;16;0;141;0", "*X;4;013;16;0;141;0", " 5",
             "*X;5;013; 5;0;141;0", "*X;2;014; 5;0;141;0"]
    events, _ = play(lines)
    assert kinds(events) == ["launch", "void:same_direction", "launch", "rnvp", "result:5"]
    assert [e["spin"] for e in events] == [1, 1, 2, 2, 2] and {e["game"] for e in events} == {13}
    assert events[0]["violations"] == []
    for flags, reason in (("8", "misspin"), ("9", "no_result"), ("C", "sensor_fault"), ("A", "same_direction")):
        events, _ = play(["*X;3;013;16;0;141;1", "*X;4;013;16;0;141;1", "*X;2;013;16;%s;141;1" % flags,
                          "*X;2;013;16;%s;141;1" % flags])
        assert kinds(events)[-1] == "void:" + reason


def test_one_garbled_flag_does_not_void_a_game():
    lines = WHEEL_MD_GAME[:5] + ["*X;4;013;16;8;170;1"] + WHEEL_MD_GAME[5:]
    events, _ = play(lines)
    assert kinds(events) == ["launch", "rnvp", "result:7"]


def test_back_to_place_bets_without_flag_8_is_a_void_reported_as_a_broken_sequence():
    events, _ = play(["*X;3;013;16;0;141;1", "*X;2;013;16;0;141;1", "*X;2;013;16;0;141;1"])
    assert kinds(events) == ["launch", "fault:sequence", "void:misspin"]


def test_state_4_or_a_number_without_the_states_before_still_closes_the_window():
    events, _ = play(["*X;2;013;16;0;152;0", "*X;4;013;16;0;170;1", " 7", "*X;5;013; 7;0;168;1"])
    assert kinds(events) == ["fault:sequence", "launch", "rnvp", "result:7"]
    events, _ = play(["*X;3;013;16;0;152;0", " 7", "*X;5;013; 7;0;168;1"])
    assert kinds(events) == ["launch", "fault:sequence", "rnvp", "result:7"]


def test_the_reader_restarting_mid_game_loses_the_game_and_resyncs():
    events, dec = play(WHEEL_MD_GAME[:5] + ["*X;1;000;  ;0;000;0", "*X;6;000;  ;0;000;0", "*X;2;000;  ;0;000;0"])
    assert kinds(events) == ["launch", "rnvp", "fault:result_lost"] and dec.game == 0


def test_a_late_line_and_a_silent_reader():
    dec = CammeghDecoder()
    assert kinds([e for e in dec.feed(b"*X;2;013;16;0;152;0\r\n", 0) if e["ev"] != "status"]) == []
    assert dec.tick(1400 * MS) == []
    assert kinds(dec.feed(b"*X;2;013;16;0;152;0\r\n", 1000 * MS)) == ["fault:line_missing", "status"]
    assert kinds(dec.tick(2600 * MS)) == ["fault:silent"]
    assert dec.tick(9000 * MS) == []                                      # once
    assert kinds(dec.feed(b"*X;2;013;16;0;152;0\r\n", 9100 * MS)) == ["fault:line_missing", "status"]
    assert not dec.silent


def test_the_reader_answers_the_commands():
    events, _ = play(["*P OK", "*P NO", "*u OK"])
    assert [(e["cmd"], e["ok"]) for e in events] == [("P", True), ("P", False), ("u", True)]


def test_first_spin_continues_the_journal_count():
    events, _ = play(WHEEL_MD_GAME, dec=CammeghDecoder(first_spin=101))
    assert {e["spin"] for e in events} == {101}


def test_a_repeated_or_contradicted_number_after_the_deal_changes_nothing():
    lines = WHEEL_MD_GAME[:9] + [" 8", "*X;5;013;18;0;168;1", "*X;2;014; 7;0;166;1"]
    events, _ = play(lines)
    assert kinds(events) == ["launch", "rnvp", "result:7", "fault:result_mismatch", "fault:result_mismatch"]


def test_a_relaunch_right_after_one_void_line_still_voids_the_first_launch():
    events, _ = play(["*X;3;013;16;0;141;1", "*X;4;013;16;0;141;1", "*X;2;013;16;9;141;1",
                      "*X;3;013;16;0;141;0", "*X;4;013;16;0;141;0", " 5", "*X;5;013; 5;0;141;0"])
    assert kinds(events) == ["launch", "rnvp", "void:no_result", "launch", "rnvp", "result:5"]
    assert [e["spin"] for e in events] == [1, 1, 1, 2, 2, 2]
