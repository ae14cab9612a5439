"""Every table into the floor's store: a durable JetStream pull consumer on `cylindre.>`.

A batch is fetched, parsed, stored in one transaction (idempotent on (table, journal, event_id)), and only
then acknowledged: a floor killed between its commit and its acks gets the batch again from the
broker and stores nothing twice; killed before its commit, it loses nothing, the broker redelivers.
A message that is no valid envelope is kept in `rejects` and acknowledged (it would come back
forever otherwise). A stopped broker only pauses the loop: the client reconnects by itself and the
durable consumer resumes where the floor's acks left it.

The NATS client runs on its own asyncio loop in a thread (`Link`); the web app reaches it through
`Link.call` for the commands it sends to tables.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time

from host_tools.floor.link.stream import BUCKET, STREAM

from .store import BadEnvelope, parse

log = logging.getLogger("cylindre.floor")

SUBJECTS, DURABLE = "cylindre.>", "floor"
BATCH = 1000
ACK_WAIT_S = 5.0


async def ensure_stream(js):
    """The stream and the bucket, created if missing (floor/link/stream.py, shared with the tables)."""
    from host_tools.floor.link.stream import ensure_bucket, ensure_stream as shared
    await shared(js)
    await ensure_bucket(js)


class Link:
    """The floor's NATS connection, consumer and command requests, on a loop of its own."""

    def __init__(self, url: str, store, on_batch=None, on_state=None, on_link=None, batch=BATCH, connect=None):
        self.url, self.store, self.batch = url, store, batch
        self.connect_opts = dict(connect or {})      # credentials, TLS (cli.py)
        self.on_batch = on_batch or (lambda fresh, beats: None)
        self.on_state = on_state or (lambda site, table, st, at: None)
        self.on_link = on_link or (lambda up, why: None)
        self.loop = asyncio.new_event_loop()
        self.nc = self.js = None
        self.connected = False
        self.down_since: float | None = time.time()
        self.stored = self.duplicates = self.rejected = 0
        self.store_error: str | None = None
        self._stop = asyncio.Event()
        self._thread = threading.Thread(target=self._run, name="floor-link", daemon=True)
        self._ready = threading.Event()

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self):
        self._thread.start()
        return self

    def stop(self, timeout=10):
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(timeout)

    def call(self, coro, timeout=10):
        """Run a coroutine on the link's loop from another thread; its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._main())
        finally:
            self.loop.close()

    async def _main(self):
        import nats

        async def disconnected():
            self._set_link(False, "broker unreachable")

        async def reconnected():
            self._set_link(True, "reconnected")

        async def error(e):                             # the link's state says it; no traceback per retry
            log.debug("floor link: %s", e)

        while not self._stop.is_set():
            try:
                self.nc = await nats.connect(self.url, name="cylindre-floor", max_reconnect_attempts=-1,
                                             reconnect_time_wait=0.5, connect_timeout=2,
                                             # a silent cut (no FIN: a pulled cable, a frozen broker) told in
                                             # ~10 s as at the table, not after nats-py's 2 x 120 s pings
                                             ping_interval=5, max_outstanding_pings=2,
                                             disconnected_cb=disconnected, reconnected_cb=reconnected, error_cb=error,
                                             **self.connect_opts)
                break
            except Exception as e:                       # noqa: BLE001 - the broker is not up yet
                self._set_link(False, f"broker unreachable: {e}")
                await self._sleep(1.0)
        if self._stop.is_set():
            return
        self.js = self.nc.jetstream()
        sub = None
        while not self._stop.is_set():
            try:
                if sub is None:
                    await ensure_stream(self.js)
                    await self._load_states()
                    sub = await self._subscribe()
                    self._set_link(True, "consuming")
                await self._drain(sub)
            except Exception as e:                       # noqa: BLE001 - broker gone, stream lost: retry
                log.warning("floor link: %s", e)
                self._set_link(False, str(e) or type(e).__name__)
                sub = None
                await self._sleep(1.0)
        try:
            await asyncio.wait_for(self.nc.close(), 3)
        except Exception:                                # noqa: BLE001 - closing anyway
            pass

    async def _sleep(self, s):
        try:
            await asyncio.wait_for(self._stop.wait(), s)
        except asyncio.TimeoutError:
            pass

    def _set_link(self, up, why):
        if up != self.connected:
            self.connected = up
            self.down_since = None if up else time.time()
            self.on_link(up, why)

    async def _subscribe(self):
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
        # ack_wait: what a floor killed mid-batch leaves unacknowledged comes back after it. Short, so a
        # restarted floor catches up at once; a commit slower than that only gets a batch delivered
        # twice, which the store takes once.
        cfg = ConsumerConfig(durable_name=DURABLE, ack_policy=AckPolicy.EXPLICIT, deliver_policy=DeliverPolicy.ALL,
                             ack_wait=ACK_WAIT_S, max_ack_pending=50_000, filter_subject=SUBJECTS)
        await self.js.add_consumer(STREAM, cfg)          # creates it, or updates an existing one's settings
        return await self.js.pull_subscribe_bind(DURABLE, STREAM)

    async def _load_states(self):
        """The last state of every table from the key-value bucket: the page has the floor at once."""
        try:
            kv = await self.js.key_value(BUCKET)
            keys = await kv.keys()
        except Exception:                                # noqa: BLE001 - no bucket, or no key yet
            return
        for key in keys:
            try:
                entry = await kv.get(key)
                st = json.loads(entry.value)
                site, table = key.split(".", 1)
            except Exception:                            # noqa: BLE001 - a key that is no table state
                continue
            if isinstance(st, dict):
                at = st.get("last_heard") or st.get("heard_at") or st.get("clock") or time.time()
                self.store.remember_state(site, table, st, float(at))
                self.on_state(site, table, st, float(at))

    async def _fetch(self, sub) -> list:
        """What the broker has, at once. nats-py's fetch(n, timeout) holds the messages it got until
        it has n or the timeout passes, which would hold a quiet floor's events up to the timeout:
        so a short batch fetch, and when nothing is there, a wait for one message, then the rest."""
        import nats.errors
        timeouts = (nats.errors.TimeoutError, asyncio.TimeoutError)
        try:
            return await sub.fetch(self.batch, timeout=0.05)
        except timeouts:
            pass
        try:
            msgs = await sub.fetch(1, timeout=1.0)
        except timeouts:
            return []
        try:
            msgs += await sub.fetch(self.batch - 1, timeout=0.02)
        except timeouts:
            pass
        return msgs

    async def _drain(self, sub):
        msgs = await self._fetch(sub)
        if not msgs:
            return
        envs, beats, rejects = [], [], []
        for m in msgs:
            try:
                env = parse(m.data, m.subject)
            except BadEnvelope as e:
                rejects.append((m.subject, str(e), m.data))
                continue
            (beats if env["kind"] == "heartbeat" else envs).append(env)
        try:
            fresh = await self.loop.run_in_executor(None, self.store.ingest, envs + beats, rejects)
        except Exception as e:                           # noqa: BLE001 - the store refused: nothing acked
            self.store_error = f"{type(e).__name__}: {e}"
            log.error("floor store: %s; the batch goes back to the broker", self.store_error)
            for m in msgs:
                await m.nak(delay=1.0)                   # redelivered in a second, not after ack_wait
            await self._sleep(1.0)
            return
        self.store_error = None
        for m in msgs:                                   # only now: the batch is committed
            await m.ack()
        await self.nc.flush()
        self.stored += len(fresh)
        self.duplicates += len(envs) - len(fresh)
        self.rejected += len(rejects)
        self.on_batch(fresh, beats)

    # -- commands -------------------------------------------------------------------------------
    async def request(self, subject: str, payload: bytes, timeout: float = 5.0) -> bytes:
        if self.nc is None or not self.nc.is_connected:
            raise ConnectionError("broker unreachable")
        msg = await self.nc.request(subject, payload, timeout=timeout)
        return msg.data
