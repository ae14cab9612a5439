"""The floor service assembled: store, tokens and audit, tiles, alerts, the NATS link and the
commands, and a watch thread that escalates alerts, raises one for an event a table published and
the floor never got (a gap: `gaps.py`), turns the gaming day over and, once a day is over,
reconciles it with every table's own totals (reconcile.py).

The imperative shell around the functional pieces: `FloorService.build(...)` opens everything,
`start()` connects to the broker and starts ingesting, `stop()` ends it cleanly.
"""

from __future__ import annotations

import threading
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from .access import Access
from .alerts import Alerts
from host_tools.floor.link.gamingday import GamingDay
from . import gaps, reconcile
from .ingest import Link
from .store import Store
from .tiles import Tiles

STATS_SOONEST_S = 5.0          # the per-wheel statistics follow new coups at most this often
LAG_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class Metrics:
    def __init__(self):
        r = self.registry = CollectorRegistry(auto_describe=True)
        self.stored = Counter("cylindre_floor_events", "events stored at the floor, by kind", ["kind"], registry=r)
        self.dupes = Counter("cylindre_floor_duplicates", "events delivered again and not stored twice", registry=r)
        self.rejects = Counter("cylindre_floor_dead_letters", "messages the floor could not store, set aside "
                               "(dead_letters, with an alert naming the table)", registry=r)
        self.gaps = Counter("cylindre_floor_gaps", "events a table published that never reached the floor (alerted)",
                            registry=r)
        self.lag = Histogram("cylindre_floor_ingest_lag_seconds", "a journaled event's time at its table to its "
                             "commit in the floor's store", buckets=LAG_BUCKETS, registry=r)
        self.broker = Gauge("cylindre_floor_broker_up", "1 while the floor is connected to the broker", registry=r)
        self.tables = Gauge("cylindre_floor_tables", "tables known to the floor", registry=r)
        self.open_alerts = Gauge("cylindre_floor_open_alerts", "alerts not acknowledged", registry=r)


