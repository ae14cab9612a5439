"""Decode a feed's sensors the way the geometry says (docs/integrators/feed-format.md), independently of the firmware.

Used to check the simulator against its truth, and by the bench for the lower bounds of the result
latency (the first sighting of the resting ball, and the instant the confirmation rule could be
met by sightings of it), on its own spins and on feeds written by other tools. Vectorised with
numpy over chunks of a feed (the quadrature count is a cumulative sum over the A/B edges), with
the state carried from chunk to chunk, so a feed of any length streams through.
"""

from __future__ import annotations

import numpy as np

from cylindre.spin.geometry import number_at

# position in the clockwise cycle 00 -> 10 -> 11 -> 01 of state (A << 1) | B
_POS = np.array([0, 3, 1, 2], dtype=np.int64)


def encoder_counts(codes: np.ndarray, levels: np.ndarray, a_code: int, b_code: int,
                   a0: int = 0, b0: int = 0, count0: int = 0) -> np.ndarray:
    """The signed quadrature count after each row (rows other than A/B keep the count).

    a0, b0, count0: the levels and count before the first row. A jump of both bits counts 0.
    """
    n = len(codes)
    idx = np.arange(n)
    is_a, is_b = codes == a_code, codes == b_code
    last_a = np.maximum.accumulate(np.where(is_a, idx, -1)) if n else idx
    last_b = np.maximum.accumulate(np.where(is_b, idx, -1)) if n else idx
    a = np.where(last_a >= 0, levels[np.maximum(last_a, 0)], a0).astype(np.int64)
    b = np.where(last_b >= 0, levels[np.maximum(last_b, 0)], b0).astype(np.int64)
    pos = _POS[(a << 1) | b]
    prev = np.concatenate(([_POS[(a0 << 1) | b0]], pos[:-1]))
    d = (pos - prev) % 4
    delta = np.select([d == 1, d == 3], [1, -1], 0)
    return count0 + np.cumsum(delta)


def pulses(t_us: np.ndarray, codes: np.ndarray, levels: np.ndarray, code: int):
    """(rise_row, fall_row) pairs of one signal (a pulse still on at the end is dropped)."""
    rows = np.nonzero(codes == code)[0]
    out = []
    on = None
    for r in rows.tolist():
        if levels[r] and on is None:
            on = r
        elif not levels[r] and on is not None:
            out.append((on, r))
            on = None
    return out


class Decoder:
    """Streams a feed's changes in chunks; `feed` returns the pocket sightings completed in a chunk.

    A sighting is (t_mid_us, sensor index, number, t_rise_us, t_fall_us): at the middle of a pocket-sensor pulse the
    count since the last index names the pocket; the count at the middle is taken as the mean of
    the counts at the pulse's edges (the rotor's speed is steady over a pulse). Pulses before the
    first index are skipped: the rotor's position is not known yet.
    """

    def __init__(self, header: dict):
        self.header = header
        self.names = list(header["signals"])
        self.code = {n: i for i, n in enumerate(self.names)}
        self.pockets = [(self.code["POCKET%d" % j], j, phi) for j, phi in enumerate(header["pocket_sensors_deg"])
                        if "POCKET%d" % j in self.code]
        self.a = self.b = 0
        self.count = 0
        self.z_count = None
        self.open = {}          # sensor index -> (t_rise, count at rise, z count at rise)

    def feed(self, t_us: np.ndarray, codes: np.ndarray, levels: np.ndarray) -> list[tuple[int, int, int, int, int]]:
        if len(t_us) == 0:
            return []
        c = self.code
        codes = np.asarray(codes, dtype=np.int64)
        levels = np.asarray(levels, dtype=np.int64)
        count = encoder_counts(codes, levels, c["A"], c["B"], self.a, self.b, self.count)
        z_rows = np.nonzero((codes == c["Z"]) & (levels == 1))[0] if "Z" in c else np.array([], dtype=np.int64)
        cpr, off = self.header["cpr"], self.header["index_offset_deg"]
        out = []

        def z_at(row):
            i = int(np.searchsorted(z_rows, row, side="right")) - 1
            return int(count[z_rows[i]]) if i >= 0 else self.z_count

        for code, j, phi in self.pockets:
            rows = np.nonzero(codes == code)[0]
            for r in rows.tolist():
                if levels[r]:
                    if j not in self.open:
                        self.open[j] = (int(t_us[r]), int(count[r]), z_at(r))
                elif j in self.open:
                    t1, c1, z1 = self.open.pop(j)
                    z = z_at(r)
                    if z is None:
                        continue
                    mid_count = (c1 + int(count[r])) / 2.0
                    since = int(round(mid_count)) - z
                    t2 = int(t_us[r])
                    out.append(((t1 + t2) // 2, j, number_at(phi, off, since, cpr), t1, t2))
        if z_rows.size:
            self.z_count = int(count[z_rows[-1]])
        self.count = int(count[-1])
        a_rows = np.nonzero(codes == c["A"])[0]
        b_rows = np.nonzero(codes == c["B"])[0]
        if a_rows.size:
            self.a = int(levels[a_rows[-1]])
        if b_rows.size:
            self.b = int(levels[b_rows[-1]])
        out.sort()
        return out


def sightings(header: dict, names, t_us, codes, levels):
    """Every pocket-sensor pulse of a whole feed decoded: sorted (t_mid_us, sensor index, number, t_rise_us,
    t_fall_us)."""
    if list(names) != list(header["signals"]):
        header = dict(header, signals=list(names))
    return Decoder(header).feed(np.asarray(t_us), np.asarray(codes), np.asarray(levels))
