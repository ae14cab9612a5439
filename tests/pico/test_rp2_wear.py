"""The flash's years of service (host_tools/rp2emu/wear.py): littlefs as the Pico's MicroPython
configures it, the flash store's record written over and over (littlefs-python, CPython).

What the bench's years rest on: erases land inside the file system's blocks and spread over
them (littlefs's allocator and its metadata levelling every `block_cycles` erases), so the most
worn block takes a small share; a record small enough to live in its directory entry (inline)
costs fewer erases a write than one that needs a block of its own.
"""

from host_tools.rp2emu.chip import FS_LAYOUT
from host_tools.rp2emu.wear import ERASE_CYCLES, lifetime

FILES = {"/main.py": b"from cylindre.board.wiring import main\nmain()\n", "/board.json": b"{}" * 400,
         "/wheel.key": b"5f" * 32, "/cylindre/spin/controller.mpy": bytes(range(256)) * 40}


def test_the_record_s_erases_spread_over_the_file_system_and_bound_the_years():
    big = lifetime(FILES, b"x" * 1261, 3000)
    assert big["erases"] >= 3000 * 0.9                   # a block of its own a write (not inline)
    assert big["blocks_erased"] > 100                     # spread by littlefs, not one block
    share = big["worst_block_erases"] / big["erases"]
    assert share < 0.05, big
    per_day = big["worst_a_write"] * 600
    assert abs(big["years"] - ERASE_CYCLES / per_day / 365) < 1e-6
    assert big["blocks"] == FS_LAYOUT.fs_blockcount


def test_an_inline_record_costs_fewer_erases_a_write():
    small = lifetime(FILES, b"x" * 300, 3000)
    big = lifetime(FILES, b"x" * 1261, 3000)
    assert small["erases_a_write"] < big["erases_a_write"] / 2, (small, big)
