"""The pages people at the table look at, as files of the project (no CDN, no build step):
`/` (an index), `/marquee` (the tote board, role display), `/pit` (the chef's page) and `/stats`
(the wheel statistics, chef), their scripts and styles under `/assets/`. `resolve(path)` maps a request path to a file here (or `/assets/libelles.js` and `.json`, the
French labels generated from host_tools/table/libelles.py), or None; the daemon's web
app serves what it returns (docs/pit/pages.md).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGES = {"/": "index.html", "/marquee": "marquee.html", "/pit": "pit.html", "/stats": "stats.html"}
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
SERVED = (".js", ".css", ".svg")         # what /assets/ gives; the pages have their own routes


def resolve(path: str):
    """(content type, bytes) of the page or asset at `path`, or None. Only the files of this
    folder with a known type, by their plain name: no traversal, no listing."""
    if path in ("/assets/libelles.js", "/assets/libelles.json"):   # generated: the French labels, one source
        from host_tools.table import libelles
        if path.endswith(".json"):
            return "application/json", json.dumps(libelles.TABLES, ensure_ascii=False, sort_keys=True).encode()
        return TYPES[".js"], libelles.as_js().encode()
    name = PAGES.get(path.rstrip("/") or "/")
    if name is None and path.startswith("/assets/"):
        name = path[len("/assets/"):]
        if "/" in name or "\\" in name or name.startswith(".") or not name.endswith(SERVED):
            return None
    if name is None:
        return None
    f = HERE / name
    kind = TYPES.get(f.suffix)
    if kind is None or not f.is_file():
        return None
    return kind, f.read_bytes()
