"""La mise (a single bet): received, then placed.

`receive` reads a request as it reaches the table, on the thread that took it (the HTTP server's):
the gate's checks (a 400 now), the host instant and the betting window's verdict then, the
request's fingerprint and its bet compiled under the limits in force (gate.Receipt). `place`
records it in the journal, at once or in a group (committer.py): its Idempotency-Key's first
answer if it has one, else the bet judged with its receipt's instant, recorded open, refused
(409, kept) or awaiting the chef de table's consent (a straddle over the limits). A terminal's
slip of bets is slips.py's. Functions of the table (`table`: table.Table).
"""

from __future__ import annotations

import logging

from cylindre.rules.bets import BetError
from cylindre.rules.compiled import compile_bet

from host_tools.table.game.flow import esc
from host_tools.table.game.gate import (_REFUSALS, Invalid, Mismatch, Receipt, Refused, _check_key, asked_of,
                                         parse_bet_request)

log = logging.getLogger("cylindre.table")


def receive(table, body: dict, idempotency_key=None):
    """A bet as it reaches the table, before anything is recorded: checked (Invalid, 400) and
    stamped with the host instant it was received and the betting window's verdict then.
    `place(received=...)` records it, at once or in a group (committer.py): the window is
    judged at the bet's own receipt, however late its group commits."""
    key = _check_key(idempotency_key)
    parsed = parse_bet_request(body)
    # not under the table's lock (a group may hold it while it commits): the instant is the
    # bet's own; the verdict reads the phase and the evidence as they are, and `place` judges
    # the bet again, with this instant, under the lock
    now = table.clock()
    verdict = table.admit(now)
    limits = table.limits
    bet = parsed[1]
    try:
        _, shape, mult, excess = compile_bet({**{k: v for k, v in bet.items() if k != "zero_choice"}, "id": "b"},
                                             limits)
        compiled = (limits, (shape, mult, excess))
    except BetError:
        compiled = None             # `place` compiles it again: its error names the bet
    return Receipt(now, verdict, parsed, asked_of(body, key), compiled)


def place(table, body: dict, idempotency_key=None, by=None, received=None) -> dict:
    """Validate and record a bet; raise Invalid (400) or Refused (409, recorded as refused).
    With an `idempotency_key`, a second call returns (or raises) the first answer, stored
    with the bet in the same transaction. `by`: who placed it ({"name", "role"}), kept on its row.
    `received`: the bet's `receive()` (default: received now); the bet is refused if the window
    refused it then, or refuses it now (a call taken in between) with its instant of receipt."""
    key = _check_key(idempotency_key)
    player, bet, choice = received.parsed if received is not None and received.parsed else parse_bet_request(body)
    asked = asked_of(body, key, received)
    try:
        with table.lock, table.j.tx():
            out, status, reason, label = _place(table, player, bet, choice, key, asked, by, received)
    except (Invalid, Refused):
        raise                       # refused before anything changed
    except BaseException:
        if table.j.depth == 0:
            table.reload()
        raise
    if out.get("replay"):
        return out["replay"]
    if status == "refused":
        log.warning("bet %s of %s refused (%s): %s %d cents", out["id"], esc(player), reason, label, out["stake"])
        table.publish("bet", {**out, "reason": reason})
        raise Refused(reason, _REFUSALS[reason], out)
    if log.isEnabledFor(logging.DEBUG):     # (its arguments cost more than the rest of the line)
        log.debug("bet %s of %s: %s, %d cents%s", out["id"], esc(player), label, out["stake"],
                  " (awaiting the chef de table's consent)" if status == "awaiting_consent" else "")
    table.publish("bet", out)
    return out


def _place(table, player, bet, choice, key, asked, by, received):
    if key is not None:
        first = table.ledger.answer_for(key)
        if first is not None:
            return {"replay": _replay(key, first, asked)}, None, None, None
    now = table.clock() if received is None else received.at
    bid = "B%06d" % table.st["next_bet"]
    bet["id"] = bid
    status, reason, where = table.admit(now)
    if received is not None and received.verdict[0] != "open":
        status, reason, where = received.verdict       # refused at its receipt: refused
    compiled = None if received is None else received.compiled_under(table.limits)
    if compiled is not None:
        shape, mult, excess = compiled
    else:
        rules_bet = {k: v for k, v in bet.items() if k != "zero_choice"}
        try:
            _, shape, mult, excess = compile_bet(rules_bet, table.limits)
        except BetError as e:
            _, shape, mult, excess = _needs_consent(table, rules_bet, e)
            if status == "open":
                status = "awaiting_consent"
    if choice is not None and shape.family != "simple":
        # the rules settle a choice at zero on even chances only (settle_spin refuses it)
        raise Invalid("zero_choice: %s is not an even chance; a choice at zero (prison, partage, "
                      "move) applies only to rouge, noir, pair, impair, manque and passe" % shape.label)
    table.st["next_bet"] += 1
    played = mult * shape.units
    stake = played + excess
    out = {"id": bid, "player": player, "label": shape.label, "stake": stake, "played": played,
           "status": status, "bet": bet}
    if status == "refused":
        answer = {"http": 409, "error": reason, "message": _REFUSALS[reason], "bet": dict(out, reason=reason)}
    else:
        answer = {"http": 201, "bet": out}
    table.ledger.add(bid, player, bet, stake, status, table.st["locked_spin"] if status == "refused" else None,
                    reason, where, key, None if key is None else dict(answer, request=asked), by)
    table.save_state()
    if status == "open":
        table.tapis.put({"id": bid, "player": player, "stake": stake, "wheel_boot": where[0], "wheel_ms": where[1],
                        "body": bet, "spin": None, "compiled": (shape, mult, excess)})
    return out, status, reason, shape.label


def _replay(key, first, asked):
    """The first answer to `key`, if this is the same request (a journal from before requests
    were fingerprinted cannot tell, and answers)."""
    if first.get("request", asked) != asked:
        bet = first["bet"]
        raise Mismatch("idempotency_mismatch", "Idempotency-Key %s was used for bet %s with another request (%s):"
                       " nothing placed; use a new key for a new bet" % (key, bet["id"], bet.get("label")), bet)
    if first["http"] == 201:
        return first["bet"]
    raise Refused(first["error"], first["message"], first["bet"])


def _needs_consent(table, rules_bet, err):
    """A straddle the rules refuse without consent is recorded as awaiting it; anything
    else the rules refuse is a 400."""
    try:
        return compile_bet(dict(rules_bet, consent=True), table.limits)
    except BetError:
        raise Invalid(err.message) from None
