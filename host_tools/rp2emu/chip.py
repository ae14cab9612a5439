"""An emulated Raspberry Pi Pico (RP2040, `rp2040py`) running a real MicroPython UF2, driven in
emulated time from one thread: no wall clock, no asyncio.

What the bench and the tests need of a chip, and nothing more:
- `run_until(ns)` / `run_for(s)`: run the core and its peripherals up to an instant of emulated
  time; `at(ns, fn)` calls `fn` at that instant (pin edges, the host's turns), in time order;
- `pin(gpio, level)`: drive an input pad from outside, then give each running PIO state machine
  a few single-cycle steps, so that the PIO follows the pad even while the core sleeps (the
  emulator steps PIO once per CPU instruction or idle jump only: with the core asleep in WFE a
  PIO program barely runs);
- `write(bytes)` / `on_serial`: the host's end of the USB CDC serial port. The emulator's USB
  host answers every bulk-OUT buffer the firmware arms with a zero-length packet when it has
  nothing to send, so the firmware never idles; a real host NAKs. Here the OUT buffer stays
  pending until the host has bytes (the CDC object's read hook is wrapped, rp2040py unchanged);
- `busy_cycles()`: cycles of executed instructions since construction (the emulator counts no
  cycle while the core sleeps: busy share = cycles / (125e6 x emulated seconds));
- `power_off()` / `power_on()`: a power cut (reset cause POWER_ON; the core stops at once; the
  watchdog stops, as on silicon, which rp2040py 0.3.6 leaves running; power-on starts from a
  power-on reset state), and the watchdog's own resets (`resets`).
"""

from __future__ import annotations

import heapq
from pathlib import Path

from rp2040py.boards import BoardSpec, FlashLayout
from rp2040py.device import MicroPythonDevice
from rp2040py.device.base_device import ResetCause
from rp2040py.execute_batch import execute_batch
from rp2040py.memory_map import FLASH_START_ADDRESS

HZ = 125_000_000
# MicroPython v1.28.0 RPI_PICO's file system (littlefs): 352 blocks of 4 KB at 640 KB in flash.
FS_LAYOUT = FlashLayout(fs_start=0xA0000, fs_blockcount=352, fs_blocksize=4096)
WDT_CTRL = 0x00
WDT_ENABLE = 1 << 30
WATCHDOG_SCRATCH = 0x4005800C      # SCRATCH0..3: free for the firmware (the SDK uses 4..7)
PIO_STEPS = 24                     # two turns of the quadrature program's loop after a pin change


