"""The table keeps the bets on the layout compiled in memory (tapis.py) and settles from them:
the same money to the cent as the rules settling the journal's bets afresh (`settle_spin` on
the bodies, the path the daemon took before), and a restart rebuilds the same layout."""

import json
import random
import sqlite3

import pytest

from cylindre.rules.limits import Limits
from cylindre.rules.settle import settle_spin
from host_tools.bench.settle import mixed_bets
from host_tools.table.journal.store import Journal
from host_tools.table.game.table import Refused, Table
from host_tools.table.game.tapis import Tapis
from host_tools.sim.tablewheel import Wheel

CHOICES = ["prison", "partage", {"move": "noir"}]


def _table(path, limits=None):
    t = Table(Journal(path), "T1", limits)
    t.set_open(True)
    return t


def _bets(n, seed):
    """The bench's mix (plain, even chances, calls, finales) with players, zero choices and replays."""
    rnd = random.Random(seed)
    out = []
    for b in mixed_bets(n, seed):
        del b["id"]
        b["player"] = "p%d" % rnd.randrange(20)
        if b["type"] in ("rouge", "noir", "pair", "impair", "manque", "passe") and rnd.random() < 0.3:
            b["zero_choice"] = rnd.choice(CHOICES)
        if b["type"] in ("voisins", "tiers") and rnd.random() < 0.3:
            b["replay"] = rnd.choice(["refaire", "completer", "tout"])
        out.append(b)
    return out


def _place_all(t, bets):
    with t.j.tx():                  # one transaction: the setup, not what is tested
        return [t.place(b)["id"] for b in bets]


def _layout_from_journal(t):
    fresh = Tapis()
    fresh.load(t.ledger.on_layout(), t.limits)
    return fresh


def _shelf_state(shelf):
    b = shelf.book
    return b.ids, [s.label for s in b.shapes], b.mults, b.excess, b.played, shelf.choices


def _same_layout(t):
    fresh = _layout_from_journal(t)
    assert t.tapis.snapshot() == fresh.snapshot()
    # the books kept as bets came and went hold the layout's bets, in order of id
    if t.tapis._open is not None:
        assert _shelf_state(t.tapis._open) == _shelf_state(fresh._open)
    if t.tapis.spin_book is not None and t.tapis.spin_book[1] is not None:
        spin, shelf = t.tapis.spin_book
        assert fresh.spin_book[0] == spin and _shelf_state(shelf) == _shelf_state(fresh.spin_book[1])
    for bid, e in t.tapis.bets.items():
        mine, theirs = e["compiled"], fresh.bets[bid]["compiled"]
        assert (mine is None) == (theirs is None)
        if mine is not None:
            assert (mine[0].label, mine[0].units, mine[1], mine[2]) == (theirs[0].label, theirs[0].units,
                                                                          theirs[1], theirs[2])


def _rows(path):
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    bets = [dict(r) for r in db.execute("SELECT id, status, spin, stake, reason FROM bets ORDER BY id")]
    sets = [dict(r) for r in db.execute("SELECT spin, number, staked, paid FROM settlements ORDER BY spin")]
    db.close()
    return bets, sets


@pytest.mark.parametrize("numbers", [[0, 17, 0, 32], [26, 0, 0, 5]])
def test_a_session_settles_to_the_cent_as_the_rules_settle_the_journals_bets(tmp_path, numbers):
    """Four spins of 300 mixed bets (zeros: prisoners and choices carried; calls replayed): each
    bet's result is the one `settle_spin` gives for that spin's bodies, prisoners and carry."""
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    prisoners, carry = [], []
    for spin, number in enumerate(numbers, 1):
        ids = _place_all(t, _bets(300, spin * 7 + number))
        w.send({"ev": "launch", "t": 1, "spin": spin})
        w.send({"ev": "rnvp", "t": 2, "spin": spin})
        _same_layout(t)
        assert t.tapis.book_of(spin).book.ids == ids          # the book the result settles, built as placed
        bodies = [t.ledger.body(bid) for bid in ids]
        choices = {}
        for b in bodies:
            zc = b.pop("zero_choice", None)
            if zc is not None:
                choices[b["id"]] = zc
        for p in prisoners:
            zc = (t.ledger.body(p["id"]) or {}).get("zero_choice")
            if zc is not None:
                choices[p["id"]] = zc
        want = settle_spin(number, bodies + carry, prisoners, choices or None, Limits())
        w.send({"ev": "result", "t": 3, "spin": spin, "number": number})
        got = t.recall(spin)["settlement"]
        assert got["results"] == want["results"]
        assert {k: got[k] for k in ("totals", "payment_order", "announcements", "prisoners", "carry")} == \
            {k: want[k] for k in ("totals", "payment_order", "announcements", "prisoners", "carry")}
        for r in want["results"]:
            if not r.get("carried"):
                assert t.bet(r["id"])["result"] == r
        prisoners, carry = want["prisoners"], want["carry"]
        assert len(t.tapis) == 0
        _same_layout(t)


