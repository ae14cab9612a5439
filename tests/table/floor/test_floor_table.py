"""A table publishing to a real nats-server (host_tools/floor/natsrv.py): every journaled event reaches the
stream exactly once whatever the broker does, the cursor resumes after a restart, the bucket holds
the table's last state, and the floor's signed commands are carried out, audited or refused."""

import json
import time

import nats
import pytest
from nats.js.errors import NotFoundError

from host_tools.table.floor import outbox as O
from host_tools.table.floor.publisher import FloorLink
from host_tools.floor.link import command as C
from host_tools.floor.link import envelope as E
from host_tools.floor.link import stream as S

from apikit import Table
from host_tools.sim.tablewheel import Wheel
from natskit import nats_server, run  # noqa: F401  (the fixture)

SITE = "PARIS"
KEY = bytes(range(32))


def wait(cond, timeout=20.0, what="condition"):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def wanted_ids(host) -> list[int]:
    """The journal's rows the floor must receive (the outbox), by id."""
    return [r["id"] for r in host.j.query(f"SELECT id FROM event_log WHERE {O.ROW_FILTER} ORDER BY id")]


async def stream_events(url, table="T1"):
    """Every journaled event the stream holds for `table`: [(event id, kind, envelope)]."""
    nc = await nats.connect(url)
    js = nc.jetstream()
    info = await js.stream_info(S.STREAM)
    out = []
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        m = await js.get_msg(S.STREAM, seq)
        env = E.parse(m.data)
        assert E.parse_subject(m.subject) == (env["site"], env["table"], env["kind"])
        if env["table"] == table and env["kind"] != "heartbeat":
            assert m.headers[E.MSG_ID] == E.msg_id(table, env["event_id"], env["journal"])
            out.append((env["event_id"], env["kind"], env))
    await nc.close()
    return out


def drained(fl, host):
    return lambda: fl.cursor >= max(wanted_ids(host) or [0]) and fl.backlog == 0


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path / "j.sqlite")
    yield t
    t.close()


def test_exactly_once_across_a_broker_crash_mid_publishing(table, nats_server):
    fl = FloorLink(table.host, nats_server.url, SITE, heartbeat_s=0.3).start()
    try:
        for n in range(1, 11):
            table.feed.spin(n, n)
        wait(lambda: fl.cursor > 0, what="first acknowledgements")
        for n in range(11, 31):                 # a burst, and the broker dies in the middle of it
            table.feed.spin(n, n % 37)
        nats_server.kill()
        for n in range(31, 51):                 # the table plays on without its broker
            table.feed.spin(n, n % 37)
        wait(lambda: not fl.watch.up, what="the link seen down")
        health = table.call(None, "GET", "/health").json()
        assert any(r.startswith("floor: broker unreachable since") for r in health["reasons"])
        wait(lambda: fl.backlog > 0, what="the backlog counted while the broker is down")
        assert table.host.table.st["last_number"] == 50 % 37
        metrics = table.call("display", "GET", "/metrics").text
        assert "cylindre_floor_backlog" in metrics
        nats_server.start()                     # same port, same store
        for n in range(51, 61):
            table.feed.spin(n, n % 37)
        wait(drained(fl, table.host), timeout=30, what="the backlog drained")
    finally:
        fl.stop()
    got = run(stream_events(nats_server.url))
    ids = [eid for eid, _, _ in got]
    assert len(ids) == len(set(ids)), "an event doubled in the stream"
    assert sorted(ids) == wanted_ids(table.host), "an event lost"
    results = [env["body"]["number"] for _, kind, env in got if kind == "result"]
    assert sorted(results) == sorted(n % 37 for n in range(1, 61))
    assert sum(1 for _, kind, _ in got if kind == "settlement") == 60


def test_cursor_resumes_after_a_daemon_restart(tmp_path, nats_server):
    t = Table(tmp_path / "j.sqlite")
    fl = FloorLink(t.host, nats_server.url, SITE).start()
    for n in range(1, 6):
        t.feed.spin(n, n)
    wait(drained(fl, t.host))
    fl.stop()
    cursor = t.host.events.floor_cursor()
    assert cursor == fl.cursor > 0
    t.close()
    host = reopen(tmp_path / "j.sqlite")        # the daemon again, its floor link down: it plays on
    feed = Wheel(host.table, boot="boot1")
    for n in range(6, 11):
        feed.spin(n, n)
    host.j.close()
    host = reopen(tmp_path / "j.sqlite")
    try:
        fl = FloorLink(host, nats_server.url, SITE).start()
        assert fl.cursor == cursor
        wait(drained(fl, host))
        fl.stop()
        after = [i for i in wanted_ids(host) if i > cursor]
        assert fl.published == len(after) > 0   # from its cursor: nothing before it sent again
        ids = [eid for eid, _, _ in run(stream_events(nats_server.url))]
        assert sorted(ids) == wanted_ids(host) and len(ids) == len(set(ids))
        assert sorted(env["body"]["number"] for _, kind, env in run(stream_events(nats_server.url))
                      if kind == "result") == list(range(1, 11))
    finally:
        host.j.close()


