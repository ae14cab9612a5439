"""The floor's commands to a table, signed: canonical JSON, HMAC-SHA256, freshness and replay.

A request (docs/floor/commands.md) is `{"v":1, "id", "op", "args", "who", "role", "at", "sig"}`;
`sig` is the HMAC-SHA256, with the floor's command key, of the canonical JSON of the request
without `sig` (keys sorted, no spaces, UTF-8). The key is a file shared by the floor and its
tables only (`--floor-key`, 64 hex characters, mode 0600): a table's NATS user may reach the
command subject of no other table, and even a user that could cannot forge a request without
the key. A table takes a request once (`Replay`), and only within `FRESH_S` of its clock.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import time
import uuid

VERSION = 1
FRESH_S = 30.0
OPS = ("open", "close", "set_limits", "request_setting", "approve_setting", "ack_alert")
# the floor's roles as the table's: a pit boss is a chef de table, a director an admin,
# surveillance reads only (its commands are refused)
ROLES = {"pit_boss": "chef", "director": "admin", "surveillance": "display"}
# THE list of the wheel's regulatory settings (firmware spin settings), changed by two people (a
# request, another person's approval) wherever they are changed: at the floor, and at the table's
# API (host_tools/table/api/twoperson.py): minimum laps, Article 53 voiding (rotor not reversed, ball
# the same way), the rien ne va plus lead, and how a number is confirmed (sightings, sensors, span)
SETTINGS = ("min_laps", "void_rotor_not_reversed", "void_same_direction", "rnvp_lead_laps_x10",
            "confirm_sightings", "confirm_sensors", "confirm_span_us")
NAME = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")
KEY_HEX = 64


class CommandError(ValueError):
    """A refused request: `code` for the reply, and why."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


def canonical(obj) -> bytes:
    """The bytes that are signed: JSON, keys sorted, no spaces, UTF-8, no NaN."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def signature(request: dict, key: bytes) -> str:
    unsigned = {k: v for k, v in request.items() if k != "sig"}
    return hmac.new(key, canonical(unsigned), hashlib.sha256).hexdigest()


def sign(request: dict, key: bytes) -> dict:
    """The request with its `sig`."""
    return {**{k: v for k, v in request.items() if k != "sig"}, "sig": signature(request, key)}


def request(op, args, who, role, key: bytes, now: float | None = None, rid: str | None = None) -> dict:
    """A signed request of the floor user `who` (role `role`)."""
    req = {"v": VERSION, "id": rid or str(uuid.uuid4()), "op": op, "args": dict(args or {}), "who": who,
           "role": role, "at": time.time() if now is None else now}
    check_shape(req, signed=False)
    return sign(req, key)


def check_shape(req, signed=True) -> None:
    """CommandError('bad_request') unless the request has the contract's fields and types."""
    if not isinstance(req, dict):
        raise CommandError("bad_request", "a command is a JSON object")
    need = ("v", "id", "op", "args", "who", "role", "at") + (("sig",) if signed else ())
    missing = [k for k in need if k not in req]
    if missing:
        raise CommandError("bad_request", f"command without {', '.join(missing)}")
    extra = sorted(set(req) - set(need) - {"sig"})
    if extra:
        raise CommandError("bad_request", f"unknown field {extra[0]!r}")
    if req["v"] != VERSION:
        raise CommandError("bad_request", f"command version {req['v']!r}: this table reads {VERSION}")
    if not isinstance(req["id"], str) or not 8 <= len(req["id"]) <= 64:
        raise CommandError("bad_request", "id must be 8 to 64 characters (a UUID)")
    if req["op"] not in OPS:
        raise CommandError("unknown_op", f"unknown op {req['op']!r} (known: {', '.join(OPS)})")
    if not isinstance(req["args"], dict):
        raise CommandError("bad_request", "args must be an object")
    if not isinstance(req["who"], str) or not NAME.fullmatch(req["who"]):
        raise CommandError("bad_request", "who must be 1 to 64 of A-Z a-z 0-9 . _ @ -")
    if req["role"] not in ROLES:
        raise CommandError("bad_request", f"unknown floor role {req['role']!r} (known: {', '.join(ROLES)})")
    at = req["at"]
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at):
        raise CommandError("bad_request", "at must be epoch seconds")
    if signed and (not isinstance(req["sig"], str) or len(req["sig"]) != 64):
        raise CommandError("bad_signature", "sig must be 64 hex characters")


class Replay:
    """The ids taken within the freshness window (older ones are refused as stale anyway)."""

    def __init__(self, window_s: float = FRESH_S):
        self.window = window_s
        self._seen: dict[str, float] = {}

    def seen(self, rid: str, now: float) -> bool:
        """True if `rid` was taken before; records it otherwise."""
        cutoff = now - 2 * self.window - 1
        if len(self._seen) > 64:
            for k in [k for k, t in self._seen.items() if t < cutoff]:
                del self._seen[k]
        if rid in self._seen:
            return True
        self._seen[rid] = now
        return False


def verify(req, key: bytes, now: float, replay: Replay, fresh_s: float = FRESH_S) -> dict:
    """The request if it is well formed, signed with `key`, within `fresh_s` of `now` and not seen
    before; CommandError (bad_request, unknown_op, bad_signature, stale, replayed) otherwise. The
    signature is checked before the id is remembered: a forged request cannot spend a real id."""
    check_shape(req)
    if not hmac.compare_digest(signature(req, key), req["sig"].lower()):
        raise CommandError("bad_signature", "the command's signature does not match the floor key")
    if abs(now - req["at"]) > fresh_s:
        raise CommandError("stale", f"the command is {now - req['at']:+.1f} s from this table's clock "
                                    f"(at most {fresh_s:.0f} s)")
    if replay.seen(req["id"], now):
        raise CommandError("replayed", f"command {req['id']} was taken already")
    return req


def table_role(floor_role: str) -> str:
    return ROLES[floor_role]


def ok(result=None) -> dict:
    return {"ok": True, "result": result if result is not None else {}}


def error(code, message) -> dict:
    return {"ok": False, "error": code, "message": str(message)}


def load_key(path) -> bytes:
    """The floor's command key: 64 hex characters in a file only its owner may read."""
    from host_tools.table.wheel.keys import load_key as load
    return load(path)


def new_key(path) -> bytes:
    from host_tools.table.wheel.keys import new_key as new
    return new(path)
