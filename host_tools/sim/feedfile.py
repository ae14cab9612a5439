"""A simulated spin's sensor changes (`Spin`) and the feed file they are written to, with the truth
of each spin beside it in FEED.truth.jsonl (the format: cylindre/feed.py, docs/internals/simulator.md).
"""

from __future__ import annotations

from pathlib import Path

from cylindre import feed as feedfmt


class Spin:
    """One spin: `t_us`, `code`, `level` numpy arrays (code indexes `names`) and its `truth` dict."""

    def __init__(self, names, t_us, code, level, truth):
        self.names = names
        self.t_us = t_us
        self.code = code
        self.level = level
        self.truth = truth

    @property
    def changes(self) -> list[tuple[int, str, int]]:
        """[(t_us, signal, level), ...] absolute, sorted."""
        names = self.names
        return [(t, names[c], l) for t, c, l in zip(self.t_us.tolist(), self.code.tolist(), self.level.tolist())]

    def __len__(self):
        return len(self.t_us)


class FeedWriter:
    """Streams spins into a feed file and their truth into FEED.truth.jsonl (any number of spins)."""

    def __init__(self, path, header):
        self.path = Path(path)
        self._feed = open(self.path, "w", encoding="utf-8", newline="\n")
        self._truth = open(truth_path(self.path), "w", encoding="utf-8", newline="\n")
        self._feed.write(feedfmt.header_line(header) + "\n")
        self.lines = 0

    def add(self, sp: Spin) -> None:
        import json
        names, fmt = sp.names, feedfmt.format_line
        self._feed.write("".join(fmt(t, names[c], l) + "\n"
                                 for t, c, l in zip(sp.t_us.tolist(), sp.code.tolist(), sp.level.tolist())))
        self._truth.write(json.dumps(sp.truth) + "\n")
        self.lines += len(sp)

    def close(self) -> None:
        self._feed.close()
        self._truth.close()

    def __enter__(self) -> "FeedWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def write_feed(path, header, spins) -> Path:
    """Write a header and spins to `path` and the truth beside it; return the path."""
    with FeedWriter(path, header) as w:
        for sp in spins:
            w.add(sp)
    return Path(path)


def truth_path(feed_path) -> Path:
    p = Path(feed_path)
    return p.with_name(p.name + ".truth.jsonl")
