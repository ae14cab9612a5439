"""Bet slips (bulletins): a player terminal's whole layout in one request, taken or refused whole.

A stadium puts hundreds of terminals in front of one wheel; each sends its player's bets as the
player left them on the screen, most in the last seconds before the call. A slip holds up to
MAX_BETS bets of one player. It goes through the table exactly as single bets do (the same gate
`parse_bet_request`, the same rules and limits, the same window judged at its receipt, the same
group commit), with one difference: it is one decision. Every bet valid, the window open at its
receipt and still open when its group commits: every bet is recorded open, with the slip's id;
otherwise none is. A malformed bet is a 400 naming it (`bets[3]: ...`), nothing recorded; a slip
the window refuses is recorded refused (its row keeps the bets as sent), none of its bets is.
All its bets share one receipt, so the wheel's call, however late it reaches the table, locks
them all or refuses them all as poussette (flow.py judges them by that one instant).

An `Idempotency-Key` names the slip: a retry gets the first answer (201 or 409), another request
under it 422 idempotency_mismatch. Withdrawing a slip takes back all of its open bets on fresh
word from the wheel (window.withdrawal), or none; a withdrawal the call turns out to follow is
undone bet by bet, and the slip is open again (ledger.reinstate). The `slips` table (one row a
slip: its bets as sent, its status, its key and first answer) is created by the ledger; the bets'
rows name their slip (column `slip`).
"""

from __future__ import annotations

import json
import logging
import time

import orjson

from cylindre.rules.bets import BetError
from cylindre.rules.compiled import compile_bet

from host_tools.table.game import window
from host_tools.table.game.flow import esc
from host_tools.table.journal.jsontext import text
from host_tools.table.game.gate import (_KEPT, _REFUSALS, Invalid, Mismatch, NotFound, Receipt, Refused,
                                         _check_key, asked_of, parse_bet_request)

log = logging.getLogger("cylindre.table")

MAX_BETS = 50
SLIP_FIELDS = ("player", "bets")
MEMO_SIZE = 4096        # distinct bets a receipt remembers (a stadium's terminals send the same few)

def parse_slip_request(body) -> tuple:
    """A terminal's slip, checked before anything is recorded: (player, [(bet, zero choice)]).
    Each bet passes the single bet's gate (`parse_bet_request`) under the slip's player; the
    first one that does not is named in the 400."""
    if not isinstance(body, dict):
        raise Invalid('a slip is a JSON object {"player": NAME, "bets": [BET, ...]}')
    for k in body:
        if k not in SLIP_FIELDS:
            raise Invalid("%s: unknown field (a slip has player and bets)" % esc(k)[:40])
    bets = body.get("bets")
    if not isinstance(bets, list) or not 1 <= len(bets) <= MAX_BETS:
        raise Invalid("bets: a list of 1 to %d bets" % MAX_BETS)
    player = body.get("player")
    out = []
    for k, b in enumerate(bets):
        if isinstance(b, dict) and "player" in b:
            raise Invalid("bets[%d].player: the slip's player plays every bet of it" % k)
        try:
            player, bet, choice = parse_bet_request(dict(b, player=player) if isinstance(b, dict) else b)
        except Invalid as e:
            msg = str(e)
            raise Invalid(msg if msg.startswith("player:") else "bets[%d]: %s" % (k, msg)) from None
        out.append((bet, choice))
    return player, out


def receive(table, body, idempotency_key=None, decoded=False):
    """A slip as it reaches the table (Table.receive for a slip): checked (400) and stamped with
    its host instant and the window's verdict then. `decoded`: the body is JSON as a decoder
    made it (the HTTP placements), so its bets may be read from the memo (`Memo`)."""
    key = _check_key(idempotency_key)
    limits = table.limits
    known = MEMO.read(body, limits) if decoded else None
    parsed = known[0] if known is not None else parse_slip_request(body)
    now = table.clock()
    verdict = table.admit(now)
    if known is not None:
        compiled = (limits, known[1])
    else:
        try:
            compiled = (limits, _compile(parsed[1], limits))
        except Invalid:
            compiled = None             # `place` compiles it again, after its key's first answer
        else:
            if decoded:
                MEMO.learn(body, compiled[1], limits)
    return Receipt(now, verdict, parsed, asked_of(body, key), compiled)


