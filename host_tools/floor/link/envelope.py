"""The message a table publishes: its subject `cylindre.<site>.<table>.<kind>`, its JSON envelope
and its `Nats-Msg-Id` (docs/floor/messages.md).

`event_id` is the table journal's `event_log.id` (the outbox row) and `journal` the identity the
journal had when it wrote that row (a random token given at each opening of the journal file,
host_tools/table/journal/identity.py): with the table id they name an event once and for all, so the floor
stores it once (primary key (table, journal, event id), the table taken from the subject the broker
let it publish on, never from the envelope), while a table started on a new, empty journal or on a
restored backup numbers its new events under a new identity and loses none. `journal` "" (or
absent, from a table built before it) is the events journaled before journals had an identity.

The broker drops a resend by its `Nats-Msg-Id`, but its window is the stream's, shared by every
table, and the broker does not tie an id to the subject it came on: a table that could guess
another's ids could have that table's next events dropped as "duplicates". So a table with its
own credentials signs its ids: `<table>:<journal>:<event id>:<tag>`, the tag an HMAC of them under
its own NATS password (which no other table knows), stable across restarts so a resend is still
dropped. `prev` chains a journal's messages: the id of the message published before it under the
same journal (0 for the first, null when unknown), so the floor sees an event that never came.
A heartbeat is not journaled: its id is `<table>:hb:<epoch ms>`, its event_id the last event the
broker acknowledged (body `last_event_id`, `last_journal`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re

VERSION = 1
PREFIX = "cylindre"
TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
KINDS = ("result", "void", "settlement", "table", "alert", "audit", "heartbeat")
JOURNALED = frozenset(KINDS) - {"heartbeat"}
CMD = "cmd"
MSG_ID = "Nats-Msg-Id"
FIELDS = ("v", "site", "table", "serial", "event_id", "kind", "at", "body")
OPTIONAL = ("journal", "prev")
LEGACY = ""                 # the journal of events journaled before journals had an identity
JOURNAL = re.compile(r"^[A-Za-z0-9_-]{0,32}$")
# what every store takes: a BIGINT id, a serial of printable ASCII (no NUL, no lone surrogate), a
# payload and a nesting a table never needs (a settlement is a few hundred bytes)
MAX_ID = 2 ** 63 - 1
SERIAL = re.compile(r"^[\x20-\x7e]{1,64}$")
MAX_PAYLOAD = 256 * 1024
MAX_DEPTH = 16


class EnvelopeError(ValueError):
    pass


def check_token(value, what="token") -> str:
    """A site or table id as a subject token: 1 to 32 of A-Z a-z 0-9 _ - (no dot, no wildcard)."""
    if not isinstance(value, str) or not TOKEN.fullmatch(value):
        raise EnvelopeError(f"{what} must be 1 to 32 of A-Z a-z 0-9 _ -, got {str(value)[:40]!r}")
    return value


def subject(site: str, table: str, kind: str) -> str:
    if kind not in KINDS and kind != CMD:
        raise EnvelopeError(f"unknown kind {kind!r} (known: {', '.join(KINDS)})")
    return f"{PREFIX}.{check_token(site, 'site')}.{check_token(table, 'table')}.{kind}"


def cmd_subject(site: str, table: str) -> str:
    """Where a table answers the floor's commands (NATS request/reply)."""
    return subject(site, table, CMD)


def parse_subject(subj: str) -> tuple[str, str, str]:
    """`cylindre.S.T.kind` -> (S, T, kind); EnvelopeError otherwise."""
    parts = subj.split(".") if isinstance(subj, str) else []
    if len(parts) != 4 or parts[0] != PREFIX or (parts[3] not in KINDS and parts[3] != CMD):
        raise EnvelopeError(f"not a Cylindre subject: {subj!r}")
    return check_token(parts[1], "site"), check_token(parts[2], "table"), parts[3]


def check_journal(value) -> str:
    """A journal identity: "" (before identities) or 1 to 32 of A-Z a-z 0-9 _ -."""
    if not isinstance(value, str) or not JOURNAL.fullmatch(value):
        raise EnvelopeError(f"journal must be 0 to 32 of A-Z a-z 0-9 _ -, got {str(value)[:40]!r}")
    return value


