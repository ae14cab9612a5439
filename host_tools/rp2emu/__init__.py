"""The firmware on an emulated Raspberry Pi Pico: the stock MicroPython UF2 (or a frozen one) in
the `rp2040py` RP2040 emulator, its file system as `make flash` leaves it, sensor edges driven on
its pins and the project's host link on its USB serial (docs/wheel/emulated-chip.md)."""