def test_a_restart_mid_spin_rebuilds_the_same_layout_and_settles_the_same(tmp_path):
    a_path, b_path = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    t = _table(a_path)
    w = Wheel(t)
    _place_all(t, _bets(400, 1))
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    with sqlite3.connect(b_path) as copy:           # the journal as a kill would leave it
        t.j.db.backup(copy)
    again = Table(Journal(b_path), "T1")              # a restart: the layout rebuilt from the journal
    assert again.tapis.snapshot() == t.tapis.snapshot() and len(again.tapis) == 400
    assert all(e["spin"] == 1 for e in again.tapis.bets.values())
    w.send({"ev": "result", "t": 3, "spin": 1, "number": 0})
    w2 = Wheel(again)
    w2.seq = 2
    w2.send({"ev": "result", "t": 3, "spin": 1, "number": 0})
    assert _rows(a_path) == _rows(b_path)
    assert t.recall(1)["settlement"]["results"] == again.recall(1)["settlement"]["results"]


def test_the_layout_in_memory_follows_every_change_of_the_journal(tmp_path):
    """Bets placed, withdrawn, refused as poussettes, locked, unlocked by a void, held after a
    power cut, consented, settled: after each step the layout equals one rebuilt from the journal."""
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    rnd = random.Random(5)
    ids = _place_all(t, _bets(60, 3))
    for bid in rnd.sample(ids, 10):
        t.cancel(bid)
        _same_layout(t)
    straddle = t.place({"player": "x", "type": "cheval", "numbers": [0, 1], "stake": 500})
    _same_layout(t)
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    _same_layout(t)
    with pytest.raises(Refused):
        t.place({"player": "late", "type": "plein", "numbers": [3], "stake": 100})
    _same_layout(t)
    w.send({"ev": "void", "t": 3, "spin": 1, "reason": "no_drop"})
    _same_layout(t)
    assert all(e["spin"] is None for e in t.tapis.bets.values())
    if straddle["status"] == "awaiting_consent":
        t.consent(straddle["id"])
        _same_layout(t)
    w.spin(2, 17)
    _same_layout(t)
    assert len(t.tapis) == 0
    _place_all(t, _bets(40, 4))
    w.send({"ev": "launch", "t": 1, "spin": 3})
    w.send({"ev": "rnvp", "t": 2, "spin": 3})
    w.reboot("b1", 2, [(1, 5), (2, 17)])            # spin 3 ended without a result: its bets play again
    _same_layout(t)
    assert len(t.tapis) == 40 and all(e["spin"] is None for e in t.tapis.bets.values())
    w.send({"ev": "launch", "t": 1, "spin": 3})
    w.send({"ev": "rnvp", "t": 2, "spin": 3})
    w.reboot("b2", 0, [])                            # its counter went back: the result is lost, held
    _same_layout(t)
    assert len(t.tapis) == 0 and len(t.bets(status="held")) == 40
    held = t.bets(status="held")[0]["id"]
    t.resolve_held(held, "play")
    _same_layout(t)
    assert list(t.tapis.bets) == [held]


def test_new_limits_compile_the_layout_again_and_a_bet_they_refuse_is_returned(tmp_path):
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    small = t.place({"player": "a", "type": "plein", "numbers": [17], "stake": 100})
    big = t.place({"player": "b", "type": "plein", "numbers": [17], "stake": 1000})
    t.limits = Limits().updated({"plein": {"min": 500, "max": 100000}})
    assert t.tapis.bets[small["id"]]["compiled"] is None
    _same_layout(t)
    w.spin(1, 17)
    assert t.bet(small["id"])["status"] == "refused" and "invalid at settlement" in t.bet(small["id"])["reason"]
    assert t.bet(big["id"])["result"]["won"] == 35000


def test_a_rolled_back_placement_leaves_the_layout_as_the_journal_has_it(tmp_path):
    t = _table(tmp_path / "j.sqlite")
    Wheel(t)
    t.place({"player": "a", "type": "plein", "numbers": [17], "stake": 100})
    with pytest.raises(RuntimeError):
        with t.lock, t.j.tx():
            t.place({"player": "b", "type": "rouge", "stake": 100})
            raise RuntimeError("the disk is full")
    t.reload()
    _same_layout(t)
    assert len(t.tapis) == 1


