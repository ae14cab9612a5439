"""The message a table publishes: its subject `cylindre.<site>.<table>.<kind>`, its JSON envelope
and its `Nats-Msg-Id` (docs/floor/messages.md).

`event_id` is the table journal's `event_log.id` (the outbox row) and `journal` the identity the
journal had when it wrote that row (a random token given at each opening of the journal file,
host_tools/table/journal/identity.py): with the table id they name an event once and for all, so the broker
drops a resend (`Nats-Msg-Id: <table>:<journal>:<event id>`) and the floor stores it once (primary
key (table, journal, event id)), while a table started on a new, empty journal or on a restored
backup numbers its new events under a new identity and loses none. `journal` "" (or absent, from a
table built before it) is the events journaled before journals had an identity: their id stays
`<table>:<event id>`. A heartbeat is not journaled: its id is `<table>:hb:<epoch ms>` and its
event_id the last journaled one.
"""

from __future__ import annotations

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
LEGACY = ""                 # the journal of events journaled before journals had an identity
JOURNAL = re.compile(r"^[A-Za-z0-9_-]{0,32}$")


class EnvelopeError(ValueError):
    pass


def check_token(value, what="token") -> str:
    """A site or table id as a subject token: 1 to 32 of A-Z a-z 0-9 _ - (no dot, no wildcard)."""
    if not isinstance(value, str) or not TOKEN.match(value):
        raise EnvelopeError(f"{what} must be 1 to 32 of A-Z a-z 0-9 _ -, got {value!r}")
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
    if not isinstance(value, str) or not JOURNAL.match(value):
        raise EnvelopeError(f"journal must be 0 to 32 of A-Z a-z 0-9 _ -, got {value!r}")
    return value


def msg_id(table: str, event_id: int, journal: str = LEGACY) -> str:
    """`<table>:<journal>:<event id>`; `<table>:<event id>` for the legacy journal "" (as before)."""
    table, journal = check_token(table, "table"), check_journal(journal)
    return f"{table}:{journal}:{int(event_id)}" if journal else f"{table}:{int(event_id)}"


def heartbeat_msg_id(table: str, epoch_ms: int) -> str:
    return f"{check_token(table, 'table')}:hb:{int(epoch_ms)}"


def envelope(site, table, serial, event_id, kind, at, body, journal=LEGACY) -> dict:
    """The envelope as a dict, checked."""
    env = {"v": VERSION, "site": site, "table": table, "serial": serial, "journal": journal, "event_id": event_id,
           "kind": kind, "at": at, "body": body}
    validate(env)
    return env


def build(site, table, serial, event_id, kind, at, body, journal=LEGACY) -> bytes:
    """The payload: the envelope as compact UTF-8 JSON."""
    return json.dumps(envelope(site, table, serial, event_id, kind, at, body, journal), ensure_ascii=False,
                      separators=(",", ":"), allow_nan=False).encode("utf-8")


def parse(payload: bytes | str) -> dict:
    """The envelope of a payload, checked (EnvelopeError naming what is wrong); `journal` set to ""
    when a table that predates journal identities left it out."""
    try:
        env = json.loads(payload)
    except (ValueError, UnicodeDecodeError) as e:
        raise EnvelopeError(f"not JSON: {e}") from None
    if isinstance(env, dict):
        env.setdefault("journal", LEGACY)
    validate(env)
    return env


def validate(env) -> None:
    if not isinstance(env, dict):
        raise EnvelopeError("an envelope is a JSON object")
    missing = [k for k in FIELDS if k not in env]
    if missing:
        raise EnvelopeError(f"envelope without {', '.join(missing)}")
    if env["v"] != VERSION:
        raise EnvelopeError(f"envelope version {env['v']!r}: this side reads {VERSION}")
    check_token(env["site"], "site")
    check_token(env["table"], "table")
    if env["serial"] is not None and (not isinstance(env["serial"], str) or not 0 < len(env["serial"]) <= 64):
        raise EnvelopeError(f"serial must be null or 1 to 64 characters, got {env['serial']!r}")
    check_journal(env.get("journal", LEGACY))
    if env["kind"] not in KINDS:
        raise EnvelopeError(f"unknown kind {env['kind']!r}")
    eid = env["event_id"]
    if isinstance(eid, bool) or not isinstance(eid, int) or eid < 0:
        raise EnvelopeError(f"event_id must be a non-negative integer, got {eid!r}")
    at = env["at"]
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at):
        raise EnvelopeError(f"at must be epoch seconds, got {at!r}")
    if not isinstance(env["body"], dict):
        raise EnvelopeError("body must be a JSON object")
