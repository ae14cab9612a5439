"""`cylindre wheel`: the simulated board (carte simulée) speaking the real protocol on a pty.

The simulator (`host_tools.sim`) makes each spin's sensor edges; `cylindre.replay.Replay` feeds them
to the firmware's own Controller, paced in (accelerated) real time; every event goes through the
firmware's own `DeviceLink` onto a pseudo-terminal (or `--port`), exactly the bytes a Pico would
send. The simulated croupier launches only while the table is open and the controller accepts
spins (its outbox is not full), and waits `--pause` seconds between spins for the players.
"""

from __future__ import annotations

import os
import random
import select
import sys
import time
import tty

HELP = "run a simulated wheel (firmware code on the simulator) on a pseudo-terminal"
VOID_SCENARIOS = ("same_direction", "few_laps", "void_button", "ball_off_wheel")


def add_arguments(p):
    p.add_argument("--port", help="use this serial device instead of creating a pseudo-terminal")
    p.add_argument("--pty-fd", type=int, metavar="FD",
                   help="the board's end (master) of a pseudo-terminal its caller made and passed on (the demo)")
    p.add_argument("--key", default="keys/T1.key", help="the wheel key file (same as the daemon's)")
    p.add_argument("--wheel", default="T1", help="wheel id (default T1)")
    p.add_argument("--serial", help="the board serial the wheel reports in its WELCOME (default sim-<wheel>)")
    p.add_argument("--spins", type=int, default=0, help="stop after this many spins (0: run until killed)")
    p.add_argument("--speed", type=float, default=20.0, help="simulated seconds per real second (default 20)")
    p.add_argument("--pause", type=float, default=1.0, help="real seconds between spins, for bets (default 1)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--void-rate", type=float, default=0.0, help="share of spins given a misspin scenario")
    p.add_argument("--cammegh", action="store_true",
                   help="also open a second pty with the Cammegh output (it answers *P 1 / *P 0 / *u 1)")
    g = p.add_argument_group("a Cammegh reader instead of a Cylindre wheel (docs/integrators/cammegh-reader.md)")
    g.add_argument("--cammegh-only", action="store_true",
                   help="play a Cammegh SS2 reader on the pty (9600-baud pacing, no key, no Cylindre link); "
                        "--spins counts games dealt, --speed, --seed and --void-rate apply")
    g.add_argument("--cammegh-replay", metavar="FILE",
                   help="play a recorded reader session (its lines as captured, a status line every 500 ms) on the "
                        "pty at 9600-baud pacing, --speed times real time; answers nothing")
    g.add_argument("--closed", action="store_true",
                   help="the table starts closed: the reader stays stopped (state 6) until it reads *P 1; "
                        "a Cylindre wheel's croupier waits until the host opens the table")
    g.add_argument("--close-every", type=int, default=0, metavar="N",
                   help="the reader stops (state 6) after every N games dealt, until it reads *P 1")
    g.add_argument("--garbage", type=float, default=0.0, metavar="RATE",
                   help="share of status lines followed by a line of random bytes")
    g.add_argument("--cut-every", type=int, default=0, metavar="N",
                   help="every Nth status line is cut short, without its CR LF")
    p.add_argument("--path-file", help="write the pty path(s) to this file (for scripts)")
    p.add_argument("--flash", metavar="FILE",
                   help="keep the controller's flash record (spin counter and its epoch, last games) in FILE "
                        "between runs: the same wheel to a table host; without it each run is a new counter")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--power-cut", action="append", default=[], metavar="SPIN:WHEN",
                   help="cut the board's power at spin SPIN: WHEN is result_unsent (the result never "
                        "leaves), result_unacked (sent, not yet acknowledged) or after_rnvp; repeatable")


def _pts_name(master) -> str:
    """/dev/pts/N of a pty's master end (Linux: TIOCGPTN)."""
    import fcntl
    import struct
    import termios
    try:
        return "/dev/pts/%d" % struct.unpack("I", fcntl.ioctl(master, getattr(termios, "TIOCGPTN", 0x80045430), b"\0" * 4))[0]
    except (AttributeError, OSError):
        return "pty (fd %d)" % master