def test_a_spins_results_are_one_row_and_the_settlement_row_refers_to_it(tmp_path):
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    ids = _place_all(t, _bets(200, 9))
    w.spin(1, 17)
    head = t.j.one("SELECT result FROM settlements WHERE spin=1")["result"]
    assert json.loads(head)["results_in"] == "results" and "results" not in json.loads(head)
    assert not any(t.ledger.row(bid)["result"] for bid in ids)           # no copy on the bet rows
    assert t.j.one("SELECT COUNT(*) AS n FROM spin_results WHERE spin=1")["n"] == 1
    assert t.j.one("SELECT n FROM spin_results WHERE spin=1")["n"] == len(ids)
    rows = t.j.query("SELECT bet, pos, type, label, staked, returned, lost, imprisoned, won FROM all_results "
                     "WHERE spin=1 ORDER BY pos")
    assert [r["bet"] for r in rows] == ids                                 # the view shows them as rows
    assert all(r["staked"] == r["returned"] + r["lost"] + r["imprisoned"] for r in rows)
    results = t.recall(1)["settlement"]["results"]
    assert [(r["type"], r["label"]) for r in rows] == [(r["type"], r["label"]) for r in results]
    # a (type, label) pair is written once in result_labels, each row names it by its id
    assert t.j.one("SELECT format FROM spin_results WHERE spin=1")["format"] == 5
    pays = t.recall(1)["settlement"]["payment_order"]           # (format 5 names a payment's kind and combination so too)
    assert t.j.one("SELECT COUNT(*) AS n FROM result_labels")["n"] == len({(r["type"], r["label"]) for r in results}
                                                                           | {(p["kind"], p["combination"]) for p in pays})
    assert [(r["staked"], r["won"]) for r in results] == [(r["staked"], r["won"]) for r in rows]
    view = t.j.query("SELECT * FROM all_results WHERE spin=1 ORDER BY pos")      # every field, `more` too
    assert [{**{k: v for k, v in r.items() if k not in ("wheel", "spin", "pos", "bet", "more")}, "id": r["bet"],
             "paid": r["won"] + r["returned"], **json.loads(r["more"] or "{}")} for r in view] == results
    assert all(t.bet(r["id"])["result"] == r for r in results)            # one bet read alone
    assert {b["id"]: b["result"] for b in t.bets(spin=1, limit=1000)} == {r["id"]: r for r in results}


def test_a_bet_imprisoned_reads_its_own_spins_result_not_the_carried_one(tmp_path):
    """En prison at zero: the next spin's results carry it (same id, `carried`); the bet's own
    result stays the one of the spin it was placed on, read alone or in a list."""
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    ids = _place_all(t, [{"type": "rouge", "stake": 1000, "player": "ana", "zero_choice": "prison"},
                         {"type": "plein", "numbers": [0], "stake": 100, "player": "bob"}])
    w.spin(1, 0)
    first = {r["id"]: r for r in t.recall(1)["settlement"]["results"]}
    assert first[ids[0]]["imprisoned"] == 1000
    _place_all(t, [{"type": "plein", "numbers": [3], "stake": 100, "player": "bob"}])
    w.spin(2, 3)
    second = t.recall(2)["settlement"]["results"]
    assert [r["id"] for r in second if r.get("carried")] == [ids[0]]
    assert t.bet(ids[0])["result"] == first[ids[0]]
    assert {b["id"]: b["result"] for b in t.bets(spin=1)}[ids[0]] == first[ids[0]]
    assert [r["id"] for r in t.recall(1)["settlement"]["results"]] == ids
    assert all(t.bet(bid)["status"] == "settled" for bid in ids)


OLD_SETTLEMENTS = """CREATE TABLE settlements (
    wheel TEXT NOT NULL, spin INTEGER NOT NULL, number INTEGER NOT NULL, at REAL NOT NULL,
    staked INTEGER NOT NULL, paid INTEGER NOT NULL, result TEXT NOT NULL,
    PRIMARY KEY (wheel, spin))"""


def _old_journal(path, schema):
    """A journal as a daemon of `schema` (1 to 3) left it: its `settlements` without `pending`."""
    j = Journal(path)
    with j.tx() as db:
        db.execute("DROP INDEX settlements_pending")
        db.execute("DROP TABLE settlements")
        db.execute(OLD_SETTLEMENTS)
        db.execute("UPDATE meta SET value=? WHERE key='schema'", (str(schema),))
        if schema < 3:
            db.execute("DROP VIEW all_results")
            db.execute("DROP TABLE spin_results")
        if schema < 2:
            db.execute("DROP TABLE results")
    return j


