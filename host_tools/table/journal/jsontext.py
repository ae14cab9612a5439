"""JSON text of the journal's columns, written in C (orjson): a bet's body, who placed it, the
first answer kept for an Idempotency-Key, an event's data. Keys sorted, compact; every reader parses it (Python's
json, SQLite's json_extract), none compares its characters."""

from __future__ import annotations

import orjson

_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def text(value) -> str:
    """`value` as JSON text, its keys sorted (anything JSON does not know: its str())."""
    return orjson.dumps(value, option=_SORTED, default=str).decode()


def canonical(value) -> bytes:
    """The bytes Python's `json.dumps(value, sort_keys=True, separators=(",", ":"))` makes, as
    fingerprints of requests were always taken (a retry's digest must equal the first one's
    whatever version took it): orjson's when the text is ASCII without DEL (they are then the
    same), Python's otherwise (it escapes those)."""
    data = orjson.dumps(value, option=_SORTED)
    if data.isascii() and b"\x7f" not in data:       # (Python escapes DEL too)
        return data
    import json
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def sorted_text(value) -> str:
    """`value` as JSON text, keys sorted, compact (the table's state, a settlement's head: 1,500
    prisoners after a zero make them long); Python's json for an integer past 64 bits."""
    try:
        return orjson.dumps(value, option=_SORTED).decode()
    except orjson.JSONEncodeError:
        import json
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def copy(value):
    """A deep copy of JSON data `value`, as a JSON round trip makes it (tuples become lists, keys
    strings), in C; Python's json for an integer past 64 bits."""
    try:
        return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))
    except orjson.JSONEncodeError:
        import json
        return json.loads(json.dumps(value))


def event_text(value) -> str:
    """An event's JSON text as the journal keeps it and the stream sends it (keys in their
    order, compact); Python's json for what orjson will not write (an integer past 64 bits)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS, default=str).decode()
    except orjson.JSONEncodeError:
        import json
        return json.dumps(value, ensure_ascii=False, default=str)
