"""natsrv starts a real nats-server; the stream and the bucket are made idempotently on it."""

import nats

from host_tools.floor import natsrv
from host_tools.floor.link import envelope as E
from host_tools.floor.link import stream as S
from natskit import nats_server, run  # noqa: F401  (the fixture)


def test_binary_is_found():
    assert natsrv.binary().endswith("nats-server")


def test_stream_and_bucket_idempotent_and_dedup_across_restart(nats_server):
    async def go():
        nc = await nats.connect(nats_server.url)
        js = nc.jetstream()
        info = await S.ensure_stream(js)
        again = await S.ensure_stream(js, update=False)
        assert info.config.name == again.config.name == "CYLINDRE"
        assert info.config.duplicate_window == S.DUPLICATE_WINDOW_S
        kv = await S.ensure_bucket(js)
        kv2 = await S.ensure_bucket(js)
        await kv.put(S.kv_key("S", "T1"), b'{"phase": "betting"}')
        assert (await kv2.get("S.T1")).value == b'{"phase": "betting"}'
        raw = E.build("S", "T1", None, 1, "result", 1.0, {"spin": 1, "number": 0})
        a = await js.publish(E.subject("S", "T1", "result"), raw, headers={E.MSG_ID: E.msg_id("T1", 1)})
        b = await js.publish(E.subject("S", "T1", "result"), raw, headers={E.MSG_ID: E.msg_id("T1", 1)})
        assert not a.duplicate and b.duplicate and a.seq == b.seq
        await nc.close()
        nats_server.restart()                       # same port, same store
        nc = await nats.connect(nats_server.url)
        js = nc.jetstream()
        c = await js.publish(E.subject("S", "T1", "result"), raw, headers={E.MSG_ID: E.msg_id("T1", 1)})
        assert c.duplicate                          # the window outlives a broker restart
        assert (await js.stream_info("CYLINDRE")).state.messages == 1
        # a command is not caught by the stream: only a responder answers it
        try:
            await nc.request(E.cmd_subject("S", "T1"), b"{}", timeout=0.5)
            raise AssertionError("a command was answered with nobody listening")
        except nats.errors.NoRespondersError:
            pass
        assert (await js.stream_info("CYLINDRE")).state.messages == 1
        await nc.close()
    run(go())
