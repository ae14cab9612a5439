"""Every table into the floor's store: a durable JetStream pull consumer on `cylindre.>`.

A batch is fetched, parsed, stored in one transaction (idempotent on (table, journal, event_id)), and only
then acknowledged: a floor killed between its commit and its acks gets the batch again from the
broker and stores nothing twice; killed before its commit, it loses nothing, the broker redelivers.

No message stops the others. One that is no valid envelope is set aside at once (a dead letter: its
bytes and the reason, with an alert naming its table) and acknowledged. When a batch's commit
fails, its messages are stored one by one: those the store takes are acknowledged; one it refuses
while it takes a probe write (the store is up: the message is at fault) is tried again (a NAK,
redelivered in a second) until its `MAX_TRIES`-th delivery, then set aside; while the store
refuses everything (a full disk, PostgreSQL gone) nothing is set aside and everything comes back.
A stopped broker only pauses the loop: the client reconnects by itself and the durable consumer
resumes where the floor's acks left it. `url` may name a cluster's nodes, comma-separated.

The live path: the floor also hears each result, void and heartbeat as a table publishes it (a
plain subscription to their subjects, which the broker delivers whether or not the stream has a
leader) and stores it at once, checked and keyed as the stream's copy, which then comes as a
duplicate. When a cluster loses the stream's leader, JetStream takes no write until the others
elect one (4 to 9 s in nats-server); the coups played meanwhile reach the floor's page all the same,
and the stream brings them for certain once it takes them. The live path only adds: what it misses
(a message it could not store, one dropped while the floor was slow) the stream still brings.

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

from .store import BadEnvelope, DeadLetter, parse

log = logging.getLogger("cylindre.floor")

SUBJECTS, DURABLE = "cylindre.>", "floor"
BATCH = 1000
ACK_WAIT_S = 5.0
MAX_TRIES = 3            # deliveries of a message the store refuses while it takes others, then aside
LIVE_KINDS = ("result", "void", "heartbeat")
LIVE_MAX = 20_000        # messages held for the live path at most (beyond: left to the stream)
LIVE_GATHER_S = 0.05     # the live path commits what came within this (one fsync, not one a message)
LOG_EVERY_S = 30.0       # at most one line this often while the broker cannot be reached


def servers(url: str) -> list[str]:
    """A broker's URL or a cluster's nodes, comma-separated, as the client's list of servers."""
    out = [u.strip() for u in str(url).split(",") if u.strip()]
    if not out:
        raise ValueError("no broker URL")
    return out


async def ensure_stream(js, replicas=None, update=False) -> list[str]:
    """The stream and the bucket, created if missing (floor/link/stream.py, shared with the tables),
    never lowered nor changed unless asked; the warnings on what was left as it is."""
    from host_tools.floor.link.stream import ensure_bucket, ensure_stream as shared
    st = await shared(js, replicas, update)
    kv = await ensure_bucket(js, replicas, update)
    return st.warnings() + kv.ensured.warnings()


