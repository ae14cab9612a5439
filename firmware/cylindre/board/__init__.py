"""The Pico shell (imperative edge): PIO encoder counter, pin interrupts into ring buffers,
the flash store, watchdog and outputs. Only `shell.py`, `encoder.py` and `pins.py` import the
Pico's `machine`/`rp2`; `store.py`, `clock.py` and `pio_quad.py` also run on CPython (tests).
"""
