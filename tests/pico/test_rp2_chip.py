"""The firmware on the emulated RP2040 (host_tools/rp2emu): the stock MicroPython v1.28.0 UF2,
the firmware on its file system as `make flash` leaves it, the project's host link on its USB
serial, edges driven on its pins.

One boot (about 45 s of wall time on a 2-core machine, most of it the 0.5 s of emulated CPU the
boot spends importing the package from the file system), with a host that talks from power-up:
a HELLO every 100 ms, so that frames (each starts with 0x03, Ctrl-C to MicroPython until the
firmware turns it off) arrive while the firmware imports its modules. Then an authenticated
session, a status, a command, and the PIO encoder's count against quadrature edges on the pins.
"""

import ast
from pathlib import Path

import pytest

from host_tools.rp2emu.chip import Chip
from host_tools.rp2emu.table import STOCK_UF2, Host, deploy, rest_levels

ROOT = Path(__file__).resolve().parents[2]

# (A, B) clockwise, from the feed format: 00 -> 10 -> 11 -> 01
QUAD = [(0, 0), (1, 0), (1, 1), (0, 1)]


def drive_encoder(chip: Chip, board: dict, steps: int, period_us: int) -> None:
    """`steps` quadrature edges (negative: anticlockwise), one every `period_us`, from now."""
    pins = board["pins"]
    state = drive_encoder.state
    for k in range(abs(steps)):
        state = (state + (1 if steps > 0 else -1)) % 4
        a, b = QUAD[state]
        chip.at(chip.ns + (k + 1) * period_us * 1000,
                lambda a=a, b=b: (chip.pin(pins["enc_a"], a), chip.pin(pins["enc_b"], b)))
    drive_encoder.state = state
    chip.run_for((abs(steps) + 1) * period_us / 1e6 + 0.05)


drive_encoder.state = 0


def pio_count(chip: Chip, board: dict) -> int:
    """The quadrature program's count (its Y register), signed, clockwise up as the firmware's
    Encoder reads it (cylindre.board.encoder: negated when A is the lower pin)."""
    sm = chip.mcu.pio[0].machines[int(board["pins"].get("pio_sm", 0))]
    y = sm.y & 0xFFFFFFFF
    y = y - (1 << 32) if y & 0x80000000 else y
    return -y if board["pins"]["enc_b"] == board["pins"]["enc_a"] + 1 else y


def session():
    """A chip with the firmware deployed, its pads at rest, and the host in session: (chip, host)."""
    chip = deploy()
    for g, v in rest_levels(chip.board).items():
        chip.pin(g, v)
    host = Host(chip)
    assert chip.run_while(lambda: host.status is None, 6.0), "no first session: %s" % dict(host.counts)
    return chip, host