class Link:
    """The floor's NATS connection, consumer and command requests, on a loop of its own."""

    def __init__(self, url: str, store, on_batch=None, on_state=None, on_link=None, batch=BATCH, connect=None,
                 replicas=None, update_broker=False, on_dead=None, live=True):
        self.url, self.store, self.batch = url, store, batch
        self.servers = servers(url)
        self.replicas, self.update_broker = replicas, update_broker
        self.broker_warnings: list[str] = []
        self.on_dead = on_dead or (lambda dead: None)
        self.connect_opts = dict(connect or {})      # credentials, TLS (cli.py)
        self.on_batch = on_batch or (lambda fresh, beats: None)
        self.on_state = on_state or (lambda site, table, st, at: None)
        self.on_link = on_link or (lambda up, why: None)
        self.loop = asyncio.new_event_loop()
        self.nc = self.js = None
        self.connected = False
        self.down_since: float | None = time.time()
        self.stored = self.duplicates = self.rejected = 0
        self.live, self.live_stored = live, 0
        self.durable_at = 0.0          # when the stream last delivered (the live path alone does not count)
        self._logged_at = 0.0
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

        async def error(e):                             # no traceback per retry: a line every 30 s at most
            nc = self.nc
            if nc is None or not nc.is_connected:
                self._set_link(False, f"broker unreachable: {type(e).__name__} {e}"[:300])
                now = time.monotonic()
                if now - self._logged_at >= LOG_EVERY_S:
                    self._logged_at = now
                    log.warning("floor link: cannot reach %s: %s %s", self.url, type(e).__name__, e)
                    return
            log.debug("floor link: %s", e)

        while not self._stop.is_set():
            try:
                self.nc = await nats.connect(self.servers, name="cylindre-floor", max_reconnect_attempts=-1,
                                             reconnect_time_wait=0.5, connect_timeout=2,
                                             # a silent cut (no FIN: a pulled cable, a frozen broker) told in
                                             # ~10 s as at the table, not after nats-py's 2 x 120 s pings
                                             ping_interval=5, max_outstanding_pings=2,
                                             disconnected_cb=disconnected, reconnected_cb=reconnected, error_cb=error,
                                             **self.connect_opts)
                break
            except Exception as e:                       # noqa: BLE001 - the broker is not up yet
                self._set_link(False, f"broker unreachable: {type(e).__name__} {e}"[:300])
                now = time.monotonic()
                if now - self._logged_at >= LOG_EVERY_S:     # said, not once a second
                    self._logged_at = now
                    log.warning("floor link: cannot connect to %s: %s %s", self.url, type(e).__name__, e)
                await self._sleep(1.0)
        if self._stop.is_set():
            return
        self.js = self.nc.jetstream()
        live = asyncio.create_task(self._live()) if self.live else None
        sub = None
        while not self._stop.is_set():
            try:
                if sub is None:
                    self.broker_warnings = await ensure_stream(self.js, self.replicas, self.update_broker)
                    for w in self.broker_warnings:
                        log.warning("floor: broker configuration: %s", w)
                    await self._load_states()
                    sub = await self._subscribe()
                    self._set_link(True, "consuming")
                await self._drain(sub)
            except Exception as e:                       # noqa: BLE001 - broker gone, stream lost: retry
                log.warning("floor link: %s", e)
                self._set_link(False, str(e) or type(e).__name__)
                sub = None
                await self._sleep(1.0)
        if live is not None:
            live.cancel()
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

    async def _live(self):
        """The live path (see the module's docstring): what the tables publish, stored as it comes."""
        from host_tools.floor.link.envelope import PREFIX
        held, wake = [], asyncio.Event()

        async def heard(msg):
            if len(held) < LIVE_MAX:
                held.append(msg)
                wake.set()
        try:
            for kind in LIVE_KINDS:
                await self.nc.subscribe(f"{PREFIX}.*.*.{kind}", cb=heard)
        except Exception as e:                           # noqa: BLE001 - the stream alone, then
            log.warning("floor: no live path (%s); the stream alone", e)
            return
        while not self._stop.is_set():
            await wake.wait()
            await asyncio.sleep(LIVE_GATHER_S)
            wake.clear()
            batch, held[:] = held[:], []
            envs, beats = [], []
            for m in batch:
                try:
                    env = parse(m.data, m.subject)
                except BadEnvelope:                      # the stream's copy is set aside, once
                    continue
                (beats if env["kind"] == "heartbeat" else envs).append(env)
            try:
                fresh = await self.loop.run_in_executor(None, self.store.ingest, envs + beats, [])
            except Exception as e:                       # noqa: BLE001 - the stream's copy will do
                log.debug("floor: live batch not stored (%s)", e)
                continue
            self.live_stored += len(fresh)
            self.stored += len(fresh)
            try:
                self.on_batch(fresh, beats)
            except Exception:                            # noqa: BLE001
                log.exception("floor: a batch's callback failed")

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
        self.durable_at = time.time()
        envs, beats, bad, good = [], [], [], []
        for m in msgs:
            try:
                env = parse(m.data, m.subject)
            except BadEnvelope as e:
                bad.append((m, DeadLetter(m.subject, str(e), m.data, _seq(m), _tries(m))))
                continue
            (beats if env["kind"] == "heartbeat" else envs).append(env)
            good.append((m, env))
        dead = [d for _, d in bad]
        try:
            fresh = await self.loop.run_in_executor(None, self.store.ingest, envs + beats, dead)
        except Exception as e:                           # noqa: BLE001 - one by one: whose fault?
            log.warning("floor store: a batch of %d refused (%s: %s); storing it one by one", len(msgs),
                        type(e).__name__, str(e)[:300])
            fresh, dead = await self._one_by_one(good, bad)
            if fresh is None:
                return
        else:
            self.store_error = None
            for m in msgs:                               # only now: the batch is committed
                await m.ack()
            await self.nc.flush()
        self._counted(fresh, envs, dead)
        try:
            self.on_batch(fresh, beats)
            if dead:
                self.on_dead(dead)
        except Exception:                                # noqa: BLE001 - the page's fold of a batch: never the ingest
            log.exception("floor: a batch's callback failed")

    async def _one_by_one(self, good, bad):
        """Store each message of a refused batch alone; NAK what the store refused, and set aside
        what it refused on its `MAX_TRIES`-th delivery while taking the others. (None, None) when
        the store takes nothing (it is down): everything comes back, nothing is set aside."""
        run = self.loop.run_in_executor
        everything = [m for m, _ in good] + [m for m, _ in bad]
        fresh, acks, naks = [], [m for m, _ in bad], []
        aside = [d for _, d in bad]
        for m, env in good:
            try:
                fresh += await run(None, self.store.ingest, [env], [])
                acks.append(m)
                continue
            except Exception as e:                       # noqa: BLE001 - the store or the message?
                error = f"{type(e).__name__}: {e}"[:500]
            try:
                await run(None, self.store.ping)
            except Exception as e:                       # noqa: BLE001 - the store is down: all back
                return await self._store_down(everything, f"{type(e).__name__}: {e}")
            if _tries(m) >= MAX_TRIES:
                aside.append(DeadLetter(m.subject, f"the store refused it at {_tries(m)} deliveries: {error}",
                                        m.data, _seq(m), _tries(m)))
                acks.append(m)
            else:
                naks.append(m)
        if aside:
            try:
                await run(None, self.store.ingest, [], aside)
            except Exception as e:                       # noqa: BLE001 - not even set aside: all back
                return await self._store_down(everything, f"{type(e).__name__}: {e}")
        self.store_error = None
        for m in acks:
            await m.ack()
        for m in naks:
            await m.nak(delay=1.0)                       # back in a second, alone if it fails again
        await self.nc.flush()
        return fresh, aside

    async def _store_down(self, msgs, error):
        self.store_error = error[:500]
        log.error("floor store: %s; the batch goes back to the broker", self.store_error)
        for m in msgs:
            await m.nak(delay=1.0)                       # redelivered in a second, not after ack_wait
        await self._sleep(1.0)
        return None, None

    def _counted(self, fresh, envs, dead):
        self.stored += len(fresh)
        self.duplicates += max(0, len(envs) - len(fresh) - len(dead))
        self.rejected += len(dead)

    # -- commands -------------------------------------------------------------------------------
    async def request(self, subject: str, payload: bytes, timeout: float = 5.0) -> bytes:
        if self.nc is None or not self.nc.is_connected:
            raise ConnectionError("broker unreachable")
        msg = await self.nc.request(subject, payload, timeout=timeout)
        return msg.data


def _tries(m) -> int:
    """How many times the broker has delivered the message (1 the first time)."""
    try:
        return int(m.metadata.num_delivered or 1)
    except Exception:                                    # noqa: BLE001 - no JetStream metadata
        return 1


def _seq(m):
    try:
        return int(m.metadata.sequence.stream)
    except Exception:                                    # noqa: BLE001
        return None