def test_a_journal_of_schema_1_opens_and_its_settlements_read_back_whole(tmp_path):
    """Before schema 2 a settlement kept every result in its JSON and each bet its own copy."""
    path = tmp_path / "old.sqlite"
    j = _old_journal(path, 1)
    with j.tx() as db:
        res = {"id": "B000001", "type": "plein", "label": "plein 17", "staked": 100, "outcome": "won", "won": 3500,
               "returned": 100, "lost": 0, "imprisoned": 0, "paid": 3600}
        db.execute("INSERT INTO bets (id, wheel, player, at, body, stake, status, spin, result) VALUES "
                   "('B000001', 'T1', 'ana', 0, '{\"type\": \"plein\", \"numbers\": [17], \"stake\": 100}', 100, "
                   "'settled', 1, ?)", (json.dumps(res),))
        db.execute("INSERT INTO settlements VALUES ('T1', 1, 17, 0, 100, 3600, ?)",
                   (json.dumps({"number": 17, "results": [res], "payment_order": [], "totals": {}}),))
    j.close()
    t = Table(Journal(path), "T1")
    assert t.j.one("SELECT value FROM meta WHERE key='schema'")["value"] == "5"
    assert t.recall(1)["settlement"]["results"] == [res]
    assert t.bet("B000001")["result"] == res


def test_a_journal_of_schema_2_opens_and_its_results_rows_read_back(tmp_path):
    """Schema 2 wrote one `results` row per result; schema 3 reads them as they are, beside the
    spins it settles itself (one `spin_results` row each), and the view shows both as rows."""
    path = tmp_path / "old2.sqlite"
    j = _old_journal(path, 2)
    with j.tx() as db:
        db.execute("INSERT INTO bets (id, wheel, player, at, body, stake, status, spin) VALUES "
                   "('OLD0001', 'T1', 'ana', 0, '{\"type\": \"plein\", \"numbers\": [17], \"stake\": 100}', 100, "
                   "'settled', 1)")
        db.execute("INSERT INTO results VALUES ('T1', 1, 0, 'OLD0001', 'plein', 'plein 17', 100, 'won', 3500, 100, 0, 0, NULL)")
        db.execute("INSERT INTO settlements VALUES ('T1', 1, 17, 0, 100, 3600, ?)",
                   (json.dumps({"number": 17, "payments": [], "totals": {}, "results_in": "results"}),))
    j.close()
    t = Table(Journal(path), "T1")
    assert t.j.one("SELECT value FROM meta WHERE key='schema'")["value"] == "5"
    res = {"id": "OLD0001", "type": "plein", "label": "plein 17", "staked": 100, "outcome": "won", "won": 3500,
           "returned": 100, "lost": 0, "imprisoned": 0, "paid": 3600}
    assert t.recall(1)["settlement"]["results"] == [res]
    assert t.bet("OLD0001")["result"] == res
    t.set_open(True)
    w = Wheel(t)
    ids = _place_all(t, _bets(30, 4))
    w.spin(2, 17)
    assert [r["id"] for r in t.recall(2)["settlement"]["results"]] == ids
    assert all(t.bet(bid)["result"]["id"] == bid for bid in ids)
    assert [r["spin"] for r in t.j.query("SELECT spin FROM all_results ORDER BY spin, pos")] == [1] + [2] * len(ids)


def test_a_spin_with_no_bet_and_one_with_only_a_prisoner_are_written_in_columns(tmp_path):
    """Format 5 holds every spin: none at all, and a prisoner carried alone and released."""
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    w.spin(1, 5)
    assert t.recall(1)["settlement"]["results"] == [] and t.j.query("SELECT * FROM all_results WHERE spin=1") == []
    bid = _place_all(t, [{"type": "rouge", "stake": 1000, "player": "ana"}])[0]
    w.spin(2, 0)
    w.spin(3, 1)
    assert [t.j.one("SELECT format FROM spin_results WHERE spin=?", (s,))["format"] for s in (1, 2, 3)] == [5, 5, 5]
    (r,) = t.recall(3)["settlement"]["results"]
    assert (r["id"], r["outcome"], r["returned"], r["carried"]) == (bid, "released", 1000, True)
    (v,) = t.j.query("SELECT bet, outcome, returned, more FROM all_results WHERE spin=3")
    assert (v["bet"], v["outcome"], v["returned"], json.loads(v["more"])["carried"]) == (bid, "released", 1000, True)
    assert t.bet(bid)["result"]["outcome"] == "imprisoned"


