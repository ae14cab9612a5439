"""The STATUS payload in binary (cylindre.link.status): what the wheel's link packs, the host reads
back as the dict the controller's status was, and anything else read off the line is refused with
a StatusError (the frame's reason `status`), never another exception."""

import struct

from hypothesis import given, strategies as st

from cylindre.link import status as S

STATES = st.sampled_from(S.STATES)
HEALTH = st.sampled_from(S.HEALTH)


@st.composite
def statuses(draw):
    balls = draw(st.integers(1, 4))
    pockets = draw(st.integers(1, 4))
    s = {"ev": "status", "state": draw(STATES)}
    fields = {"t": st.integers(0, 2**62), "spin": st.integers(0, 2**31 - 1),
              "rotor_rpm_x10": st.integers(-2**31, 2**31 - 1), "rotor_dir": st.sampled_from([-1, 0, 1]),
              "last": st.one_of(st.none(), st.integers(0, 36)), "table_open": st.booleans(),
              "sensors": st.lists(HEALTH, min_size=balls + pockets + 2, max_size=balls + pockets + 2).map(
                  lambda codes: dict(zip(S.names(balls, pockets), codes)))}
    for k, strat in fields.items():
        if draw(st.booleans()) or draw(st.booleans()):
            s[k] = draw(strat)
    return s


@given(statuses(), st.integers(0, 2**62), st.integers(0, 2**31 - 1),
       st.one_of(st.none(), st.tuples(st.integers(0, 2**62), st.integers(0, 2**62)).map(list)))
def test_what_the_wheel_packs_the_host_reads_back(status, at_ms, emitted, echo):
    want = dict(status, at_ms=at_ms, emitted=emitted, echo=echo)
    assert S.decode(S.encode(status, at_ms, emitted, echo)) == want
    if "sensors" in status:     # the link's kept codes give the same bytes
        codes = S.sensor_codes(status["sensors"])
        assert S.encode(status, at_ms, emitted, echo, codes) == S.encode(status, at_ms, emitted, echo)


@given(st.binary(max_size=120))
def test_any_bytes_read_back_or_refused_as_a_status_error(data):
    try:
        out = S.decode(data)
    except S.StatusError:
        return
    assert out["ev"] == "status" and out["state"] in S.STATES


@given(statuses(), st.integers(0, 80), st.integers(0, 255))
def test_a_status_with_a_byte_changed_or_cut_is_refused_or_still_a_status(status, i, v):
    p = bytearray(S.encode(status, 1, 2, None))
    if i < len(p):
        p[i] = v
    for data in (bytes(p), bytes(p[:i])):
        try:
            out = S.decode(data)
        except S.StatusError:
            continue
        assert out["state"] in S.STATES and set(out) <= {"ev", "state", "at_ms", "emitted", "echo", *S.FIELDS}


def test_the_layout_is_51_bytes_and_one_a_signal():
    assert struct.calcsize(S.LAYOUT) == S.HEAD == 51
    full = {"ev": "status", "t": 1, "state": "idle", "spin": 0, "rotor_rpm_x10": 0, "rotor_dir": 0,
            "sensors": dict.fromkeys(S.names(2, 1), "ok"), "last": None, "table_open": True}
    assert len(S.encode(full, 0, 0, [1, 2])) == 51 + 5


def test_a_status_the_link_cannot_pack_says_so():
    for bad in ({"ev": "status", "state": "dancing"}, {"ev": "status", "state": "idle", "sensors": {"X": "ok"}},
                {"ev": "status", "state": "idle", "sensors": {"Z": "ok", "VOID": "broken"}}):
        try:
            S.encode(bad, 0, 0, None)
        except (ValueError, KeyError):
            continue
        raise AssertionError(bad)


def test_the_protocol_docs_table_is_the_layout():
    """docs/integrators/link-protocol.md's table of the STATUS payload: each field at the offset and of the size
    `struct` packs it (a writer of another end reads that table, not this module)."""
    from pathlib import Path
    import re
    doc = (Path(__file__).resolve().parents[2] / "docs" / "integrators" / "link-protocol.md").read_text(encoding="utf-8")
    table = doc.split("**The STATUS payload**")[1].split("\n\n")[1]
    rows = [r for r in table.splitlines() if re.match(r"\| \d+ \|", r)]
    got = [(int(r.split("|")[1]), r.split("|")[2].strip()) for r in rows]
    want, off = [], 0
    for code in S.LAYOUT[1:]:
        size = struct.calcsize(">" + code)
        want.append((off, str(size)))
        off += size
    assert got[:-1] == want, got
    assert got[-1] == (S.HEAD, "`balls`+`pockets`+2")
