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

from host_tools.table.wheel import identity
from host_tools.table.journal.store import Journal
from host_tools.table.wheel.linkwatch import LinkWatch, QuietLog
from host_tools.table.wheel.port import SerialPort
from host_tools.table.game.table import Table
from host_tools.table.heap import collect_if_due

log = logging.getLogger("cylindre.daemon")


class Observer:
    """What the daemon tells its observer (the table app's metrics); this one listens to nothing."""

    def frame_out(self):
        """A frame was written to the wheel."""

    def settled(self, seconds):
        """A result frame in hand to its settlement committed took `seconds`."""



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
        # the wheel the table knows (identity.py): its spins are the table's from `base` on; a
        # wheel that answers and is not it is `pending` until a chef accepts it (accept_wheel)
        self.wheels = identity.WheelBook(self.j, wheel)
        self.key_fp = identity.fingerprint(key if isinstance(key, (bytes, bytearray)) else str(key).encode())
        cur = self.wheels.current()
        self.base = cur["base"] if cur else 0
        self.pending = None
        self.seen = None            # the identity the last WELCOME gave
        self.lock = threading.RLock()
        self.stop_flag = threading.Event()
        self._cmds: queue.Queue = queue.Queue()
        self._waiting: dict[int, list] = {}
        self.connected = False
        self.wheel_status = None
        self.welcome = None
        self.last_heard = None
        self.counts = {"frames": 0, "events": 0, "duplicates": 0, "rejects": 0, "stale": 0, "gaps": 0, "replays": 0}
        # what the host sees of its wheel, and the likely cause when the link is not up
        self.watch = LinkWatch(getattr(self.port, "url", ""), wheel, silence_ms / 1000.0)
        self.watch.session(time.monotonic(), False)
        self.quiet = QuietLog(log)          # a line that repeats (a wrong key) is said once, then counted
        self._was_up = False
        self._said_down = None              # the cause of this outage last said in the log
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
        from host_tools.table.game.window import CLOSED
        from host_tools.table.wheel.cammegh import CammeghSource, host_boot
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
                # no port (a pulled cable, a wheel that exited): the link's timers run all the same,
                # so the session ends at the silence timeout at the latest, whatever the port does
                self._turn(b"")
                if time.monotonic() < next_try:
                    time.sleep(0.05)
                    continue
                if not self.port.open():
                    err = getattr(self.port, "error", "")
                    self.quiet("port", logging.WARNING, "port %s indisponible : %s", self.port.url, err)
                    self.watch.port(time.monotonic(), False, err)
                    self.connected = False
                    next_try = time.monotonic() + 1.0
                    continue
                log.info("port %s open", self.port.url)
                self.watch.port(time.monotonic(), True)
                with self.lock:
                    self.link.hello()
            try:
                data = self.port.read()
            except Exception as e:
                log.warning("port %s lost: %s", self.port.url, e)
                self.port.close()
                self.watch.port(time.monotonic(), False, str(e))
                with self.lock:
                    if hasattr(self.link, "lost"):
                        self.link.lost()        # nothing we send reaches the wheel: no session
                self.connected = False
                next_try = time.monotonic() + 0.5
                continue
            self._turn(data)

    def _turn(self, data):
        try:
            self.pump(data)
            self._compact()
            collect_if_due()            # the frozen heap's whole scan when no call came (heap.py)
        except Exception:
            log.exception("error while handling the link; carrying on")
            time.sleep(0.1)

    def pump(self, data):
        """One turn of the I/O thread: bytes read from the port (maybe none) through the source,
        every record journaled and acted on in order, then the next command sent."""
        with self.lock:
            now = time.monotonic()
            self.watch.received(now, len(data) if data else 0)
            recs = self.link.feed(data) if data else []
            recs += self.link.poll()
            for rec in recs:
                self.watch.record(now, rec)
            failed = None
            for rec in recs:
                if failed is not None and rec["kind"] in ("event", "duplicate", "gap"):
                    continue        # after a failed event nothing more is taken, in order
                if self.pending is not None and rec["kind"] in ("event", "duplicate", "gap"):
                    # a wheel the table does not know: its events wait in its outbox (never
                    # acknowledged) until a chef accepts it
                    if rec["kind"] == "event":
                        failed = rec["seq"]
                        self.link.rewind(failed)
                    continue
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
            self._link_change(now)

    def _link_change(self, now):
        """A session that ends is said once, with its likely cause, and on the event stream."""
        up = bool(self.link.in_session)
        self.watch.session(now, up)
        if up == self._was_up:
            if not up:
                self._still_down(now)
            return
        self._was_up = up
        self._said_down = None
        if not up:
            cause = self.watch.cause(now)
            self.connected = False
            self._said_down = cause and cause[0]
            log.warning("liaison coupée : %s", cause[1] if cause else "aucune session")
            self.publish("link", {"up": False, "cause": cause and cause[0], "problem": cause and cause[1]})

    def _still_down(self, now):
        """A link that never came up (a wheel of another key from the start) or whose cause
        changed is said too, once the silence timeout is over: the log is not left blank."""
        since = self.watch.down_since
        if self.source != "cylindre" or since is None or now - since < self.watch.silence_s:
            return
        cause = self.watch.cause(now)
        if cause is None or cause[0] == self._said_down:
            return
        self._said_down = cause[0]
        self.quiet(("link down", cause[0]), logging.WARNING, "liaison coupée : %s", cause[1])

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
                    fresh = self.table.on_event(rec["boot"], rec["seq"], identity.to_table(rec["event"], self.base), fid)
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
            # the wheel's own "last" number is not the table's (a result not yet settled, or never):
            # pages read the settled one (table.last_number); its spin is given as the table's
            status = identity.to_table({k: v for k, v in rec["status"].items() if k != "last"}, self.base)
            self.wheel_status = status
            self.last_heard = time.time()
            if self.pending is None:
                self.table.on_status(self.link.boot, rec["status"], self._taken)
            # with what the table says now (annonce.py): a screen follows "faites vos jeux" at the
            # wheel's pace, and stops saying it when its `open_for_ms` runs out with no status
            self.publish("status", dict(status, table=self.table.now()))
        elif kind == "welcome":
            first = rec["info"].get("first")
            self._taken = first - 1             # the wheel holds nothing before `first` unacknowledged
            self.connected = True
            self.welcome = rec["info"]
            self.last_heard = time.time()
            log.info("link up: wheel %s, boot %s, firmware %s, resending from event %s",
                     rec["info"].get("wheel"), rec["info"].get("boot"), rec["info"].get("fw"), rec["info"].get("first"))
            self.publish("link", {"up": True, "info": rec["info"]})
            if self.source == "cylindre":
                self._identify(rec["info"])
            self._queue_internal("set_time", {"epoch_ms": int(time.time() * 1000)})
            self._queue_internal("open_table" if self.want_open and self.pending is None else "close_table", {})
        elif kind == "duplicate":
            self.counts["duplicates"] += 1
        elif kind == "stale" and rec.get("detail") == "welcome replayed":
            self.counts["replays"] += 1
            self.quiet("replay", logging.WARNING, "frame stale: a WELCOME replayed inside its session, refused")
        elif kind == "reject" and rec.get("reason") == "wheel":
            self.counts["rejects"] += 1
            self.quiet("wheel", logging.ERROR, "wheel %s answered, %s expected (--wheel): no session; plug in the "
                       "right wheel, or start the daemon with --wheel and that wheel's key", rec.get("answered"), self.wheel)
        elif kind in ("reject", "stale", "gap"):
            key = {"reject": "rejects", "stale": "stale", "gap": "gaps"}[kind]
            self.counts[key] += 1
            level = logging.WARNING if kind == "reject" else logging.INFO
            self.quiet((kind, rec.get("reason")), level, "frame %s (%s): %s", kind, rec.get("reason", ""), rec.get("detail", ""))

    # -- the wheel's identity (identity.py) -----------------------------------------------------------
    def _identify(self, info):
        """The wheel that answered, against the one the table knows: taken, or pending a chef."""
        now_id = identity.seen(info, self.key_fp)
        self.seen = now_id
        with self.table.lock, self.j.tx():
            known = self.wheels.current()
            last = self.wheels.last_spin()
            others = self.wheels.others() if known is None else ()
            verdict, diffs = identity.judge(known, now_id, last, others, self.wheels.strays() if others else (),
                                            [r["epoch"] for r in self.wheels.all() if r["epoch"]])
            if verdict == "adopt":
                known = self.wheels.record(now_id, (known or {}).get("base") or 0,
                                           "first contact" if known is None else "the same wheel, saying more")
        if verdict == "unknown":
            text = identity.describe(now_id, diffs)
            self.pending = {"identity": now_id, "differences": diffs, "text": text, "last_spin": last}
            self.watch.unknown_wheel(time.monotonic(), text)
            self.table.blocked = "wheel_unknown"
            log.error("the wheel that answered is not the one this table knows (%s): its events wait, no bet is"
                      " taken until a chef de table accepts it (POST /wheel/accept; docs/operators/wheel-identity.md)", "; ".join(diffs))
            self.publish("link", {"up": True, "wheel_unknown": text})
            return
        if verdict == "adopt":
            log.info("wheel %s taken by the table: serial %s, key %s, counter epoch %s, spins from %s on",
                     now_id["wheel"], now_id["serial"], now_id["key"], now_id["epoch"], known["base"] + 1)
        self.pending = None
        self.watch.unknown_wheel(time.monotonic(), None)
        self.table.blocked = None
        self.base = known["base"] if known else 0

    def accept_wheel(self, by: str, expect: dict | None = None):
        """A chef de table accepts the wheel that answered (pending): from now on it is the
        table's; its spins number on after the table's last one, bets locked to the old wheel's
        called spin are held. Inside the caller's transaction (its audit row); the caller holds
        this daemon's lock first. Returns (the wheel before, the wheel now); ValueError if none is
        pending or it is not the one `expect` names."""
        p = self.pending
        if p is None:
            raise ValueError("no wheel waits to be accepted: the table knows the wheel that answers")
        for k, v in (expect or {}).items():
            if v is not None and p["identity"].get(k) != v:
                raise ValueError("the wheel waiting has %s %r, not %r: check it again" % (k, p["identity"].get(k), v))
        with self.table.lock, self.j.tx():
            known = self.wheels.current()
            last = self.wheels.last_spin()
            base = identity.base_for(known, p["identity"], last)
            now = self.wheels.record(p["identity"], base, by, first_spin=base + (p["identity"].get("spin") or 0) + 1)
            why = "the wheel was replaced (%s), accepted by %s" % ("; ".join(p["differences"]), by)
            self.table.wheel_replaced(why)
            strays = self.wheels.hold_strays(why) if known is None else []
        self.base = base
        self.pending = None
        self.table.blocked = None
        self.watch.unknown_wheel(time.monotonic(), None)
        self._taken = self.link.acked       # nothing of the new wheel's was taken yet
        log.warning("wheel accepted by %s: %s; its spins are the table's from %s on", by, "; ".join(p["differences"]),
                    now["first_spin"])
        if strays:
            log.warning("bets of the table's former wheel held for the supervisor: %s", ", ".join(strays))
        self._queue_internal("open_table" if self.want_open else "close_table", {})
        return known, dict(now, held=strays)

    @property
    def wheel_identity(self) -> dict:
        """The wheel the table knows, for whoever shows or publishes the table (the floor):
        `id`, `serial` (its board), `key` (the key's fingerprint), `epoch` (its spin counter's),
        `base` (its spin s is the table's spin base + s), `since`, `accepted_by`; `state` known,
        unknown (a wheel answers that the table does not know: `pending` says which and why) or
        none (no wheel yet)."""
        cur = self.wheels.current()
        p = self.pending
        out = {"id": self.wheel, "serial": None, "key": None, "epoch": None, "base": self.base, "since": None,
               "accepted_by": None, "state": "none" if cur is None else "known", "pending": None}
        if cur is not None:
            out.update(serial=cur["serial"], key=cur["key"], epoch=cur["epoch"], base=cur["base"], since=cur["since"],
                       accepted_by=cur["accepted_by"])
        if p is not None:
            out["state"] = "unknown"
            out["pending"] = {"identity": p["identity"], "differences": p["differences"], "text": p["text"]}
        return out

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

    def call_wheel(self):
        """The croupier's rien ne va plus told to the wheel (the table took it first: Table.call);
        its reply, or None."""
        return self.command("call")

    def problem(self):
        """(code, text, advice) of what keeps the link from being up (linkwatch.py), or None."""
        with self.lock:
            now = time.monotonic()
            self.watch.port(now, self.port.s is not None, getattr(self.port, "error", None))
            self.watch.session(now, bool(self.link.in_session))
            cause = self.watch.cause(now)
            if self.source != "cylindre" and cause is not None and cause[0] != "port_missing":
                return ("down", self.link.down_reason(), "")    # a Cammegh reader says why itself
            if cause is None and self.link.in_session and self.table.window.too_late():
                rtt = getattr(self.link, "rtt_ms", None)
                return ("slow_line", "liaison lente : les états du cylindre arrivent trop tard pour prendre des mises"
                        + (f" (aller-retour {rtt:.0f} ms)" if rtt else ""),
                        "une mise n'est prise que sur un état du cylindre de moins de %d ms : raccourcir la ligne (port USB"
                        " direct, pas de hub ni de serveur série), soulager la machine" % self.table.window.fresh_ms)
            return cause

    def health_reasons(self) -> list:
        """Why the source is not up (empty: it is): /health."""
        cause = self.problem()
        if cause is None:
            return []
        # a session that is up (an unknown wheel, a line too slow for bets) is not "link down"
        return [cause[1] if cause[0] in ("down", "wheel_unknown") or self.link.in_session else "link down: " + cause[1]]

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
            cause = self.problem()
            link["up"] = cause is None
            link["problem"] = None if cause is None else {"code": cause[0], "text": cause[1], "advice": cause[2]}
            link["rtt_ms"] = getattr(self.link, "rtt_ms", None)
            wheel = {"id": self.wheel, "welcome": self.welcome, "status": self.wheel_status,
                     "identity": self.wheel_identity}
        return {"link": link, "wheel": wheel, "table": self.table.state()}


def _ms():
    return int(time.monotonic() * 1000)


def _ms_float():
    return time.monotonic() * 1000.0
