"""A floor tile says "faites vos jeux" only as the table's own rule does (game/annonce.py): while its
last heartbeat says a bet would be taken; never for a silent table, nor from a table's state that
carries no verdict."""

from host_tools.floor.tiles import SILENT_S, Tiles


def beat(at, **body):
    return {"kind": "heartbeat", "table": "T1", "site": "S", "at": at, "body": {"link": "up", "open": True, **body}}


def view(tiles, now):
    return tiles.views({}, now=now)[0]


def test_faites_vos_jeux_only_on_the_table_s_word_that_a_bet_is_taken():
    t = Tiles()
    t.apply(beat(100.0, phase="betting", refusing=None))
    assert (view(t, 101.0)["annonce"], view(t, 101.0)["refusing"]) == ("betting", None)
    t.apply(beat(102.0, phase="betting", refusing="wheel_not_heard", link="link down: silent"))
    assert view(t, 103.0)["annonce"] == "suspended"
    t.apply(beat(104.0, phase="no_more_bets", refusing="poussette"))
    assert view(t, 104.5)["annonce"] == "no_more_bets"
    t.apply(beat(105.0, phase="closed", refusing="table_closed", open=False))
    assert view(t, 105.5)["annonce"] == "closed"


def test_a_silent_table_or_one_without_a_verdict_is_never_faites_vos_jeux():
    t = Tiles()
    t.apply(beat(100.0, phase="betting", refusing=None))
    assert view(t, 100.0 + SILENT_S + 1)["annonce"] == "suspended"        # no heartbeat for 20 s
    old = Tiles()
    old.apply(beat(100.0, phase="betting"))                                # a table that sends no verdict
    assert view(old, 101.0)["annonce"] == "suspended"
