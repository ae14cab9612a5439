"""Cylindre wheel controller: the Pico's entry point (MicroPython runs /main.py at boot).

The wiring is `cylindre.board.wiring.main` (docs/firmware.md): it is flashed compiled with the
rest of the package and runs in place, where this file is compiled into RAM at every boot.
"""

from cylindre.board.wiring import main

if __name__ == "__main__":
    main()