class Memo:
    """What the gate and the rules made of a bet under one limits object, by the bet's exact
    JSON text: a stadium's terminals send the same few bets coup after coup, and reading each
    again (`parse_bet_request`, `compile_bet`) was a fifth of the daemon's interpreter lock
    under the slips' load. Both are functions of the bet's content, its player and the limits
    alone; the player is checked for each slip. Only a body a JSON decoder made is looked up
    (its text names its content exactly: 1, 1.0 and true differ), only bets the rules took
    are kept, and a slip with any bet not kept is read in full, as before, so a 400 names what
    it always named. The bets' dicts are the request's own, copied as the gate copies them."""

    def __init__(self, size=MEMO_SIZE):
        self.size = size
        self.kept = (None, {})          # (the limits, {bet's JSON: (shape, mult, excess)}): one object

    @property
    def seen(self):
        return self.kept[1]

    def read(self, body, limits):
        """((player, [(bet, zero choice)]), [(bet, shape, mult, excess)]) of a slip every bet of
        which was kept under `limits` (the very object), else None."""
        under, seen = self.kept
        if limits is not under or type(body) is not dict or len(body) != 2:
            return None
        bets, player = body.get("bets"), body.get("player")
        if type(bets) is not list or not 1 <= len(bets) <= MAX_BETS or not _player_ok(player):
            return None
        parsed, compiled = [], []
        for b in bets:
            if type(b) is not dict:
                return None
            try:
                hit = seen.get(orjson.dumps(b, option=orjson.OPT_SORT_KEYS))
            except (TypeError, orjson.JSONEncodeError):
                return None
            if hit is None:
                return None
            bet = dict(b)
            parsed.append((bet, bet.get("zero_choice")))
            compiled.append((bet, hit[0], hit[1], hit[2]))
        return (player, parsed), compiled

    def learn(self, body, compiled, limits):
        """Keep what the rules made of each bet of `body` (read in full, every bet taken)."""
        under, seen = self.kept
        if limits is not under:
            seen = {}
            self.kept = (limits, seen)
        for b, (_, shape, mult, excess) in zip(body["bets"], compiled):
            if len(seen) >= self.size:
                seen.clear()
            try:
                seen[orjson.dumps(b, option=orjson.OPT_SORT_KEYS)] = (shape, mult, excess)
            except (TypeError, orjson.JSONEncodeError):
                pass


def _player_ok(player):
    """The gate's own checks of a player's name (`parse_bet_request` on the name alone)."""
    try:
        parse_bet_request({"player": player})
    except Invalid:
        return False
    return True


MEMO = Memo()                           # the receipts' (the event loop's thread)


def _compile(bets, limits):
    """[(bet, shape, multiplier, excess)] of a slip's bets under `limits`, or Invalid naming the
    first one the rules refuse."""
    compiled = []
    for k, (bet, choice) in enumerate(bets):
        rules_bet = {x: v for x, v in bet.items() if x != "zero_choice"}
        rules_bet["id"] = "b"
        try:
            _, shape, mult, excess = compile_bet(rules_bet, limits)
        except BetError as e:
            raise Invalid("bets[%d]: %s%s" % (k, e.message.replace("bet b: ", "", 1),
                                              "; a straddle awaits the chef de table's consent: place it alone"
                                              if "consent" in e.message else "")) from None
        if choice is not None and shape.family != "simple":
            raise Invalid("bets[%d].zero_choice: %s is not an even chance" % (k, shape.label))
        compiled.append((bet, shape, mult, excess))
    return compiled


def place(table, body, idempotency_key=None, by=None, received=None) -> dict:
    """Record a slip whole (see the module docstring), inside the caller's transaction (the
    committer's group) or one of its own; its answer, or Invalid / Refused / Mismatch."""
    key = _check_key(idempotency_key)
    player, bets = received.parsed if received is not None and received.parsed else parse_slip_request(body)
    asked = asked_of(body, key, received)
    with table.lock, table.j.tx():
        out, refused = _place(table, player, bets, key, asked, by, received)
    if out.get("replay"):
        return out["replay"]
    table.publish("slip", {"slip": out["slip"], "player": player, "status": out["status"], "stake": out["stake"],
                           "bets": [p["id"] for p in out["bets"]], **({"reason": out["reason"]} if refused else {})})
    if refused:
        log.warning("slip %s of %s refused (%s): %d bets, %d cents", out["slip"], esc(player), out["reason"],
                    len(bets), out["stake"])
        raise Refused(out["reason"], _REFUSALS[out["reason"]], out)
    return out


