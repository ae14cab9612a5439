"""Run the calibration on the Pico (board side): ball resting in a known pocket, rotor turned
slowly for a few turns. Prints the measured index offset and pocket-sensor angles, and with
`write=True` stores them in /board.json (the previous file kept as /board.json.bak).

    mpremote exec "import cylindre.board.calib as c; c.main(number=0, seconds=60)"

The reference sensor (POCKET0 by default) keeps the angle written in board.json (measure it on
the bowl, clockwise from the index detector); see cylindre/spin/calibrate.py.
"""

import json
import os
import time

from machine import Pin

from cylindre.board.boardfile import check
from cylindre.board.encoder import Encoder
from cylindre.board.ring import Ring
from cylindre.spin.calibrate import Calibration


def main(number=0, seconds=60, passes=2, ref=0, write=False, path="/board.json"):
    with open(path) as f:
        board = json.load(f)
    err = check(board)
    if err:
        print("board.json:", err)
        return None
    pins = board["pins"]
    enc = Encoder(int(pins.get("pio_sm", 0)), pins["enc_a"], pins["enc_b"])
    ring = Ring(128, time.ticks_us, enc.count)
    low = bool(board.get("active_low", False))
    names = ["Z"] + ["POCKET%d" % i for i in range(len(pins["pocket"]))]
    gpios = [pins["z"]] + list(pins["pocket"])
    codes = {}
    handlers = []
    for i, g in enumerate(gpios):
        p = Pin(g, Pin.IN, Pin.PULL_UP if low else Pin.PULL_DOWN)
        codes[p] = i

        def h(pin, codes=codes, ring=ring, low=low):
            v = pin.value()
            ring.put((codes[pin] << 1) | ((1 - v) if low else v), True)

        handlers.append(h)
        p.irq(h, Pin.IRQ_RISING | Pin.IRQ_FALLING, hard=True)
    pending = [0]
    cal = Calibration(board["cpr"], board["pocket_sensors_deg"], number=number, ref=ref,
                      count=lambda: pending[0])
    print("turn the rotor slowly, ball in pocket %d, for %d s" % (number, seconds))
    t_end = time.ticks_add(time.ticks_ms(), seconds * 1000)
    while time.ticks_diff(t_end, time.ticks_ms()) > 0:
        while ring.tail != ring.head:
            j = ring.tail
            code = ring.code[j]
            pending[0] = ring.k[j]
            cal.signal(0, names[code >> 1], code & 1)
            ring.tail = 0 if j + 1 == ring.size else j + 1
        time.sleep_ms(5)
    r = cal.result(passes)
    print(json.dumps(r))
    if write and isinstance(r, dict):
        board["index_offset_deg"] = r["index_offset_deg"]
        board["pocket_sensors_deg"] = r["pocket_sensors_deg"]
        board["calibrated"] = {"number": number, "spread_deg": r["spread_deg"], "passes": r["passes"]}
        try:
            os.rename(path, path + ".bak")
        except OSError:
            pass
        with open(path + ".tmp", "w") as f:
            json.dump(board, f)
        os.rename(path + ".tmp", path)
        print("written to", path)
    return r
