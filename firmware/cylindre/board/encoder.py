"""The rotor encoder on the Pico: the PIO counter of pio_quad.py in one state machine.

`count()` allocates nothing: the RX FIFO is drained into a preallocated `array('i')` (`sm.get()`
without a buffer would allocate a big int for any count at or above 2**30, i.e. every negative
one) and the freshest value is kept. It may be called from a hard interrupt handler.
"""

from array import array

import rp2
from machine import Pin

from cylindre.board.pio_quad import quadrature

_PROGRAM = None


def program():
    """Assemble once (asm_pio swaps the module's globals while it runs)."""
    global _PROGRAM
    if _PROGRAM is None:
        _PROGRAM = rp2.asm_pio(in_shiftdir=rp2.PIO.SHIFT_LEFT,
                               out_shiftdir=rp2.PIO.SHIFT_RIGHT)(quadrature)
    return _PROGRAM


class Encoder:
    def __init__(self, sm_id, pin_a, pin_b):
        if pin_b == pin_a + 1:
            base = pin_a
            self.sign = -1          # A at the base: the table counts clockwise down
        elif pin_a == pin_b + 1:
            base = pin_b
            self.sign = 1
        else:
            raise ValueError("encoder A and B must be on adjacent GPIOs (got %d, %d)" % (pin_a, pin_b))
        Pin(pin_a, Pin.IN, Pin.PULL_UP)
        Pin(pin_b, Pin.IN, Pin.PULL_UP)
        # no freq: the state machine runs at the system clock (125 MHz on the RP2040)
        self.sm = rp2.StateMachine(sm_id, program(), in_base=Pin(base))
        sm = self.sm
        sm.exec("set(y, 0)")
        sm.exec("mov(isr, null)")
        sm.exec("in_(pins, 2)")          # the current pin state is the "previous" one
        sm.exec("mov(osr, isr)")
        self._buf = array("i", [0])
        sm.active(1)

    def count(self):
        """The count now (signed, clockwise up)."""
        sm = self.sm
        buf = self._buf
        n = sm.rx_fifo()
        while n:
            sm.get(buf)
            n -= 1
        sm.get(buf)                      # a fresh one: pushed every few PIO cycles
        return self.sign * buf[0]