class PtyPort:
    """The board's end of a pseudo-terminal; the other end (printed path) is the host's port.
    `master`: the board's end of a pty its caller made (`--pty-fd`: the demo makes each table's
    pty and hands its other end, locked, to the daemon, so no other program can take it)."""

    def __init__(self, master=None):
        if master is None:
            self.master, self.slave = os.openpty()
            tty.setraw(self.slave)
        else:
            self.master, self.slave = master, None
        tty.setraw(self.master)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave) if self.slave is not None else _pts_name(self.master)

    def write(self, data):
        """A frame goes whole or not at all: with the host's buffer full (no reader, or a host too
        busy to read) it is dropped, like USB CDC, and the outbox resends it; once its first bytes
        are in, the rest waits for room (at most a second), so no frame reaches the host cut."""
        view = memoryview(data)
        try:
            view = view[os.write(self.master, view):]
        except (BlockingIOError, OSError):
            return
        end = time.monotonic() + 1.0
        while view and time.monotonic() < end:
            try:
                view = view[os.write(self.master, view):]
            except BlockingIOError:
                select.select([], [self.master], [], 0.01)
            except OSError:
                return

    def read(self):
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, OSError):
            return b""


class SerialDevice:
    def __init__(self, url, baud=115200):
        import serial
        self.s = serial.serial_for_url(url, baudrate=baud, timeout=0, write_timeout=0.2)
        self.path = url

    def write(self, data):
        try:
            self.s.write(data)
        except Exception:
            pass

    def read(self):
        try:
            return self.s.read(4096)
        except Exception:
            return b""


