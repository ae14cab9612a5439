"""The emulated Pico at a table: the firmware deployed on its flash, sensor edges on its pins, the
project's host link on its USB serial, and the heap and CPU read off the chip.

- `deploy(...)`: a `Chip` with the firmware as `make flash` leaves it (or a frozen UF2), the key,
  the board file, and optionally the heap probe (`PROBE`, as /boot.py);
- `Host`: the host's end of the link (`cylindre.link.host.HostLink`, as the daemon drives it) on
  the serial port, turning every `period_ms` of emulated time: it feeds what arrived, polls
  (HELLO while it has no session, acks, retries), acknowledges each event at once (durable) and
  keeps the journal of records;
- `Feed`: plays (t_us, signal, level) changes (a feed file's or the simulator's) on the pins, from
  a start instant; `RESET` cuts the power and gives it back (docs/integrators/feed-format.md);
- `HeapProbe`: asks the probe for a mark (gc.collect(); gc.mem_alloc() on the port), and takes
  the probe's own cycles out of the CPU figures.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from host_tools.rp2emu import flash
from host_tools.rp2emu.chip import WATCHDOG_SCRATCH, Chip

ROOT = Path(__file__).resolve().parents[2]
def _stock_uf2() -> Path:
    """The stock MicroPython v1.28.0 RPI_PICO UF2 (built from the tagged sources: shared/rp2/BUILD.md):
    $CYLINDRE_RP2_UF2, else shared/rp2/ beside the repository (as CI lays it), else /work/shared/rp2/."""
    name = "micropython-v1.28.0-RPI_PICO.uf2"
    given = os.environ.get("CYLINDRE_RP2_UF2")
    if given:
        return Path(given)
    for p in (ROOT.parent / "shared" / "rp2" / name, ROOT.parent.parent / "shared" / "rp2" / name,
              Path("/work/shared/rp2") / name):
        if p.is_file():
            return p
    return Path("/work/shared/rp2") / name


STOCK_UF2 = _stock_uf2()
KEY = ("5f" * 32).encode()

# The heap probe, written as /boot.py: it runs before main.py, on the same interpreter. It makes
# the serial line data (as main.py does first) and wraps the main loop's turn: after a turn, if
# the harness set SCRATCH1, it collects and writes the live heap (gc.mem_alloc) to SCRATCH0;
# writing SCRATCH2 then SCRATCH1 brackets its own work, so the harness takes those cycles out.
PROBE = b"""import micropython
micropython.kbd_intr(-1)
import gc
import machine
from cylindre.board import loop as _loop
_W = const(0x%X)


def _run(self):
    m = machine.mem32
    step = self.step
    while True:
        step()
        if m[_W + 4]:
            m[_W + 8] = 1
            gc.collect()
            m[_W] = gc.mem_alloc()
            m[_W + 4] = 0


_loop.MainLoop.run = _run
""" % WATCHDOG_SCRATCH


def uf2_default() -> Path:
    """The project's frozen UF2 if one was built, else None."""
    for p in (ROOT / "build" / "uf2" / "pico" / "cylindre-pico.uf2",
              Path("/work/notes/artifacts/cylindre-pico.uf2")):
        if p.is_file():
            return p
    return None


def deploy(uf2: Path | None = None, frozen: bool = False, board: str = "pico", key: bytes | None = KEY,
           probe: bool = False, folder: Path | None = None, boot_py: bytes | None = None) -> Chip:
    """A chip with the firmware deployed: the stock UF2 and the compiled package on the file
    system (`make flash`), or `frozen=True` with a UF2 that has the package frozen in (only
    main.py, board.json and the key on the file system). `folder`: an existing build
    (build/firmware/<board>), else one is built. `probe`: the heap probe as /boot.py;
    `boot_py`: another /boot.py (a bench's own probe)."""
    uf2 = Path(uf2) if uf2 is not None else STOCK_UF2
    folder = folder if folder is not None else flash.build_firmware(board)
    boot_py = PROBE if probe else boot_py
    extra = {"/boot.py": boot_py} if boot_py is not None else None
    fs = flash.image(flash.files_of(folder, key, frozen=frozen, extra=extra))
    chip = Chip(uf2, fs)
    chip.board = json.loads((Path(folder) / "board.json").read_text())
    return chip


def rest_levels(board: dict) -> dict[int, int]:
    """Pad levels of a wheel at rest: sensors inactive (high when active low), encoder A and B low."""
    pins = board["pins"]
    idle = 1 if board.get("active_low") else 0
    levels = {pins["enc_a"]: 0, pins["enc_b"]: 0, pins["z"]: idle}
    for g in list(pins["ball"]) + list(pins["pocket"]) + [pins.get("void"), pins.get("call")]:
        if g is not None:
            levels[g] = idle
    return levels


