"""docs/benchmarks.md, written by `make bench` from its own run — never edited by hand.

After the parts ran, `host_tools.bench` records how each one ran (bench/out/<part>.run.json: the
command line, when, how long, the git commit, the machine; the page shows all but the commit,
which stays in that file) and calls `write()`, which rewrites
the page from bench/out/*.json: one section per part, from the part module's
`markdown(figures) -> str` where it defines one, else a generic table of its figures. A part
with no figures under bench/out/ keeps its section from the page as it was (each section is
marked `<!-- part: NAME -->`), so a part run alone rewrites its own section only; a part never
measured at all is listed as not measured.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import re
import os
import platform
import subprocess
import sys
from pathlib import Path

# the parts of `make bench`, in the order of their sections on the page
PARTS = ["settle", "wheel", "link", "rest", "rp2", "rp2prof", "api", "stadium", "outbox", "floor", "statspage"]
OUT = Path("bench/out")
PAGE = Path("docs/benchmarks.md")


def machine() -> dict:
    """The machine the figures were measured on: CPU model, cores, Python, OS, load."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "implementation": platform.python_implementation(), "os": f"{platform.system()} {platform.release()}",
            "arch": platform.machine(), "load_average": load}


def commit() -> str | None:
    """The checkout's commit, '+changes' when the work tree differs from it (this page aside)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode:
            return None
        # the page itself is rewritten after every part: its own change is not the code's
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":(exclude)" + PAGE.as_posix()], capture_output=True, text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + (" +changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def record_run(part: str, argv: list[str], started: float, status: int, out: Path = OUT) -> dict:
    """bench/out/<part>.run.json: how the part's figures were made."""
    run = {"part": part, "command": "make bench ARGS='" + " ".join(argv) + "'" if argv else "make bench",
           "started": dt.datetime.fromtimestamp(started, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "seconds": round(dt.datetime.now().timestamp() - started, 1), "status": status,
           "commit": commit(), "machine": machine()}
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{part}.run.json").write_text(json.dumps(run, indent=1) + "\n")
    return run


def generic(figures, depth: int = 0, prefix: str = "") -> list[tuple[str, str]]:
    """(key path, value) rows of a part's figures for the generic table; long lists summarised."""
    rows = []
    if isinstance(figures, dict):
        for k, v in figures.items():
            rows += generic(v, depth + 1, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(figures, list):
        if len(figures) <= 8 and all(not isinstance(x, (dict, list)) for x in figures):
            rows.append((prefix, ", ".join(_fmt(x) for x in figures)))
        else:
            rows.append((prefix, f"({len(figures)} values)"))
    else:
        rows.append((prefix, _fmt(figures)))
    return rows


def _fmt(x) -> str:
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:,.4g}" if abs(x) < 1e6 else f"{x:,.0f}"
    return str(x)


def _generic_section(figures) -> str:
    rows = generic(figures)
    return "| figure | value |\n|---|---|\n" + "\n".join(f"| `{k}` | {v} |" for k, v in rows) + "\n"


def section(part: str, figures: dict, run: dict | None) -> str:
    """One part's section: its own markdown() or the generic table, then how it was run."""
    try:
        module = importlib.import_module(f"host_tools.bench.{part}")
    except ImportError:
        module = None
    body = None
    if module is not None and hasattr(module, "markdown"):
        try:
            body = module.markdown(figures)
        except (KeyError, TypeError, ValueError, IndexError) as e:     # a JSON of an older shape
            body = f"*(this part's page text could not read its figures: {type(e).__name__}: {e}; the raw figures follow)*\n\n" \
                   + _generic_section(figures)
    if body is None:
        body = _generic_section(figures)
    body = body.strip() + "\n"
    if not body.startswith("#"):
        body = f"## {part}\n\n" + body
    if run:
        m = run["machine"]
        body += (f"\n*Measured by `{run['command']}` on {run['started']} ({run['seconds']:,} s)"
                 + f"; {m['cpu']}, {m['cores']} cores, load average {', '.join(map(str, m['load_average'] or []))} at the end.*\n")
    return body


def render(out: Path = OUT, parts: list[str] | None = None, page_text: str = "") -> str:
    """The whole page from the figures under `out` (every part in `parts`, in that order); a part
    with no figures there keeps its section from `page_text` (the page as it was)."""
    found = {p.stem: p for p in sorted(out.glob("*.json")) if not p.name.endswith(".run.json")}
    parts = list(parts or []) + sorted(set(found) - set(parts or []))
    runs = {}
    for p in out.glob("*.run.json"):
        try:
            runs[p.name[:-len(".run.json")]] = json.loads(p.read_text())
        except ValueError:
            pass
    measured = [p for p in parts if p in found]
    machines = {json.dumps(runs[p]["machine"]["cpu"]) for p in measured if p in runs}
    m = next((runs[p]["machine"] for p in measured if p in runs), machine())
    kept = kept_sections(page_text) if page_text else {}
    # a section kept from an earlier run whose footer does not name this CPU was measured elsewhere
    # (or before the footers named it): the header says the sections differ
    elsewhere = len(machines) > 1 or any(p not in found and p in kept and m["cpu"] not in kept[p] for p in parts)
    latest = max([runs[p]["started"] for p in measured if p in runs]
                 + [d for p in parts if p not in found and p in kept for d in _WHEN.findall(kept[p])], default="—")
    L = ["# Benchmarks", "",
         "<!-- Written by `make bench` (host_tools/bench/page.py) from its own run: do not edit by hand. -->", "",
         "What the figures below measure and how to reproduce them: each section names the command that "
         "produced it. `make bench` runs every part with its defaults and rewrites this page; "
         "`make bench ARGS='PART [options]'` runs one part and rewrites its section, keeping the figures "
         "the other parts left under `bench/out/` (a fresh clone has none: the page then lists only what ran).", "",
         "| machine | |", "|---|---|",
         f"| CPU | {m['cpu']}{' (the last run: a section whose footer names another CPU, or none, ran on another machine)' if elsewhere else ''} |",
         f"| cores | {m['cores']} |",
         f"| Python | {m['implementation']} {m['python']} |",
         f"| system | {m['os']} ({m['arch']}) |",
         f"| last run | {latest} |", ""]
    missing = [p for p in parts if p not in found and p not in kept]
    if missing:
        L += ["Not measured in this checkout's `bench/out/`: " + ", ".join(f"`{p}`" for p in missing)
              + " (`make bench ARGS='" + " ".join(missing) + "'`).", ""]
    for p in parts:
        if p not in found:
            if p in kept:
                L += [kept[p].rstrip(), ""]
            continue
        L.append(MARK.format(p))
        try:
            figures = json.loads(found[p].read_text())
        except ValueError:
            L += [f"## {p}", "", f"`{found[p]}` is not JSON: run the part again.", ""]
            continue
        L += [section(p, figures, runs.get(p)).rstrip(), ""]
    return "\n".join(L).rstrip() + "\n"


MARK = "<!-- part: {} -->"
_MARK = re.compile(r"^<!-- part: ([\w-]+) -->$")
_WHEN = re.compile(r"\bon (\d{4}-\d\d-\d\d \d\d:\d\d UTC)")
_FOOTER = re.compile(r"^\*Measured by `make bench ARGS='?([\w-]+)")


def kept_sections(text: str) -> dict[str, str]:
    """{part: its section} of a page written before, so that a part run alone (or a checkout whose
    `bench/out/` lacks the others) rewrites its own section and keeps the others' as measured.
    A section is known by its marker, or (a page written without markers) by its footer's command."""
    marked = any(_MARK.match(line) for line in text.splitlines())
    starts = (lambda line: _MARK.match(line)) if marked else (lambda line: line.startswith("## "))
    sections, current = [], []
    for line in text.splitlines():
        if starts(line):
            if current:
                sections.append(current)
            current = []
        current.append(line)
    if current:
        sections.append(current)
    out = {}
    for lines in sections:
        m = _MARK.match(lines[0])
        part = m.group(1) if m else next((f.group(1) for f in map(_FOOTER.match, lines) if f), None)
        if part and any(l.startswith("## ") for l in lines):
            body = lines if m else [MARK.format(part)] + lines
            out[part] = "\n".join(body).rstrip() + "\n"
    return out


def write(parts: list[str], out: Path = OUT, page: Path = PAGE) -> Path:
    page.parent.mkdir(parents=True, exist_ok=True)
    before = page.read_text() if page.exists() else ""
    page.write_text(render(out, parts, before))
    return page


if __name__ == "__main__":          # rewrite the page from bench/out without running anything
    print(write(PARTS), file=sys.stderr)
