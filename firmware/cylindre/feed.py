"""The sensor-feed format `CYLINDRE-FEED 1` (docs/integrators/feed-format.md): read and write, line by line.

Shared by the firmware's replay driver (on MicroPython) and the host's simulator and bench, so a
feed means the same thing everywhere. Errors name the line number (1 = the header line).
"""

import json

MAGIC = "CYLINDRE-FEED"
VERSION = 1
FIXED_SIGNALS = ("A", "B", "Z", "VOID", "RESET")


class FeedError(ValueError):
    """A malformed feed; `line` is the 1-based line number (0 when unknown)."""

    def __init__(self, line, message):
        super().__init__("line %d: %s" % (line, message))
        self.line = line
        self.reason = message


def _number(value):
    return (isinstance(value, int) or isinstance(value, float)) and not isinstance(value, bool)


def _angles(header, key, least, line):
    value = header.get(key)
    if not isinstance(value, list) or len(value) < least:
        raise FeedError(line, "header %s must be a list of at least %d angles" % (key, least))
    for a in value:
        if not _number(a):
            raise FeedError(line, "header %s holds a non-number: %r" % (key, a))
    return value


def _natural(text):
    """The value of a plain decimal integer >= 0, or None (no sign, no '_', no '²')."""
    if not text.isdigit():
        return None
    try:
        return int(text)        # CPython's isdigit also takes '²', which int() refuses
    except ValueError:
        return None


def _indexed(name, prefix, count):
    """True if `name` is PREFIX<i> with 0 <= i < count."""
    digits = name[len(prefix):]
    i = _natural(digits) if name.startswith(prefix) else None
    return i is not None and i < count and (digits == "0" or digits[0] != "0")


def check_header(header, line=1):
    """Validate a header dict (the wheel's geometry); return it. Raise FeedError if malformed."""
    if not isinstance(header, dict):
        raise FeedError(line, "header must be a JSON object")
    cpr = header.get("cpr")
    if not isinstance(cpr, int) or isinstance(cpr, bool) or cpr < 4 or cpr % 4:
        raise FeedError(line, "header cpr must be a positive multiple of 4, got %r" % (cpr,))
    if not _number(header.get("index_offset_deg")):
        raise FeedError(line, "header index_offset_deg must be a number")
    balls = _angles(header, "ball_sensors_deg", 2, line)
    pockets = _angles(header, "pocket_sensors_deg", 1, line)
    signals = header.get("signals")
    if not isinstance(signals, list) or not signals:
        raise FeedError(line, "header signals must be a non-empty list of names")
    for s in signals:
        if not isinstance(s, str):
            raise FeedError(line, "header signals holds a non-name: %r" % (s,))
        if not (s in FIXED_SIGNALS or _indexed(s, "BALL", len(balls)) or _indexed(s, "POCKET", len(pockets))):
            raise FeedError(line, "header names an unknown signal %r" % s)
    return header


def parse_header(text, line=1):
    """`CYLINDRE-FEED 1 {json}` -> the header dict."""
    text = text.strip()
    parts = text.split(None, 2)
    if len(parts) < 3 or parts[0] != MAGIC:
        raise FeedError(line, "not a feed header: expected '%s %d {...}'" % (MAGIC, VERSION))
    if parts[1] != str(VERSION):
        raise FeedError(line, "unsupported feed version %r" % parts[1])
    try:
        header = json.loads(parts[2])
    except ValueError:
        raise FeedError(line, "header is not valid JSON")
    return check_header(header, line)


def header_line(header):
    """The header line for `header` (no newline)."""
    check_header(header, 0)
    return "%s %d %s" % (MAGIC, VERSION, json.dumps(header))


def format_line(t_us, signal, level):
    """One body line (no newline)."""
    return "%d %s %d" % (t_us, signal, level)


class LineParser:
    """Parses body lines in order, checking names, levels and that time never decreases."""

    def __init__(self, header):
        self.signals = set(header["signals"])
        self.last_t = 0

    def parse(self, text, line):
        """Return (t_us, signal, level), or None for a blank or comment line."""
        fields = text.split()
        if not fields or fields[0].startswith("#"):
            return None
        if len(fields) != 3:
            raise FeedError(line, "expected 'TIME SIGNAL LEVEL', got %d field(s)" % len(fields))
        ts, sig, lv = fields
        t = _natural(ts)
        if t is None:
            raise FeedError(line, "time %r is not a non-negative integer of microseconds" % ts)
        if t < self.last_t:
            raise FeedError(line, "time %d goes back (previous %d)" % (t, self.last_t))
        if sig not in self.signals:
            raise FeedError(line, "signal %r is not in the header's signals" % sig)
        if lv != "0" and lv != "1":
            raise FeedError(line, "level %r is not 0 or 1" % lv)
        self.last_t = t
        return t, sig, 1 if lv == "1" else 0


class FeedReader:
    """Iterate a feed from any iterable of text lines: `.header`, then (t_us, signal, level)."""

    def __init__(self, lines):
        self._lines = iter(lines)
        self.line = 1
        try:
            first = next(self._lines)
        except StopIteration:
            raise FeedError(1, "empty feed: the header line is missing")
        self.header = parse_header(first, 1)
        self._parser = LineParser(self.header)

    def __iter__(self):
        return self

    def __next__(self):
        parse = self._parser.parse
        for text in self._lines:
            self.line += 1
            change = parse(text, self.line)
            if change is not None:
                return change
        raise StopIteration



def line_batches(f, size=4096):
    """The lines of an open text file, a list per `size`-byte read (line ends removed).

    Reads in fixed chunks rather than by `readline` or by iterating the file: bounded allocation
    between batches, and the WebAssembly MicroPython used for tests traps on those two on long
    files. A caller may collect garbage between batches.
    """
    rest = ""
    while True:
        chunk = f.read(size)
        if not chunk:
            break
        parts = (rest + chunk).split("\n")
        rest = parts.pop()
        yield parts
    if rest:
        yield [rest]


def lines_of(f, size=4096):
    """The lines of an open text file, one by one (see `line_batches`)."""
    for batch in line_batches(f, size):
        for line in batch:
            yield line
