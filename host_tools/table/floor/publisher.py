"""The table's link to the casino floor over NATS JetStream, the imperative shell (docs/floor/table-side.md).

One thread runs an asyncio loop with nats-py, apart from the table: the table never waits for
the floor. The loop
- publishes the journal's outbox rows (floor/outbox.py says which and how, rows.py reads them) in order from the
  cursor, each with `Nats-Msg-Id: <table>:<journal>:<event id>[:<tag>]` (the journal identity the
  row was journaled under, journal/identity.py; the tag an HMAC under the table's own NATS
  password, so no other table can make its ids) and `prev`, the row published before it under the
  same journal; moves the cursor only over rows the broker acknowledged, with none unacknowledged
  before them; it wakes when a row commits;
- publishes a heartbeat every 5 s (the last event the broker acknowledged, the table's own day
  totals: daytotals.py) and keeps the table's last state in the bucket `cylindre_tables` (put when
  it changes, and with each heartbeat);
- answers the floor's commands on `cylindre.<site>.<table>.cmd` (floor/commands.py, on a
  worker thread: a command may wait for the wheel).
A broker outage grows the backlog (`cylindre_floor_backlog`, a warning in /health); nothing else.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import ssl
import threading
import time
from pathlib import Path

from prometheus_client import Counter, Gauge

from host_tools.floor.link import envelope as E
from host_tools.floor.link import stream as S

from host_tools.table.floor import outbox as O
from host_tools.table.floor.daytotals import DayTotals
from host_tools.table.floor.rows import OutboxRows

log = logging.getLogger("cylindre.floor")

HEARTBEAT_S = 5.0
BATCH = 256
PUBLISH_TIMEOUT_S = 3.0
STATE_EVERY_S = 0.5
BACKLOG_EVERY_S = 1.0
LAST_NUMBERS = 12


class CredsError(ValueError):
    pass


class Resend(Exception):
    """The link reconnected while a batch waited for its PubAcks: published again from the cursor."""


def load_creds(path) -> dict:
    """A table's NATS credentials file (`cylindre floor-creds` writes them, mode 0600): JSON with
    `user`, `password` and `inbox_prefix` (the reply subjects only this table may read)."""
    from host_tools.table.wheel.keys import KeyError_, private
    try:
        private(path)
        creds = json.loads(Path(path).read_text(encoding="utf-8"))
    except KeyError_ as e:
        raise CredsError(str(e).replace("key file", "credentials file")) from None
    except (OSError, ValueError) as e:
        raise CredsError(f"credentials file {path}: {e}") from None
    if not isinstance(creds, dict) or not isinstance(creds.get("user"), str) or not isinstance(creds.get("password"), str):
        raise CredsError(f"credentials file {path}: needs user and password")
    return creds


class FloorLink:
    def __init__(self, host, url: str, site: str, table: str | None = None, serial: str | None = None,
                 creds: dict | None = None, tls_ca: str | None = None, floor_key: bytes | None = None,
                 heartbeat_s: float = HEARTBEAT_S, batch: int = BATCH, clock=time.time, gday=None, live=True):
        self.host = host
        self.events = host.events
        self.j = host.j
        self.url = url
        self.servers = [u.strip() for u in url.split(",") if u.strip()]     # a cluster's nodes, comma-separated
        self.site = E.check_token(site, "site")
        self.table = E.check_token(table or host.d.wheel, "table")
        self.serial = serial
        self.rows = OutboxRows(host, self.site, self.table, serial)
        self.creds = creds or {}
        self.secret = self.creds.get("password") or None      # signs the message ids (envelope.msg_id)
        self.tls_ca = tls_ca
        self.heartbeat_s = heartbeat_s
        self.batch = batch
        self.clock = clock
        self.watch = O.LinkWatch(clock)
        self.backoff = O.Backoff()
        self.backlog = 0
        self.cursor = self.events.floor_cursor()
        self.last_sent = self.rows.last_sent(self.cursor)         # (event id, journal) the broker acknowledged last
        self.totals = DayTotals(host.j, host.d.wheel, gday, clock)
        self.published = 0
        self.commands = None
        if floor_key is not None:
            from host_tools.table.floor.commands import FloorCommands
            self.commands = FloorCommands(host, floor_key, clock=clock)
        r = host.metrics.registry
        self.g_backlog = Gauge("cylindre_floor_backlog", "journaled events the floor's broker has not acknowledged",
                               registry=r)
        self.g_up = Gauge("cylindre_floor_link_up", "1 while the table is connected to the floor's broker", registry=r)
        self.c_published = Counter("cylindre_floor_published", "events the floor's broker acknowledged", registry=r)
        self._thread = None
        self._loop = None
        self._stop = None
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="cylindre-floor-cmd")
        self._nc = None
        self._kick = None                       # set on a reconnection: the batch in flight is resent at once
        self.live = live                        # results published as they commit too (`_live`)
        self._fresh: list[int] = []
        self._fresh_wake = asyncio.Event()
        self._kv = None
        self._kv_last = None
        self._kv_at = 0.0
        self._backlog_at = 0.0
        host.floor = self
        self.events.hold_for_floor = True      # pruning keeps what the floor has not acknowledged

    # -- life ---------------------------------------------------------------------------------------
    def start(self) -> "FloorLink":
        oldest, newest = self.events.bounds()
        if self.cursor and oldest > self.cursor + 1:
            log.warning("floor: events %d to %d were pruned from the journal before the floor acknowledged them",
                        self.cursor + 1, oldest - 1)
        self._count_backlog(force=True)
        self._thread = threading.Thread(target=self._run, name="cylindre-floor", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0):
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:
                pass
        if self._thread is not None:
            self._thread.join(timeout)
        self._pool.shutdown(wait=False)

    def warnings(self) -> list[str]:
        w = self.watch.warning(self.backlog)
        return [w] if w else []

    def status(self) -> dict:
        nc = self._nc
        server = None
        if nc is not None and nc.is_connected and nc.connected_url is not None:
            server = nc.connected_url.netloc
        return {"url": self.url, "server": server, "site": self.site, "table": self.table, "link": self.watch.state(),
                "since": self.watch.since, "cursor": self.cursor, "backlog": self.backlog,
                "published": self.published, "commands": self.commands is not None}

    def _run(self):
        try:
            asyncio.run(self._main())
        except Exception:
            log.exception("floor link stopped on an error")

    # -- the loop -----------------------------------------------------------------------------------
    async def _main(self):
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        wake = asyncio.Event()
        feeder = asyncio.create_task(self._wake_on_commit(wake))
        counter = asyncio.create_task(self._count_every_second())
        nc = None
        try:
            while not self._stop.is_set():
                nc = await self._connect()
                if nc is None:
                    break
                try:
                    await self._session(nc, wake)
                except Exception as e:          # never ends the link: told, then connected again
                    log.warning("floor: session ended on %s: %s", type(e).__name__, e)
                    self.watch.lost(f"session ended: {type(e).__name__} {e}"[:200])
                    await self._sleep(self.backoff.failed())
                finally:
                    try:
                        await asyncio.wait_for(nc.close(), 2)
                    except Exception:
                        pass
        finally:
            feeder.cancel()
            counter.cancel()

    async def _connect(self):
        """Connect (again and again, with backoff, until stopped): the client itself reconnects
        after that. None when stopped first."""
        import nats
        opts = dict(allow_reconnect=True, max_reconnect_attempts=-1, reconnect_time_wait=0.5, connect_timeout=2,
                    ping_interval=5, max_outstanding_pings=2, name=f"cylindre-table-{self.site}-{self.table}",
                    disconnected_cb=self._disconnected, reconnected_cb=self._reconnected, error_cb=self._error,
                    closed_cb=self._closed)
        if self.creds:
            opts.update(user=self.creds["user"], password=self.creds["password"])
            if self.creds.get("inbox_prefix"):
                opts["inbox_prefix"] = self.creds["inbox_prefix"]
        if self.tls_ca or any(u.startswith("tls://") for u in self.servers):
            ctx = ssl.create_default_context(cafile=self.tls_ca)
            opts["tls"] = ctx
        while not self._stop.is_set():
            # nats-py tries again and again by itself (max_reconnect_attempts -1), telling each
            # failure to `_error`; a stop ends the attempt
            attempt = asyncio.create_task(nats.connect(self.servers, **opts))
            stopped = asyncio.create_task(self._stop.wait())
            done, _ = await asyncio.wait({attempt, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if attempt not in done:
                attempt.cancel()
                try:
                    await attempt
                except BaseException:
                    pass
                return None
            try:
                nc = attempt.result()
            except Exception as e:
                self.watch.lost(f"cannot connect to {self.url}: {type(e).__name__} {e}"[:200])
                await self._sleep(self.backoff.failed())
                continue
            self._nc = nc
            self.watch.connected()
            self.backoff.ok()
            log.info("floor: connected to %s as table %s of site %s", self.url, self.table, self.site)
            return nc
        return None

    async def _disconnected(self):
        self.watch.lost("disconnected from the broker")
        self.g_up.set(0)

    async def _reconnected(self):
        self.watch.connected()
        self.g_up.set(1)
        if self._kick is not None:               # what went to the lost node is resent now, not at its timeout
            self._kick.set()
        log.info("floor: reconnected to the broker")

    async def _error(self, e):
        nc = self._nc
        if nc is None or not nc.is_connected:  # an attempt to (re)connect failed: told
            self.watch.lost(f"cannot reach {self.url}: {type(e).__name__} {e}"[:200])
        log.debug("floor: client error %s", e)

    async def _closed(self):
        self.g_up.set(0)

    async def _sleep(self, seconds):
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def _wake_on_commit(self, wake: asyncio.Event):
        """Wake the publisher when a row the floor wants commits (the event log's live feed)."""
        while True:
            q = self.events.subscribe(kinds=O.ROW_KINDS, loop=asyncio.get_running_loop())
            try:
                while True:
                    item = await q.get()
                    wake.set()
                    if item is None:            # dropped as too slow: subscribe again
                        break
                    if self.live and item[1] == "wheel" and len(self._fresh) < 1000 and \
                            ('"ev": "result"' in item[2] or '"ev": "void"' in item[2]):
                        self._fresh.append(item[0])
                        self._fresh_wake.set()
            finally:
                self.events.unsubscribe(q)

    async def _session(self, nc, wake):
        js = nc.jetstream(timeout=PUBLISH_TIMEOUT_S)
        self.g_up.set(1)
        if not self.creds:                      # an open broker (tests, demo): the table may make them;
            try:                                # a table's own user may not: the floor does
                await S.ensure_stream(js, update=False)
            except Exception as e:
                log.info("floor: stream %s not ensured from the table (%s); publishing to it", S.STREAM, e)
        kv = None
        kv_try = 0.0
        sub = await nc.subscribe(E.cmd_subject(self.site, self.table), cb=self._on_command)
        beat = asyncio.create_task(self._beat(nc, js))
        live = asyncio.create_task(self._live(nc)) if self.live else None
        try:
            while not self._stop.is_set() and not nc.is_closed:
                if not nc.is_connected:         # the client reconnects by itself meanwhile
                    self.watch.lost("disconnected from the broker")
                    await self._sleep(0.2)
                    continue
                if kv is None and time.monotonic() >= kv_try:
                    kv_try = time.monotonic() + 10.0
                    kv = self._kv = await self._bucket(js)
                wake.clear()                    # before reading: a row committed from now wakes the wait
                try:
                    more = await self._publish_batch(js, nc)
                except Resend:
                    continue
                except Exception as e:
                    self.watch.lost(f"publishing failed: {type(e).__name__} {e}"[:200])
                    await self._sleep(self.backoff.failed())
                    continue
                self.backoff.ok()
                if kv is not None:
                    await self._put_state(kv, force=False)
                if more:
                    continue
                try:
                    await asyncio.wait_for(wake.wait(), STATE_EVERY_S)
                except asyncio.TimeoutError:
                    pass
        finally:
            beat.cancel()
            if live is not None:
                live.cancel()
            try:
                await sub.unsubscribe()
            except Exception:
                pass

    async def _live(self, nc):
        """A coup's result or void published the moment it commits, besides the outbox's turn: a
        plain publish (no PubAck awaited) with the message's own id, so the floor hears it while the
        outbox waits on the broker (a cluster electing a stream leader takes no write for seconds),
        and the stream, when it takes it, drops the outbox's copy as the duplicate it is."""
        while True:
            await self._fresh_wake.wait()
            self._fresh_wake.clear()
            fresh, self._fresh = self._fresh, []
            for eid in fresh:
                if eid <= self.cursor or not nc.is_connected:
                    continue
                try:
                    rows, _, _ = await asyncio.to_thread(self.rows.read, eid - 1, 1)
                    if rows and rows[0][0] == eid and rows[0][1] is not None:
                        kind, payload, journal = rows[0][1]
                        await nc.publish(E.subject(self.site, self.table, kind), payload,
                                         headers={E.MSG_ID: E.msg_id(self.table, eid, journal, self.secret)})
                except asyncio.CancelledError:
                    raise
                except Exception as e:          # the outbox sends it all the same
                    log.debug("floor: live publish of %d: %s", eid, e)

    async def _bucket(self, js):
        try:
            if self.creds:
                return await js.key_value(S.BUCKET)
            return await S.ensure_bucket(js)
        except Exception as e:
            log.info("floor: bucket %s not available yet (%s)", S.BUCKET, e)
            return None

    # -- the outbox ---------------------------------------------------------------------------------
    async def _publish_batch(self, js, nc) -> bool:
        """Publish the next rows after the cursor; True when more are waiting."""
        rows, hi, fetched = await asyncio.to_thread(self.rows.read, self.cursor, self.batch)
        eids = [r[0] for r in rows]
        skipped = {eid for eid, msg in rows if msg is None}
        todo = [(eid, msg) for eid, msg in rows if msg is not None]
        if self._kick is None:
            self._kick = asyncio.Event()
        self._kick.clear()
        pubs = asyncio.gather(*(js.publish(E.subject(self.site, self.table, kind), payload,
                                           headers={E.MSG_ID: E.msg_id(self.table, eid, journal, self.secret)})
                                for eid, (kind, payload, journal) in todo), return_exceptions=True)
        kicked = asyncio.ensure_future(self._kick.wait())
        await asyncio.wait({pubs, kicked}, return_when=asyncio.FIRST_COMPLETED)
        kicked.cancel()
        if not pubs.done():                     # reconnected meanwhile: PubAcks owed by the lost node never come
            pubs.cancel()
            try:
                await pubs
            except BaseException:
                pass
            raise Resend()
        results = pubs.result()
        acked = set(skipped)
        failure = None
        for (eid, _), res in zip(todo, results):
            if isinstance(res, BaseException):
                failure = failure or res
            else:
                acked.add(eid)
        new = O.advance(self.cursor, eids, acked, hi if fetched < self.batch else None)
        if new > self.cursor:
            sent = [(eid, msg[2]) for eid, msg in todo if eid <= new]
            if sent:
                self.last_sent = max(sent)
            self.cursor = await asyncio.to_thread(self.events.advance_floor_cursor, new)
            n = sum(1 for eid in eids if eid <= new and eid not in skipped)
            self.published += n
            self.c_published.inc(n)
            if nc.is_connected:                 # (acknowledgements may arrive as the link drops)
                self.watch.acked()
        self._count_backlog(force=failure is None and fetched < self.batch)
        if failure is not None:
            raise failure
        return fetched >= self.batch

    async def _count_every_second(self):
        """The backlog, counted whatever the link does: it grows while the broker is away."""
        while True:
            try:
                await asyncio.to_thread(self._count_backlog)
            except Exception as e:
                log.debug("floor: backlog not counted: %s", e)
            await asyncio.sleep(BACKLOG_EVERY_S)

    def _count_backlog(self, force=False):
        now = time.monotonic()
        if not force and now - self._backlog_at < BACKLOG_EVERY_S:
            return self.backlog
        self._backlog_at = now
        n = self.rows.backlog(self.cursor)
        self.backlog = n
        self.g_backlog.set(n)
        return n

    # -- heartbeat and last state -------------------------------------------------------------------
    def _now_state(self, days: bool = False) -> tuple[dict, dict]:
        """(heartbeat body, the bucket's value) of the table now (`days`: with its day totals)."""
        d = self.host.d
        st = d.table.st
        reasons = d.health_reasons()
        link = "up" if not reasons else "; ".join(reasons)[:200]
        croupier = None
        if self.host.pit is not None:
            try:
                croupier = self.host.pit.on_duty()["croupier"]
            except Exception:
                pass
        numbers = [h["number"] for h in self.host.history(LAST_NUMBERS)]
        now = self.clock()
        last, last_journal = self.last_sent or (0, None)
        try:
            days = self.totals.records() if days else []
        except Exception as e:                  # the heartbeat goes all the same
            log.warning("floor: the day's totals not counted: %s", e)
            days = []
        said = self.host.table.now()            # the window POST /bets applies (game/annonce.py)
        hb = O.heartbeat(link, said["phase"], said["phase"] != "closed", self.backlog, now, last, croupier, last_journal,
                         days, refusing=said["refusing"])
        hb["annonce"] = said["annonce"]
        state = O.table_state(self.site, self.table, self.rows.serial(), st["phase"], numbers, link, croupier,
                              self.host.table.limits.to_json(), self.backlog, now, d.last_heard)
        return hb, state

    async def _beat(self, nc, js):
        while True:
            try:
                if nc.is_connected:
                    self._count_backlog(force=True)
                    hb, _ = await asyncio.to_thread(self._now_state, True)
                    self._said = hb.get("annonce")          # what this heartbeat tells the floor
                    now_ms = int(self.clock() * 1000)
                    payload = E.build(self.site, self.table, self.rows.serial(), hb["last_event_id"], "heartbeat",
                                      hb["clock"], hb, self.events.journal_id)
                    await js.publish(E.subject(self.site, self.table, "heartbeat"), payload,
                                     headers={E.MSG_ID: E.heartbeat_msg_id(self.table, now_ms)})
                    kv = self._kv
                    if kv is not None:
                        await self._put_state(kv, force=True)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.debug("floor: heartbeat not sent: %s", e)
            await self._until_said_changes(self.heartbeat_s)

    async def _until_said_changes(self, seconds):
        """Sleep `seconds`, or less when what the table says (faites vos jeux, rien ne va plus,
        suspended, closed) is no longer what the last heartbeat told the floor: the floor's tile
        follows the table, not its heartbeat's period."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            await asyncio.sleep(min(0.25, max(0.0, end - time.monotonic())))
            if self.host.table.now()["annonce"] != getattr(self, "_said", None):
                return

    async def _put_state(self, kv, force: bool):
        now = time.monotonic()
        if not force and now - self._kv_at < STATE_EVERY_S:
            return
        self._kv_at = now
        _, state = await asyncio.to_thread(self._now_state)
        if not force and O.same_state(self._kv_last, state):
            return
        try:
            await kv.put(S.kv_key(self.site, self.table), json.dumps(state, default=str).encode())
            self._kv_last = state
        except Exception as e:
            log.debug("floor: state not put: %s", e)

    # -- commands -----------------------------------------------------------------------------------
    async def _on_command(self, msg):
        if not msg.reply:
            return
        if self.commands is None:
            reply = {"ok": False, "error": "commands_off", "message": "this table takes no floor commands (no --floor-key)"}
        else:
            reply = await asyncio.get_running_loop().run_in_executor(self._pool, self.commands.handle, msg.data)
        try:
            await msg.respond(json.dumps(reply, default=str).encode())
        except Exception as e:
            log.warning("floor: could not answer a command: %s", e)
