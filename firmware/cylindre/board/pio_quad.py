"""The PIO 4x quadrature counter (compteur en quadrature), after the jump-table design of
Raspberry Pi's pico-examples: every edge of A and B counts, whatever the rotor speed, with no
CPU interrupt (the loop takes at most 10 PIO cycles: 12.5 M edges/s at 125 MHz).

Each loop shifts the previous 2-bit pin state (kept in OSR) and the new one into ISR, and
`mov(pc, isr)` jumps into the 16-entry table at address (old << 2) | new, which increments,
decrements or leaves the count in Y; the count is pushed to the RX FIFO without blocking.
The computed jump needs the program at address 0: MicroPython loads programs at the top of the
instruction memory, so it is padded to 32 instructions and owns its PIO block.

Pins: `in_base` is the lower of the two encoder pins; the value read is (pin base+1) << 1 |
(pin base). The table counts up for 00 -> 10 -> 11 -> 01 of that value. With B at the base and
A above it, that is the feed's clockwise (A,B) 00 -> 10 -> 11 -> 01: +1 clockwise. With A at the
base, the count runs the other way and the shell negates it (board.json says which).

This file only defines the program; `rp2.asm_pio` (on the Pico) or the test's assembler (on
CPython) supplies jmp, mov, label, ... while it runs. Assembly options: in_shiftdir left,
out_shiftdir RIGHT (the OUT must take the low 2 bits of OSR).
"""
# pyright: reportUndefinedVariable=false

PROGRAM_SIZE = 32
USED = 24          # instructions before the padding


def quadrature():
    # table, old state 00
    jmp("update")
    jmp("decrement")
    jmp("increment")
    jmp("update")
    # old state 01
    jmp("increment")
    jmp("update")
    jmp("update")
    jmp("decrement")
    # old state 10
    jmp("decrement")
    jmp("update")
    jmp("update")
    jmp("increment")
    # old state 11: its last two entries are the code itself
    jmp("update")
    jmp("increment")
    label("decrement")
    jmp(y_dec, "update")            # 11 -> 10: Y - 1, then the next address
    wrap_target()
    label("update")
    mov(isr, y)                     # 11 -> 11 lands here
    push(noblock)
    out(isr, 2)                     # the previous pin state, from OSR
    in_(pins, 2)                    # and the new one
    mov(osr, isr)
    mov(pc, isr)                    # into the table
    label("increment")
    mov(y, invert(y))               # Y + 1 is ~(~Y - 1)
    jmp(y_dec, "increment_cont")
    label("increment_cont")
    mov(y, invert(y))
    wrap()
    # padding to 32 instructions (never executed)
    nop()
    nop()
    nop()
    nop()
    nop()
    nop()
    nop()
    nop()
