"""Run the benchmarks: `python -m host_tools.bench [PART ...] [options]`.

Each part is a module `host_tools.bench.<part>` with `add_arguments(parser)` and `run(args)`;
it prints its figures and writes them as JSON under bench/out/. With no part named, all run
with their defaults.
"""

from __future__ import annotations

import argparse
import importlib
import sys

PARTS = ["settle", "wheel", "link", "rest", "rp2", "api", "outbox", "floor"]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    chosen = [a for a in argv if a in PARTS] or PARTS
    rest = [a for a in argv if a not in PARTS]
    status = 0
    for part in chosen:
        try:
            module = importlib.import_module(f"host_tools.bench.{part}")
        except ModuleNotFoundError as exc:
            if exc.name == f"host_tools.bench.{part}":
                print(f"[bench] {part}: not built yet, skipped")
                continue
            raise
        parser = argparse.ArgumentParser(prog=f"make bench ARGS='{part} ...'")
        module.add_arguments(parser)
        args, unknown = parser.parse_known_args(rest)
        print(f"=== bench: {part} ===", flush=True)
        status |= int(module.run(args) or 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