class FloorService:
    def __init__(self, store, access, alerts, tiles, gday, link_url, command_key=None, layout=None,
                 escalate_every_s=2.0, connect=None, stats_days=30, stats_every_s=600.0, replicas=None,
                 update_broker=False, gap_grace_s=gaps.GRACE_S, close_after_s=reconcile.CLOSE_AFTER_S, live=True):
        self.store, self.access, self.alerts, self.tiles, self.gday = store, access, alerts, tiles, gday
        self.layout = layout or {}
        self.metrics = Metrics()
        self.sites: dict[str, str] = {}
        self.lock = threading.RLock()
        self.version = 0                      # bumped on every change the page shows
        self._seen = (0, 0)
        self.link = Link(link_url, store, on_batch=self._on_batch, on_state=self._on_state, on_link=self._on_link,
                         connect=connect, replicas=replicas, update_broker=update_broker, live=live)
        self.gap_grace_s, self.close_after_s = gap_grace_s, close_after_s
        self._closed: set = set()            # gaming days reconciled once over (or given up on)
        self.command_key = command_key
        self.commands = None
        if command_key is not None:
            from .commands import Commands
            self.commands = Commands(store, access, self.link, command_key, self.sites)
        self._stop = threading.Event()
        self._every = escalate_every_s
        self._watch = threading.Thread(target=self._watch_loop, name="floor-watch", daemon=True)
        self.stats_days, self.stats_every = stats_days, stats_every_s
        self._stats = None                    # the last per-wheel statistics, with when and how long
        self._stats_wake = threading.Event()
        self._stats_thread = threading.Thread(target=self._stats_loop, name="floor-stats", daemon=True)
        self.started_at = time.time()

    @classmethod
    def build(cls, db: str, nats_url: str, command_key=None, layout=None, day_start="06:00", tz="Europe/Paris",
              escalate_after_s=300.0, connect=None, stats_days=30, stats_every_s=600.0, replicas=None,
              update_broker=False, gap_grace_s=gaps.GRACE_S, close_after_s=reconcile.CLOSE_AFTER_S, live=True):
        store = Store(db)
        access = Access(store)
        gday = GamingDay(day_start, tz)
        now = time.time()
        tiles = Tiles(layout, gday.bounds(gday.of(now))[0])
        svc = cls(store, access, Alerts(store, access, escalate_after_s), tiles, gday, nats_url, command_key, layout,
                  connect=connect, stats_days=stats_days, stats_every_s=stats_every_s, replicas=replicas,
                  update_broker=update_broker, gap_grace_s=gap_grace_s, close_after_s=close_after_s, live=live)
        svc._seed(now)
        return svc

    def _seed(self, now):
        """Tiles from the store: the last state of each table, then today's events in order."""
        for table, row in self.store.tables().items():
            self.sites[table] = row["site"]
            self.tiles.state(row["site"], table, row["state"], row["heard_at"])
        since = self.tiles.day_start
        for e in self.store.events(kinds=("result", "void", "settlement", "table"), since=min(since, now - 3600)):
            self.tiles.apply(e)
            self.sites[e["table"]] = e["site"]
        self.metrics.tables.set(len(self.tiles.tiles))

    # -- the link's callbacks (its thread) ------------------------------------------------------
    def _on_batch(self, fresh, beats):
        now = time.time()
        with self.lock:
            for e in fresh:
                self.sites[e["table"]] = e["site"]
                self.tiles.apply(e)
                self.metrics.stored.labels(e["kind"]).inc()
                if e["kind"] in ("result", "void", "settlement"):
                    self.metrics.lag.observe(max(0.0, now - float(e["at"])))
            for b in beats:
                self.sites[b["table"]] = b["site"]
                self.tiles.apply(b)
            self.metrics.tables.set(len(self.tiles.tiles))
            d, r = self.link.duplicates, self.link.rejected           # the link counts; add what is new
            self.metrics.dupes.inc(d - self._seen[0])
            self.metrics.rejects.inc(r - self._seen[1])
            self._seen = (d, r)
            if fresh or beats:
                self.version += 1

    def _on_state(self, site, table, st, at):
        with self.lock:
            self.sites[table] = site
            self.tiles.state(site, table, st, at)
            self.version += 1

    def _on_link(self, up, why):
        self.metrics.broker.set(1 if up else 0)
        with self.lock:
            self.version += 1

    # -- the watch ------------------------------------------------------------------------------
    def _watch_loop(self):
        while not self._stop.wait(self._every):
            self.tick(time.time())

    def tick(self, now):
        """Escalate the alerts left too long; raise the gaps the tables' chains cannot fill; start the
        new gaming day's totals at its turn; reconcile the day just over with the tables' own."""
        try:
            changed = bool(self.alerts.escalate(now))
            if self.link.connected and self.link.store_error is None:
                told = gaps.alert(self.store, now, self.gap_grace_s, self.link.durable_at)
                self.metrics.gaps.inc(told)
                changed |= bool(told)
            start = self.gday.bounds(self.gday.of(now))[0]
            if start > self.tiles.day_start:
                with self.lock:
                    self.tiles.new_day(start)
                changed = True
            changed |= self._close(now)
            if changed:
                with self.lock:
                    self.version += 1
            self.metrics.open_alerts.set(sum(self.alerts.open_counts().values()))
        except Exception:                        # noqa: BLE001 - a busy store: next tick
            import logging
            logging.getLogger("cylindre.floor").debug("floor tick", exc_info=True)

    def _close(self, now) -> bool:
        """The gaming day that ended `close_after_s` ago (the tables' final totals have come by
        then): reconciled with every table's own totals, an alert per table that does not
        reconcile. Tried again each tick for a day until it reconciles or the next day is over."""
        import datetime as dt
        day = self.gday.of(now) - dt.timedelta(days=1)
        end = self.gday.bounds(day)[1]
        if day in self._closed or now < end + self.close_after_s:
            return False
        last = getattr(self, "_close_tried", 0.0)
        if now - last < 60.0:
            return False
        self._close_tried = now
        result = reconcile.reconcile(self.store, self.gday, day, now)
        if result["ok"] or now > end + 86400:
            self._closed.add(day)
        return bool(reconcile.alert(self.store, result, now))

    def _stats_loop(self):
        """The per-wheel statistics, recomputed in the background: over a month of a big floor they
        take minutes of pure Python, which no request should wait for. Recomputed every
        `stats_every` seconds, and sooner when coups came since the last time, as long as the
        computing stays under a twentieth of the time (a new floor shows its first coups in
        seconds, a large one keeps its CPU)."""
        from .wheelstats import floor_stats
        computed_at, took, seen = 0.0, 0.0, None
        while not self._stop.is_set():
            forced = self._stats_wake.is_set()
            self._stats_wake.clear()
            now = time.time()
            try:
                n = self.store.query("SELECT COUNT(*) FROM events WHERE kind IN ('result', 'void')")[0][0]
            except Exception:                        # noqa: BLE001 - a busy or closing store: next round
                n = seen
            elapsed = now - computed_at
            if forced or self._stats is None or elapsed >= self.stats_every or \
                    (n != seen and elapsed >= max(STATS_SOONEST_S, 20 * took)):
                t0 = time.time()
                try:
                    ev = self.store.events(kinds=("result", "void"), since=t0 - self.stats_days * 86400)
                    out = floor_stats(ev)
                    took = time.time() - t0
                    out.update(computed_at=time.time(), compute_s=round(took, 2), days=self.stats_days)
                    self._stats, computed_at, seen = out, time.time(), n
                except Exception:                    # noqa: BLE001 - a busy or closing store: next round
                    import logging
                    logging.getLogger("cylindre.floor").warning("floor: the per-wheel statistics failed", exc_info=True)
                    computed_at = time.time()
            self._stats_wake.wait(STATS_SOONEST_S)

    def wheel_stats(self):
        return self._stats

    def refresh_stats(self):
        """Recompute now (the page's "recalculer", tests)."""
        self._stats_wake.set()

    def start(self):
        self.link.start()
        self._watch.start()
        self._stats_thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._stats_wake.set()
        self.link.stop()
        for t in (self._watch, self._stats_thread):
            if t.is_alive():
                t.join(5)
        self.store.close()

    def health(self) -> dict:
        link = self.link
        return {"status": "ok" if link.connected and link.store_error is None else "degraded",
                "store_error": link.store_error, "broker_warnings": list(link.broker_warnings),
                "broker": "connected" if link.connected else
                f"unreachable since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(link.down_since or time.time()))}",
                "tables": len(self.tiles.tiles), "stored": link.stored, "live_stored": link.live_stored,
                "duplicates": link.duplicates,
                "rejected": link.rejected, "store": "postgresql" if self.store.pg else "sqlite"}

    def snapshot(self) -> dict:
        now = time.time()
        counts = self.alerts.open_counts()
        with self.lock:
            tiles = self.tiles.views(counts, now)
            version = self.version
        return {"version": version, "now": now, "day": self.gday.of(now).isoformat(), "tiles": tiles,
                "broker": self.health()["broker"], "alerts": self.alerts.list(limit=200),
                "pending": self.commands.pending() if self.commands else [],
                "commands": self.commands is not None}
