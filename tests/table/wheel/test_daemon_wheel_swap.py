"""A replaced or re-flashed wheel on an existing journal (issue 21, item 2): the daemon's shell
in-process, its port wired to the firmware's DeviceLink under a stand-in controller whose spin
counter and counter epoch the test sets. The journal keys the wheel's spins by its identity and
its counter's epoch; a wheel the table does not know closes the betting and is alerted until a
chef accepts it; its results are then settled as the table's next spins, never held."""

import time

import pytest

from host_tools.table.alerts import rules as A
from host_tools.table.game import flow as game
from host_tools.table.journal.store import Journal
from host_tools.table.daemon.service import Daemon
from host_tools.table.game.table import Refused, Table

from host_tools.sim.tablewheel import Wheel as KitWheel
from loopkit import KEY, Controller, swap, wait
OTHER_KEY = bytes(range(2, 34))


def spin(port, number):
    """One spin of the wheel on the cable: launch, rien ne va plus, result."""
    with port.lock:
        ctl = port.ctl
        ctl.spin += 1
        n = ctl.spin
        port.dev.emit({"ev": "launch", "t": 1, "spin": n})
        port.dev.emit({"ev": "rnvp", "t": 2, "spin": n})
        port.dev.emit({"ev": "result", "t": 3, "spin": n, "number": number})
        ctl.games = (ctl.games + [{"spin": n, "number": number}])[-10:]
        port.dev.emit({"ev": "status", "t": 4, "state": "idle", "spin": n, "last": number})


def _settled(d):
    return {r["spin"]: r["number"] for r in d.j.query("SELECT spin, number FROM settlements")}


def _bet(d, stake=100, number=17):
    return d.table.place({"player": "ann", "type": "plein", "numbers": [number], "stake": stake})


def _bet_placed(d, number=17):
    """A bet, once the table takes them; returned when the wheel's clock is past it (the croupier
    launches after the bet, else it would be a poussette)."""
    placed = []

    def place():        # on a busy machine the evidence may age between the look and the bet
        if d.table.state()["accepting_bets"]:
            try:
                placed.append(_bet(d, number=number))
            except Refused as e:
                assert e.code == "wheel_not_heard", e.code
        return bool(placed)
    assert wait(place), d.table.state()
    b = placed[0]
    at = d.j.one("SELECT wheel_ms FROM bets WHERE id=?", (b["id"],))["wheel_ms"]
    assert wait(lambda: time.monotonic() * 1000 > at + 20)
    return b


def _play(port, d, number, bet=True):
    """A bet once the table takes them, then a spin; returns the bet (settled when this returns)."""
    b = _bet_placed(d, number) if bet else None
    before = len(_settled(d))
    spin(port, number)
    assert wait(lambda: len(_settled(d)) > before), "the spin was not settled"
    return b


def _started(port, journal, key=KEY, **kw):
    """A daemon on `port`, table open, its session with a silent wheel over after 1.5 s: started."""
    d = Daemon(port, key, journal, open_table=True, silence_ms=1500, **kw)
    d.start()
    return d


def _first_daemon_plays(port, journal, number, then=None):
    """Wheel e1 on the cable and a daemon that plays one spin to `number`, then stops; `then(d)`
    before it stops, its answer returned."""
    swap(port, Controller(epoch="e1"))
    d = _started(port, journal)
    try:
        _play(port, d, number)
        return then(d) if then else None
    finally:
        d.stop()


@pytest.fixture
def rig(tmp_path, loopback):
    port = loopback(key=None)
    swap(port, Controller(epoch="e1"))
    d = _started(port, tmp_path / "j.sqlite")
    yield port, d
    d.stop()


def _reconnect(port, d, ctl, **kw):
    """Another wheel (or the same re-flashed) on the cable: the daemon hears it once its session
    with the old one has timed out."""
    sessions = d.link.sessions
    swap(port, ctl, **kw)
    assert wait(lambda: d.link.sessions > sessions and d.seen is not None and d.seen["epoch"] == ctl.count_epoch)


