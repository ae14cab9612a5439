"""The wheel the table knows (le cylindre de la table): its identity, its spin counter's epoch,
and where its counter stands among the table's spin numbers.

A wheel says who it is in every WELCOME (docs/integrators/link-protocol.md): its id (`wheel`, T1), its board's
serial (`serial`: the Pico's flash id, so a swapped controller is another serial), its spin
counter's epoch (`epoch`: a random id made when the counter starts from nothing, a new board or
a wiped flash, and kept in flash with the counter) and its counter (`spin`); the host adds the
fingerprint of the key the frames verify with (`key`). The journal keeps, per table, the wheels
it has known in turn (`wheels`, numbered from 1) with each one's `base`: a spin `s` of that
wheel's counter is the table's spin `base + s`. So a counter that starts again at 1 (a controller
swap, a flash wipe) numbers the table's spins on from the last one, and a result of the new epoch
is settled, never taken for a spin settled before.

`judge` compares the wheel that answered with the one on record: the same one (or the first one
a table meets, or an older firmware's that says less, whose counter goes on) is taken; any other
(another board, another key, a counter of another epoch or gone back) is `unknown`: its events
wait in its outbox, no bet is taken, an alert says what to do, until a chef de table accepts it
(`POST /wheel/accept`, audited), which starts its `base` after the table's last spin.
"""

from __future__ import annotations

import hashlib
import json
import time

SCHEMA = """CREATE TABLE IF NOT EXISTS wheels (
    wheel TEXT NOT NULL, n INTEGER NOT NULL, serial TEXT, key TEXT, epoch TEXT, base INTEGER NOT NULL,
    since REAL NOT NULL, accepted_by TEXT NOT NULL, first_spin INTEGER, body TEXT,
    PRIMARY KEY (wheel, n))"""


# a locked bet whose spin's settlement is written but not yet tidied (ledger.py) is settled
_SETTLED = "(b.status='locked' AND b.spin IN (SELECT spin FROM settlements s WHERE s.wheel=b.wheel AND s.pending=1))"


def fingerprint(key: bytes) -> str:
    """A key's fingerprint: 16 hex digits of its SHA-256 (tells keys apart, reveals nothing)."""
    return hashlib.sha256(bytes(key)).hexdigest()[:16]


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def seen(info: dict, key_fp: str) -> dict:
    """The identity a WELCOME gives (fields an older firmware does not send are None)."""
    def text(k):
        v = info.get(k)
        return v if isinstance(v, str) and 0 < len(v) <= 64 else None
    spin = info.get("spin")
    return {"wheel": text("wheel"), "serial": text("serial"), "epoch": text("epoch"), "key": key_fp,
            "spin": spin if _int(spin) and spin >= 0 else None}


def _epoch_change(known_epoch, now, past_epochs) -> str:
    """What a counter of another epoch is, said per case: an earlier controller put back (its
    epoch known before), a counter started again from zero, or another counter altogether."""
    e, spin = now["epoch"], now["spin"]
    if e in past_epochs:
        at = "" if spin is None else f", compteur à {spin}"
        return f"un contrôleur d'avant remis en place (époque {e}{at}, la table connaît maintenant {known_epoch})"
    if spin == 0:
        return f"compteur de coups remis à zéro (nouvelle époque {e}, la table connaît {known_epoch})"
    at = "" if spin is None else f", à {spin} coups"
    return f"un autre compteur de coups (époque {e}{at} ; la table connaît {known_epoch})"


def judge(known: dict | None, now: dict, last_spin: int | None, others=(), strays=(), past_epochs=()):
    """("same" | "adopt" | "unknown", differences in French). `known`: the wheel on record (None:
    the table has none yet), `now`: `seen()`, `last_spin`: the table's highest spin number;
    `others`: the ids of other wheels this journal has known (a journal that knows T1 meeting T2
    for the first time: another wheel, the chef decides), `strays`: their bets still open, locked
    or held (ids), which the chef must see before accepting; `past_epochs`: the counter epochs of
    this wheel's earlier rows (an earlier controller put back is said so)."""
    base = (known or {}).get("base") or 0
    goes_on = now["spin"] is None or last_spin is None or base + now["spin"] >= last_spin
    if known is None:
        if others:
            diffs = ["autre cylindre (%s, la table connaît %s)" % (now.get("wheel") or "?", ", ".join(others))]
            if strays:
                shown = ", ".join(strays[:5]) + (" …" if len(strays) > 5 else "")
                diffs.append("%d mise(s) de %s encore sur la table (%s) : retenues pour le superviseur à l'accord"
                             % (len(strays), ", ".join(others), shown))
            return "unknown", diffs
        if goes_on:
            return "adopt", []
        return "unknown", [f"compteur de coups à {now['spin']}, la table en est au coup {last_spin}"]
    diffs = []
    if known.get("serial") and now["serial"] and known["serial"] != now["serial"]:
        diffs.append(f"autre carte (n° {now['serial']}, la table connaît {known['serial']})")
    if known.get("key") and known["key"] != now["key"]:
        diffs.append(f"autre clé (empreinte {now['key']}, la table connaît {known['key']})")
    if known.get("epoch") and now["epoch"] and known["epoch"] != now["epoch"]:
        diffs.append(_epoch_change(known["epoch"], now, past_epochs))
    elif not goes_on:
        diffs.append(f"compteur de coups revenu à {now['spin']}, la table en est au coup {last_spin}")
    if diffs:
        return "unknown", diffs
    if (now["epoch"] and not known.get("epoch")) or (now["serial"] and not known.get("serial")):
        return "adopt", []          # the same wheel, now saying more (a newer firmware)
    return "same", []


