"""Per-table NATS credentials on a real nats-server: a table publishes and reads only its own
subjects; probed with another table's credentials, as a reviewer will (docs/floor/security.md)."""

import asyncio
import json
import stat
import time

import nats
import pytest

from host_tools.floor import natsrv
from host_tools.table.floor.publisher import FloorLink, load_creds
from host_tools.floor.link import command as C
from host_tools.floor.link import creds as K
from host_tools.floor.link import envelope as E
from host_tools.floor.link import stream as S

from apikit import Table
from natskit import run

SITE = "PARIS"


@pytest.fixture
def secured(tmp_path):
    made = K.generate(SITE, ["T1", "T2"], tmp_path / "creds")
    srv = natsrv.Server(tmp_path / "js", config_extra=made["accounts"].read_text())
    srv.start()
    try:
        yield srv, made
    finally:
        srv.close()


def creds_of(made, who):
    return json.loads((made["floor"] if who == "floor" else made["tables"][who]).read_text())


async def connect(srv, c, errors=None):
    async def on_error(e):
        if errors is not None:
            errors.append(str(e))
    return await nats.connect(srv.url, user=c["user"], password=c["password"], error_cb=on_error,
                              inbox_prefix=c.get("inbox_prefix", "_INBOX"), allow_reconnect=False)


def test_files_are_private_and_kept_on_a_second_run(tmp_path):
    made = K.generate(SITE, ["T1"], tmp_path / "c")
    files = [made["accounts"], made["floor"], made["key"], *made["tables"].values()]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)
    assert stat.S_IMODE((tmp_path / "c").stat().st_mode) == 0o700
    first = json.loads(made["tables"]["T1"].read_text())
    again = K.generate(SITE, ["T1", "T2"], tmp_path / "c")
    assert json.loads(again["tables"]["T1"].read_text())["password"] == first["password"]
    assert first["password"] not in again["accounts"].read_text()      # only its bcrypt hash
    assert load_creds(made["tables"]["T1"])["inbox_prefix"] == "_INBOX_PARIS_T1"
    made["tables"]["T1"].chmod(0o644)
    with pytest.raises(ValueError, match="chmod 600"):
        load_creds(made["tables"]["T1"])
    with pytest.raises(ValueError):
        K.generate(SITE, ["T.1"], tmp_path / "d")


def test_a_tables_credentials_reach_only_its_own_subjects(secured):
    srv, made = secured
    t1, t2, floor = creds_of(made, "T1"), creds_of(made, "T2"), creds_of(made, "floor")

    async def go():
        fnc = await connect(srv, floor)
        fjs = fnc.jetstream()
        await S.ensure_stream(fjs)              # the floor makes the stream and the bucket
        await S.ensure_bucket(fjs)
        # T1's own: publish its events and its state, read its commands
        errs1 = []
        nc1 = await connect(srv, t1, errs1)
        js1 = nc1.jetstream(timeout=1.0)
        raw = E.build(SITE, "T1", None, 1, "result", time.time(), {"spin": 1, "number": 5})
        ack = await js1.publish(E.subject(SITE, "T1", "result"), raw, headers={E.MSG_ID: E.msg_id("T1", 1)})
        assert ack.stream == S.STREAM
        kv1 = await js1.key_value(S.BUCKET)
        await kv1.put(S.kv_key(SITE, "T1"), b"{}")
        # ... not T2's: publish as T2 (event, state), read T2's commands or replies, or everything
        forged = E.build(SITE, "T2", None, 1, "result", time.time(), {"spin": 1, "number": 0})
        with pytest.raises(Exception):
            await js1.publish(E.subject(SITE, "T2", "result"), forged, headers={E.MSG_ID: E.msg_id("T2", 1)})
        with pytest.raises(Exception):
            await kv1.put(S.kv_key(SITE, "T2"), b'{"phase": "closed"}')
        with pytest.raises(Exception):          # nor a command, to itself or any table
            await nc1.request(E.cmd_subject(SITE, "T2"), b"{}", timeout=0.5)
        with pytest.raises(Exception):          # nor the stream's own API beyond its information
            await js1.delete_stream(S.STREAM)
        spied = []

        async def spy(m):
            spied.append(m.subject)
        for subject in (E.cmd_subject(SITE, "T2"), "cylindre.>", "_INBOX_PARIS_T2.>", "$KV.cylindre_tables.>"):
            await nc1.subscribe(subject, cb=spy)
        await nc1.flush()
        # T2 publishes and is sent a command; T1 sees none of it
        nc2 = await connect(srv, t2)
        js2 = nc2.jetstream(timeout=1.0)
        async def answer(m):
            await m.respond(b'{"ok": true}')
        await nc2.subscribe(E.cmd_subject(SITE, "T2"), cb=answer)
        await nc2.flush()
        mine = E.build(SITE, "T2", None, 1, "result", time.time(), {"spin": 1, "number": 9})
        await js2.publish(E.subject(SITE, "T2", "result"), mine, headers={E.MSG_ID: E.msg_id("T2", 1)})
        reply = await fnc.request(E.cmd_subject(SITE, "T2"), b"{}", timeout=2)
        assert json.loads(reply.data) == {"ok": True}
        await nc1.flush()
        await asyncio.sleep(0.3)                # (a message to the spy would be on its way by now)
        assert spied == []
        violations = " ".join(errs1).lower()      # (nats-py lowercases the server's -ERR)
        for denied in ("cylindre.PARIS.T2.result", "$KV.cylindre_tables.PARIS.T2", "cylindre.PARIS.T2.cmd",
                       "_INBOX_PARIS_T2.>", "cylindre.>"):
            assert denied.lower() in violations, denied
        # the stream holds T1's event and T2's own, nothing T1 forged as T2
        info = await fjs.stream_info(S.STREAM)
        bodies = [E.parse((await fjs.get_msg(S.STREAM, s)).data) for s in range(1, info.state.last_seq + 1)]
        assert sorted((b["table"], b["body"]["number"]) for b in bodies) == [("T1", 5), ("T2", 9)]
        for nc in (nc1, nc2, fnc):
            await nc.close()
    run(go())