class Chip:
    """One Pico: `uf2` is the MicroPython image, `fs` a littlefs image of its file system (bytes
    of FS_LAYOUT's size) or None for an empty flash."""

    def __init__(self, uf2: str | Path, fs: bytes | None = None):
        spec = BoardSpec(image=str(uf2), layout=FS_LAYOUT)
        self.dev = MicroPythonDevice(board=spec)
        self.sim = self.dev.simulator
        self.mcu = self.dev.mcu
        self.clock = self.sim.clock
        if fs is not None:
            if len(fs) != FS_LAYOUT.fs_blockcount * FS_LAYOUT.fs_blocksize:
                raise ValueError("file-system image of %d bytes, expected %d" % (
                    len(fs), FS_LAYOUT.fs_blockcount * FS_LAYOUT.fs_blocksize))
            start = FS_LAYOUT.fs_start
            self.mcu.flash[start:start + len(fs)] = fs
        self._events: list = []          # (ns, order, fn)
        self._order = 0
        self._alarm = self.clock.create_alarm(self._due)
        self._alarm_at = None
        self._stop_at = None
        self._cycles_before = 0          # cycles of earlier power-ups (the core's count restarts)
        self.levels: dict[int, int] = {}  # pads driven from outside, re-applied after a reset
        self.resets: list[tuple[float, str]] = []
        self.powered = True
        self.on_serial = None            # fn(bytes) for what the Pico writes to the USB serial
        self.connected = False           # the USB device is enumerated (the host's port is open)
        self.dropped = 0                 # host bytes written while the port was gone
        self._outq = bytearray()
        self._out_pending = None         # size of the bulk-OUT buffer the firmware armed
        self._wire_usb()
        self.dev._on_watchdog_trigger = self._watchdog_reset
        self.mcu.watchdog.on_watchdog_trigger = self._watchdog_reset
        self._booted = False

    # -- time ----------------------------------------------------------------------------------
    @property
    def ns(self) -> float:
        return self.clock.nanos

    @property
    def seconds(self) -> float:
        return self.clock.nanos / 1e9

    def ms(self) -> int:
        return int(self.clock.nanos // 1_000_000)

    def at(self, ns: float, fn) -> None:
        """Call `fn()` at emulated instant `ns` (now if already past)."""
        self._order += 1
        heapq.heappush(self._events, (max(ns, self.clock.nanos), self._order, fn))
        self._arm()

    def _arm(self) -> None:
        nxt = self._events[0][0] if self._events else None
        if self._stop_at is not None and (nxt is None or self._stop_at < nxt):
            nxt = self._stop_at
        if nxt is None:
            self._alarm.cancel()
            self._alarm_at = None
        elif nxt != self._alarm_at:
            self._alarm.cancel()
            self._alarm.schedule(max(0.0, nxt - self.clock.nanos))
            self._alarm_at = nxt

    def _due(self) -> None:
        self._alarm_at = None
        now = self.clock.nanos
        ev = self._events
        while ev and ev[0][0] <= now:
            _, _, fn = heapq.heappop(ev)
            fn()
        if self._stop_at is not None and self._stop_at <= now:
            self._stop_at = None
            self.sim.stopped = True
        self._arm()

    def boot(self) -> None:
        """Release the core at the flash's entry point (the cold boot)."""
        if not self._booted:
            self._booted = True
            self.mcu.core.pc = FLASH_START_ADDRESS

    def run_until(self, ns: float) -> None:
        """Run the chip up to emulated instant `ns`."""
        self.boot()
        if ns <= self.clock.nanos:
            return
        self._stop_at = ns
        self._arm()
        sim = self.sim
        sim.stopped = False
        while True:
            if self.mcu.run_pin_low:
                # powered off: nothing runs, time goes to the next event (power back, an edge)
                self.clock.tick(max(self.clock.nanos_to_next_alarm, 1.0))
            else:
                execute_batch(sim, 1)
            if sim.stopped:
                sim.stopped = False
                if self._stop_at is None:      # `ns` reached (`_due`); else a power cut ended the batch
                    break

    def run_for(self, seconds: float) -> None:
        self.run_until(self.clock.nanos + seconds * 1e9)

    def run_while(self, cond, timeout_s: float, step_s: float = 0.01) -> bool:
        """Run in `step_s` slices while `cond()` holds, at most `timeout_s` emulated seconds.
        Returns True if `cond()` turned false."""
        end = self.clock.nanos + timeout_s * 1e9
        while cond():
            if self.clock.nanos >= end:
                return False
            self.run_until(min(end, self.clock.nanos + step_s * 1e9))
        return True

    def busy_cycles(self) -> int:
        return self._cycles_before + self.mcu.core.cycles

    # -- pins ----------------------------------------------------------------------------------
    def pin(self, gpio: int, level: int) -> None:
        """Drive input pad `gpio` to `level`, then let the PIO see it."""
        self.levels[gpio] = level
        if not self.powered:
            return
        self.mcu.gpio[gpio].set_input_value(bool(level))
        self._kick_pio(PIO_STEPS)

    def _kick_pio(self, steps: int) -> None:
        for pio in self.mcu.pio:
            if pio.stopped:
                continue
            for _ in range(steps):
                pio.advance(1)

    def _reapply_pins(self) -> None:
        for g, v in self.levels.items():
            self.mcu.gpio[g].set_input_value(bool(v))

    def scratch(self, i: int) -> int:
        """Watchdog scratch register `i` (0..3), as the firmware's probe left it."""
        return self.mcu.watchdog.scratch_data[i]

    def set_scratch(self, i: int, value: int) -> None:
        self.mcu.watchdog.scratch_data[i] = value & 0xFFFFFFFF

    # -- power and resets ------------------------------------------------------------------------
    def _count_cycles_out(self) -> None:
        self._cycles_before += self.mcu.core.cycles

    def power_off(self) -> None:
        """The power goes: the chip stops at once, where it is (RAM lost, flash kept), the USB
        device leaves the bus, the watchdog stops (its CTRL enable bit cleared: silicon loses it).

        At once: rp2040py reads the RUN pin once per batch of up to 1,000,000 instructions
        (`execute_batch`), assuming it only changes between batches; a cut fired from an event
        inside a batch (a feed's RESET, `power_cut`) let the core run on from the reset vector
        for the rest of the batch, "powered off": the bootrom got as far as reading boot2 over
        the SSI, and the power-on (which jumps to the flash's entry, as the bootrom would) ran
        boot2 against that half-done read: it polled a garbage busy bit forever, the board never
        came back. So the batch is ended here (`sim.stopped`; `run_until` carries on)."""
        if not self.powered:
            return
        wd = self.mcu.watchdog
        wd.write_uint32(WDT_CTRL, wd.read_uint32(WDT_CTRL) & ~WDT_ENABLE)
        self._count_cycles_out()
        self.powered = False
        self.resets.append((self.clock.nanos, "power_off"))
        self.mcu.on_run_pin_held = lambda: self.dev._enter_reset(ResetCause.POWER_ON)
        self.mcu.set_run_pin(low=True)
        self.sim.stopped = True

    def power_on(self) -> None:
        """The power comes back: the chip leaves a power-on reset. Its blocks go to their reset
        values again at this instant (peripheral alarms may have fired while it was held), and
        SRAM and the USB RAM are cleared: silicon loses them, rp2040py keeps them across any
        reset (MicroPython re-initialises what it uses, but a cut must not leave anything a real
        power-up would not)."""
        if self.powered:
            return
        self.powered = True
        self.resets.append((self.clock.nanos, "power_on"))
        self.dev._enter_reset(ResetCause.POWER_ON)
        for ram in (self.mcu.sram, self.mcu.usb_dpram):
            ram[:] = bytes(len(ram))
        self._reapply_pins()
        self.mcu.set_run_pin(low=False)

    def power_cut(self, off_s: float = 0.2) -> None:
        """A power blip now: off for `off_s` emulated seconds, then on."""
        self.power_off()
        self.at(self.clock.nanos + off_s * 1e9, self.power_on)

    def _watchdog_reset(self) -> None:
        self._count_cycles_out()
        self.resets.append((self.clock.nanos, "watchdog"))
        self.dev.hard_reset(cause=ResetCause.WATCHDOG)
        self._reapply_pins()

    # -- USB serial ----------------------------------------------------------------------------
    def _wire_usb(self) -> None:
        cdc, usb = self.dev.cdc, self.mcu.usb_ctrl
        stock_read = usb.on_endpoint_read
        stock_reset = usb.on_reset

        def on_read(endpoint, size):
            if endpoint != cdc._out_endpoint or endpoint < 0:
                return stock_read(endpoint, size)
            if not self._outq:
                self._out_pending = size      # a real host NAKs until it has bytes
                return
            self._serve(size)

        def on_reset():
            self.connected = False
            self._out_pending = None
            self._outq.clear()
            stock_reset()

        def on_data(data):
            if self.on_serial is not None:
                self.on_serial(bytes(data))

        def on_connected():
            self.connected = True

        usb.on_endpoint_read = on_read
        usb.on_reset = on_reset
        cdc.on_serial_data = on_data
        cdc.on_device_connected = on_connected

    def _serve(self, size: int) -> None:
        n = min(size, len(self._outq))
        data = bytes(self._outq[:n])
        del self._outq[:n]
        self.mcu.usb_ctrl.endpoint_read_done(self.dev.cdc._out_endpoint, data)

    def write(self, data: bytes) -> int:
        """The host writes to the serial port: bytes for a device that is not on the bus are
        lost (counted in `dropped`), as on a port that has gone."""
        if not (self.connected and self.powered):
            self.dropped += len(data)
            return 0
        self._outq.extend(data)
        if self._out_pending is not None:
            size, self._out_pending = self._out_pending, None
            self._serve(size)
        return len(data)
