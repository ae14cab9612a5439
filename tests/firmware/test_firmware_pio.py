"""The PIO quadrature counter (firmware/cylindre/board/pio_quad.py) in the `pioemu` emulator.

A small CPython stand-in for MicroPython's `rp2.asm_pio` assembles the program the way
MicroPython does (same instruction encodings, labels resolved in a second pass, wrap registers,
the function's globals swapped while it runs). The emulated state machine is then fed encoder
waveforms and its count, drained from the RX FIFO as the Pico shell does, must equal the
software model (cylindre.spin.quadrature), edge for edge, at every speed the loop allows.
"""

from __future__ import annotations

import random

import pytest
from pioemu import ShiftRegister, State, emulate

from cylindre.board import pio_quad
from cylindre.spin.quadrature import Quadrature, wrap32


class Asm:
    """PIO assembler with the encodings of MicroPython's rp2.asm_pio (subset: no side-set)."""

    CONST = {"gpio": 0, "pins": 0, "x": 1, "y": 2, "null": 3, "pindirs": 4, "pc": 5, "status": 5,
             "isr": 6, "osr": 7, "exec": 8, "not_x": 1, "x_dec": 2, "not_y": 3, "y_dec": 4,
             "x_not_y": 5, "pin": 6, "not_osre": 7, "noblock": 0x01, "block": 0x21,
             "iffull": 0x40, "ifempty": 0x40, "clear": 0x40}

    def __init__(self, in_shiftdir=0, out_shiftdir=0):
        self.in_shiftdir = in_shiftdir
        self.out_shiftdir = out_shiftdir
        self.labels: dict[str, int] = {}
        self.prog: list[int] = []
        self.wrap_target_at = 0
        self.wrap_at = None

    # directives
    def wrap_target(self):
        self.wrap_target_at = self.n

    def wrap(self):
        self.wrap_at = self.n - 1

    def label(self, name):
        if self.pass_ == 0:
            assert name not in self.labels, "duplicate label " + name
            self.labels[name] = self.n

    # instructions
    def word(self, instr, label=None):
        self.n += 1
        if self.pass_ == 1:
            self.prog.append(instr | (self.labels[label] if label is not None else 0))

    def nop(self):
        self.word(0xA042)

    def jmp(self, cond, label=None):
        if label is None:
            cond, label = 0, cond
        self.word(cond << 5, label)

    def in_(self, src, bits):
        assert 0 < bits <= 32
        self.word(0x4000 | src << 5 | bits & 0x1F)

    def out(self, dest, bits):
        assert 0 < bits <= 32
        self.word(0x6000 | (7 if dest == 8 else dest) << 5 | bits & 0x1F)

    def push(self, value=0, value2=0):
        value |= value2
        if not value & 1:
            value |= 0x20
        self.word(0x8000 | value & 0x60)

    def mov(self, dest, src):
        self.word(0xA000 | (4 if dest == 8 else dest) << 5 | src)

    def set(self, dest, data):
        self.word(0xE000 | dest << 5 | data)

    def assemble(self, fn):
        g = fn.__globals__
        saved = dict(g)
        g.clear()
        g.update(self.CONST)
        g["invert"] = lambda v: v | 0x08
        g["reverse"] = lambda v: v | 0x10
        for name in ("wrap_target", "wrap", "label", "word", "nop", "jmp", "in_", "out", "push",
                     "mov", "set"):
            g[name] = getattr(self, name)
        try:
            for self.pass_ in (0, 1):
                self.n = 0
                fn()
        finally:
            g.clear()
            g.update(saved)
        if self.wrap_at is None:
            self.wrap_at = self.n - 1
        return self.prog


def assemble(out_shiftdir=1):
    a = Asm(in_shiftdir=0, out_shiftdir=out_shiftdir)
    return a, a.assemble(pio_quad.quadrature)


CW = ((0, 0), (1, 0), (1, 1), (0, 1))      # (A, B) clockwise, docs/integrators/feed-format.md


