"""Cylindre wheel controller: the Pico's entry point (MicroPython runs /main.py at boot).

Its first instructions, before any import of the firmware: the serial line's bytes become data
(every link frame starts with 0x03, which MicroPython reads as Ctrl-C until `kbd_intr(-1)`: a
host that talks while the firmware imports would otherwise stop the boot at the REPL), and the
watchdog starts (8 s; the RP2040's longest is 8388 ms), so a boot stuck anywhere resets itself.
The main loop feeds it from then on. A boot that cannot start (no /board.json, a bad one) says
why on the serial line and stops the watchdog, so MicroPython's prompt stays for
`make flash-config` instead of a restart every 8 s. A fault once the loop runs does not: the
watchdog restarts the board, whose controller voids the spin the fault cut and reports the
watchdog reset (a wheel left at the prompt would be dead until someone cut its power).

The wiring is `cylindre.board.wiring.main` (docs/wheel/on-the-board.md): it is flashed compiled with the
rest of the package and runs in place, where this file is compiled into RAM at every boot.
"""

import micropython

micropython.kbd_intr(-1)
import machine
import sys

machine.WDT(timeout=8000)

from cylindre.board.wiring import main

if __name__ == "__main__":
    try:
        loop = main(run=False)
    except Exception as e:
        sys.print_exception(e)
        machine.mem32[0x40058000] &= ~(1 << 30)     # the watchdog's CTRL.ENABLE off
    else:
        loop.run()      # a fault from here on leaves the watchdog running: it restarts the board
