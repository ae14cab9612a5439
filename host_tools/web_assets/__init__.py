"""The pages people at the table look at, as files of the project (no CDN, no build step):
`/marquee` (the tote board, role display) and `/pit` (the chef's page), their scripts and styles
under `/assets/`. `resolve(path)` maps a request path to a file here, or None; the daemon's web
app serves what it returns (docs/pages.md).
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGES = {"/marquee": "marquee.html", "/pit": "pit.html"}
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}


def resolve(path: str):
    """(content type, bytes) of the page or asset at `path`, or None. Only the files of this
    folder with a known type, by their plain name: no traversal, no listing."""
    name = PAGES.get(path.rstrip("/") or "/")
    if name is None and path.startswith("/assets/"):
        name = path[len("/assets/"):]
        if "/" in name or "\\" in name or name.startswith("."):
            return None
    if name is None:
        return None
    f = HERE / name
    kind = TYPES.get(f.suffix)
    if kind is None or not f.is_file():
        return None
    return kind, f.read_bytes()