def waveform(steps, rng, min_dwell, max_dwell):
    """[(cycle, a, b)] for a walk of `steps` (+1 cw / -1 ccw each), with random dwells."""
    i = 0
    cycle = 20
    out = [(0, 0, 0)]
    for s in steps:
        i = (i + s) % 4
        a, b = CW[i]
        out.append((cycle, a, b))
        cycle += rng.randint(min_dwell, max_dwell)
    return out, cycle + 200


def run_pio(prog, asm, wave, end, b_at_base=True, shift_osr_right=True):
    """Emulate; return the last count pushed (as the shell reads it) and the pushes seen."""
    k = 0
    n = len(wave)

    def pins(clock):
        nonlocal k
        while k + 1 < n and wave[k + 1][0] <= clock:
            k += 1
        _, a, b = wave[k]
        return (a << 1 | b) if b_at_base else (b << 1 | a)

    init = State(output_shift_register=ShiftRegister(0, 0))
    last = None
    pushes = 0
    for before, after in emulate(prog, stop_when=lambda op, st: st.clock >= end, initial_state=init,
                                 input_source=pins, shift_isr_right=False,
                                 shift_osr_right=shift_osr_right, wrap_target=asm.wrap_target_at,
                                 wrap_top=asm.wrap_at):
        fifo = after.receive_fifo
        while fifo:
            last = wrap32(fifo.popleft())
            pushes += 1
    return last, pushes


def model(steps):
    q = Quadrature()
    i = 0
    for s in steps:
        i = (i + s) % 4
        a, b = CW[i]
        if a != q.a:
            q.edge("A", a)
        if b != q.b:
            q.edge("B", b)
    assert q.errors == 0
    return q.count


def test_program_is_padded_to_the_whole_instruction_memory():
    asm, prog = assemble()
    assert len(prog) == pio_quad.PROGRAM_SIZE == 32
    assert asm.wrap_at == pio_quad.USED - 1 and asm.wrap_target_at == asm.labels["update"]
    # the 16-entry jump table comes first: the computed jump needs it at address 0
    assert all(op & 0xE000 == 0 for op in prog[:15])
    assert asm.labels["decrement"] == 14 and asm.labels["update"] == 15


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_edge_counts_both_ways_as_the_model(seed):
    rng = random.Random(seed)
    steps = []
    for _ in range(6):                      # runs in either direction, with reversals
        d = rng.choice((1, -1))
        steps += [d] * rng.randint(5, 40)
    asm, prog = assemble()
    wave, end = waveform(steps, rng, 10, 30)
    count, pushes = run_pio(prog, asm, wave, end)
    assert count == model(steps), (count, model(steps))
    assert pushes > len(steps)              # a fresh count is pushed every loop


def test_clockwise_counts_up_with_b_at_the_base_and_down_with_a():
    rng = random.Random(7)
    steps = [1] * 50
    asm, prog = assemble()
    wave, end = waveform(steps, rng, 12, 20)
    assert run_pio(prog, asm, wave, end, b_at_base=True)[0] == 50
    # A at the base: the PIO counts the other way; the shell multiplies by -1 (encoder.py)
    assert run_pio(prog, asm, wave, end, b_at_base=False)[0] == -50


def test_fastest_edges_the_loop_can_sample():
    # one edge every 10 PIO cycles (80 ns at 125 MHz: 12.5 M edges/s, a rotor at 700 000 rpm)
    rng = random.Random(11)
    steps = [1] * 30 + [-1] * 45
    asm, prog = assemble()
    wave, end = waveform(steps, rng, 10, 10)
    assert run_pio(prog, asm, wave, end)[0] == -15


def test_out_shift_left_would_lose_the_state():
    # MicroPython's asm_pio defaults out_shiftdir to LEFT: the OUT then takes the wrong 2 bits
    # of OSR and the count goes wrong. The shell assembles with SHIFT_RIGHT (encoder.py).
    rng = random.Random(5)
    steps = [1] * 40
    asm, prog = assemble(out_shiftdir=0)
    wave, end = waveform(steps, rng, 12, 20)
    count, _ = run_pio(prog, asm, wave, end, shift_osr_right=False)
    assert count != 40
