"""`GET /metrics`: the table's figures in Prometheus text format, every series prefixed `cylindre_`.

Link counters are read from the daemon at scrape time (one source of truth; with a Cammegh
reader as the source, a frame is a line and a refused frame a garbled line); the rest is counted
as it happens: spins and voids from the wheel's published events, bets placed and refused at the
API, frames sent and the settlement latency (the wheel's result frame in hand to its settlement
committed) as the daemon's observer (`service.Observer`).
Each app has its own registry, so several tables (or tests) in one process never mix.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# seconds: the settlement is one SQLite transaction (fsync) of a few hundred bets
SETTLE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Metrics:
    """The daemon's observer and the table app's counters, in one registry."""

    def __init__(self, daemon=None):
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.spins = Counter("cylindre_spins", "results received from the wheel", registry=r)
        self.voids = Counter("cylindre_voids", "spins the wheel voided, by reason", ["reason"], registry=r)
        self.placed = Counter("cylindre_bets_placed", "bets accepted on the table", registry=r)
        self.refused = Counter("cylindre_bets_refused", "bets refused, by reason (table_closed, poussette, invalid)",
                               ["reason"], registry=r)
        self.settle = Histogram("cylindre_settlement_seconds", "result frame in hand to its settlement committed",
                                buckets=SETTLE_BUCKETS, registry=r)
        self.frames_out = Counter("cylindre_frames_out", "frames sent to the wheel", registry=r)
        self.auth_refused = Counter("cylindre_auth_refused", "unknown tokens presented, by outcome (unknown_token; "
                                    "throttled: the one that made its address wait)", ["outcome"], registry=r)
        if daemon is not None:
            self.watch(daemon)

    def watch(self, daemon):
        """Read the daemon's link counters at each scrape."""
        self.registry.register(_LinkCollector(daemon))

    # the daemon's observer
    def frame_out(self):
        self.frames_out.inc()

    def settled(self, seconds):
        self.settle.observe(seconds)

    def observe(self, kind, body):
        """Count one published event."""
        if kind != "wheel" or not isinstance(body, dict):
            return
        ev = body.get("ev")
        if ev == "result":
            self.spins.inc()
        elif ev == "void":
            self.voids.labels(str(body.get("reason"))[:40]).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _LinkCollector:
    """The daemon's own link counters, read when scraped."""

    def __init__(self, daemon):
        self.d = daemon

    def describe(self):
        return []

    def collect(self):
        c = dict(self.d.counts)
        m = CounterMetricFamily("cylindre_frames_in", "frames received from the wheel (valid)", value=c.get("frames", 0))
        yield m
        m = CounterMetricFamily("cylindre_frames_refused", "frames refused, by reason", labels=["reason"])
        for reason, key in (("mac_or_format", "rejects"), ("stale", "stale"), ("out_of_order", "gaps")):
            m.add_metric([reason], c.get(key, 0))
        yield m
        yield CounterMetricFamily("cylindre_events", "wheel events journaled", value=c.get("events", 0))
        yield CounterMetricFamily("cylindre_duplicates", "wheel events received again (resends)", value=c.get("duplicates", 0))
        yield GaugeMetricFamily("cylindre_link_up", "1 while a link session with the wheel is up",
                                value=1 if self.d.link.in_session else 0)
        yield CounterMetricFamily("cylindre_link_sessions", "link sessions opened", value=self.d.link.sessions)
        problem = self.d.problem() if hasattr(self.d, "problem") else None
        m = GaugeMetricFamily("cylindre_link_problem", "1 for the likely cause while the link is not up (port_missing, "
                              "wrong_wheel, wheel_unknown, not_authentic, garbage, slow_line, silent, down)",
                              labels=["code"])
        if problem is not None:
            m.add_metric([problem[0]], 1)
        yield m
        source = getattr(self.d, "source", "cylindre")
        m = GaugeMetricFamily("cylindre_source", "1 for the source of wheel events in use", labels=["source"])
        m.add_metric([source], 1)
        yield m
        faults = getattr(self.d.link, "faults", None)
        if faults is not None:      # a Cammegh reader: what the decoder found wrong in its lines
            m = CounterMetricFamily("cylindre_reader_faults", "faults in a Cammegh reader's lines, by code "
                                    "(garbled, line_missing, silent, sequence, result_mismatch, number_missing, "
                                    "game_jump, result_lost)", labels=["code"])
            for code, n in sorted(faults.items()):
                m.add_metric([code], n)
            yield m
