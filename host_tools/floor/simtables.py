"""Lightweight simulated tables for the floor's bench and tests: publishers replaying a table's
event stream as its outbox does, not wheel simulations.

A `SimTable` keeps its own journal (event ids 1, 2, ...) and a cursor, the highest id the broker
acknowledged (PubAck) in order, under a journal identity (`journal_id`); it publishes in order from
the cursor with `Nats-Msg-Id <table>:<journal>:<event id>`, and after a failed publish (broker stopped, network cut, no PubAck in time)
it resends from the cursor, as the daemon's publisher does: a resend the broker stored already is
dropped by its duplicate window, and the floor's store would drop it again. `renew()` starts the
table again on a new, empty journal (ids from 1 again, a new identity), the old one kept in `past`.

A game (coup) is a `result` and its `settlement` (a `void` before it in `void_rate` of the games),
with the fields a real table publishes; a croupier change every `shift` games is a `table` event
and its `audit` row; an `alert` in `alert_rate` of the games; a heartbeat every `heartbeat_s`.
`Proxy` is a TCP relay between some tables and the broker that can be cut (its connections
closed, new ones refused) and mended: a network cut between a table and the broker.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time

from host_tools.floor.link import envelope as E

CROUPIERS = ("ana", "bruno", "chloe", "david", "emma", "farid")


class SimTable:
    def __init__(self, site, table, serial, seed, game_s=6.0, void_rate=0.04, alert_rate=0.002, shift=30,
                 heartbeat_s=5.0):
        self.site, self.table, self.serial = site, table, serial
        self.rng = random.Random(seed)
        self.game_s, self.void_rate, self.alert_rate, self.shift, self.heartbeat_s = \
            game_s, void_rate, alert_rate, shift, heartbeat_s
        self.journal: list[tuple[int, str, float, dict]] = []     # (event_id, kind, at, body)
        self.cursor = 0                   # the highest event id the broker acknowledged, in order
        self.journal_id = secrets.token_hex(8)
        self.past: list[tuple[str, list]] = []                    # (journal id, events) of replaced journals
        self.renew_asked = False          # renewed by its own task once its backlog is empty
        self.spin = 0
        self.rotor = 1
        self.croupier = self.rng.choice(CROUPIERS)
        self.failures = 0
        self.next_game = time.time() + self.rng.uniform(0, game_s)
        self.next_beat = time.time() + self.rng.uniform(0, heartbeat_s)

    def _add(self, kind, at, body):
        self.journal.append((len(self.journal) + 1, kind, at, body))

    def play(self, now):
        """One game's events into the journal, stamped `now` (the table's clock)."""
        self.spin += 1
        self.rotor = -self.rotor                    # Article 53: the rotor turns the other way each spin
        d = "cw" if self.rotor > 0 else "ccw"
        b = "ccw" if self.rotor > 0 else "cw"
        common = {"spin": self.spin, "boot": 1, "serial": self.serial, "rotor_dir": d, "ball_dir": b,
                  "croupier": self.croupier, "at": now}
        if self.spin % self.shift == 0:
            before, self.croupier = self.croupier, self.rng.choice(CROUPIERS)
            self._add("table", now, {"what": "croupier", "before": before, "after": self.croupier, "who": "chef-1",
                                     "role": "chef", "at": now})
            self._add("audit", now, {"id": len(self.journal) + 1, "at": now, "who": "chef-1", "role": "chef",
                                     "action": "croupier_duty", "target": self.croupier, "before": before,
                                     "after": self.croupier})
        if self.rng.random() < self.void_rate:
            self._add("void", now, dict(common, reason=self.rng.choice(("min_laps", "ball_off", "rotor_not_reversed"))))
            self.spin += 1
            common["spin"] = self.spin
        n = self.rng.randrange(37)
        self._add("result", now, dict(common, number=n, rotor_rpm_x10=self.rng.randint(180, 320),
                                      laps=self.rng.randint(8, 16), drop_angle_x10=self.rng.randrange(3600),
                                      release_pocket=self.rng.randrange(37)))
        staked = self.rng.randrange(0, 200) * 100
        paid = (staked // 37) * 36 if self.rng.random() < 0.45 else 0
        self._add("settlement", now, {"spin": self.spin, "number": n, "staked": staked, "paid": paid,
                                      "result": staked - paid, "bets": self.rng.randint(0, 30), "at": now})
        if self.rng.random() < self.alert_rate:
            self._add("alert", now, {"id": f"a{self.spin}", "code": "misspin_streak", "message": "annulations répétées",
                                     "level": "warning", "raised_at": now, "acked_at": None, "acked_by": None,
                                     "comment": None})

    def renew(self):
        """A new, empty journal (as a table host replaced without its journal): what the old one had
        not had acknowledged stays unsent, as it would at a real table (renew a drained table)."""
        self.past.append((self.journal_id, self.journal))
        self.journal, self.cursor, self.journal_id = [], 0, secrets.token_hex(8)

    def keys(self) -> set:
        """(table, journal, event id) of every event this table journaled, old journals included."""
        return {(self.table, j, ev[0]) for j, evs in self.past + [(self.journal_id, self.journal)] for ev in evs}

    def pending(self):
        return self.journal[self.cursor:]

    def heartbeat(self, now):
        body = {"link": "up", "phase": "betting", "open": True, "backlog": len(self.journal) - self.cursor,
                "clock": now, "last_event_id": self.cursor, "croupier": self.croupier}
        return E.subject(self.site, self.table, "heartbeat"), \
            E.build(self.site, self.table, self.serial, self.cursor, "heartbeat", now, body, self.journal_id), \
            E.heartbeat_msg_id(self.table, int(now * 1000))

    def message(self, ev):
        eid, kind, at, body = ev
        return E.subject(self.site, self.table, kind), \
            E.build(self.site, self.table, self.serial, eid, kind, at, body, self.journal_id), \
            E.msg_id(self.table, eid, self.journal_id)


class Fleet:
    """Many SimTables publishing over a few NATS connections (`conns`), each table in order. `url`
    may list a cluster's nodes (comma-separated), `connect` adds to the client's options (TLS);
    `live`: a result or void is also published the moment it is played, as the daemon does
    (publisher.py `_live`)."""

    def __init__(self, url, tables: int, conns: int = 20, site="CASINO", game_s=6.0, heartbeat_s=5.0, seed=1,
                 via=None, via_tables=0, prefix="T", connect=None, live=True):
        self.url, self.conns = url, max(1, min(conns, tables))
        self.connect, self.live = dict(connect or {}), live
        self.via, self.via_tables = via, via_tables          # the first via_tables tables reach the broker through `via`
        self.tables = [SimTable(site, f"{prefix}{i + 1}", f"W{seed}-{i + 1:04d}", seed * 100_003 + i, game_s,
                                heartbeat_s=heartbeat_s) for i in range(tables)]
        self.producing = True
        self._stop = asyncio.Event()
        self.published = 0
        self.acked = []                    # (at, PubAck in hand) of each result: the tables' side of the latency

    def backlog(self):
        return sum(len(t.journal) - t.cursor for t in self.tables)

    def total(self):
        return sum(len(t.journal) + sum(len(evs) for _, evs in t.past) for t in self.tables)

    async def run(self):
        import nats
        async def quiet(e):                             # reconnect errors are expected here: counted, not logged
            pass
        opts = dict(error_cb=quiet, max_reconnect_attempts=-1, reconnect_time_wait=0.25, connect_timeout=2, allow_reconnect=True,
                    ping_interval=2, max_outstanding_pings=2, **self.connect)

        async def connect(url):
            while not self._stop.is_set():
                try:
                    return await nats.connect([u.strip() for u in url.split(",")], **opts)
                except Exception:                      # noqa: BLE001 - broker not there yet: the table waits
                    await asyncio.sleep(0.5)
        direct = [await connect(self.url) for _ in range(self.conns)]
        proxied = await connect(self.via) if self.via and self.via_tables else None
        tasks = []
        for i, t in enumerate(self.tables):
            nc = proxied if (proxied is not None and i < self.via_tables) else direct[i % len(direct)]
            tasks.append(asyncio.create_task(self._table(t, nc.jetstream(timeout=2.0), nc)))
        await self._stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for nc in direct + ([proxied] if proxied else []):
            try:
                await nc.close()
            except Exception:                          # noqa: BLE001
                pass

    def stop(self):
        self._stop.set()

    async def _table(self, t: SimTable, js, nc=None):
        """A table: its coups played on time whatever the broker does (and published at once with
        `live`), its heartbeat, and its outbox publishing in order from the cursor."""
        woken = asyncio.Event()
        outbox = asyncio.create_task(self._outbox(t, js, woken))
        try:
            while True:
                now = time.time()
                if t.renew_asked and not t.pending():
                    t.renew()
                    t.renew_asked = False
                if self.producing and now >= t.next_game:
                    played = len(t.journal)
                    t.play(now)
                    t.next_game += t.game_s
                    woken.set()
                    if self.live and nc is not None and nc.is_connected:
                        for ev in t.journal[played:]:
                            if ev[1] in ("result", "void"):
                                subj, data, mid = t.message(ev)
                                try:
                                    await nc.publish(subj, data, headers={E.MSG_ID: mid})
                                except Exception:      # noqa: BLE001 - the outbox's turn sends it
                                    pass
                if now >= t.next_beat:
                    t.next_beat += t.heartbeat_s
                    subj, data, mid = t.heartbeat(now)
                    beat = asyncio.ensure_future(js.publish(subj, data, headers={E.MSG_ID: mid}))
                    beat.add_done_callback(lambda f: f.cancelled() or f.exception())   # not resent: its fate is not waited for
                wake = min(t.next_game if self.producing else now + 0.5, t.next_beat)
                await asyncio.sleep(max(0.01, min(wake - time.time(), 0.5)))
        finally:
            outbox.cancel()

    async def _outbox(self, t: SimTable, js, woken: asyncio.Event):
        while True:
            for ev in t.pending():
                subj, data, mid = t.message(ev)
                try:
                    await js.publish(subj, data, headers={E.MSG_ID: mid})
                except Exception:                      # noqa: BLE001 - no PubAck: resend from the cursor later
                    t.failures += 1
                    await asyncio.sleep(0.5)
                    break
                t.cursor = ev[0]
                self.published += 1
                if ev[1] == "result":
                    self.acked.append((ev[2], time.time()))
            if not t.pending():
                woken.clear()
                try:
                    await asyncio.wait_for(woken.wait(), 0.5)
                except asyncio.TimeoutError:
                    pass


class Proxy:
    """A TCP relay from 127.0.0.1:port to the broker; `cut()` closes its connections and refuses new
    ones (the cable pulled), `mend()` lets them through again."""

    def __init__(self, target_host, target_port):
        self.target = (target_host, target_port)
        self.server = None
        self.port = None
        self.is_cut = False
        self._conns: set = set()

    async def start(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    @property
    def url(self):
        return f"nats://127.0.0.1:{self.port}"

    async def _serve(self, reader, writer):
        if self.is_cut:
            writer.close()
            return
        try:
            ur, uw = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        pair = (writer, uw)
        self._conns.add(pair)

        async def pipe(r, w):
            try:
                while not self.is_cut:
                    data = await r.read(65536)
                    if not data:
                        break
                    w.write(data)
                    await w.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                w.close()
        await asyncio.gather(pipe(reader, uw), pipe(ur, writer))
        self._conns.discard(pair)

    def cut(self):
        self.is_cut = True
        for a, b in list(self._conns):
            for w in (a, b):
                try:
                    w.transport.abort()
                except Exception:                      # noqa: BLE001
                    pass

    def mend(self):
        self.is_cut = False

    async def close(self):
        self.cut()
        if self.server is not None:
            self.server.close()
