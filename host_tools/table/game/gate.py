"""The table's gate (le guichet): what a client's bet or slip must be before anything is recorded,
its receipt, and the refusals the table answers with (HTTP 400, 404, 409, 422).

Framework-free: the HTTP layer hands over the decoded JSON; the table (table.py) and the slips
(slips.py) read requests through `parse_bet_request`, fingerprint them for Idempotency-Key
retries with `request_digest`, and raise these exceptions."""

from __future__ import annotations

import hashlib

from cylindre.rules.bets import BetError, zero_choice

from host_tools.table.game.flow import esc
from host_tools.table.journal.jsontext import canonical

MAX_STAKE = 10**11           # cents: refuse absurd amounts before they reach the rules
CHOICES = ("prison", "partage")

# what a player may say in a bet (the rules' words and their aliases); anything else is refused
BET_FIELDS = ("player", "type", "bet", "numbers", "number", "which", "stake", "unit", "replay", "rejouer",
              "zero_choice", "chance", "chances", "final", "form", "forme", "k", "neighbours", "neighbors",
              "voisins", "numero", "centre", "center", "a_placer", "payes_a_placer", "paye_a_placer", "placed")
_BET_FIELDS = frozenset(BET_FIELDS)
# what only the table (or the chef de table) sets
STATE_FIELDS = frozenset(("id", "carried", "status", "locked", "spin", "result", "reason", "played", "label", "at",
                "placed_at", "wheel_boot", "wheel_ms", "consent", "supervisor_consent", "chef_consent", "chef"))
CONSENT_FIELDS = frozenset(("consent", "supervisor_consent", "chef_consent", "chef"))
MAX_TEXT = 64
MAX_LIST = 37
MAX_KEY = 128
_REFUSALS = {
    "table_closed": "the table is closed",
    "poussette": "rien ne va plus: the bet came after the call (poussette), it is refused",
    "wheel_not_heard": "no fresh word from the wheel that betting is open (link slow or down): the bet is refused",
    "wheel_unknown": "the wheel connected is not the one this table knows: no bet until the chef de table accepts it"
                     " (POST /wheel/accept)",
}


_KEPT = {
    "no_more_bets": "rien ne va plus: the bet stays on the layout",
    "wheel_not_heard": "no fresh word from the wheel that the spin is not called (link slow or down): the bet stays"
                       " on the layout",
}


class Receipt:
    """A bet's receipt (`Table.receive`): the host instant `at` (ms) and the window's verdict
    then, (status, reason, (wheel boot, latest wheel ms)); `parsed`, the request as its gate
    read it (the body is the caller's and is not changed meanwhile: it is not read twice).

    Done on the thread that received the request, so the committer's thread, through which
    every placement goes one after the other, does not do it again: `asked`, the request's
    fingerprint when it has a key; `compiled`, (the limits, what the rules compiled under them)
    when they took it. The placement uses `compiled` only if the table's limits are still
    those (a change in between: compiled again) and compiles a bet the rules refused again
    (its error, named as placed)."""
    __slots__ = ("at", "verdict", "parsed", "asked", "compiled")

    def __init__(self, at, verdict, parsed=None, asked=None, compiled=None):
        self.at, self.verdict, self.parsed = at, verdict, parsed
        self.asked, self.compiled = asked, compiled

    def compiled_under(self, limits):
        """What the rules compiled at the receipt, if under `limits` (the very object), else None."""
        c = self.compiled
        return c[1] if c is not None and c[0] is limits else None


