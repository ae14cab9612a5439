"""Spin logic (functional core): one spin of the ball on the wheel, from sensor edges to events.

Plain code driven by `signal`/`tick` calls with an injected clock and encoder count, so the same
files run on the Pico, on CPython and on MicroPython in tests. See docs/internals/firmware-code.md.
"""