class Host:
    """The host's end of the link on `chip`'s serial port (see the module docstring). `talk`
    False keeps it silent (no HELLO) until `talk` is set."""

    def __init__(self, chip: Chip, key: bytes = KEY, wheel: str | None = None, period_ms: int = 20,
                 talk: bool = True):
        from cylindre.link.host import HostLink
        from cylindre.link.mac import parse_key

        self.chip = chip
        self.link = HostLink(write=chip.write, clock_ms=chip.ms, key=parse_key(key), wheel=wheel)
        self.period_ns = period_ms * 1_000_000
        self.talk = talk
        self.rx = bytearray()
        self.records: list[dict] = []
        self.events: list[dict] = []       # delivered events, in order: {"boot", "seq", "event"}
        self.status = None
        self.replies: dict[int, dict] = {}
        self.counts: Counter = Counter()
        self.bytes_in = 0
        self.bytes_out = 0
        self.frames_out = 0
        chip.on_serial = self._serial
        self._write = self.link._write
        self.link._write = self._counted_write
        chip.at(chip.ns, self._turn)

    def _serial(self, data: bytes) -> None:
        self.rx.extend(data)
        self.bytes_in += len(data)

    def _counted_write(self, data: bytes) -> None:
        self.bytes_out += len(data)
        self.frames_out += 1
        self._write(data)

    def _turn(self) -> None:
        data = bytes(self.rx)
        self.rx.clear()
        recs = self.link.feed(data) if data else []
        if self.talk:
            recs += self.link.poll()
        for r in recs:
            self._record(r)
        self.chip.at(self.chip.ns + self.period_ns, self._turn)

    def _record(self, r: dict) -> None:
        kind = r["kind"]
        self.counts[kind] += 1
        r = {k: v for k, v in r.items() if k != "raw"}
        self.records.append(r)
        if kind == "event":
            self.events.append({"boot": r["boot"], "seq": r["seq"], "event": r["event"]})
            self.link.acknowledge(r["seq"])       # durable at once
        elif kind == "status":
            self.status = r["status"]
        elif kind == "reply":
            self.replies[r["seq"]] = r["reply"]

    def command(self, cmd: str, args: dict | None = None) -> int:
        return self.link.command(cmd, args)

    @property
    def in_session(self) -> bool:
        return self.link.in_session

    def kinds(self) -> list[str]:
        return [e["event"].get("ev") for e in self.events]

    def outcomes(self) -> list[dict]:
        """Every result and void delivered, in order."""
        return [e["event"] for e in self.events if e["event"].get("ev") in ("result", "void")]


class Feed:
    """Plays `changes` ((t_us, signal, level), time-ordered) on `chip`'s pins from `t0_ns`, one
    scheduled at a time. Signals map to the board's pins (A, B: the encoder; Z, BALLi, POCKETi,
    VOID: the sensors, inverted on an active-low board); RESET 1/0 cuts and restores power."""

    def __init__(self, chip: Chip, board: dict, changes, t0_ns: float):
        pins = board["pins"]
        self.chip = chip
        self.t0 = t0_ns
        self.low = bool(board.get("active_low"))
        self.gpio = {"A": pins["enc_a"], "B": pins["enc_b"], "Z": pins["z"], "VOID": pins.get("void")}
        for i, g in enumerate(pins["ball"]):
            self.gpio["BALL%d" % i] = g
        for i, g in enumerate(pins["pocket"]):
            self.gpio["POCKET%d" % i] = g
        self.it = iter(changes)
        self.played = 0
        self.done = False
        self._next()

    def _next(self) -> None:
        try:
            t, name, level = next(self.it)
        except StopIteration:
            self.done = True
            return
        self.chip.at(self.t0 + t * 1000, lambda: self._play(name, level))

    def _play(self, name: str, level: int) -> None:
        self.played += 1
        if name == "RESET":
            if level:
                self.chip.power_off()
            else:
                self.chip.power_on()
        else:
            g = self.gpio.get(name)
            if g is not None:
                if self.low and name not in ("A", "B"):
                    level = 1 - level
                self.chip.pin(g, level)
        self._next()


class HeapProbe:
    """Marks of the live heap from the probe (/boot.py, `PROBE`): `request()` asks for one at
    the loop's next turn; `marks` holds (emulated s, bytes); `cycles` the probe's own cycles."""

    def __init__(self, chip: Chip):
        self.chip = chip
        self.marks: list[tuple[float, int]] = []
        self.cycles = 0
        self._began = None
        wd = chip.mcu.watchdog
        stock = wd.write_uint32

        def write(offset, value):
            stock(offset, value)
            if offset == 0x14 and value:                  # SCRATCH2: the mark begins
                self._began = chip.busy_cycles()
            elif offset == 0x10 and value == 0 and self._began is not None:   # SCRATCH1 cleared: done
                self.cycles += chip.busy_cycles() - self._began
                self._began = None
                self.marks.append((chip.seconds, chip.scratch(0)))

        wd.write_uint32 = write

    def request(self) -> None:
        self.chip.set_scratch(1, 1)

    def every(self, seconds: float) -> None:
        """Ask for a mark every `seconds` of emulated time."""
        def tick():
            self.request()
            self.chip.at(self.chip.ns + seconds * 1e9, tick)
        self.chip.at(self.chip.ns, tick)