class Refused(Exception):
    """A bet the table refuses now (HTTP 409): `code` is table_closed, poussette, wheel_not_heard, not_open..."""
    http = 409

    def __init__(self, code, message, bet=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.bet = bet


class Mismatch(Refused):
    """An Idempotency-Key already used for another bet (HTTP 422 idempotency_mismatch): the
    retry is not the same request, so neither its bet nor the first answer is given."""
    http = 422


class Invalid(Exception):
    """A malformed request (HTTP 400)."""


class NotFound(Exception):
    """No such bet or spin (HTTP 404)."""


def parse_bet_request(body) -> tuple:
    """A client's bet, checked before anything is recorded: (player, bet dict, zero choice).

    Framework-free (the HTTP layer only hands over the decoded JSON). Refuses, naming the field:
    a field the rules do not know, a field only the table sets (`carried`, `status`, `consent`,
    ...: consent for a straddle is the chef de table's, POST /bets/{id}/consent), wrong types,
    control characters in the player's name, strings over 64 characters, lists over 37 items."""
    if not isinstance(body, dict):
        raise Invalid("a bet is a JSON object")
    for k in body:
        if k in CONSENT_FIELDS:
            raise Invalid("%s: consent to a straddle is the chef de table's, given with POST /bets/{id}/consent" % k)
        if k in STATE_FIELDS:
            raise Invalid("%s: set by the table, never by a player" % k)
        if k not in _BET_FIELDS:
            raise Invalid("%s: unknown field (a bet has %s)" % (esc(k)[:40], ", ".join(BET_FIELDS)))
    player = body.get("player")
    if not isinstance(player, str) or not player.strip() or len(player) > MAX_TEXT:
        raise Invalid("player: a name of 1 to 64 characters is required")
    if not player.isprintable():
        raise Invalid("player: control characters (newline, tab, ...) are not allowed in a name")
    bet = {k: v for k, v in body.items() if k != "player"}
    for k in ("stake", "unit"):
        if k in bet and (not isinstance(bet[k], int) or isinstance(bet[k], bool)):
            raise Invalid(f"{k}: integer cents are required (got {bet[k]!r})"[:200])
        if k in bet and not 0 < bet[k] <= MAX_STAKE:
            raise Invalid(f"{k}: must be between 1 and {MAX_STAKE} cents")
    for k, v in body.items():
        _check_value(k, v, 0)
    choice = bet.get("zero_choice")
    if choice is not None:
        if not (choice in CHOICES or (isinstance(choice, dict) and set(choice) == {"move"}
                                       and isinstance(choice["move"], str))):
            raise Invalid('zero_choice: "prison", "partage" or {"move": "<even chance>"}')
        try:
            zero_choice(choice, "zero_choice")      # the rules' own reading ({"move": "vert"} is refused)
        except BetError as e:
            raise Invalid(e.message) from None
    return player, bet, choice


def _check_value(k, v, depth):
    """`v` (under field `k`) is a short string, a bounded integer, a boolean, null, or a short
    list or small dict of them, nested twice at most. The plain JSON types are judged first,
    by their exact type (the decoded body holds no other), the rest by isinstance."""
    t = type(v)
    if depth <= 2:
        if t is int:
            if -MAX_STAKE <= v <= MAX_STAKE:
                return
        elif t is str:
            if len(v) <= MAX_TEXT:
                return
        elif t is list:
            if len(v) <= MAX_LIST:
                for x in v:
                    if type(x) is not int or depth == 2 or not -MAX_STAKE <= x <= MAX_STAKE:
                        _check_value(k, x, depth + 1)
                return
        elif v is None or t is bool:
            return
    _judge(k, v, depth)


def _judge(k, v, depth):
    if depth > 2:
        raise Invalid("%s: nested too deep" % k)
    if isinstance(v, str):
        if len(v) > MAX_TEXT:
            raise Invalid("%s: at most %d characters" % (k, MAX_TEXT))
    elif isinstance(v, list):
        if len(v) > MAX_LIST:
            raise Invalid("%s: at most %d items" % (k, MAX_LIST))
        for x in v:
            _judge(k, x, depth + 1)
    elif isinstance(v, dict):
        if len(v) > 4:
            raise Invalid("%s: too many keys" % k)
        for x in v.values():
            _judge(k, x, depth + 1)
    elif isinstance(v, int) and not isinstance(v, bool):
        if abs(v) > MAX_STAKE:
            raise Invalid("%s: number out of range" % k)
    elif not (v is None or isinstance(v, bool)):
        raise Invalid("%s: %s is not allowed here" % (k, type(v).__name__))


def request_digest(body) -> str:
    """A request's fingerprint, for Idempotency-Key retries: the same JSON, in any key order."""
    return hashlib.sha256(canonical(body)).hexdigest()


def asked_of(body, key, received=None):
    """The fingerprint a placement keeps with its key (None without one): its receipt's, else
    taken now."""
    if key is None:
        return None
    if received is not None and received.asked is not None:
        return received.asked
    return request_digest(body)


def _check_key(key):
    if key is None:
        return None
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY or not (key.isascii() and key.isprintable() and " " not in key):
        raise Invalid("Idempotency-Key: 1 to 128 printable ASCII characters, no spaces")
    return key