def reopen(path):
    """A daemon's table host on an existing journal (no port, no wheel)."""
    from apikit import NoPort
    from host_tools.table.daemon.host import TableHost
    return TableHost.build(NoPort(), bytes(32), path)


def test_pruning_keeps_what_the_floor_has_not_acknowledged(table):
    ev = table.host.events
    ev.hold_for_floor, ev.keep = True, 5
    import host_tools.table.journal.events_log as L
    every, L.PRUNE_EVERY = L.PRUNE_EVERY, 10
    try:
        ev.advance_floor_cursor(3)
        for i in range(40):
            ev.publish("alert", {"id": i})
        assert ev.bounds()[0] == 4              # rows above the cursor all kept
        ev.advance_floor_cursor(30)
        for i in range(10):
            ev.publish("alert", {"id": i})
        assert ev.bounds()[0] == 31             # now pruned up to the cursor
        assert ev.advance_floor_cursor(10) == 30    # never down
        ev.hold_for_floor = False               # no floor: the journal keeps its last `keep` only
        for i in range(10):
            ev.publish("alert", {"id": i})
        oldest, newest = ev.bounds()
        assert oldest > 31 and newest - oldest < 15
    finally:
        L.PRUNE_EVERY = every


def test_the_bucket_holds_the_last_state(table, nats_server):
    fl = FloorLink(table.host, nats_server.url, SITE, heartbeat_s=0.2).start()
    try:
        for n, number in enumerate((7, 29, 0), 1):
            table.feed.spin(n, number)
        table.call("chef", "PUT", "/table/croupier", json={"croupier": "Léa"})

        async def state():
            nc = await nats.connect(nats_server.url)
            try:
                kv = await nc.jetstream().key_value(S.BUCKET)
                return json.loads((await kv.get(S.kv_key(SITE, "T1"))).value)
            except Exception:
                return None
            finally:
                await nc.close()

        def fresh():
            s = run(state())
            return s is not None and s["last_numbers"][:3] == [0, 29, 7] and s["croupier"] == "Léa"
        wait(fresh, what="the state in the bucket")
        table.call("chef", "POST", "/table/close")
        wait(lambda: run(state())["phase"] == "closed", what="the close in the bucket")
        s = run(state())
        assert s["open"] is False and s["table"] == "T1" and s["site"] == SITE
        assert s["limits"]["plein"]["max"] > 0 and s["backlog"] >= 0
    finally:
        fl.stop()
    kinds = {(kind, env["body"].get("what")) for _, kind, env in run(stream_events(nats_server.url))}
    assert ("table", "croupier") in kinds and ("table", "close") in kinds


async def ask(url, req, table="T1"):
    nc = await nats.connect(url)
    try:
        msg = await nc.request(E.cmd_subject(SITE, table), json.dumps(req).encode(), timeout=10)
        return json.loads(msg.data)
    finally:
        await nc.close()