class SimulatedBoard:
    """The simulator, the firmware's Replay/Controller and its DeviceLink, on one clock."""

    def __init__(self, port, key, wheel="T1", seed=1, speed=20.0, pause=1.0, void_rate=0.0,
                 cammegh=None, log=None, clock=time.monotonic, capacity=64, store=None, serial=None):
        from cylindre.link.device import DeviceLink
        from cylindre.replay import Replay
        from host_tools.sim.wheel import WheelSimulator
        self.port = port
        self.speed = speed
        self.pause = pause
        self.void_rate = void_rate
        self.rng = random.Random(seed)
        self.log = log or (lambda text: None)
        self.clock = clock
        self.sim = WheelSimulator(seed=seed)
        self._new_link = lambda: DeviceLink(self._write, self._ms, key, wheel, fw="cylindre-fw (simulated board)",
                                            cammegh=cammegh, capacity=capacity, serial=serial or "sim-" + wheel)
        self.link = self._new_link()
        # the Pico's clock: from its boot; its flash record in RAM unless a store is given
        self.replay = Replay(self.sim.header(), self._emit, feed_clock=False, store=store)
        self.t_us = 0                 # simulated feed time (the controller's: replay.now_us(t_us))
        self._real0 = clock()
        self._sim0 = 0
        self.spins = 0
        self.results = []
        # power cuts the test or the user asked for: {spin: "result_unsent" | "result_unacked" | "after_rnvp"}
        self.cuts = {}
        self.power_cuts = 0
        self.need_host = False        # True: the croupier waits for a host session after a boot
        self.launch_when = None       # a test's condition for the croupier to launch (e.g. bets are on)
        self._cut_at = None           # clock() time of a pending cut
        self._mute = False            # nothing leaves the board (the frame dies with the power)
        self._deaf = False            # nothing reaches the board (the host's ack comes too late)
        self._cut_written = False     # cut once the controller has written its record
        self.replay.power_on(0)

    def _ms(self):
        return int(self.clock() * 1000)

    def _write(self, data):
        if not self._mute:
            self.port.write(data)

    def _emit(self, ev):
        kind = ev.get("ev")
        if kind == "boot":
            # a (re)boot: the link drives this controller now, on its own clock
            self.link.attach(self.replay.ctl, lambda: self.replay.now_us(self.t_us))
        if kind in ("result", "void", "rnvp", "launch"):
            self.log(_describe(ev))
        if kind == "result":
            self.results.append((ev["spin"], ev["number"]))
            self._played = True
        cut = self.cuts.get(ev.get("spin")) if kind in ("result", "rnvp") else None
        if cut == "result_unsent" and kind == "result":
            self._mute = True                       # emitted, never on the wire: the result is
            self._cut_written = True                # never acknowledged, so the controller writes
                                                    # it after its hold; the cut comes then
        elif cut == "result_unacked" and kind == "result":
            self._deaf = True                       # on the wire; the ack never arrives
            self._cut_at = self.clock() + 0.5
        elif cut == "after_rnvp" and kind == "rnvp":
            self._cut_at = self.clock()             # mid-spin: the bets are locked, no result yet
        self.link.emit(ev)

    def power_cut(self):
        """The board loses power and gets it back: the link's RAM (session, outbox, boot id) is
        gone; the controller boots again from the same store (flash survives)."""
        self._cut_at = None
        self._mute = self._deaf = self._cut_written = False
        self.power_cuts += 1
        self.log("power cut")
        self.link = self._new_link()
        # the power comes back after the croupier took the ball: no sensor still sees it
        gone = [(self.t_us, k, 0) for k in sorted(self.replay.levels)
                if self.replay.levels[k] and k.startswith(("BALL", "POCKET"))]
        self.replay.run([(self.t_us, "RESET", 1)] + gone + [(self.t_us, "RESET", 0)])

    def _now_sim(self):
        return self._sim0 + int((self.clock() - self._real0) * 1e6 * self.speed)

    def _freeze(self):
        """Hold simulated time still (between spins): the controller sees no time pass."""
        self._sim0 = self.t_us
        self._real0 = self.clock()

    def service(self):
        """Bytes in, link retransmissions out; call often. Returns False if the power was cut."""
        data = self.port.read()
        if data and not self._deaf:
            self.link.feed(data)
        self.link.poll()
        if self._cut_written and not self.replay.ctl.dirty:
            self._cut_at = self.clock()
        if self._cut_at is not None and self.clock() >= self._cut_at:
            self.power_cut()
            return False
        return True

    def idle(self, seconds):
        end = self.clock() + seconds
        while self.clock() < end:
            self.service()
            time.sleep(0.005)
        self._freeze()

    def ready(self):
        ctl = self.replay.ctl
        return ctl.table_open and ctl.accepting and (self.link.in_session or not self.need_host) \
            and (self.launch_when is None or self.launch_when())

    def run_spin(self, scenario=None):
        spin = self.sim.spin(scenario)
        changes = spin.changes
        offset = self.t_us - changes[0][0] + 1 if changes and changes[0][0] <= self.t_us else 0
        i, n = 0, len(changes)
        self._played = False
        self._freeze()
        while i < n:
            target = self._now_sim()
            j = i
            while j < n and changes[j][0] + offset <= target:
                j += 1
            if j > i:
                if offset:
                    self.replay.run([(t + offset, s, lv) for (t, s, lv) in changes[i:j]])
                else:
                    self.replay.run(changes[i:j])
                i = j
            self.t_us = max(self.t_us, target if i < n else changes[-1][0] + offset)
            self.replay.finish(self.t_us)
            if not self.service():
                break               # the power came back after the croupier took the ball
            time.sleep(0.004)
        self.spins += 1
        self.sim.counted(self._played)      # the croupier reverses the rotor only after a result
        return spin.truth

    def play(self, spins=0, stop=None):
        """Spin while the table is open; stop after `spins` (0: never) or when `stop()` is true."""
        while (spins == 0 or self.spins < spins) and not (stop and stop()):
            if not self.ready():
                self.idle(0.05)
                continue
            self.idle(self.pause)
            if not self.ready():
                continue            # the table changed its mind during the pause
            scenario = None
            if self.void_rate and self.rng.random() < self.void_rate:
                scenario = self.rng.choice(VOID_SCENARIOS)
            self.run_spin(scenario)

    def drain(self, timeout=10.0):
        """Keep serving until the host has acknowledged every event (or `timeout`)."""
        end = self.clock() + timeout
        while self.clock() < end and self.link.outbox_len():
            self.service()
            time.sleep(0.005)
        return self.link.outbox_len() == 0


CUT_WHEN = ("result_unsent", "result_unacked", "after_rnvp")


def parse_cuts(items):
    """["3:result_unsent", ...] -> {3: "result_unsent"}; ValueError with a clear message."""
    cuts = {}
    for item in items:
        spin, _, when = item.partition(":")
        if not spin.isdigit() or when not in CUT_WHEN:
            raise ValueError("%r: expected SPIN:WHEN, WHEN one of %s" % (item, ", ".join(CUT_WHEN)))
        cuts[int(spin)] = when
    return cuts


def _describe(ev):
    k = ev["ev"]
    if k == "result":
        return "spin %d: %d" % (ev["spin"], ev["number"])
    if k == "void":
        return "spin %s: void (%s)" % (ev.get("spin"), ev.get("reason"))
    if k == "rnvp":
        return "spin %d: rien ne va plus" % ev["spin"]
    return "spin %d: launch" % ev["spin"]


