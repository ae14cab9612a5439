"""The feed format (docs/integrators/feed-format.md) read and written by cylindre.feed, on both runtimes.

MicroPython subset: plain asserts, no pytest.
"""

from cylindre.feed import (FeedError, FeedReader, LineParser, format_line, header_line, line_batches,
                           lines_of, parse_header)

HEADER = {"cpr": 1024, "index_offset_deg": 17.5, "ball_sensors_deg": [0.0, 6.0],
          "pocket_sensors_deg": [90.0, 210.0, 330.0],
          "signals": ["A", "B", "Z", "BALL0", "BALL1", "POCKET0", "POCKET1", "POCKET2", "VOID", "RESET"]}


def _copy(d, **kw):
    out = {}
    for k in d:
        out[k] = d[k]
    for k in kw:
        out[k] = kw[k]
    return out


def _refused(fn, line=None, words=None):
    try:
        fn()
    except FeedError as e:
        if line is not None:
            assert e.line == line, "expected line %d, got %d (%s)" % (line, e.line, e)
            assert ("line %d" % line) in str(e)
        if words is not None:
            assert words in str(e), "%r not in %r" % (words, str(e))
        return e
    raise AssertionError("accepted a malformed feed")


def test_header_round_trip():
    text = header_line(HEADER)
    assert text.startswith("CYLINDRE-FEED 1 {")
    back = parse_header(text)
    for k in HEADER:
        assert back[k] == HEADER[k]


def test_header_extra_keys_are_kept_and_ignored():
    h = parse_header(header_line(_copy(HEADER, board="pico-a", seed=3)))
    assert h["board"] == "pico-a" and h["seed"] == 3


def test_malformed_headers_are_refused_on_line_1():
    good = header_line(HEADER)
    _refused(lambda: parse_header(""), 1)
    _refused(lambda: parse_header("CYLINDRE-FEED 2 {}"), 1, "version")
    _refused(lambda: parse_header("FEED 1 {}"), 1)
    _refused(lambda: parse_header(good[:-3]), 1, "JSON")
    _refused(lambda: parse_header(header_line(HEADER).replace('"cpr": 1024', '"cpr": 1022')), 1, "cpr")
    _refused(lambda: parse_header(header_line(HEADER).replace('"cpr": 1024', '"cpr": "1024"')), 1, "cpr")
    for key in ("cpr", "index_offset_deg", "ball_sensors_deg", "pocket_sensors_deg", "signals"):
        h = _copy(HEADER)
        del h[key]
        _refused(lambda: parse_header("CYLINDRE-FEED 1 " + _json(h)), 1)
    _refused(lambda: parse_header("CYLINDRE-FEED 1 " + _json(_copy(HEADER, ball_sensors_deg=[0.0]))), 1,
             "ball_sensors_deg")
    _refused(lambda: parse_header("CYLINDRE-FEED 1 " + _json(_copy(HEADER, signals=["A", "BALL2"]))), 1,
             "BALL2")
    _refused(lambda: parse_header("CYLINDRE-FEED 1 " + _json(_copy(HEADER, signals=["A", "DOOR"]))), 1)
    _refused(lambda: parse_header("CYLINDRE-FEED 1 " + _json(_copy(HEADER, signals=["POCKET01"]))), 1)
    _refused(lambda: parse_header("CYLINDRE-FEED 1 [1, 2]"), 1)


def _json(d):
    import json
    return json.dumps(d)


def test_lines_parse_and_skip_comments():
    p = LineParser(HEADER)
    assert p.parse("0 A 1", 2) == (0, "A", 1)
    assert p.parse("15\tB\t0\r\n", 3) == (15, "B", 0)
    assert p.parse("", 4) is None
    assert p.parse("   ", 5) is None
    assert p.parse("# a comment 1 2 3", 6) is None
    assert p.parse("15 POCKET2 1", 7) == (15, "POCKET2", 1)     # equal times are allowed


def test_malformed_lines_name_their_line():
    cases = [("12 A", "field"), ("12 A 1 extra", "field"), ("1.5 A 1", "time"), ("-3 A 1", "time"),
             ("+3 A 1", "time"), ("1_000 A 1", "time"), ("x A 1", "time"), ("12 C 1", "signal"),
             ("12 ball0 1", "signal"), ("12 A 2", "level"), ("12 A -1", "level"), ("12 A one", "level")]
    for text, words in cases:
        p = LineParser(HEADER)
        _refused(lambda: p.parse(text, 9), 9, words)


def test_time_never_goes_back():
    p = LineParser(HEADER)
    p.parse("100 A 1", 2)
    p.parse("100 B 1", 3)
    _refused(lambda: p.parse("99 A 0", 4), 4, "back")


def test_reader_yields_changes_and_counts_lines():
    lines = [header_line(HEADER), "10 A 1", "# comment", "", "20 B 1", "30 Z 1"]
    r = FeedReader(lines)
    assert r.header["cpr"] == 1024
    got = [c for c in r]
    assert got == [(10, "A", 1), (20, "B", 1), (30, "Z", 1)]
    assert r.line == 6


def test_reader_reports_the_bad_line_number():
    lines = [header_line(HEADER), "10 A 1", "# comment", "", "5 B 1"]
    r = FeedReader(lines)
    _refused(lambda: [c for c in r], 5, "back")
    _refused(lambda: FeedReader([]), 1, "empty")
    _refused(lambda: FeedReader(["10 A 1"]), 1)


def test_written_lines_read_back_the_same():
    changes = [(0, "A", 1), (7, "B", 1), (7, "Z", 1), (1000000, "POCKET1", 1), (1000500, "POCKET1", 0),
               (2 ** 40, "RESET", 1)]
    lines = [header_line(HEADER)] + [format_line(t, s, l) for t, s, l in changes]
    assert [c for c in FeedReader(lines)] == changes


def test_batches_of_a_file_give_every_line():
    import io
    body = [format_line(i * 10, "A" if i % 2 else "B", i % 2) for i in range(300)]
    text = header_line(HEADER) + "\n" + "\n".join(body) + "\n"
    got = []
    for batch in line_batches(io.StringIO(text), 64):
        for line in batch:
            got.append(line)
    assert got == [header_line(HEADER)] + body + [""] or got == [header_line(HEADER)] + body
    lines = [l for l in lines_of(io.StringIO(text[:-1]), 50)]
    assert lines == [header_line(HEADER)] + body