def test_floor_commands_carried_out_audited_or_refused(table, nats_server):
    fl = FloorLink(table.host, nats_server.url, SITE, floor_key=KEY).start()
    try:
        wait(lambda: fl.watch.up, what="connected")
        wait(lambda: _subscribed(nats_server.url), what="the command subject")
        close = C.request("close", {}, "marie", "pit_boss", KEY)
        reply = run(ask(nats_server.url, close))
        assert reply == {"ok": True, "result": {"phase": "closed", "spin": None, "wheel_confirmed": True}}
        assert table.host.table.st["phase"] == "closed"
        row = table.host.audit.rows(limit=1, action="table_close")[0]
        assert (row["who"], row["role"], row["done"]) == ("floor:marie", "chef", True)
        assert run(ask(nats_server.url, close))["error"] == "replayed"
        forged = C.request("open", {}, "marie", "pit_boss", bytes(32))
        assert run(ask(nats_server.url, forged))["error"] == "bad_signature"
        stale = C.request("open", {}, "marie", "pit_boss", KEY, now=time.time() - 60)
        assert run(ask(nats_server.url, stale))["error"] == "stale"
        watcher = C.request("open", {}, "sam", "surveillance", KEY)
        assert run(ask(nats_server.url, watcher))["error"] == "forbidden"
        assert table.host.table.st["phase"] == "closed"     # none of those opened it
        refused = table.host.audit.rows(limit=10, action="table_open")
        assert [r["answer"]["refused"] for r in refused if not r["done"]] == ["forbidden", "stale", "bad_signature"]
        assert refused[-1]["who"] == "floor-unverified:marie"
        reply = run(ask(nats_server.url, C.request("open", {}, "marie", "pit_boss", KEY)))
        assert reply["ok"] and table.host.table.st["phase"] == "betting"
        limits = C.request("set_limits", {"plein": {"max": 50000}}, "marie", "pit_boss", KEY)
        assert run(ask(nats_server.url, limits))["error"] == "forbidden"
        limits = C.request("set_limits", {"plein": {"max": 50000}}, "paul", "director", KEY)
        assert run(ask(nats_server.url, limits))["result"]["limits"]["plein"]["max"] == 50000
        assert table.host.table.limits.to_json()["plein"]["max"] == 50000
        # two people for a regulatory setting
        req = run(ask(nats_server.url, C.request("request_setting", {"name": "min_laps", "value": 6}, "paul",
                                                 "director", KEY)))
        rid = req["result"]["request"]
        assert table.wheel.settings["min_laps"] == 4                     # not yet
        same = run(ask(nats_server.url, C.request("approve_setting", {"request": rid}, "paul", "director", KEY)))
        assert same["error"] == "same_user" and table.wheel.settings["min_laps"] == 4
        shout = run(ask(nats_server.url, C.request("approve_setting", {"request": rid}, "PAUL", "director", KEY)))
        assert shout["error"] == "same_user" and table.wheel.settings["min_laps"] == 4      # PAUL is paul
        bad = run(ask(nats_server.url, C.request("request_setting", {"name": "min_laps", "value": 99}, "paul",
                                                 "director", KEY)))
        assert bad["error"] == "bad_request"
        other = C.request("request_setting", {"name": "status_us", "value": 500000}, "paul", "director", KEY)
        assert run(ask(nats_server.url, other))["error"] == "bad_request"     # not a regulatory setting
        ok = run(ask(nats_server.url, C.request("approve_setting", {"request": rid}, "anne", "director", KEY)))
        assert ok["ok"] and ok["result"]["state"] == "applied" and table.wheel.settings["min_laps"] == 6
        again = run(ask(nats_server.url, C.request("approve_setting", {"request": rid}, "jo", "director", KEY)))
        assert again["error"] == "not_pending"
        # an alert acknowledged from the floor, with its comment
        table.host.pit.store.sync([{"code": "link_down", "key": "link_down", "level": "critical", "message": "liaison perdue",
                                    "value": 1, "threshold": 0}], time.time(), publish=table.host.events.publish)
        aid = table.host.pit.store.list()[0]["id"]
        ack = C.request("ack_alert", {"id": aid, "comment": "câble remis"}, "marie", "pit_boss", KEY)
        reply = run(ask(nats_server.url, ack))
        assert reply["ok"] and reply["result"]["alert"]["acked_by"] == "floor:marie", reply
        again = C.request("ack_alert", {"id": aid, "comment": "encore"}, "marie", "pit_boss", KEY)
        assert run(ask(nats_server.url, again))["error"] == "already_acknowledged"
        assert table.host.audit.rows(limit=1, action="alert_ack")[0]["who"] == "floor:marie"
        # a daemon restarted (its memory of ids gone) still refuses a command it took
        from host_tools.table.floor.commands import FloorCommands
        fresh = FloorCommands(table.host, KEY)
        assert fresh.handle(json.dumps(limits).encode())["error"] == "replayed"
        w = table.host.audit.rows(limit=1, action="wheel_setting")[0]
        assert (w["who"], w["before"], w["after"], w["answer"]["requested_by"]) == ("floor:anne", 4, 6, "floor:paul")
        assert table.host.audit.rows(limit=1, action="setting_request")[0]["who"] == "floor:paul"
        wait(drained(fl, table.host))
    finally:
        fl.stop()
    audit = [env["body"] for _, kind, env in run(stream_events(nats_server.url)) if kind == "audit"]
    assert {"floor:marie", "floor:paul", "floor:anne"} <= {a["who"] for a in audit}


def _subscribed(url):
    async def probe():
        nc = await nats.connect(url)
        try:
            await nc.request(E.cmd_subject(SITE, "T1"), b"{}", timeout=2)
            return True
        except Exception:
            return False
        finally:
            await nc.close()
    return run(probe())


def test_a_table_started_without_its_broker_plays_and_catches_up(table, nats_server):
    nats_server.stop()
    fl = FloorLink(table.host, nats_server.url, SITE).start()
    try:
        for n in range(1, 6):
            table.feed.spin(n, n)
        wait(lambda: fl.backlog == 10, what=f"the backlog counted (5 results, 5 settlements): {fl.status()}")
        assert "cannot reach" in fl.warnings()[0] and table.host.state()["floor"]["backlog"] == 10
        nats_server.start()
        wait(drained(fl, table.host), timeout=30, what="the catch-up")
        assert fl.warnings() == []
    finally:
        fl.stop()
    ids = [eid for eid, _, _ in run(stream_events(nats_server.url))]
    assert sorted(ids) == wanted_ids(table.host) and len(ids) == len(set(ids))


