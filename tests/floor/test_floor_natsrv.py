"""natsrv starts a real nats-server; the stream and the bucket are made idempotently on it, with the
settings that keep one table's credentials from the others' data; an existing stream is never
lowered nor changed unless asked."""

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
        made = await S.ensure_stream(js)
        again = await S.ensure_stream(js, update=False)
        assert made.created and not again.created and not again.changed and again.differences == {}
        info = again.info
        assert info.config.name == "CYLINDRE" and info.config.duplicate_window == S.DUPLICATE_WINDOW_S
        assert (info.config.allow_rollup_hdrs, info.config.deny_delete, info.config.deny_purge) == (False, True, True)
        kv = await S.ensure_bucket(js)
        kv2 = await S.ensure_bucket(js)
        assert kv.ensured.created and kv2.ensured.differences == {}
        assert not kv2.ensured.info.config.allow_rollup_hdrs
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


def test_an_existing_stream_is_never_lowered_nor_changed_unless_asked(nats_server):
    """A stream raised to 3 replicas stays at 3 whatever the floor's default; a configuration the
    floor did not make (here: the bucket as nats-py makes it, rollup allowed) is reported, and
    applied only with update (`cylindre floor --update-broker`)."""
    from nats.js.api import KeyValueConfig

    async def go():
        nc = await nats.connect(nats_server.url)
        js = nc.jetstream()
        await js.add_stream(S.stream_config(1).evolve(deny_purge=False, max_age=86400))
        await js.create_key_value(KeyValueConfig(bucket=S.BUCKET, history=1))
        st = await S.ensure_stream(js)
        kv = await S.ensure_bucket(js)
        assert not st.changed and set(st.differences) == {"deny_purge", "max_age"}
        assert kv.ensured.differences["allow_rollup_hdrs"] == (True, False)
        assert any("rollup" in w and "--update-broker" in w for w in kv.ensured.warnings())
        assert (await js.stream_info(S.STREAM)).config.max_age == 86400         # left as it was
        st = await S.ensure_stream(js, update=True)
        kv = await S.ensure_bucket(js, update=True)
        assert st.changed and st.differences == {} and kv.ensured.differences == {}
        assert not (await js.stream_info(S.KV_STREAM)).config.allow_rollup_hdrs
        await nc.close()
    run(go())


def test_replicas_are_raised_when_asked_and_never_lowered():
    """On one node a stream cannot have 3 replicas: what ensure_stream asks the broker is read from
    the configuration it would send, with the stream's own replicas standing in."""
    import asyncio

    class Info:
        def __init__(self, cfg):
            self.config = cfg

    class JS:
        def __init__(self, replicas):
            self.cfg = S.stream_config(replicas)
            self.updates = []

        async def stream_info(self, name):
            return Info(self.cfg)

        async def update_stream(self, cfg):
            self.updates.append(cfg.num_replicas)
            self.cfg = cfg
            return Info(cfg)

    for have, asked, want, updates in ((3, None, 3, []), (3, 1, 3, []), (1, 3, 3, [3]), (3, 5, 5, [5])):
        js = JS(have)
        got = asyncio.run(S.ensure_stream(js, asked))
        assert (got.replicas, js.updates) == (want, updates), (have, asked)