def _place(table, player, bets, key, asked, by, received):
    j, st = table.j, table.st
    if key is not None:
        first = _answer_for(j, table.wheel, key)
        if first is not None:
            return {"replay": _replay(key, first, asked)}, False
    now = table.clock() if received is None else received.at
    status, reason, where = table.admit(now)
    if received is not None and received.verdict[0] != "open":
        status, reason, where = received.verdict         # refused at its receipt: refused
    compiled = None if received is None else received.compiled_under(table.limits)
    if compiled is None:
        compiled = _compile(bets, table.limits)
    sid = "S%06d" % st.get("next_slip", 1)
    st["next_slip"] = st.get("next_slip", 1) + 1
    stake = sum(m * s.units + x for _, s, m, x in compiled)
    placed = []
    if status == "open":
        first_id = st["next_bet"]
        st["next_bet"] += len(compiled)
        rows = []
        for n, (bet, shape, mult, excess) in enumerate(compiled):
            bid = "B%06d" % (first_id + n)
            bet["id"] = bid
            played = mult * shape.units
            placed.append({"id": bid, "label": shape.label, "stake": played + excess, "played": played,
                           "status": "open", "bet": bet})
            rows.append((bid, player, bet, played + excess))
        table.ledger.add_many(rows, "open", where, by, sid)
        for (bid, _, bet, stake_), (_, shape, mult, excess) in zip(rows, compiled):
            table.tapis.put({"id": bid, "player": player, "stake": stake_, "wheel_boot": where[0],
                             "wheel_ms": where[1], "body": bet, "spin": None, "compiled": (shape, mult, excess)})
    if log.isEnabledFor(logging.DEBUG):
        log.debug("slip %s of %s: %d bets, %d cents, %s", sid, esc(player), len(compiled), stake, status)
    out = {"slip": sid, "player": player, "status": status if status == "refused" else "open", "stake": stake,
           "bets": placed}
    if status == "refused":
        out["reason"] = reason
        answer = {"http": 409, "error": reason, "message": _REFUSALS[reason], "slip": out}
    else:
        answer = {"http": 201, "slip": out}
    j.db.execute("INSERT INTO slips (id, wheel, player, at, body, n, stake, status, reason, wheel_boot, wheel_ms, "
                 "idem_key, answer, placed_by) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                 (sid, table.wheel, player, time.time(),
                  json.dumps([b for b, _ in bets], sort_keys=True) if status == "refused" else "[]",  # (else: its bets' rows)
                  len(bets), stake, out["status"], reason, where[0], where[1], key,
                  None if key is None else text(dict(answer, request=asked)),
                  None if by is None else text(by)))
    table.save_state()
    return out, status == "refused"


def _answer_for(j, wheel, key):
    r = j.db.execute("SELECT answer FROM slips WHERE wheel=? AND idem_key=?", (wheel, key)).fetchone()
    return None if r is None or r[0] is None else json.loads(r[0])


def _replay(key, first, asked):
    """The first answer to `key` if this is the same slip; Mismatch otherwise."""
    slip = first["slip"]
    if first.get("request", asked) != asked:
        raise Mismatch("idempotency_mismatch", "Idempotency-Key %s was used for slip %s with another request: nothing "
                       "placed; use a new key for a new slip" % (key, slip["slip"]), slip)
    if first["http"] == 201:
        return slip
    raise Refused(first["error"], first["message"], slip)


def row(table, sid):
    r = table.j.one("SELECT * FROM slips WHERE id=? AND wheel=?", (sid, table.wheel))
    if r is None:
        raise NotFound(f"no slip {sid}")
    return r


def get(table, sid) -> dict:
    """A slip, its bets as they stand (with their results once settled)."""
    r = row(table, sid)
    out = {"slip": r["id"], "player": r["player"], "placed_at": r["at"], "status": r["status"], "reason": r["reason"],
           "stake": r["stake"], "bets": table.bets(slip=sid, limit=MAX_BETS)[::-1]}
    for k in ("placed_by", "withdrawn_by"):
        if r.get(k):
            out[k] = json.loads(r[k])
    if r["status"] == "refused":
        out["sent"] = json.loads(r["body"])
    return out


def withdraw(table, sid, by=None) -> dict:
    """The terminal takes its slip back: every open bet of it, on fresh word that the spin is not
    called (409 wheel_not_heard, no_more_bets), or none (409 not_open when one is no longer open)."""
    with table.lock, table.j.tx():
        r = row(table, sid)
        if r["status"] != "open":
            raise Refused("not_open", f"slip {sid} is {r['status']}: only an open slip can be withdrawn")
        bets = table.ledger.slip_bets(sid)
        closed = [b["id"] for b in bets if b["status"] != "open"]
        if closed:
            raise Refused("not_open", f"slip {sid}: bet {closed[0]} is no longer open: the slip stays as it is")
        status, reason, where = window.withdrawal(table.window, table.st["phase"], table.clock())
        if status != "open":
            raise Refused(reason, _KEPT[reason])
        for b in bets:
            table.ledger.cancel(b["id"], where, by)
            table.tapis.drop(b["id"])
        table.j.db.execute("UPDATE slips SET status='withdrawn', withdrawn_by=? WHERE id=? AND wheel=?",
                           (None if by is None else json.dumps(by, sort_keys=True), sid, table.wheel))
    table.publish("slip", {"slip": sid, "status": "withdrawn", "bets": [b["id"] for b in bets]})
    log.info("slip %s withdrawn (%d bets)", sid, len(bets))
    return {"slip": sid, "status": "withdrawn", "bets": [b["id"] for b in bets]}
