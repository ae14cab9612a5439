"""The Pico's wiring, run by firmware/main.py: loads /board.json (the board's pins, geometry and
spin settings), builds the shell around the spin controller, wires the serial link (and the
Cammegh output when the board has one), then runs the main loop (cylindre.board.loop): drain the
sensor edges, tick, serve the link, feed the watchdog, wait. See docs/wheel/on-the-board.md.

It lives here, not in main.py, because main.py is source that MicroPython compiles into RAM at
every boot, while this module is flashed compiled (a ROMFS image or a frozen UF2) and runs in
place. firmware/main.py makes the serial line data and starts the watchdog before importing it.
"""

import json
import sys

import micropython

micropython.alloc_emergency_exception_buf(100)

READ_MAX = 512          # bytes the loop takes from the USB serial at once (a frame is <= 300)


def load_board(path="/board.json"):
    with open(path) as f:
        return json.load(f)


def make_cammegh(board, power=None):
    """The Cammegh compatibility output (docs/integrators/cammegh-output.md) on its own UART, 9600 8N1,
    when the board file has a "cammegh" key; None when it has none. With an `rx` pin it reads the
    table system's commands: `*P 1` / `*P 0` call `power(on)` (`cylindre.link.cammegh.table_power`)."""
    cfg = board.get("cammegh")
    if not cfg:
        return None
    from machine import UART, Pin
    from cylindre.link.cammegh import CammeghOutput
    kw = {"baudrate": cfg.get("baud", 9600), "bits": 8, "parity": None, "stop": 1, "tx": Pin(cfg["tx"])}
    if cfg.get("rx") is not None:
        kw["rx"] = Pin(cfg["rx"])
    uart = UART(cfg["uart"], **kw)
    return CammeghOutput(uart.write, read=uart.read if cfg.get("rx") is not None else None, power=power)


def read_key(path="/wheel.key"):
    """The provisioned link key file's bytes, or None when there is none."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def board_serial():
    """The RP2040's flash unique id in hex (the host tells a swapped controller by it), or None."""
    try:
        import machine
        from binascii import hexlify
        return hexlify(machine.unique_id()).decode()
    except Exception:
        return None


def cobs_encoder():
    """The frames' COBS in machine code (board/fastcobs.py), or None (the bytecode one) where
    MicroPython has no viper emitter (CPython and its stand-ins; a port without native code)."""
    if sys.implementation.name != "micropython":
        return None
    try:
        from cylindre.board.fastcobs import Encoder
    except (ImportError, SyntaxError, ValueError):     # no emitter, or .mpy of another arch
        return None
    return Encoder().encode


def make_link(board, clock_ms, cammegh_power=None, key=False, usb=None):
    """The serial link (cylindre.link.device) on the board's port: USB CDC or a UART.

    Returns (emit, read, poll, link, port): `emit` takes the controller's events, `read()`
    returns the bytes that arrived (or None), `poll()` lets the link resend and pace itself,
    `port` is the stream the main loop waits on for bytes. Without a provisioned key
    (/wheel.key; `key` given: that one, None for none) the events are printed one JSON object a
    line instead (bench or first commissioning on a desk). `usb`: (output, input) streams for
    the USB CDC link (default the REPL's stdout and stdin buffers). `clock_ms()`: milliseconds
    since boot, never going back (`Clock.ms`).
    """
    cfg = board.get("link") or {}
    kind = cfg.get("type", "usb")
    if kind == "uart":
        from machine import UART, Pin
        port = UART(cfg.get("uart", 0), baudrate=cfg.get("baud", 115200),
                    tx=Pin(cfg["tx"]), rx=Pin(cfg["rx"]))
        write = port.write
        read = port.read
    else:
        import select
        micropython.kbd_intr(-1)          # the link's bytes are data, not Ctrl-C
        out, inp = usb if usb is not None else (sys.stdout.buffer, sys.stdin.buffer)
        port = inp
        poller = select.poll()
        poller.register(inp, select.POLLIN)
        write = out.write

        buf = bytearray(READ_MAX)
        view = memoryview(buf)
        one = bytearray(1)
        ipoll = poller.ipoll

        readinto = inp.readinto

        def read_usb():
            """Every byte waiting (at most READ_MAX), in one piece, or None: the link then cuts
            and checks a frame at a time (it copies them: the buffer is the next call's).
            USB CDC's stdin has no "how many" and its read blocks until every byte asked for
            came: a byte is read while the poll says one is there (`ipoll`: no list, no tuple
            made), into a buffer made once (a bytes object a byte cost an allocation each)."""
            n = 0
            while n < READ_MAX:
                for _ in ipoll(0):
                    break
                else:
                    break
                readinto(one)
                buf[n] = one[0]
                n += 1
            return view[:n] if n else None

        read = read_usb
    cammegh = make_cammegh(board, cammegh_power)
    if key is False:
        key = read_key()
    if key is None:
        micropython.kbd_intr(3)

        def emit(ev):
            if cammegh is not None:
                cammegh.event(ev, clock_ms())
            print(json.dumps(ev))

        def poll():
            if cammegh is not None:
                cammegh.poll(clock_ms())

        return emit, (lambda: None), poll, None, None
    from cylindre.link.device import DeviceLink
    link = DeviceLink(write=write, clock_ms=clock_ms, key=key,
                      wheel=board.get("wheel", board.get("board", "wheel")), fw="cylindre-fw 0.1",
                      cammegh=cammegh, serial=board_serial(), cobs_encode=cobs_encoder())
    return link.emit, read, link.poll, link, port


def main(board=None, key=False, usb=None, store=None, run=True):
    """Build everything and run the loop. The arguments are for tests that run this wiring on
    stand-in hardware: a board dict instead of /board.json, the key (None: none), the USB
    streams, a flash store; `run=False` returns the MainLoop instead of running it.

    The loop runs from here, not from `build`, whose frame held the parsed board file (1 KB of
    heap) for as long as the loop ran."""
    loop = build(board, key, usb, store)
    if not run:
        return loop
    loop.run()


def build(board=None, key=False, usb=None, store=None):
    """The MainLoop around the board's shell and link (`main` runs it)."""
    from cylindre.board.shell import Board, reset_cause
    if board is None:
        board = load_board()
    holder = []

    def clock_us():             # controller time (from its moving origin: board/clock.py)
        return holder[0].clock.now() if holder else 0

    def clock_ms():             # the link's: ms since boot
        return holder[0].clock.ms() if holder else 0

    links = []

    def power(on):      # the Cammegh port's *P 1 / *P 0 (docs/integrators/cammegh-output.md)
        from cylindre.link.cammegh import table_power
        return table_power(holder[0].ctl if holder else None, links[0] if links else None, on, clock_us())

    emit, read, poll, link, port = make_link(board, clock_ms, power, key, usb)
    links.append(link)
    b = Board(board, emit, store=store)
    holder.append(b)
    if link is not None:
        link.attach(b.ctl, b.clock.now, b.clock.ms)
    b.start(reset_cause())
    from cylindre.board.loop import MainLoop
    return MainLoop(b, read, poll, link, port)