def test_a_reflashed_wheel_is_held_back_until_a_chef_accepts_it_then_its_results_are_settled(rig):
    port, d = rig
    _play(port, d, 17)
    _play(port, d, 5)
    assert _settled(d) == {1: 17, 2: 5}
    assert d.wheel_identity["state"] == "known" and d.wheel_identity["epoch"] == "e1"
    # the flash is wiped: the same board, its counter from 0 in a new epoch
    _reconnect(port, d, Controller(spin=0, epoch="e2"))
    ident = d.wheel_identity
    assert ident["state"] == "unknown" and "remis à zéro" in ident["pending"]["text"]
    # before: every bet was taken (201) and then held, its result "already settled: ignored"
    with pytest.raises(Refused) as e:
        _bet(d)
    assert e.value.code == "wheel_unknown"
    assert d.table.state()["refusing"] == "wheel_unknown"
    assert d.health_reasons() and "non reconnu" in d.health_reasons()[0]
    st = d.status()
    assert st["link"]["up"] is False and st["link"]["problem"]["code"] == "wheel_unknown"
    out = A.evaluate({"link_problem": d.problem()}, A.thresholds({}), time.time())
    assert [a["code"] for a in out] == ["wheel_unknown"] and "POST /wheel/accept" in out[0]["message"]
    # its spin meanwhile waits in its outbox: nothing of it is journaled
    spin(port, 23)
    time.sleep(1.0)
    assert _settled(d) == {1: 17, 2: 5}
    assert port.dev.outbox_len() >= 4
    # the chef accepts it: its spins are the table's from 3 on, and the waiting one is settled
    before, now = d.accept_wheel("chef Léa")
    assert before["epoch"] == "e1" and now["epoch"] == "e2" and now["base"] == 2
    assert wait(lambda: 3 in _settled(d)) and _settled(d)[3] == 23
    assert wait(lambda: port.dev.outbox_len() == 0)
    b = _play(port, d, 31)
    assert _settled(d)[4] == 31
    row = d.table.bet(b["id"])
    assert row["status"] == "settled" and row["spin"] == 4 and row["result"]["won"] == 3500
    assert d.j.query("SELECT COUNT(*) AS n FROM bets WHERE status='held'")[0]["n"] == 0
    assert d.health_reasons() == [] and d.wheel_identity["state"] == "known"
    ev = d.j.one("SELECT body FROM events WHERE spin=4 AND ev='result'")
    assert '"wheel_spin": 2' in ev["body"]


def test_a_swapped_controller_with_bets_on_a_called_spin_holds_them_for_the_supervisor(rig):
    port, d = rig
    _play(port, d, 17)
    b = _bet_placed(d)
    with port.lock:         # the call of spin 2, then the controller dies: its result never comes
        port.ctl.spin += 1
        port.dev.emit({"ev": "launch", "t": 1, "spin": 2})
        port.dev.emit({"ev": "rnvp", "t": 2, "spin": 2})
    assert wait(lambda: d.table.bet(b["id"])["status"] == "locked")
    _reconnect(port, d, Controller(spin=0, epoch="f1"), serial="s2")
    assert "autre carte" in d.wheel_identity["pending"]["text"]
    d.accept_wheel("chef Léa")
    assert d.table.bet(b["id"])["status"] == "held"
    b2 = _play(port, d, 8, bet=True)
    assert _settled(d) == {1: 17, 3: 8}      # spin 2 of the old controller: never settled, its bet held
    assert d.table.bet(b2["id"])["spin"] == 3