def base_for(known: dict | None, now: dict, last_spin: int | None) -> int:
    """The base of a wheel a chef accepts: the same counter (only the key changed) keeps its
    base; a new one numbers on after the table's last spin."""
    same_counter = (known is not None and known.get("epoch") and known.get("epoch") == now.get("epoch")
                    and (not known.get("serial") or known.get("serial") == now.get("serial"))
                    and (now.get("spin") is None or last_spin is None or known["base"] + now["spin"] >= last_spin))
    return known["base"] if same_counter else (last_spin or 0)


def describe(now: dict, diffs: list) -> str:
    """The pit's line for a wheel the table does not know."""
    who = now.get("wheel") or "?"
    return f"cylindre {who} non reconnu : " + " ; ".join(diffs) + " — paris fermés jusqu'à l'accord du chef de table"


def to_table(ev: dict, base: int) -> dict:
    """A wheel event with its spin numbers as the table's (`wheel_spin`: the counter's own)."""
    if not base:
        return ev
    out = dict(ev)
    for k in ("spin", "interrupted"):
        if _int(out.get(k)):
            out[k] = out[k] + base
    if _int(ev.get("spin")):
        out["wheel_spin"] = ev["spin"]
    h = out.get("history")
    if isinstance(h, list):
        out["history"] = [dict(g, spin=g["spin"] + base) if isinstance(g, dict) and _int(g.get("spin")) else g
                          for g in h]
    return out


class WheelBook:
    """The `wheels` rows of one table in the journal."""

    def __init__(self, journal, wheel):
        self.j = journal
        self.wheel = wheel
        with self.j.tx() as db:
            db.execute(SCHEMA)

    def current(self) -> dict | None:
        r = self.j.one("SELECT * FROM wheels WHERE wheel=? ORDER BY n DESC LIMIT 1", (self.wheel,))
        return None if r is None else dict(r, wheel=self.wheel)

    def last_spin(self) -> int | None:
        """The table's highest spin number anywhere in the journal (settled, heard, bet on)."""
        r = self.j.one("SELECT MAX(s) AS s FROM (SELECT MAX(spin) AS s FROM settlements WHERE wheel=? "
                       "UNION ALL SELECT MAX(spin) FROM events WHERE wheel=? UNION ALL SELECT MAX(spin) FROM bets WHERE wheel=?)",
                       (self.wheel, self.wheel, self.wheel))
        st = self.j.load_state(self.wheel) or {}
        vals = [v for v in ((r or {}).get("s"), st.get("spin"), st.get("last_launch")) if _int(v)]
        return max(vals) if vals else None

    def record(self, now: dict, base: int, by: str, first_spin=None) -> dict:
        """A wheel taken by the table from now on (inside the caller's transaction)."""
        cur = self.current()
        n = (cur["n"] if cur else 0) + 1
        self.j.db.execute("INSERT INTO wheels (wheel, n, serial, key, epoch, base, since, accepted_by, first_spin, body) "
                          "VALUES (?,?,?,?,?,?,?,?,?,?)",
                          (self.wheel, n, now.get("serial"), now.get("key"), now.get("epoch"), base, time.time(), by,
                           first_spin, json.dumps(now, sort_keys=True)))
        return self.current()

    def others(self) -> list:
        """The ids of the other wheels this journal has known (the same journal, another wheel)."""
        return [r["wheel"] for r in self.j.query("SELECT DISTINCT wheel FROM wheels WHERE wheel<>? ORDER BY wheel",
                                                 (self.wheel,))]

    def strays(self) -> list:
        """The bets of other wheels still open, locked or held: no daemon of this id settles them."""
        return [r["id"] for r in self.j.query("SELECT id FROM bets b WHERE wheel<>? AND status IN ('open','locked','held') "
                                              "AND NOT " + _SETTLED + " ORDER BY id", (self.wheel,))]

    def hold_strays(self, reason: str) -> list:
        """Another wheel accepted on this journal (inside the caller's transaction): the old ones'
        open and locked bets are held for the supervisor (never played on the new wheel)."""
        ids = [r["id"] for r in self.j.query("SELECT id FROM bets b WHERE wheel<>? AND status IN ('open','locked') "
                                             "AND NOT " + _SETTLED + " ORDER BY id", (self.wheel,))]
        self.j.db.executemany("UPDATE bets SET status='held', reason=? WHERE id=?", [(reason, i) for i in ids])
        return ids

    def all(self) -> list:
        return self.j.query("SELECT * FROM wheels WHERE wheel=? ORDER BY n", (self.wheel,))