def _write_paths(paths, path_file):
    print(" ".join(paths), flush=True)
    if path_file:
        tmp = path_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(paths) + "\n")
        os.replace(tmp, path_file)


def run_reader(args) -> int:
    """`--cammegh-only`: a simulated Cammegh reader (host_tools.cammegh.reader_sim) on a pty."""
    from host_tools.cammegh.reader_sim import ReaderSim, run_pty
    if args.spins < 0 or args.close_every < 0 or args.cut_every < 0 or not 0 <= args.garbage <= 1 \
            or not 0 <= args.void_rate <= 1 or args.speed <= 0:
        print("cylindre wheel: --spins, --close-every, --cut-every >= 0; --garbage, --void-rate in 0..1; "
              "--speed > 0", file=sys.stderr)
        return 2
    timed = None
    if args.cammegh_replay:
        from host_tools.cammegh.replay import timed_lines
        try:
            timed = timed_lines(open(args.cammegh_replay, "rb").read())
        except OSError as e:
            print(f"cylindre wheel: --cammegh-replay: {e}", file=sys.stderr)
            return 2
    try:
        port = SerialDevice(args.port, 9600) if args.port else PtyPort()
    except Exception as e:
        print(f"cylindre wheel: cannot open {args.port or 'a pseudo-terminal'}: {e}", file=sys.stderr)
        return 2
    _write_paths([port.path], args.path_file)
    if args.cammegh_replay:
        from host_tools.cammegh.replay import play
        try:
            play(port, timed, speed=args.speed)
        except KeyboardInterrupt:
            pass
        return 0
    sim = ReaderSim(seed=args.seed, games=args.spins, void_rate=args.void_rate, closed=args.closed,
                    close_every=args.close_every, garbage=args.garbage, cut_every=args.cut_every)

    def say(text):
        if not args.quiet:
            print("[reader] " + text, file=sys.stderr, flush=True)

    try:
        run_pty(port, sim, speed=args.speed, log=say)
    except KeyboardInterrupt:
        pass
    return 0


def run(args) -> int:
    from host_tools.table.wheel.keys import KeyError_, load_key
    from cylindre.link.cammegh import CammeghOutput, table_power
    if args.cammegh_only or args.cammegh_replay:
        return run_reader(args)
    try:
        key = load_key(args.key)
    except KeyError_ as e:
        print(f"cylindre wheel: {e}", file=sys.stderr)
        return 2
    try:
        cuts = parse_cuts(args.power_cut)
    except ValueError as e:
        print(f"cylindre wheel: --power-cut: {e}", file=sys.stderr)
        return 2
    try:
        port = SerialDevice(args.port) if args.port else PtyPort(args.pty_fd)
    except Exception as e:      # pyserial's SerialException, OSError, a bad URL
        print(f"cylindre wheel: cannot open {args.port or 'a pseudo-terminal'}: {e}", file=sys.stderr)
        return 2
    cammegh = None
    paths = [port.path]
    boards = []

    def power(on):        # *P 1 / *P 0 on the Cammegh pty, as firmware/main.py wires them
        b = boards[0] if boards else None
        return table_power(b and b.replay.ctl, b and b.link, on, b.replay.now_us(b.t_us) if b else 0)

    if args.cammegh:
        cport = PtyPort()
        cammegh = CammeghOutput(cport.write, read=cport.read, power=power)
        paths.append(cport.path)
    _write_paths(paths, args.path_file)

    def say(text):
        if not args.quiet:
            print("[wheel] " + text, file=sys.stderr, flush=True)

    store = None
    if getattr(args, "flash", None):
        from cylindre.board.store import FlashStore
        store = FlashStore(str(args.flash))
    board = SimulatedBoard(port, key, args.wheel, seed=args.seed, speed=args.speed, pause=args.pause,
                           void_rate=args.void_rate, cammegh=cammegh, log=say, store=store,
                           serial=getattr(args, "serial", None))
    boards.append(board)
    if args.closed:
        board.replay.ctl.table_open = False     # launches wait for the host's open_table
    board.cuts = cuts
    try:
        board.play(args.spins)
        board.drain()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    import argparse
    _p = argparse.ArgumentParser(prog="cylindre wheel", description=HELP)
    add_arguments(_p)
    sys.exit(run(_p.parse_args()))