def test_the_same_wheel_after_a_daemon_restart_is_taken_without_asking(tmp_path, loopback):
    port = loopback(key=None)
    _first_daemon_plays(port, tmp_path / "j.sqlite", 17)
    d2 = _started(port, tmp_path / "j.sqlite")
    try:
        _play(port, d2, 9)
        assert _settled(d2) == {1: 17, 2: 9} and d2.wheel_identity["state"] == "known"
        assert len(d2.wheels.all()) == 1
    finally:
        d2.stop()


def test_another_key_on_the_same_board_needs_the_chef_and_keeps_the_counter(tmp_path, loopback):
    port = loopback(key=None)
    _first_daemon_plays(port, tmp_path / "j.sqlite", 17)
    ctl = port.ctl
    swap(port, ctl, key=OTHER_KEY)           # the key rotated on both ends
    d2 = _started(port, tmp_path / "j.sqlite", key=OTHER_KEY)
    try:
        assert wait(lambda: d2.pending is not None)
        assert "autre clé" in d2.pending["text"]
        _, now = d2.accept_wheel("chef Léa")
        assert now["base"] == 0             # the same counter: its spins keep their numbers
        _play(port, d2, 4)
        assert _settled(d2) == {1: 17, 2: 4}
    finally:
        d2.stop()


def test_a_journal_written_before_wheels_were_keyed_opens_keeps_its_history_and_knows_a_reset(tmp_path, loopback):
    path = tmp_path / "old.sqlite"
    t = Table(Journal(path), "T1")          # as the journal was written before: no `wheels` table
    t.set_open(True)
    w = KitWheel(t)
    for n in (1, 2, 3):
        w.spin(n, n + 10)
    t.j.close()
    port = loopback(key=None)
    swap(port, Controller(spin=3, epoch="e1"))   # the same wheel, its counter going on: taken as it is
    d = _started(port, path)
    try:
        assert wait(lambda: d.seen is not None)
        assert d.wheel_identity["state"] == "known" and d.wheel_identity["base"] == 0
        assert d.wheel_identity["accepted_by"] == "first contact"
        _play(port, d, 20)
        assert _settled(d) == {1: 11, 2: 12, 3: 13, 4: 20}
        # then re-flashed: counter from 0 in a new epoch
        _reconnect(port, d, Controller(spin=0, epoch="e9"))
        assert d.wheel_identity["state"] == "unknown"
        d.accept_wheel("chef Léa")
        _play(port, d, 0)
        assert _settled(d)[5] == 0
    finally:
        d.stop()


def test_a_result_the_table_does_not_settle_is_streamed_without_its_number(tmp_path):
    said = []
    t = Table(Journal(tmp_path / "j.sqlite"), "T1", publish=lambda kind, body: said.append((kind, body)))
    t.set_open(True)
    w = KitWheel(t)
    w.spin(1, 17)
    said.clear()
    w.send({"ev": "result", "spin": 1, "number": 32})       # an older firmware's counter gone back
    results = [b for (k, b) in said if k == "wheel" and b.get("ev") == "result"]
    assert results == [{"ev": "result", "spin": 1, "settled": False, "at_ms": results[0]["at_ms"]}]
    assert game.unsettled({"ev": "result", "spin": 2, "number": 5}) == {"ev": "result", "spin": 2, "settled": False}


def test_the_chef_accepts_a_waiting_wheel_through_the_api_and_it_is_audited(tmp_path):
    from apikit import Table as ApiTable
    t = ApiTable(tmp_path / "j.sqlite")
    try:
        r = t.call("chef", "POST", "/wheel/accept")
        assert r.status_code == 409 and r.json()["error"] == "no_wheel_to_accept"
        seen = {"wheel": "T1", "serial": "s2", "epoch": "e2", "key": t.daemon.key_fp, "spin": 0}
        t.daemon.pending = {"identity": seen, "differences": ["autre carte"], "text": "cylindre T1 non reconnu",
                            "last_spin": None}
        t.daemon.table.blocked = "wheel_unknown"
        assert t.call("croupier", "POST", "/wheel/accept").status_code == 403
        r = t.call("chef", "POST", "/wheel/accept", json={"serial": "s3"})
        assert r.status_code == 409 and "s2" in r.json()["message"]
        r = t.call("chef", "POST", "/wheel/accept", json={"serial": "s2", "epoch": "e2"})
        assert r.status_code == 200, r.text
        assert r.json()["wheel"]["serial"] == "s2" and r.json()["wheel"]["state"] == "known"
        row = [a for a in t.call("admin", "GET", "/audit").json() if a["action"] == "wheel_accept" and a["done"]][0]
        assert row["who"] == "chef-1" and row["after"]["serial"] == "s2" and row["target"] == "s2"
        assert t.daemon.table.blocked is None
    finally:
        t.close()