def msg_id(table: str, event_id: int, journal: str = LEGACY, secret: str | bytes | None = None) -> str:
    """`<table>:<journal>:<event id>` (`<table>:<event id>` for the legacy journal ""), followed by
    `:<tag>` when the table has a `secret` (its NATS password): an id no other table can make."""
    table, journal = check_token(table, "table"), check_journal(journal)
    base = f"{table}:{journal}:{int(event_id)}" if journal else f"{table}:{int(event_id)}"
    if not secret:
        return base
    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    tag = hmac.new(key, b"cylindre msg-id v1|" + base.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{base}:{tag}"


def heartbeat_msg_id(table: str, epoch_ms: int) -> str:
    return f"{check_token(table, 'table')}:hb:{int(epoch_ms)}"


def envelope(site, table, serial, event_id, kind, at, body, journal=LEGACY, prev=None) -> dict:
    """The envelope as a dict, checked (`prev` only when known)."""
    env = {"v": VERSION, "site": site, "table": table, "serial": serial, "journal": journal, "event_id": event_id,
           "kind": kind, "at": at, "body": body}
    if prev is not None:
        env["prev"] = prev
    validate(env)
    return env


def build(site, table, serial, event_id, kind, at, body, journal=LEGACY, prev=None) -> bytes:
    """The payload: the envelope as compact UTF-8 JSON."""
    return json.dumps(envelope(site, table, serial, event_id, kind, at, body, journal, prev), ensure_ascii=False,
                      separators=(",", ":"), allow_nan=False).encode("utf-8")


def parse(payload: bytes | str) -> dict:
    """The envelope of a payload, checked (EnvelopeError naming what is wrong, whatever the bytes:
    never another exception); `journal` set to "" when a table that predates journal identities
    left it out."""
    if len(payload) > MAX_PAYLOAD:
        raise EnvelopeError(f"payload of {len(payload)} bytes (at most {MAX_PAYLOAD})")
    try:
        env = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise EnvelopeError(f"not JSON: {str(e)[:200]}") from None
    if isinstance(env, dict):
        env.setdefault("journal", LEGACY)
    validate(env)
    return env


def depth(value, limit: int = MAX_DEPTH) -> int:
    """How deeply `value` nests (objects and arrays), counted without recursion, up to limit + 1."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, (dict, list)):
            if d > limit:
                return d
            deepest = max(deepest, d)
            todo.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def _event_id(value, what="event_id") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ID:
        raise EnvelopeError(f"{what} must be an integer from 0 to 2^63-1, got {str(value)[:40]}")
    return value


def validate(env) -> None:
    if not isinstance(env, dict):
        raise EnvelopeError("an envelope is a JSON object")
    missing = [k for k in FIELDS if k not in env]
    if missing:
        raise EnvelopeError(f"envelope without {', '.join(missing)}")
    if env["v"] != VERSION:
        raise EnvelopeError(f"envelope version {str(env['v'])[:40]!r}: this side reads {VERSION}")
    check_token(env["site"], "site")
    check_token(env["table"], "table")
    if env["serial"] is not None and (not isinstance(env["serial"], str) or not SERIAL.fullmatch(env["serial"])):
        raise EnvelopeError(f"serial must be null or 1 to 64 printable ASCII characters, got {str(env['serial'])[:80]!r}")
    check_journal(env.get("journal", LEGACY))
    if env["kind"] not in KINDS:
        raise EnvelopeError(f"unknown kind {str(env['kind'])[:40]!r}")
    _event_id(env["event_id"])
    if env.get("prev") is not None:
        _event_id(env["prev"], "prev")
    at = env["at"]
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at):
        raise EnvelopeError(f"at must be epoch seconds, got {str(at)[:40]!r}")
    if not isinstance(env["body"], dict):
        raise EnvelopeError("body must be a JSON object")
    if depth(env["body"]) > MAX_DEPTH:
        raise EnvelopeError(f"body nests deeper than {MAX_DEPTH}")
