"""The Pico's side, from the host: the firmware compiled for a board (firmware.py), the UF2 with it frozen in (uf2.py), and a real MicroPython runtime to run its code on (micropython.py)."""
