"""The daemon's imperative shell: the serial port, the link, the table, commands, the event stream.

One I/O thread owns the port and the link: it reads, journals every record in one place
(`_record`), hands events and statuses to the table, and acknowledges an event only after its
transaction is committed. HTTP threads reach the wheel through `command()`, which the I/O thread
sends one at a time. What the table and the link publish goes to the `publish(kind, body)` the
daemon is built with (the table app's journaled event log), called inside the transaction of the
change it reports; the `observer` hears frames sent and settlement times (the table app's metrics).

The source of wheel events is a seam (`source=`): the Cylindre link session (`HostLink`, the
default) is one source, a Cammegh reader's lines (`source_cammegh.CammeghSource`) another. A
source is what the I/O thread drives: `hello()` when the port opens, `feed(bytes)` and `poll()`
returning records (`welcome`, `event` with its `boot`, `seq` and the wheel's clock in `at_ms`,
`status`, `reply`, `timeout`, `reject`, ... each with the `raw` bytes it came in),
`acknowledge(seq)` once an event is durable, `rewind(seq)` when it could not be, `command(cmd,
args)`, `busy`, `in_session`, `boot`. `_record` journals every record and hands events and
statuses to `Table.on_event` / `Table.on_status` whatever the source.
"""

from __future__ import annotations

import logging
import queue
import threading
import time

from cylindre.link.host import HostLink

from .journal import Journal
from .table import Table

log = logging.getLogger("cylindre.daemon")


class Observer:
    """What the daemon tells its observer (the table app's metrics); this one listens to nothing."""

    def frame_out(self):
        """A frame was written to the wheel."""

    def settled(self, seconds):
        """A result frame in hand to its settlement committed took `seconds`."""


class SerialPort:
    """pyserial for devices and pseudo-terminals; `None` from open() means "not there yet"."""

    def __init__(self, url, baud=115200):
        self.url = url
        self.baud = baud
        self.s = None

    def open(self):
        import serial
        try:
            self.s = serial.serial_for_url(self.url, baudrate=self.baud, timeout=0.02, write_timeout=1.0)
            try:
                self.s.reset_input_buffer()     # bytes queued before we came belong to no session of ours
            except Exception:
                pass
            return True
        except (serial.SerialException, OSError, ValueError) as e:
            self.s = None
            self.error = str(e)
            return False

    def read(self):
        return self.s.read(self.s.in_waiting or 1)

    def write(self, data):
        if self.s is not None:
            self.s.write(data)

    def close(self):
        if self.s is not None:
            try:
                self.s.close()
            except Exception:
                pass
            self.s = None