def test_a_simulated_wheel_with_a_flash_file_keeps_its_counter_epoch_between_runs(tmp_path):
    from cylindre.board.store import FlashStore
    from host_tools.sim.ptywheel import SimulatedBoard

    class Null:
        def write(self, data):
            pass

        def read(self):
            return b""

    def epoch(store):
        return SimulatedBoard(Null(), KEY, store=store).replay.ctl.count_epoch

    path = str(tmp_path / "flash.rec")
    first = epoch(FlashStore(path))
    assert first and epoch(FlashStore(path)) == first          # the same wheel
    assert epoch(None) != epoch(None)                           # kept in RAM: a new counter each run


def test_a_wheel_of_another_id_on_a_journal_that_knows_one_waits_for_the_chef_and_the_old_bets_are_held(tmp_path, loopback):
    """Before: `--wheel T2` on a journal of T1 was taken at first contact (betting at once, no
    alert) and T1's open bet stayed open, out of sight."""
    port = loopback(key=None)
    left = _first_daemon_plays(port, tmp_path / "j.sqlite", 17, then=_bet_placed)   # a T1 bet left on the layout
    swap(port, Controller(epoch="g1"), serial="s9", key=OTHER_KEY, wheel="T2")
    d2 = _started(port, tmp_path / "j.sqlite", key=OTHER_KEY, wheel="T2")
    try:
        assert wait(lambda: d2.pending is not None), d2.wheel_identity
        text = d2.pending["text"]
        assert "autre cylindre (T2, la table connaît T1)" in text and left["id"] in text
        with pytest.raises(Refused) as e:
            _bet(d2)
        assert e.value.code == "wheel_unknown"
        assert d2.health_reasons() and "non reconnu" in d2.health_reasons()[0]
        out = A.evaluate({"link_problem": d2.problem()}, A.thresholds({}), time.time())
        assert [a["code"] for a in out] == ["wheel_unknown"] and "POST /wheel/accept" in out[0]["message"]
        _, now = d2.accept_wheel("chef Léa")
        assert now["held"] == [left["id"]]
        row = d2.j.one("SELECT status, reason FROM bets WHERE id=?", (left["id"],))
        assert row["status"] == "held" and "chef Léa" in row["reason"]
        assert d2.wheel_identity["state"] == "known" and d2.health_reasons() == []
        b = _bet_placed(d2, 8)
        assert b["id"] != left["id"]                # bet ids are the journal's: T2's first is not B000001
        spin(port, 8)
        assert wait(lambda: d2.j.one("SELECT number FROM settlements WHERE wheel='T2' AND spin=1"))
        assert d2.table.bet(b["id"])["result"]["won"] == 3500
    finally:
        d2.stop()


def test_a_brand_new_journal_takes_its_first_wheel_of_any_id_without_asking(tmp_path, loopback):
    port = loopback(key=None)
    swap(port, Controller(epoch="g1"), wheel="T2")
    d = _started(port, tmp_path / "j.sqlite", wheel="T2")
    try:
        _play(port, d, 3)
        assert d.wheel_identity["state"] == "known" and d.wheel_identity["accepted_by"] == "first contact"
    finally:
        d.stop()
