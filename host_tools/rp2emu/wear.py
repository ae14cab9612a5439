"""Flash wear of the Pico's file system: what the firmware erases and programs, and for how long.

- `FlashOps(chip)` counts, on the emulated chip, the sector erases and page programs the firmware
  issues through the SSI (rp2040py's flash peripheral: the bootrom's flash functions that
  MicroPython's littlefs calls end there), by 4 KB sector, inside the file system's region;
- `lifetime(...)` runs the same littlefs (v2, as MicroPython's rp2 port configures it: 4 KB
  blocks, 352 of them, reads of 32 B, programs of 256 B, a 1 KB cache, a 32 B lookahead and
  `block_cycles` 100, its metadata wear levelling) in littlefs-python on an image holding the
  deployed files, and writes the flash store's record (board/store.py: two files in turn, each
  written whole) as many times as the coups of years of play, counting each block's erases: the
  most worn block gives the years of service at a rate of coups a day, measured with littlefs's
  levelling, not assumed. The Pico's flash (W25Q16JV) is rated 100,000 erase cycles a sector.
"""

from __future__ import annotations

from collections import Counter

from host_tools.rp2emu.chip import FS_LAYOUT
from host_tools.rp2emu.flash import fill

ERASE_CYCLES = 100_000       # the W25Q16JV's rated endurance, a sector
# MicroPython's littlefs configuration on rp2 (extmod/vfs_lfsx.c, ports/rp2/modules/_boot.py)
READ_SIZE, PROG_SIZE, LOOKAHEAD, BLOCK_CYCLES = 32, 256, 32, 100
CACHE_SIZE = min(FS_LAYOUT.fs_blocksize, 4 * max(READ_SIZE, PROG_SIZE))

_SECTOR_ERASE, _BLOCK_ERASE, _PAGE_PROGRAM = 0x20, 0xD8, 0x02


class FlashOps:
    """The file system's erases and programs, counted where the chip's SSI applies them."""

    def __init__(self, chip):
        self.erases: Counter = Counter()       # file-system block -> erases
        self.programs: Counter = Counter()     # file-system block -> page programs
        ssi = chip.mcu.ssi
        apply = ssi._apply_command
        lo = FS_LAYOUT.fs_start
        hi = lo + FS_LAYOUT.fs_blocksize * FS_LAYOUT.fs_blockcount
        bs = FS_LAYOUT.fs_blocksize

        def counted():
            buf = ssi._tx_buffer
            if buf and len(buf) >= 4 and ssi._write_enabled:
                op = buf[0]
                addr = (buf[1] << 16) | (buf[2] << 8) | buf[3]
                if lo <= addr < hi:
                    if op in (_SECTOR_ERASE, _BLOCK_ERASE):
                        self.erases[(addr - lo) // bs] += 1
                    elif op == _PAGE_PROGRAM:
                        self.programs[(addr - lo) // bs] += 1
            apply()

        ssi._apply_command = counted

    def totals(self) -> tuple[int, int]:
        """(erases, programs) so far."""
        return sum(self.erases.values()), sum(self.programs.values())


def _fs(files: dict[str, bytes]):
    """littlefs as the Pico formats and mounts it, holding `files`; its context's `counter`
    counts the erases of each block from then on."""
    from littlefs import LittleFS, UserContext

    class Counted(UserContext):
        counter: Counter = Counter()

        def erase(self, cfg, block):
            self.counter[block] += 1
            return super().erase(cfg, block)

    size = FS_LAYOUT.fs_blocksize * FS_LAYOUT.fs_blockcount
    fs = LittleFS(context=Counted(buffsize=size), block_size=FS_LAYOUT.fs_blocksize,
                  block_count=FS_LAYOUT.fs_blockcount, read_size=READ_SIZE, prog_size=PROG_SIZE,
                  cache_size=CACHE_SIZE, lookahead_size=LOOKAHEAD, block_cycles=BLOCK_CYCLES)
    fill(fs, files)
    return fs


def lifetime(files: dict[str, bytes], record: bytes, writes: int, writes_per_coup: float = 1.0,
             coups_a_day: int = 600, paths=("cylindre.rec.b", "cylindre.rec")) -> dict:
    """Write `record` `writes` times, to the store's two files in turn, on littlefs as the Pico
    has it (holding `files`); the erases of each block, the most worn, and the years until it
    reaches ERASE_CYCLES at `coups_a_day` coups of `writes_per_coup` records each."""
    fs = _fs(files)
    erases: Counter = Counter()
    fs.context.counter = erases
    for i in range(writes):
        with fs.open(paths[i & 1], "wb") as f:
            f.write(record)
    worst = max(erases.values()) if erases else 0
    total = sum(erases.values())
    per_write = worst / writes if writes else 0.0
    per_day = per_write * writes_per_coup * coups_a_day
    return {"writes": writes, "record_bytes": len(record), "erases": total,
            "erases_a_write": total / writes if writes else 0.0, "blocks_erased": len(erases),
            "blocks": FS_LAYOUT.fs_blockcount, "worst_block_erases": worst,
            "worst_a_write": per_write, "writes_per_coup": writes_per_coup, "coups_a_day": coups_a_day,
            "years": (ERASE_CYCLES / per_day / 365.0) if per_day else None}

