"""The licences of what the host depends on, read from the installed packages' metadata.

    python -m host_tools.docs.licences            # print the table (Markdown)
    python -m host_tools.docs.licences --write    # rewrite it between the markers of docs/licences.md

Each dependency of pyproject.toml (`dependencies`: what `pip install .` brings, with everything
they bring in turn; `dev`: what the tests, the bench and the firmware build add, as listed) is
looked up with `importlib.metadata`: its version, and its licence as the package declares it (the
`License-Expression` field, else the `License ::` classifiers, else the first line of `License`).
Nothing is guessed: a package not installed, or one that declares no licence, says so.
"""

from __future__ import annotations

import argparse
import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "licences.md"
BEGIN, END = "<!-- licences.py: begin -->", "<!-- licences.py: end -->"


def project_requirements(pyproject: Path = ROOT / "pyproject.toml") -> tuple[list[Requirement], list[Requirement]]:
    """(runtime, dev) requirements as pyproject.toml lists them."""
    try:
        import tomllib
    except ModuleNotFoundError:             # Python 3.10
        import tomli as tomllib
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    runtime = [Requirement(r) for r in project.get("dependencies", [])]
    dev = [Requirement(r) for r in project.get("optional-dependencies", {}).get("dev", [])]
    return runtime, dev


def _applies(req: Requirement, extras=("",)) -> bool:
    if req.marker is None:
        return True
    env = default_environment()
    return any(req.marker.evaluate({**env, "extra": e}) for e in extras)


def licence_of(dist: metadata.Distribution) -> str:
    """The licence a distribution declares: its SPDX expression, its classifiers, or its text's first line."""
    md = dist.metadata
    expr = md.get("License-Expression")
    if expr:
        return expr.strip()
    classifiers = [c.split(" :: ")[-1] for c in md.get_all("Classifier") or () if c.startswith("License ::")]
    if classifiers:
        return "; ".join(dict.fromkeys(classifiers))
    text = (md.get("License") or "").strip()
    if text:
        first = text.splitlines()[0].strip()
        return first if len(first) <= 80 else first[:77] + "..."
    return "not declared in its metadata"


def rows(runtime: list[Requirement], dev: list[Requirement]) -> list[tuple[str, str, str, str]]:
    """(name, version, licence, why: runtime | runtime (via X) | dev) for every runtime requirement and
    what it needs in turn, then the dev requirements, each once, in order found."""
    out, seen = [], set()

    def add(req, why, follow):
        key = canonicalize_name(req.name)
        if key in seen or not _applies(req):
            return
        seen.add(key)
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            out.append((req.name, "not installed", "unknown (not installed here)", why))
            return
        out.append((dist.metadata["Name"], dist.version, licence_of(dist), why))
        if follow:
            for sub in dist.requires or ():
                add(Requirement(sub), f"runtime (via {dist.metadata['Name']})", True)

    for r in runtime:
        add(r, "runtime", True)
    for r in dev:
        add(r, "dev", False)
    return out


def table(found: list[tuple[str, str, str, str]]) -> str:
    lines = ["| package | version | licence (as its metadata declares it) | needed for |", "|---|---|---|---|"]
    lines += [f"| {n} | {v} | {lic.replace('|', '/')} | {why} |" for n, v, lic, why in found]
    return "\n".join(lines) + "\n"


def rewrite(doc: Path, text: str) -> str:
    """`doc`'s text with the table between its markers replaced by `text`."""
    old = doc.read_text(encoding="utf-8")
    head, sep, rest = old.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not (sep and sep2):
        raise ValueError(f"{doc}: the markers {BEGIN} and {END} are missing")
    return head + BEGIN + "\n" + text + END + tail


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m host_tools.docs.licences", description=__doc__.splitlines()[0])
    p.add_argument("--write", action="store_true", help=f"rewrite the table in {DOC.relative_to(ROOT)}")
    args = p.parse_args(argv)
    text = table(rows(*project_requirements()))
    if args.write:
        DOC.write_text(rewrite(DOC, text), encoding="utf-8")
        print(f"{DOC.relative_to(ROOT)}: table rewritten", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
