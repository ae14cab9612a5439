"""The ordinary placements and their near misses, one script for every path that answers them: the
fast path against the routes (tests/table/api/test_api_fastpath.py), the daemon with HTTP fronts
against the daemon without (tests/table/daemon/test_fronts.py)."""

BET = {"player": "ana", "type": "plein", "numbers": [17], "stake": 100}
SLIP = {"player": "bea", "bets": [{"type": "plein", "numbers": [17], "stake": 100}, {"type": "rouge", "stake": 500},
                                  {"type": "voisins", "unit": 100}]}

# (role, path, body or raw bytes, headers, served by the fast path?)
SCRIPT = [
    ("croupier", "/bets", BET, {}, True),
    ("croupier", "/bets", BET, {"Idempotency-Key": "k-1"}, True),
    ("croupier", "/bets", BET, {"Idempotency-Key": "k-1"}, True),                     # the first answer again
    ("croupier", "/bets", dict(BET, stake=200), {"Idempotency-Key": "k-1"}, True),    # 422 mismatch
    ("terminal", "/slips", SLIP, {"Idempotency-Key": "s-1"}, True),
    ("terminal", "/slips", SLIP, {"Idempotency-Key": "s-1"}, True),
    ("chef", "/slips", SLIP, {}, True),                                                 # any role above terminal
    ("croupier", "/bets", dict(BET, colour="red"), {}, True),                          # 400 invalid_bet
    ("croupier", "/bets", dict(BET, status="won"), {}, True),                          # a field the table sets
    ("croupier", "/bets", dict(BET, stake=10 ** 10), {}, True),                        # over the table's limit
    ("terminal", "/slips", {"player": "bea", "bets": [SLIP["bets"][0], {"type": "plein", "numbers": [40], "stake": 1}]},
     {}, True),                                                                          # 400 bets[1]
    ("terminal", "/slips", {"player": "bea", "bets": []}, {}, True),
    ("croupier", "/bets", [1, 2], {}, True),                                           # not an object
    ("croupier", "/bets", BET, {"Idempotency-Key": "a b"}, True),                      # a bad key: the table's 400
    ("croupier", "/bets", BET, {"Idempotency-Key": "k" * 129}, False),                 # over 128: the route's 400
    ("croupier", "/bets", b'{"player": "ana", "type": "plein",', {}, False),           # bad JSON: the Guard's 400
    ("croupier", "/bets", b"[" * 20 + b"]" * 20, {}, False),                            # too deep: the Guard's 400
    ("croupier", "/bets", b"", {}, False),                                              # no body: the route's 400
    (None, "/bets", BET, {}, False),                                                    # no token: 401
    ("bad", "/bets", BET, {}, False),                                                   # an unknown token: 401
    ("terminal", "/bets", BET, {}, False),                                              # a role too low: 403, audited
    ("display", "/slips", SLIP, {}, False),
    ("croupier", "/bets?x=1", BET, {}, False),                                          # a query parameter: the route's 400
    ("basic", "/bets", BET, {}, False),                                                 # not a bearer token: 401
    ("call", None, None, None, None),                                                   # the croupier's call: betting ends
    ("croupier", "/bets", BET, {}, True),                                               # refused after the call
    ("terminal", "/slips", SLIP, {"Idempotency-Key": "s-2"}, True),
    ("terminal", "/slips", SLIP, {"Idempotency-Key": "s-2"}, True),                     # its refusal again
]