@pytest.mark.slow
def test_a_silent_network_cut_is_told_and_loses_nothing(table, nats_server):
    from natskit import Cable
    cable = Cable(nats_server.port)
    fl = FloorLink(table.host, cable.url, SITE, heartbeat_s=0.5).start()
    try:
        for n in range(1, 6):
            table.feed.spin(n, n)
        wait(drained(fl, table.host), what="the first coups acknowledged")
        cable.cut()                             # no FIN, no RST: the bytes stop
        for n in range(6, 16):
            table.feed.spin(n, n)
        wait(lambda: fl.warnings() != [], timeout=30, what="the cut told")
        assert fl.backlog > 0 and table.host.table.st["last_number"] == 15     # the table played on
        cable.mend()
        wait(drained(fl, table.host), timeout=40, what="the catch-up after the cut")
        wait(lambda: fl.warnings() == [], what="the link told up again")
    finally:
        fl.stop()
        cable.close()
    got = run(stream_events(nats_server.url))
    ids = [eid for eid, _, _ in got]
    assert sorted(ids) == wanted_ids(table.host) and len(ids) == len(set(ids))


def test_each_coup_carries_the_serial_of_the_wheel_that_played_it(table, nats_server):
    from host_tools.table.wheel.identity import WheelBook
    book = WheelBook(table.host.j, "T1")
    with table.host.j.tx():
        book.record({"serial": "BOARD-A", "epoch": "ea", "key": "k"}, 0, "chef-1")
    for n in (1, 2):
        table.feed.spin(n, n)
    with table.host.j.tx():                     # the wheel is swapped (accepted by the chef)
        book.record({"serial": "BOARD-B", "epoch": "eb", "key": "k"}, 2, "chef-1")
    for n in (3, 4):
        table.feed.spin(n, n)
    fl = FloorLink(table.host, nats_server.url, SITE, serial="CONFIGURED").start()
    try:                                        # published after the swap, each keeps its wheel's
        wait(drained(fl, table.host))
    finally:
        fl.stop()
    got = {env["body"]["spin"]: (env["serial"], env["body"]["serial"], env["body"]["epoch"])
           for _, kind, env in run(stream_events(nats_server.url)) if kind == "result"}
    assert got == {1: ("BOARD-A", "BOARD-A", "ea"), 2: ("BOARD-A", "BOARD-A", "ea"),
                   3: ("BOARD-B", "BOARD-B", "eb"), 4: ("BOARD-B", "BOARD-B", "eb")}


def test_the_floor_tile_says_what_the_table_says_when_its_wheel_falls_silent(table, nats_server):
    """The table's heartbeat carries its own verdict on a bet now (game/annonce.py) and goes out as
    soon as that changes; the floor's tile words it with the same rule: "faites vos jeux" while
    POST /bets would take a bet, "mises suspendues" once the wheel has not been heard for a second,
    never "faites vos jeux" beside a lost link."""
    from host_tools.floor.tiles import Tiles

    async def last_heartbeat():
        """The last heartbeat on the stream; None while there is none (or no stream yet: the
        FloorLink makes it once it has connected)."""
        nc = await nats.connect(nats_server.url)
        try:
            js = nc.jetstream()
            try:
                m = await js.get_last_msg(S.STREAM, E.subject(SITE, "T1", "heartbeat"))
            except NotFoundError:
                return None
            return E.parse(m.data)
        finally:
            await nc.close()

    def tile():
        env = run(last_heartbeat())
        if env is None:
            return {}
        tiles = Tiles()
        tiles.apply(env)
        return tiles.views({}, now=env["at"])[0]

    fl = FloorLink(table.host, nats_server.url, SITE, heartbeat_s=30).start()     # early beats only
    try:
        table.feed.spin(1, 17)                      # settled, then the wheel's fresh status
        said = table.call("display", "GET", "/state").json()["table"]
        assert (said["annonce"], said["accepting_bets"]) == ("betting", True) and said["open_for_ms"] > 0
        wait(lambda: tile().get("annonce") == "betting", what="the tile saying faites vos jeux")
        table.feed.t.clock.advance(1500)           # no word from the wheel since: a pulled cable
        said = table.call("display", "GET", "/state").json()["table"]
        assert (said["annonce"], said["refusing"]) == ("suspended", "wheel_not_heard")
        assert table.call("croupier", "POST", "/bets", json={"player": "a", "type": "rouge", "stake": 100}).json()["error"] \
            == "wheel_not_heard"
        wait(lambda: tile().get("annonce") == "suspended", timeout=5, what="the heartbeat sent when the words changed")
        assert tile()["refusing"] == "wheel_not_heard"
    finally:
        fl.stop()
