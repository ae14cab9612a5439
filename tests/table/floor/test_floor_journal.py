"""A table's journal replaced by an empty one, or restored from a backup, loses nothing at the floor
and doubles nothing: each opening of a journal numbers its events under a new journal identity
(host_tools/table/journal/identity.py), carried in the envelope, the Nats-Msg-Id and the floor's key; and a
floor store from before identities is migrated on both engines."""

import sqlite3
import time

from host_tools.table.floor import outbox as O
from host_tools.table.journal import identity as JI
from host_tools.table.floor.publisher import FloorLink
from host_tools.floor.ingest import Link
from host_tools.floor.store import Store, parse
from host_tools.floor.link import envelope as E

from apikit import Table
from host_tools.sim.tablewheel import Wheel
from floorkit import db_url, postgres  # noqa: F401 - fixtures
from natskit import nats_server  # noqa: F401 - fixture

SITE = "PARIS"


def wait(cond, timeout=30.0, what="condition"):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def reopen(path):
    from apikit import NoPort
    from host_tools.table.daemon.host import TableHost
    return TableHost.build(NoPort(), bytes(32), path)


def outbox(host):
    return [r["id"] for r in host.j.query(f"SELECT id FROM event_log WHERE {O.ROW_FILTER} ORDER BY id")]


def publish(host, url, play, keep=False):
    """The table's floor link up while `play()` runs, until everything is acknowledged (`keep`: the
    link is returned still up, a host has one)."""
    fl = FloorLink(host, url, SITE).start()
    try:
        play()
        wait(lambda: fl.cursor >= max(outbox(host) or [0]) and fl.backlog == 0, what="the backlog drained")
    finally:
        if not keep:
            fl.stop()
    return fl


def drained(fl, host, play):
    play()
    wait(lambda: fl.cursor >= max(outbox(host) or [0]) and fl.backlog == 0, what="the backlog drained")


def numbers(store):
    return sorted(e["body"]["number"] for e in store.events(kinds=("result",), table="T1"))


def test_a_journal_opening_names_its_new_events_and_keeps_the_old_ones_names(tmp_path):
    db = sqlite3.connect(tmp_path / "j.sqlite")
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("CREATE TABLE event_log (id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL, kind TEXT, data TEXT)")
    db.executemany("INSERT INTO event_log (at, kind, data) VALUES (0, 'alert', '{}')", [()] * 3)
    a = JI.open_journal(db)                         # a journal from before identities: its 3 events keep ""
    db.execute("INSERT INTO event_log (at, kind, data) VALUES (0, 'alert', '{}')")
    db.execute("DELETE FROM event_log")             # pruned: ids are not given again (AUTOINCREMENT)
    b = JI.open_journal(db)
    c = JI.open_journal(db)                         # opened again with no event since: b is never used
    ids = JI.Identities.read(db)
    assert len({a, b, c}) == 3 and len(a) == 16
    assert [ids.of(i) for i in (1, 3, 4, 5, 99)] == ["", "", a, c, c]
    assert ids.current == c == db.execute("SELECT value FROM meta WHERE key='journal_id'").fetchone()[0]
    fresh = sqlite3.connect(tmp_path / "new.sqlite")
    fresh.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    fresh.execute("CREATE TABLE event_log (id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL, kind TEXT, data TEXT)")
    d = JI.open_journal(fresh)                      # a new journal: no legacy identity at all
    assert JI.Identities.read(fresh).of(1) == d != ""


def test_a_table_started_on_a_new_empty_journal_reaches_the_floor(tmp_path, nats_server):
    store = Store(str(tmp_path / "floor.sqlite"))
    link = Link(nats_server.url, store).start()
    try:
        old = Table(tmp_path / "old.sqlite")
        publish(old.host, nats_server.url, lambda: [old.feed.spin(n, n) for n in range(1, 6)])
        old.close()
        new = Table(tmp_path / "new.sqlite")        # the host replaced, its journal not copied
        publish(new.host, nats_server.url, lambda: [new.feed.spin(n, 10 + n) for n in range(1, 4)])
        new.close()
        wait(lambda: len(numbers(store)) >= 8, what="the new journal's results at the floor")
    finally:
        link.stop()
    assert numbers(store) == [1, 2, 3, 4, 5, 11, 12, 13]
    journals = {e["journal"] for e in store.events(table="T1")}
    assert len(journals) == 2 and "" not in journals