def test_a_zeros_prisoners_share_their_words_and_read_back_as_the_rules_settle_them(tmp_path):
    """300 even chances imprisoned at zero, then carried to a zero again and to a number: each
    result reads back as `settle_spin` gives it, and the prisoners that say the same (their
    prison, their carried mark) share one row of `result_mores` instead of one row each."""
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    chances = ["rouge", "noir", "pair", "impair", "manque", "passe"]
    bets = [{"type": chances[k % 6], "stake": 100 * (1 + k % 5), "player": "p%d" % (k % 7)} for k in range(300)]
    bets[7]["zero_choice"] = "partage"
    bets[8]["zero_choice"] = {"move": "noir"}
    _place_all(t, bets)
    prisoners = []
    for spin, number in enumerate((0, 0, 17), 1):
        if spin > 1:
            _place_all(t, [{"type": "plein", "numbers": [number], "stake": 100, "player": "bob"}])
        ids = [b["id"] for b in t.bets(status="locked", limit=1000)] if spin > 1 else None
        w.spin(spin, number)
        got = t.recall(spin)["settlement"]
        bodies = [dict(t.ledger.body(r["id"]), id=r["id"]) for r in got["results"] if not r.get("carried")]
        choices = {b["id"]: b.pop("zero_choice") for b in bodies if "zero_choice" in b}
        choices.update({p["id"]: t.ledger.body(p["id"])["zero_choice"] for p in prisoners
                        if "zero_choice" in (t.ledger.body(p["id"]) or {})})
        want = settle_spin(number, bodies, prisoners, choices or None, Limits())
        assert got["results"] == want["results"], spin
        assert got["totals"] == want["totals"]
        texts = [r["more"] for r in t.j.query("SELECT more FROM result_mores WHERE spin=?", (spin,))]
        assert len(texts) == len(set(texts)) < 10, (spin, len(texts))      # 300 prisoners, a few rows
        prisoners = want["prisoners"]
        assert ids is None or set(ids) <= {r["id"] for r in got["results"]}
    assert sum(1 for r in got["results"] if r.get("carried")) > 100


def test_a_result_whose_write_fails_leaves_the_table_whole_and_its_resend_settles(tmp_path, monkeypatch):
    """The settlement's columns cannot be written (the journal refuses, the disk is full): the
    step rolls back, the table reads its state and layout again from the journal (which needs
    the shapes' registry free to grow) and the wheel's resend of the result settles it."""
    from host_tools.table.game import resultats
    t = _table(tmp_path / "j.sqlite")
    w = Wheel(t)
    ids = _place_all(t, _bets(200, 4))
    w.send({"ev": "launch", "t": 1, "spin": 1})
    w.send({"ev": "rnvp", "t": 2, "spin": 1})
    real = resultats._payments

    def full_disk(*a):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(resultats, "_payments", full_disk)
    with pytest.raises(OSError, match="No space"):
        w.send({"ev": "result", "t": 3, "spin": 1, "number": 0})
    assert t.j.one("SELECT COUNT(*) AS n FROM settlements")["n"] == 0
    assert sorted(b["id"] for b in t.bets(status="locked", limit=1000)) == sorted(ids)
    monkeypatch.setattr(resultats, "_payments", real)
    assert w.send({"ev": "result", "t": 3, "spin": 1, "number": 0}, seq=w.seq) is True
    assert t.j.one("SELECT COUNT(*) AS n FROM settlements WHERE spin=1")["n"] == 1
    assert all(t.bet(bid)["status"] == "settled" for bid in ids)


def test_a_spin_the_columns_cannot_hold_is_written_as_rows_and_reads_back_alike(tmp_path, monkeypatch):
    """`pack` answers None for what format 5 cannot write (an id that is not plain ASCII, say, in a
    journal from before): the ledger writes format 4 rows (`result_rows`), which read back as the
    columns would have, a zero's prisoners and the spin that carries them included."""
    from host_tools.table.game import resultats
    runs = {}
    for fmt in (5, 4):
        if fmt == 4:
            monkeypatch.setattr(resultats, "pack", lambda *a: None)
        t = _table(tmp_path / ("j%d.sqlite" % fmt))
        w = Wheel(t)
        got = []
        for spin, number in enumerate((0, 17, 26), 1):
            _place_all(t, _bets(120, spin))
            w.spin(spin, number)
            got.append(t.recall(spin)["settlement"])
        assert {r["format"] for r in t.j.query("SELECT format FROM spin_results")} == {fmt}
        runs[fmt] = got
    for five, four in zip(runs[5], runs[4]):
        assert four["results"] == five["results"] and four["payment_order"] == five["payment_order"]
        assert four["totals"] == five["totals"]
