"""Which table holds which wheel: a serial is bound to one table at a time, decided as the floor
receives the messages (its own clock, which no table sets), and recorded with each coup
(`events.wheel`), so the statistics that follow a wheel never take another table's word for it.

A table's envelope says the serial of the wheel it played on (docs/floor.md). The floor keeps,
per serial, the table that holds it and when it last said so (`wheel_holders`: a result, a void,
a change of wheel or a heartbeat naming it). A table naming a serial:
- nobody holds, or it holds already: holds it (its coups are the wheel's);
- another table holds and said so within `CLAIM_S`: claimed by two tables at once. No merge: the
  newcomer's coups are kept apart under `<serial>@<table>` and an alert names both tables;
- another table held and has not said so for `CLAIM_S` (its heartbeat names another wheel, or it
  has gone quiet): the wheel has moved. The newcomer holds it from now, and an alert says so,
  for a wheel moves rarely and a person should know (a table's host that is down can't object).
"""

from __future__ import annotations

CLAIM_S = 60.0          # a table that said a serial this recently still holds it (heartbeats every 5 s)

SCHEMA = """
CREATE TABLE IF NOT EXISTS wheel_holders (
    serial TEXT PRIMARY KEY, table_id TEXT NOT NULL, since DOUBLE PRECISION NOT NULL,
    last_at DOUBLE PRECISION NOT NULL)
"""


def decide(holder: tuple | None, table: str, now: float, claim_s: float = CLAIM_S) -> str:
    """What a table naming a serial does, given its holder (table, since, last_at) or None:
    "hold" (first, or its own), "move" (taken from a holder gone quiet), "dispute"."""
    if holder is None or holder[0] == table:
        return "hold"
    return "dispute" if now - holder[2] <= claim_s else "move"


def key(serial: str, table: str, outcome: str) -> str:
    """The wheel a coup counts for: the serial, or `<serial>@<table>` while disputed."""
    return f"{serial}@{table}" if outcome == "dispute" else serial


def bind(store, c, table: str, site: str, serial, now: float, claim_s: float = CLAIM_S) -> str | None:
    """Apply one naming of `serial` by `table` in the ingest's transaction `c`: the wheel key its
    coup counts for (None without a serial), with the holder updated and an alert on a dispute or
    a move."""
    if not serial:
        return None
    row = c.execute("SELECT table_id, since, last_at FROM wheel_holders WHERE serial=?", (serial,)).fetchone()
    outcome = decide(tuple(row) if row else None, table, now, claim_s)
    if outcome == "hold":
        if row is None:
            c.execute("INSERT INTO wheel_holders (serial, table_id, since, last_at) VALUES (?,?,?,?) "
                      "ON CONFLICT (serial) DO UPDATE SET last_at=excluded.last_at", (serial, table, now, now))
        else:
            c.execute("UPDATE wheel_holders SET last_at=? WHERE serial=? AND last_at < ?", (now, serial, now))
    elif outcome == "move":
        c.execute("UPDATE wheel_holders SET table_id=?, since=?, last_at=? WHERE serial=?", (table, now, now, serial))
        store.floor_alert(c, table, site, "wheel_moved", f"floor:wheel_moved:{serial}:{int(now)}",
                          f"le cylindre {serial} est passé de la table {row[0]} à la table {table} "
                          f"(la table {row[0]} ne le nomme plus depuis {now - row[2]:.0f} s)", "warning", now)
    else:
        store.floor_alert(c, table, site, "serial_disputed", f"floor:serial:{serial}",
                          f"la table {table} nomme le cylindre {serial}, que la table {row[0]} tient "
                          f"(nommé il y a {now - row[2]:.0f} s) : ses coups sont comptés à part ({serial}@{table}), "
                          f"jamais mêlés à ceux du cylindre", "critical", now)
    return key(serial, table, outcome)


def release(c, table: str, serial) -> None:
    """A table's heartbeat names another wheel (or none): it no longer holds the ones it held."""
    if serial:
        c.execute("UPDATE wheel_holders SET last_at=0 WHERE table_id=? AND serial <> ?", (table, serial))
    else:
        c.execute("UPDATE wheel_holders SET last_at=0 WHERE table_id=?", (table,))
