"""Run the benchmarks: `python -m host_tools.bench [PART ...] [options]`.

Each part is a module `host_tools.bench.<part>` with `add_arguments(parser)` and `run(args)`;
it prints its figures and writes them as JSON under bench/out/, and may define
`markdown(figures) -> str`, its section of docs/benchmarks.md. With no part named, all run with
their defaults. After the parts ran, docs/benchmarks.md is rewritten from bench/out/ (page.py);
a part run with `--out` elsewhere leaves bench/out and the page as they were.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from host_tools.bench import page

PARTS = page.PARTS


def part_parser(part: str, module) -> argparse.ArgumentParser:
    """A part's own options. No abbreviations: with several parts in one run, another part's
    option (`--out`) would otherwise be taken as the prefix of this one's (`--outage-s`)."""
    parser = argparse.ArgumentParser(prog=f"make bench ARGS='{part} ...'", allow_abbrev=False)
    module.add_arguments(parser)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    unknown = unknown_parts(argv)
    if unknown:
        # a part name the bench does not know would have run every part (25 minutes and more)
        print(f"[bench] unknown part {unknown[0]!r}: the parts are {', '.join(PARTS)} "
              f"(make bench ARGS='PART [options]'; with no part named, every part runs)", file=sys.stderr)
        return 2
    chosen = [a for a in argv if a in PARTS] or PARTS
    rest = [a for a in argv if a not in PARTS]
    modules = {}
    for part in chosen:
        try:
            modules[part] = importlib.import_module(f"host_tools.bench.{part}")
        except ModuleNotFoundError as exc:
            if exc.name == f"host_tools.bench.{part}":
                print(f"[bench] {part}: not built yet, skipped")
                continue
            raise
    parsers = {part: part_parser(part, m) for part, m in modules.items()}
    stray = unknown_options(rest, parsers.values())
    if stray:
        # an option no part takes was ignored, and the page rewritten as if it had been obeyed
        print(f"[bench] option {stray[0]} is not one of {', '.join(parsers) or 'the parts'}'s: nothing run "
              f"(make bench ARGS='PART --help' lists a part's options)", file=sys.stderr)
        return 2
    parsed = {part: parsers[part].parse_known_args(rest) for part in modules}
    lock = None
    if any(_writes_here(args) for args, _ in parsed.values()):
        lock = hold_the_page()
        if isinstance(lock, str):
            print(f"[bench] {lock}: nothing run (two benches at once would write bench/out and "
                  f"docs/benchmarks.md over each other; wait for it, or give the parts --out elsewhere)",
                  file=sys.stderr)
            return 2
    try:
        return _run(modules, parsed, argv, rest)
    finally:
        if lock is not None:
            lock.close()                # (flock: let go with its file)


def _run(modules, parsed, argv, rest) -> int:
    status = 0
    recorded = False
    for part, module in modules.items():
        args, unknown = parsed[part]
        print(f"=== bench: {part} ===", flush=True)
        started = time.time()
        code = int(module.run(args) or 0)
        status |= code
        out = getattr(args, "out", None)
        if not _writes_here(args):
            # figures written elsewhere: the page's record and its figures stay as they were
            print(f"[bench] {part}: figures in {out}; bench/out and docs/benchmarks.md left as they were")
            continue
        page.record_run(part, [part] + _known(rest, unknown) if argv else [], started, code)
        recorded = True
    if recorded:
        print(f"[bench] written {page.write(PARTS)}")
    return status


def _out_folder(args):
    out = getattr(args, "out", None)        # a folder, or for some parts the JSON file
    return None if out is None else (Path(out).parent if str(out).endswith(".json") else Path(out))


def _writes_here(args) -> bool:
    """The part writes its figures to bench/out (and so the page)."""
    folder = _out_folder(args)
    return folder is None or folder.resolve() == page.OUT.resolve()


def hold_the_page():
    """Take bench/out's lock (an exclusive `flock` on bench/out/.lock, let go when its file is
    closed or the process ends however it ends): the open file, or the sentence saying who
    holds it."""
    import fcntl
    import os
    page.OUT.mkdir(parents=True, exist_ok=True)
    f = open(page.OUT / ".lock", "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.seek(0)
        who = f.read().strip() or "another process"
        f.close()
        return f"another bench is running in {page.OUT} ({who})"
    f.seek(0)
    f.truncate()
    f.write(f"pid {os.getpid()}, since {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n")
    f.flush()
    return f


def unknown_parts(argv: list[str]) -> list[str]:
    """The words of `argv` that name a part the bench does not know: a word not after an option
    (where it would be the option's value), or, when no known part is named, any word of letters."""
    words = [a for i, a in enumerate(argv) if not a.startswith("-") and a not in PARTS
             and (i == 0 or not argv[i - 1].startswith("-"))]
    if not any(a in PARTS for a in argv):
        words += [a for a in argv if a.isidentifier() and a not in words]
    return words


def unknown_options(argv: list[str], parsers) -> list[str]:
    """The options of `argv` (`--name` or `--name=value`) that none of `parsers` takes."""
    taken = set()
    for parser in parsers:
        taken.update(parser._option_string_actions)
    return [a.split("=", 1)[0] for a in argv if a.startswith("-") and a.split("=", 1)[0] not in taken
            and not _number(a)]


def _number(word: str) -> bool:
    """A negative number given as an option's value (`--offset -3`), not an option."""
    try:
        float(word)
    except ValueError:
        return False
    return True


def _known(given: list[str], unknown: list[str]) -> list[str]:
    """The options of `given` a part's parser took (`unknown`, in order, left out): the command
    line that reproduces that part alone."""
    out, i = [], 0
    for a in given:
        if i < len(unknown) and a == unknown[i]:
            i += 1
        else:
            out.append(a)
    return out


if __name__ == "__main__":
    sys.exit(main())