def test_a_daemon_with_its_credentials_publishes_and_takes_commands(secured, tmp_path):
    srv, made = secured
    floor = creds_of(made, "floor")
    key = bytes.fromhex(made["key"].read_text().strip())

    async def prepare():
        nc = await connect(srv, floor)
        await S.ensure_stream(nc.jetstream())
        await S.ensure_bucket(nc.jetstream())
        await nc.close()
    run(prepare())
    t = Table(tmp_path / "j.sqlite")
    fl = FloorLink(t.host, srv.url, SITE, creds=load_creds(made["tables"]["T1"]), floor_key=key).start()
    try:
        for n in range(1, 4):
            t.feed.spin(n, n)
        end = time.monotonic() + 20
        while fl.backlog or fl.cursor == 0:
            assert time.monotonic() < end, fl.status()
            time.sleep(0.02)

        async def command():
            nc = await connect(srv, floor)
            req = C.request("close", {}, "marie", "pit_boss", key)
            for _ in range(100):                # until the table's responder is subscribed
                try:
                    return json.loads((await nc.request(E.cmd_subject(SITE, "T1"), json.dumps(req).encode(),
                                                        timeout=10)).data)
                except nats.errors.NoRespondersError:
                    await asyncio.sleep(0.05)
        reply = run(command())
        assert reply["ok"] and t.host.table.st["phase"] == "closed"
    finally:
        fl.stop()
        t.close()


def test_the_floor_service_connects_with_the_credentials_floor_creds_wrote(secured, tmp_path):
    """`cylindre floor --nats-creds floor.creds.json` (docs/floor/security.md): the file `floor-creds` writes
    (JSON user/password, 0600) is what the floor logs in with; it reads every table."""
    import argparse

    from host_tools.floor.cli import connect_options
    from host_tools.floor.ingest import Link
    from host_tools.floor.store import Store

    from floorkit import wait
    srv, made = secured
    opts = connect_options(argparse.Namespace(nats_creds=str(made["floor"]), nats_ca=None))
    store = Store(str(tmp_path / "floor.sqlite"))
    link = Link(srv.url, store, connect=opts).start()
    try:
        wait(lambda: link.connected, "the floor logged in with floor.creds.json", 20)
    finally:
        link.stop()
        store.close()
    made["floor"].chmod(0o644)
    with pytest.raises(SystemExit, match="chmod 600"):
        connect_options(argparse.Namespace(nats_creds=str(made["floor"]), nats_ca=None))