def test_a_journal_restored_from_a_backup_loses_and_doubles_nothing(tmp_path, nats_server):
    path, backup = tmp_path / "j.sqlite", tmp_path / "backup.sqlite"
    store = Store(str(tmp_path / "floor.sqlite"))
    link = Link(nats_server.url, store).start()
    try:
        t = Table(path)
        fl = publish(t.host, nats_server.url, lambda: [t.feed.spin(n, n) for n in range(1, 4)], keep=True)
        with sqlite3.connect(backup) as dst:        # the night's backup, taken before its last acks
            t.host.j.db.backup(dst)
            dst.execute("DELETE FROM meta WHERE key='floor_cursor'")
        drained(fl, t.host, lambda: [t.feed.spin(n, n) for n in range(4, 7)])
        fl.stop()
        t.close()
        wait(lambda: len(numbers(store)) >= 6, what="the first life's results")
        path.unlink()
        for extra in ("-wal", "-shm"):
            (tmp_path / ("j.sqlite" + extra)).unlink(missing_ok=True)
        with sqlite3.connect(backup) as src, sqlite3.connect(path) as dst:
            src.backup(dst)                          # the journal restored: it resends its events 1 to 3 ...
        host = reopen(path)
        feed = Wheel(host.table, boot="boot1")
        publish(host, nats_server.url, lambda: [feed.spin(n, 20 + n) for n in range(4, 6)])   # ... and plays on
        host.events.close()
        host.d.stop_flag.set()
        host.j.close()
        wait(lambda: len(numbers(store)) >= 8, what="the restored journal's new results at the floor")
        time.sleep(0.3)                              # (a doubled resend would arrive with them)
    finally:
        link.stop()
    assert numbers(store) == [1, 2, 3, 4, 5, 6, 24, 25]
    keys = [(e["journal"], e["event_id"]) for e in store.events(table="T1")]
    assert len(keys) == len(set(keys))


def test_a_floor_store_from_before_journal_identities_is_migrated(db_url):
    old = Store(db_url)                              # the store as it was: events keyed (table_id, event_id)
    with old.tx() as c:
        c.execute("DROP TABLE events")
        c.execute("CREATE TABLE events (table_id TEXT NOT NULL, event_id BIGINT NOT NULL, site TEXT NOT NULL, "
                  "kind TEXT NOT NULL, serial TEXT, at DOUBLE PRECISION NOT NULL, body TEXT NOT NULL, "
                  "received_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (table_id, event_id))")
        c.execute("CREATE INDEX events_kind_at ON events (kind, at)")
        for i in (1, 2):
            c.execute("INSERT INTO events VALUES ('T1', ?, 'S', 'result', 'W1', ?, ?, 0)", (i, float(i), '{"number": %d}' % i))
    old.close()
    s = Store(db_url)
    try:
        assert [(e["journal"], e["event_id"]) for e in s.events()] == [("", 1), ("", 2)]

        def env(eid, journal, number):
            return parse(E.build("S", "T1", "W1", eid, "result", 10.0 + number, {"number": number}, journal))
        legacy = parse(E.build("S", "T1", "W1", 2, "result", 2.0, {"number": 2}).replace(b',"journal":""', b""))
        assert legacy["journal"] == ""               # a table from before identities: its resend is dropped
        assert s.ingest([legacy, env(1, "0123456789abcdef", 7), env(1, "0123456789abcdef", 7)]) \
            == [env(1, "0123456789abcdef", 7)]
        assert sorted(e["body"]["number"] for e in s.events()) == [1, 2, 7]
        s.close()
        s = Store(db_url)                            # opened again: nothing to migrate, nothing changed
        assert s.count() == 3
    finally:
        s.close()


def test_alerts_of_two_journals_stay_apart_and_an_ack_goes_to_its_own(tmp_path):
    import json

    from host_tools.table.floor.commands import FloorCommands
    from host_tools.floor.store import table_alert
    from host_tools.floor.link import command as C
    key = bytes(range(32))
    s = Store(str(tmp_path / "floor.sqlite"))
    try:
        for journal, message in (("aaaaaaaaaaaaaaaa", "liaison perdue"), ("bbbbbbbbbbbbbbbb", "lancer trop court")):
            s.ingest([parse(E.build("S", "T1", None, 9, "alert", 1.0, {"id": 1, "code": "x", "message": message,
                                                                        "level": "warning"}, journal))])
        rows = sorted(s.query("SELECT alert_id, message FROM alerts"))
        assert rows == [("1@aaaaaaaaaaaaaaaa", "liaison perdue"), ("1@bbbbbbbbbbbbbbbb", "lancer trop court")]
        assert table_alert(rows[0][0]) == {"id": "1", "journal": "aaaaaaaaaaaaaaaa"} and table_alert("7") == {"id": "7"}
    finally:
        s.close()
    t = Table(tmp_path / "j.sqlite")
    try:
        t.host.pit.store.sync([{"code": "link_down", "key": "link_down", "level": "critical", "message": "liaison perdue",
                                "value": 1, "threshold": 0}], time.time(), publish=t.host.events.publish)
        aid = t.host.pit.store.list()[0]["id"]
        fc = FloorCommands(t.host, key)

        def ack(journal):
            req = C.request("ack_alert", {"id": str(aid), "journal": journal, "comment": "vu"}, "marie", "pit_boss", key)
            return fc.handle(json.dumps(req).encode())
        assert ack("cccccccccccccccc")["error"] == "not_found"      # the same number, another journal's alert
        assert t.host.pit.store.list()[0]["acked_at"] is None
        assert ack(t.host.events.journal_id)["ok"]
    finally:
        t.close()