class Daemon:
    def __init__(self, port, key, journal, wheel="T1", limits=None, open_table=False, baud=115200,
                 silence_ms=3000, publish=None, observer=None, source="cylindre", clock=None):
        self.publish = publish or (lambda kind, body: None)
        self.observer = observer or Observer()
        self.j = journal if isinstance(journal, Journal) else Journal(journal)
        self.wheel = wheel
        self.clock = clock or _ms_float     # host ms: the table's, and a Cammegh reader's lines
        self.table = Table(self.j, wheel, limits, publish=self.publish, clock=self.clock)
        self.port = port if not isinstance(port, str) else SerialPort(port, baud)
        self.source = source
        if source == "cammegh":
            self.link = self._cammegh()
        elif source == "cylindre":
            self.link = HostLink(self._write, _ms, key, wheel=wheel, silence_ms=silence_ms)
        else:
            raise ValueError("source: cylindre or cammegh, not %r" % (source,))
        self._taken = 0             # the last event of the link's boot the journal has (in order)
        self.lock = threading.RLock()
        self.stop_flag = threading.Event()
        self._cmds: queue.Queue = queue.Queue()
        self._waiting: dict[int, list] = {}
        self.connected = False
        self.wheel_status = None
        self.welcome = None
        self.last_heard = None
        self.counts = {"frames": 0, "events": 0, "duplicates": 0, "rejects": 0, "stale": 0, "gaps": 0, "replays": 0}
        self._compact_at = time.monotonic() + 10.0
        if open_table and self.table.created:
            self.table.set_open(True)       # --open opens a new journal's table, never a closed one
        elif open_table and self.table.st["phase"] == "closed":
            log.warning("--open: the journal says the table was closed; it stays closed until POST /table/open")
        self.want_open = self.table.st["phase"] != "closed"
        self._io = threading.Thread(target=self._run, name="cylindre-io", daemon=True)

    def _cammegh(self):
        """A Cammegh reader as the source: its events continue the journal's numbering for this
        host's boot, its launches the table's spin count; it asks a stopped reader to run only
        while the table is open here (a table the chef closed stays closed)."""
        from .game import CLOSED
        from .source_cammegh import CammeghSource, host_boot
        boot = host_boot()
        row = self.j.one("SELECT MAX(seq) AS s FROM events WHERE wheel=? AND boot=?", (self.wheel, boot))
        last = max([x for x in (self.table.st.get("spin"), self.table.ledger.last_settled()) if isinstance(x, int)],
                   default=0)
        return CammeghSource(self._write, self.clock, boot, first_seq=((row or {}).get("s") or 0) + 1,
                             first_spin=last + 1, port=getattr(self.port, "url", ""),
                             opener=lambda: self.want_open and self.table.st["phase"] != CLOSED)

    # -- life ---------------------------------------------------------------------------------------
    def start(self):
        self._io.start()

    def stop(self):
        self.stop_flag.set()
        self._io.join(timeout=3)
        self.port.close()

    def _write(self, data):
        self.port.write(data)
        self.observer.frame_out()

    def _run(self):
        next_try = 0.0
        while not self.stop_flag.is_set():
            if self.port.s is None:
                if time.monotonic() < next_try:
                    time.sleep(0.05)
                    continue
                if not self.port.open():
                    if self.connected or next_try == 0.0:
                        log.warning("port %s not available: %s", self.port.url, getattr(self.port, "error", ""))
                    self.connected = False
                    next_try = time.monotonic() + 1.0
                    continue
                log.info("port %s open", self.port.url)
                with self.lock:
                    self.link.hello()
            try:
                data = self.port.read()
            except Exception as e:
                log.warning("port %s lost: %s", self.port.url, e)
                self.port.close()
                self.connected = False
                next_try = time.monotonic() + 0.5
                continue
            try:
                self.pump(data)
                self._compact()
            except Exception:
                log.exception("error while handling the link; carrying on")
                time.sleep(0.1)

    def pump(self, data):
        """One turn of the I/O thread: bytes read from the port (maybe none) through the source,
        every record journaled and acted on in order, then the next command sent."""
        with self.lock:
            recs = self.link.feed(data) if data else []
            recs += self.link.poll()
            failed = None
            for rec in recs:
                if failed is not None and rec["kind"] in ("event", "duplicate", "gap"):
                    continue        # after a failed event nothing more is taken, in order
                try:
                    self._record(rec)
                except Exception:
                    if rec["kind"] != "event":
                        raise
                    failed = rec["seq"]
                    self.link.rewind(failed)
                    self.table.window.lost()
                    log.exception("event %s could not be journaled; the source will give it again", failed)
            self._send_commands()

    def _compact(self):
        """Every 10 s, move old status frames into compressed blocks (journal.compact_statuses),
        for at most about 0.1 s: the journal grows by a seventh of what statuses would take as rows."""
        now = time.monotonic()
        if now < self._compact_at:
            return
        self._compact_at = now + 10.0
        end = now + 0.1
        try:
            while self.j.compact_statuses() and time.monotonic() < end:
                pass
        except Exception:
            log.exception("status compaction failed; the frames stay as rows")

    # -- records from the link -------------------------------------------------------------------
    def _record(self, rec):
        """Every record of the link, journaled here and only here (an event's frame in the
        event's own transaction), then acted on."""
        kind = rec["kind"]
        if kind == "timeout":
            w = self._waiting.pop(rec["seq"], None)
            if w is not None:
                w[1] = rec
                w[0].set()
            return
        self.counts["frames"] += 1
        t0 = time.perf_counter()
        try:
            with self.table.lock, self.j.tx():      # the table's lock first, as every caller takes them
                fid = self.j.frame(self.wheel, rec)
                if kind == "event":
                    fresh = self.table.on_event(rec["boot"], rec["seq"], rec["event"], fid)
        except BaseException:
            self.table.reload()
            raise
        if kind == "event":
            if fresh and rec["event"].get("ev") == "result":
                self.observer.settled(time.perf_counter() - t0)
            self.counts["events" if fresh else "duplicates"] += 1
            self._taken = max(self._taken, rec["seq"])
            self.link.acknowledge(rec["seq"])      # only now: the transaction is committed
            self.last_heard = time.time()
            return
        if kind == "reply":
            w = self._waiting.pop(rec["seq"], None)
            if w is not None:
                w[1] = rec
                w[0].set()
            return
        if kind == "status":
            self.wheel_status = rec["status"]
            self.last_heard = time.time()
            self.table.on_status(self.link.boot, rec["status"], self._taken)
            self.publish("status", rec["status"])
        elif kind == "welcome":
            first = rec["info"].get("first")
            self._taken = first - 1             # the wheel holds nothing before `first` unacknowledged
            self.connected = True
            self.welcome = rec["info"]
            self.last_heard = time.time()
            log.info("link up: wheel %s, boot %s, firmware %s, resending from event %s",
                     rec["info"].get("wheel"), rec["info"].get("boot"), rec["info"].get("fw"), rec["info"].get("first"))
            self.publish("link", {"up": True, "info": rec["info"]})
            self._queue_internal("set_time", {"epoch_ms": int(time.time() * 1000)})
            self._queue_internal("open_table" if self.want_open else "close_table", {})
        elif kind == "duplicate":
            self.counts["duplicates"] += 1
        elif kind == "stale" and rec.get("detail") == "welcome replayed":
            self.counts["replays"] += 1
            log.warning("frame stale: a WELCOME replayed inside its session, refused")
        elif kind in ("reject", "stale", "gap"):
            key = {"reject": "rejects", "stale": "stale", "gap": "gaps"}[kind]
            self.counts[key] += 1
            level = logging.WARNING if kind == "reject" else logging.INFO
            log.log(level, "frame %s (%s): %s", kind, rec.get("reason", ""), rec.get("detail", ""))

    # -- commands to the wheel ----------------------------------------------------------------------
    def _queue_internal(self, cmd, args):
        self._cmds.put((cmd, args, None))

    def _send_commands(self):
        if self.link.busy or self._cmds.empty() or not self.link.in_session:
            return
        cmd, args, waiter = self._cmds.get_nowait()
        seq = self.link.command(cmd, args)
        if waiter is not None:
            self._waiting[seq] = waiter

    def command(self, cmd, args=None, timeout=5.0):
        """Send a command to the wheel and wait for its reply: returns the reply dict or None."""
        waiter = [threading.Event(), None]
        self._cmds.put((cmd, args or {}, waiter))
        if not waiter[0].wait(timeout):
            return None
        rec = waiter[1]
        return rec["reply"] if rec and rec["kind"] == "reply" else None

    def open_table(self, is_open: bool):
        """Open or close the table: the table first (a close refuses bets at once, whatever the
        link does), then the wheel, told again after every (re)connection."""
        self.want_open = is_open
        self.table.set_open(is_open)
        return self.command("open_table" if is_open else "close_table")

    def health_reasons(self) -> list:
        """Why the source is not up (empty: it is): /health."""
        if self.link.in_session:
            return []
        if hasattr(self.link, "down_reason"):
            return [self.link.down_reason()]
        return ["link down: no session with the wheel"]

    # -- status -------------------------------------------------------------------------------------
    def status(self) -> dict:
        with self.lock:
            link = {"source": self.source, "port": self.port.url, "port_open": self.port.s is not None,
                    "session": self.link.in_session, "boot": self.link.boot,
                    "next_event": self.link.expected, "acked": self.link.acked,
                    "last_heard": self.last_heard, "counts": dict(self.counts),
                    "sessions": self.link.sessions}
            if hasattr(self.link, "describe"):
                link.update(self.link.describe())
            wheel = {"id": self.wheel, "welcome": self.welcome, "status": self.wheel_status}
        return {"link": link, "wheel": wheel, "table": self.table.state()}


def _ms():
    return int(time.monotonic() * 1000)


def _ms_float():
    return time.monotonic() * 1000.0