def test_main_py_makes_the_line_data_and_starts_the_watchdog_before_any_firmware_import():
    """The order the chip test relies on, read off main.py: nothing of the firmware is imported
    (seconds of work from the file system) before Ctrl-C is off and the watchdog runs."""
    body = [n for n in ast.parse((ROOT / "firmware" / "main.py").read_text()).body
            if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    src = [ast.unparse(n) for n in body]
    assert src[:5] == ["import micropython", "micropython.kbd_intr(-1)", "import machine", "import sys",
                       "machine.WDT(timeout=8000)"]
    assert src[5] == "from cylindre.board.wiring import main"


@pytest.mark.rp2
@pytest.mark.skipif(not STOCK_UF2.is_file(), reason="no MicroPython UF2 at %s" % STOCK_UF2)
def test_boot_with_a_talking_host_session_command_and_encoder():
    chip = deploy()
    board = chip.board
    for g, v in rest_levels(board).items():
        chip.pin(g, v)
    host = Host(chip)
    host.link.hello_ms = 100            # frames all through the boot's imports
    assert chip.run_while(lambda: host.status is None, 6.0), (
        "no session after 6 emulated s: resets %s, host records %s, serial %r"
        % (chip.resets, dict(host.counts), bytes(host.rx[-300:])))
    assert host.in_session and host.link.sessions >= 1
    settled = len(host.records)         # a HELLO every 100 ms: events of superseded sessions fail their MAC until then
    boot = host.events[0]["event"]
    assert boot["ev"] == "boot" and boot["reset_cause"] == "power" and boot["interrupted"] is None
    assert host.status["state"] == "idle" and host.status["table_open"] is True
    assert all(v == "ok" for v in host.status["sensors"].values())

    seq = host.command("get_settings")
    assert chip.run_while(lambda: seq not in host.replies, 3.0)
    reply = host.replies[seq]
    assert reply["ok"] is True and reply["result"]["min_laps"] == board["spin"]["min_laps"]

    assert pio_count(chip, board) == 0
    drive_encoder(chip, board, 400, 500)          # 400 edges clockwise at 2,000 edges/s
    assert pio_count(chip, board) == 400
    drive_encoder(chip, board, -150, 700)
    assert pio_count(chip, board) == 250
    # the firmware's own reading of it: the rotor turned, then back (its status' direction)
    seq = host.command("status")
    assert chip.run_while(lambda: seq not in host.replies, 3.0)
    assert host.replies[seq]["ok"] is True
    rejects = [r for r in host.records[settled:] if r["kind"] == "reject"]
    assert chip.resets == [] and rejects == [] and host.counts["gap"] == 0


def test_the_bench_page_section_and_the_outcome_check():
    """host_tools.bench.rp2: a doubled or missing outcome is told (the bench then fails), and the
    page's section carries each deployment's figures (no chip: figures as the bench writes them)."""
    from host_tools.bench.rp2 import check_outcomes, markdown, text

    class FakeHost:
        events = [{"event": {"ev": "boot", "reset_cause": "power", "interrupted": None}},
                  {"event": {"ev": "boot", "reset_cause": "power", "interrupted": 1}}]

    truths = [{"valid": True, "number": 7, "scenario": "power_cut"}, {"valid": True, "number": 19, "scenario": None}]
    good = check_outcomes(truths, [{"ev": "void", "spin": 1, "reason": "restart"},
                                   {"ev": "result", "spin": 2, "number": 19}], FakeHost)
    assert good["right"] == 2 and good["doubled"] == 0 and good["boots"][1]["interrupted"] == 1
    bad = check_outcomes(truths, [{"ev": "void", "spin": 1, "reason": "restart"},
                                  {"ev": "void", "spin": 1, "reason": "restart"}], FakeHost)
    assert bad["right"] == 0 and bad["doubled"] == 1 and bad["rows"][1]["got"] == []
    # after a restart, a result the host had named again (same number), or voided (the ball
    # gone), is a repeat the table ignores; another number is a double
    again = check_outcomes(truths, [{"ev": "void", "spin": 1, "reason": "restart"},
                                    {"ev": "result", "spin": 2, "number": 19},
                                    {"ev": "result", "spin": 2, "number": 19, "restart": "power"},
                                    {"ev": "void", "spin": 2, "reason": "restart"}], FakeHost)
    assert again["right"] == 2 and again["doubled"] == 0 and again["repeated"] == 2
    other = check_outcomes(truths, [{"ev": "void", "spin": 1, "reason": "restart"},
                                    {"ev": "result", "spin": 2, "number": 19},
                                    {"ev": "result", "spin": 2, "number": 4, "restart": "power"}], FakeHost)
    assert other["right"] == 1 and other["doubled"] == 1
    run = {"deployment": "file system (stock UF2)", "boot": {"emulated_s": 1.06, "cycles": 74_700_000},
           "cpu_percent": {"spin": 4.63, "ball": 4.65, "pockets": 4.45, "idle": 3.41},
           "heap": {"after_boot": 81616, "peak": 81968, "marks": 96}, "outcomes": good,
           "link": {"sessions": 2, "records": {"event": 9}, "bytes_in": 1, "bytes_out": 2},
           "resets": [[5.1, "power_off"], [5.3, "power_on"]], "wall_s": 1125.5, "emulated_s": 46.8,
           "wall_per_emulated_s": 24.07}
    page = markdown({"command": "make bench ARGS='rp2 --only fs'", "spins": 1, "seed": 1, "power_cut": True,
                     "runs": [run]})
    assert "| file system (stock UF2) | 4.63 % | 4.65 % | 4.45 % | 3.41 % | 81,616 B | 81,968 B | 2 / 2 | 24.1 |" in page
    assert "make bench ARGS='rp2 --only fs'" in page and "power failure" in page
    assert "2 of 2 right, 0 doubled" in text(run)


@pytest.mark.rp2
@pytest.mark.skipif(not STOCK_UF2.is_file(), reason="no MicroPython UF2 at %s" % STOCK_UF2)
def test_a_board_without_its_board_file_says_why_and_keeps_the_prompt():
    """No /board.json: the boot stops with the reason on the serial line, and the watchdog started
    by main.py's first lines is stopped, so the prompt stays (for `make flash-config`) instead of a
    restart every 8 s."""
    from host_tools.rp2emu import flash

    folder = flash.build_firmware("pico")
    (folder / "board.json").unlink()
    chip = Chip(STOCK_UF2, flash.image(flash.files_of(folder, None)))
    out = bytearray()
    chip.on_serial = out.extend
    chip.run_for(12.0)
    assert chip.resets == []
    assert b"board.json" in bytes(out) or b"ENOENT" in bytes(out) or b"OSError" in bytes(out), bytes(out)[-400:]


@pytest.mark.rp2
@pytest.mark.skipif(not STOCK_UF2.is_file(), reason="no MicroPython UF2 at %s" % STOCK_UF2)
def test_a_power_cut_stops_the_core_at_once_and_power_on_starts_from_the_reset_state():
    """A cut scheduled as the bench's feed schedules it (an event fired while the core runs): not
    one instruction between power off and power on, and the chip leaves reset as silicon leaves
    a power-on reset (SRAM lost, the flash interface idle). rp2040py reads the RUN pin once per
    batch of up to 1,000,000 instructions, so a cut from inside a batch used to let the bootrom
    run on, "powered off", for the rest of the batch (up to its 5 ms wall-clock budget): it
    started loading the second-stage boot loader over the SSI, and the power-on, which jumps to
    the flash's entry as the bootrom would, ran boot2 against a half-finished flash read: boot2
    read garbage for the flash's busy bit and polled it forever (no watchdog yet), the board
    never came back."""
    chip = Chip(STOCK_UF2)
    chip.run_for(0.05)                   # MicroPython running from flash, SRAM in use
    core = chip.mcu.core
    seen = {}

    def off():
        chip.power_off()
        seen["off"] = (core.cycles, core.pc)

    def on():
        seen["on"] = (core.cycles, core.pc)
        chip.power_on()
        seen["released"] = (core.pc, chip.mcu.ssi._ssienr, len(chip.mcu.ssi._rx_queue), any(bytes(chip.mcu.sram)))

    chip.at(chip.ns + 1e6, off)
    chip.at(chip.ns + 50e6, on)
    chip.run_for(0.1)
    assert seen["on"] == seen["off"], "the core ran while powered off: %s -> %s" % (seen["off"], seen["on"])
    assert seen["released"] == (0x10000000, 0, 0, False), (
        "not released from a power-on state (pc, SSI enabled, SSI RX bytes, SRAM kept): %s" % (seen["released"],))
    assert chip.resets[-2][1] == "power_off" and chip.resets[-1][1] == "power_on"
    assert core.cycles > 0 and chip.powered  # running again


@pytest.mark.rp2
@pytest.mark.skipif(not STOCK_UF2.is_file(), reason="no MicroPython UF2 at %s" % STOCK_UF2)
def test_a_power_cut_while_the_ball_runs_is_reported_once_and_the_board_comes_back():
    """Issue 20's power cut on the emulated chip: the simulator's `power_cut` spin (seed 59: the
    power goes 2.1 s after the launch, 30 ms after the launch's record is saved, for 155 ms) on the
    pins, the rotor and the ball still running through the cut and the boot, the host talking all
    through (a HELLO every second without a session). The board comes back with a new session,
    its boot says `interrupted` by a power cut, the cut spin is voided `restart` exactly once, no
    event skipped or delivered twice, nothing refused. About 65 s of wall time on an idle 2-core
    machine (two boots of ~0.6 emulated s of imports each, 9 emulated s in all)."""
    from host_tools.rp2emu.table import Feed
    from host_tools.sim import WheelSimulator
    from host_tools.sim.boards import load_board

    geometry, _ = load_board(ROOT / "boards" / "pico.json")
    spin = WheelSimulator(geometry, seed=[59, 0]).spin("power_cut")
    chip, host = session()
    Feed(chip, chip.board, spin.changes, chip.ns + 0.5e9)
    assert chip.run_while(lambda: len(chip.resets) < 2, 8.0), chip.resets
    assert [k for _, k in chip.resets] == ["power_off", "power_on"]
    assert chip.run_while(lambda: not chip.connected, 2.0), (
        "the board is not back on the USB 2 emulated s after power-on (core at pc=%x)" % chip.mcu.core.pc)

    def voided():
        return any(e["event"].get("ev") == "void" for e in host.events)

    assert chip.run_while(lambda: not voided(), 6.0), (
        "no void after the cut: sessions %d, records %s, events %s" % (host.link.sessions, dict(host.counts), host.events))
    chip.run_for(0.5)                    # anything delivered twice would come now
    assert host.link.sessions == 2 and len(chip.resets) == 2
    boots = {}
    for e in host.events:
        boots.setdefault(e["boot"], []).append(e)
    assert len(boots) == 2
    first, second = boots.values()
    for events in (first, second):       # nothing skipped, nothing twice
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert [e["event"]["ev"] for e in events].count("boot") == 1 and events[0]["event"]["ev"] == "boot"
    boot = second[0]["event"]
    assert boot["reset_cause"] == "power" and boot["interrupted"] == 1 and boot["spin"] == 1
    outcomes = host.outcomes()
    assert [(o["ev"], o["spin"], o.get("reason")) for o in outcomes] == [("void", 1, "restart")]
    assert host.counts["reject"] == 0 and host.counts["gap"] == 0


@pytest.mark.rp2
@pytest.mark.skipif(not STOCK_UF2.is_file(), reason="no MicroPython UF2 at %s" % STOCK_UF2)
def _cut_at_rest(seed, scenario=None):
    """A simulated spin of the one-sensor board (simulator seed `seed`, `scenario`) with the power
    cut 1 s after its ball came to rest, off for the bench's 155 ms, fed until 12 s after the
    rest: (its truth, the pins' changes, the cut's instant in us)."""
    from host_tools.bench.rp2 import OFF_US, cut_at
    from host_tools.sim import WheelSimulator
    from host_tools.sim.boards import load_board

    geometry, _ = load_board(ROOT / "boards" / "pico.json")
    spin = WheelSimulator(geometry, seed=[seed, 0]).spin(scenario)
    truth = spin.truth
    cut = cut_at(truth, "rest")
    end = truth["rest_us"] + 12_000_000
    changes = sorted([c for c in spin.changes if c[0] < end] + [(cut, "RESET", 1), (cut + OFF_US, "RESET", 0)],
                     key=lambda c: c[0])
    return truth, changes, cut


def _feed_to_cut(chip, changes, cut):
    """The changes on the chip's pins from half a second on, run until just before the cut."""
    from host_tools.rp2emu.table import Feed

    t0 = chip.ns + 0.5e9
    Feed(chip, chip.board, changes, t0)
    chip.run_until(t0 + (cut - 1000) * 1e3)


def test_a_power_cut_with_the_ball_at_rest_before_its_number_is_confirmed_pays_that_number():
    """Issue 33: the one-sensor board, the power cut 1 s after the ball came to rest, before the
    confirmation rule (two sightings over 3 s) named it; off for 155 ms, the rotor turning on,
    the host talking all through. The board comes back, says the spin was interrupted, keeps it
    called (no bet) while it looks at the pockets, and gives that spin's result with the number
    the ball rests in (`restart` in the event): nothing voided, nothing twice. The other phases
    (the launch, the track, the bounce, after the result) run in `make bench ARGS='rp2 --cuts
    launch,track,bounce,rest,confirmed'`; on CPython in tests/shared/test_spin_faults.py."""
    truth, changes, cut = _cut_at_rest(3)
    chip, host = session()
    _feed_to_cut(chip, changes, cut)
    assert [e["event"]["ev"] for e in host.events if e["event"].get("spin") == 1] == ["launch", "rnvp", "drop"]
    assert chip.run_while(lambda: len(chip.resets) < 2, 3.0), chip.resets

    def outcomes():
        return [e["event"] for e in host.events if e["event"].get("ev") in ("result", "void")]

    assert chip.run_while(lambda: not outcomes(), 12.0), "no outcome: %s" % dict(host.counts)
    chip.run_for(0.5)
    boot = [e["event"] for e in host.events if e["event"]["ev"] == "boot"]
    assert len(boot) == 2 and boot[1]["interrupted"] == 1 and boot[1]["reset_cause"] == "power"
    got = outcomes()
    assert [(o["ev"], o["spin"], o.get("number"), o.get("restart")) for o in got] == [
        ("result", 1, truth["number"], "power")], got
    # from the second boot's first status to the result: the spin called, no bet
    records = host.records
    since = max(i for i, r in enumerate(records) if r["kind"] == "event" and r["event"]["ev"] == "boot")
    until = next(i for i, r in enumerate(records) if r["kind"] == "event" and r["event"]["ev"] == "result")
    called = [r["status"]["state"] for r in records[since:until] if r["kind"] == "status"]
    assert called and set(called) == {"ball_dropped"}, called
    assert host.counts["reject"] == 0 and host.counts["gap"] == 0


def test_a_power_cut_after_a_void_the_host_has_pays_nothing_at_the_table(tmp_path):
    """Issue 33, item 3: a misspin voided after its launch (too few laps: seed 5 of the simulator;
    most of its few_laps spins are voided at the launch, too slow), the void acknowledged
    by the host, so held in RAM (the coup's one flash write is its launch's); the power cut with
    the ball at rest in its pocket, off for 155 ms, the host talking all through. After the boot
    the pockets name that spin (`restart`). The chip's events, given in their order to a table
    on a real journal, settle nothing: the result is an anomaly, the bet plays on the relaunch."""
    from host_tools.bench.rp2 import stored_seq
    from host_tools.sim.tablewheel import Wheel
    from host_tools.table.game.table import Table
    from host_tools.table.journal.store import Journal

    _, changes, cut = _cut_at_rest(5, "few_laps")
    chip, host = session()
    written = stored_seq(chip)                  # the newest record's number in the chip's flash
    _feed_to_cut(chip, changes, cut)
    before = [e["event"] for e in host.events if e["event"].get("spin") == 1]
    assert [(e["ev"], e.get("reason")) for e in before if e["ev"] in ("launch", "void")] == [
        ("launch", None), ("void", "few_laps")], before
    assert stored_seq(chip) == written + 1      # this coup's one write: its launch's
    assert chip.run_while(lambda: len(chip.resets) < 2, 3.0), chip.resets
    assert chip.run_while(lambda: len(host.outcomes()) < 2, 12.0), "no outcome after the boot: %s" % dict(host.counts)
    boot = [e["event"] for e in host.events if e["event"]["ev"] == "boot"]
    assert len(boot) == 2 and boot[1]["interrupted"] == 1        # the flash: spin 1 under way
    after = host.outcomes()[1]
    assert (after["ev"], after["spin"], after.get("restart")) == ("result", 1, "power"), host.outcomes()
    assert host.counts["reject"] == 0 and host.counts["gap"] == 0
    # the table, on a real journal, given what the chip said in its order
    t = Table(Journal(tmp_path / "j.sqlite"), "T1")
    t.set_open(True)
    wheels = {}
    for e in host.events:
        if e["boot"] not in wheels:
            wheels[e["boot"]] = Wheel(t, boot=e["boot"])
            if len(wheels) == 1:
                bet = t.place({"player": "ana", "type": "plein", "numbers": [after["number"]], "stake": 1000})
        # (on the table's clock: the chip's own at_ms would put the bet after the call)
        wheels[e["boot"]].send({k: v for k, v in e["event"].items() if k != "at_ms"}, seq=e["seq"])
    assert t.j.query("SELECT spin FROM settlements") == []
    assert t.bet(bet["id"])["status"] == "open"
    anomalies = t.j.query("SELECT reason FROM frames WHERE kind='anomaly'")
    assert len(anomalies) == 1 and "voided" in anomalies[0]["reason"]


FASTCOBS_CHECK = b'''
import json, os, machine
try:
    from cylindre.board.fastcobs import Encoder
    from cylindre.board.wiring import cobs_encoder
    from cylindre.link import cobs
    enc = Encoder().encode
    cases = [b"", b"\\x00", b"\\x00\\x00", bytes(range(1, 255)), bytes(range(1, 256)), b"\\x11" * 509,
             b"\\x22" * 253 + b"\\x00" + b"\\x33" * 254, bytes(1584), b"\\x7f" * 1584]
    cases += [os.urandom(n) for n in (12, 64, 290, 700)]
    from cylindre.board import shell
    r = {"bad": [i for i in range(len(cases)) if bytes(enc(cases[i])) != cobs.encode(cases[i], True)],
         "cases": len(cases), "wired": cobs_encoder() is not None, "ringio": shell.RingIO is not None}
except Exception as e:
    r = {"error": repr(e)}
with open("/fastcobs.json", "w") as f:
    f.write(json.dumps(r))
machine.mem32[0x40058018] = 1
'''


def test_the_frames_cobs_in_machine_code_writes_the_portable_bytes_on_the_chip():
    """board/fastcobs.py compiled by mpy-cross for the Cortex-M0+ (viper) and run by the stock
    UF2: the bytes of cylindre.link.cobs for runs around 254, zeros, the longest body and random
    ones; and the wiring takes it (the link's frames then go through it: the boot test decodes
    them with the host's decoder). The shell finds micropython.RingIO there, so the main loop's
    edge wake-up is asked in C (board/loop.py), not by the Python fallback."""
    from host_tools.rp2emu import flash
    import json

    chip = deploy(boot_py=FASTCOBS_CHECK)
    for g, v in rest_levels(chip.board).items():
        chip.pin(g, v)
    assert chip.run_while(lambda: chip.scratch(3) != 1, 5.0), "boot.py's check never finished"
    r = json.loads(flash.read(bytes(chip.mcu.flash), "/fastcobs.json"))
    assert r == {"bad": [], "cases": 13, "wired": True, "ringio": True}, r
