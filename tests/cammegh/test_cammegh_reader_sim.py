"""The simulated Cammegh reader, read by the decoder: every game it deals is dealt with its number,
every misspin voids, a stopped reader is opened with `*P 1`, and a cable's garbage and cut lines
cost no result. Then the same on a pty: `cylindre wheel --cammegh-only`."""

import os
import re
import select
import subprocess
import sys
import time

from host_tools.cammegh.decoder import STATUS, CammeghDecoder
from host_tools.cammegh.reader_sim import Pacer, ReaderSim


def session(sim, step_ms=20, limit_ms=3_600_000):
    """Run `sim` against the decoder as a table system would: `*P 1` while it shows 6."""
    dec = CammeghDecoder()
    events, t, asked, end = [], 0, -10_000, limit_ms
    while t < end:
        if sim.finished and end == limit_ms:
            end = t + 1000                  # a few more lines: the next game's state 2
        for ev in dec.feed(sim.advance(t), t * 1000) + dec.tick(t * 1000):
            events.append(ev)
            if ev["ev"] == "status" and ev["reader_state"] == 6 and t - asked >= 1000:
                sim.feed(b"*P 1\r\n", t)
                asked = t
        t += step_ms
    assert sim.finished, "the reader never finished"
    return events, dec


def dealt(events):
    return [(e["game"], e["number"]) for e in events if e["ev"] == "result"]


def test_every_game_dealt_with_the_readers_number_and_nothing_else_said():
    sim = ReaderSim(seed=7, games=12)
    events, dec = session(sim)
    assert dealt(events) == sim.results and len(sim.results) == 12
    assert [e for e in events if e["ev"] in ("fault", "void")] == []
    spins = [e["spin"] for e in events if e["ev"] == "launch"]
    assert spins == list(range(1, 13))
    # every status line on the wire is the documented format, flags one digit
    lines = [l for l in ReaderSim(seed=7, games=2).advance(120_000).split(b"\r\n") if l.startswith(b"*X")]
    assert lines and all(STATUS.match(l.decode()) for l in lines)


def test_misspins_void_and_the_same_game_is_played_again():
    sim = ReaderSim(seed=3, games=10, void_rate=0.4)
    events, dec = session(sim)
    voids = [(e["game"], e["reason"]) for e in events if e["ev"] == "void"]
    assert len(sim.voids) >= 3
    assert voids == [(g, "same_direction" if f & 2 else "misspin") for (g, f) in sim.voids]
    assert dealt(events) == sim.results
    assert [e for e in events if e["ev"] == "fault"] == []
    # a void game's relaunch is a new spin of the same game
    for g, _ in sim.voids:
        assert len({e["spin"] for e in events if e["ev"] == "launch" and e["game"] == g}) >= 2


def test_a_stopped_reader_is_opened_by_the_table_system():
    sim = ReaderSim(seed=5, games=6, closed=True, close_every=2)
    events, dec = session(sim)
    assert dealt(events) == sim.results
    assert sim.answers.count("*P OK") >= 3              # at power-up and after games 2 and 4
    assert [e for e in events if e["ev"] == "answer"] and not [e for e in events if e["ev"] == "fault"]
    states = [e["reader_state"] for e in events if e["ev"] == "status"]
    assert states[0] == 1 and 6 in states


def test_garbage_and_cut_lines_cost_no_result_and_are_reported():
    sim = ReaderSim(seed=11, games=15, void_rate=0.2, garbage=0.05, cut_every=17)
    events, dec = session(sim)
    assert dealt(events) == sim.results
    codes = {e["code"] for e in events if e["ev"] == "fault"}
    assert codes <= {"garbled", "line_missing", "number_missing"} and "garbled" in codes
    assert dec.counts["line_missing"] >= 1


def test_the_answers_of_a_reader():
    sim = ReaderSim(seed=1)
    sim.advance(0)
    for cmd in (b"*P 1\r\n", b"*u 1\n", b"*P 0\r", b"*P 1\r\n", b"junk\r\n"):
        sim.feed(cmd, 0)
    assert sim.answers == ["*P NO", "*u OK", "*P NO", "*P NO"]       # at power-up: refused
    sim.advance(2000)
    sim.feed(b"*P 0\r\n", 2000)
    sim.advance(2500)
    assert sim.state == 6 and sim.answers[-1] == "*P OK"


def test_the_pacer_keeps_9600_baud():
    p = Pacer()
    p.put(b"x" * 2000)
    got = len(p.take(0)) + len(p.take(1000))
    assert got == 960
    assert len(p.take(1500)) == 480


def _read_lines(fd, until, deadline):
    buf = b""
    while time.monotonic() < deadline and not until(buf):
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                buf += os.read(fd, 4096)
            except OSError:
                break
    return buf


def test_cylindre_wheel_cammegh_only_on_a_pty(tmp_path):
    paths = tmp_path / "paths"
    proc = subprocess.Popen([sys.executable, "-m", "host_tools.sim.ptywheel", "--cammegh-only", "--spins", "3",
                             "--speed", "20", "--seed", "2", "--closed", "--path-file", str(paths)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not paths.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        fd = os.open(paths.read_text().split()[0], os.O_RDWR | os.O_NOCTTY)
        import tty
        tty.setraw(fd)
        buf = _read_lines(fd, lambda b: b"*X;6;" in b, time.monotonic() + 10)
        assert b"*X;6;" in buf, buf
        os.write(fd, b"*P 1\r\n")
        # the reader's clock runs 20 times faster than ours, and so would our scheduling jitter:
        # the lateness bounds are widened here (tested on the reader's own clock above)
        dec = CammeghDecoder(late_us=4_000_000, silence_us=10_000_000)
        events = dec.feed(buf, 0)
        t0 = time.monotonic()
        deadline = t0 + 60
        while time.monotonic() < deadline and proc.poll() is None:
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    break
                events += dec.feed(data, int((time.monotonic() - t0) * 20e6))
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    logged = [(int(g), int(n)) for g, n in re.findall(r"game (\d+): (\d+)\n", err.decode())]
    assert len(logged) == 3 and dealt(events) == logged
    assert [e["ok"] for e in events if e["ev"] == "answer"] == [True]
    assert [e for e in events if e["ev"] == "fault"] == []
